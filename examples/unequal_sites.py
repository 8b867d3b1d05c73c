"""A custom sweep with unequal sites: one site holds half the data, nine share the rest.

CAPE's aggregate noise is set by the pooled requirement; with unequal sites the weights μ_s
matter. This compares the pooled weights μ_s = N_s/N with equal weights 1/S for capePCA and
conventional averaging along ε, on the paper's synthetic data (smaller D here, to run in
seconds), and prints how much of the optimum each captures.

    python examples/unequal_sites.py
    python examples/unequal_sites.py --runs 10 --dim 50 --k 10
"""

import argparse
import warnings

import pandas as pd

import dpcore


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dim", type=int, default=30)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    sites = 10
    shares = [9.0] + [1.0] * (sites - 1)  # site 1 holds 9/18 = half of the samples
    epsilon = [0.1, 0.5, 1.0, 5.0]
    frames = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcore.ClassicGaussianWarning)
        for weighting in ("proportional", "equal"):
            df = dpcore.pca_sweep(
                epsilon=epsilon,
                sites=sites,
                n_per_site=500,
                site_shares=shares,
                weighting=weighting,
                algorithms=["cape", "conv"],
                dim=args.dim,
                k=args.k,
                pool_size=20_000,
                runs=args.runs,
                rng=args.seed,
            )
            frames.append(df.assign(weighting=weighting))
    df = pd.concat(frames, ignore_index=True)
    sizes = dpcore.split_sizes(500, sites, shares)
    print(f"site sizes N_s: {sizes.tolist()} (N = {sizes.sum():,})")
    table = df.groupby(["weighting", "algorithm", "epsilon"]).captured_energy_ratio.mean()
    print("mean captured energy / optimum:")
    print(table.unstack("epsilon").round(3).to_string())


if __name__ == "__main__":
    main()
