"""Trust models compared: who must be trusted, and what each buys in accuracy.

Every registered PCA algorithm on the same data, noise draws and ε grid (one tidy frame from
:func:`dpcore.pca_sweep`): ``local`` trusts nobody and uses one site; ``conv`` trusts nobody
and averages independently noised releases; ``cape`` trusts a noise generator not to collude
with the aggregator (Imtiaz & Sarwate, Algorithm 1); ``cape_joint`` is CAPE designed so that
even the joint view of all releases meets every site's ε_s; ``secagg`` (where registered)
trusts nobody but relies on secure aggregation's masks (docs/trust-models.md); ``nonprivate``
is the curator with all the data and no noise.

    python examples/trust_models.py
    python examples/trust_models.py --runs 100

Each cell is a mean ± its standard error over the runs; the last lines name the neighbours in
the ranking whose order at that ε is within noise (at the default 20 runs and seed, cape,
cape_joint and secagg at ε = 0.1 are among them: which of them leads there is noise).
"""

import argparse
import itertools
import warnings

import dpcore

TRUSTED = {
    "nonprivate": "a curator with all the data (no privacy)",
    "local": "nobody (one site's data only)",
    "conv": "nobody",
    "dpdis": "nobody",
    "cape": "the noise generator (not to collude with the aggregator)",
    "cape_joint": "the noise generator; safe even for the joint view",
    "secagg": "nobody (cryptographic masks; honest-but-curious parties)",
}


def standard_errors(df):
    """Mean and standard error (std / √runs) of the captured-energy ratio per algorithm and ε."""
    stats = df.groupby(["algorithm", "epsilon"]).captured_energy_ratio.agg(["mean", "std", "size"])
    stats["se"] = stats["std"] / stats["size"] ** 0.5
    return stats["mean"].unstack(), stats["se"].unstack()


def ties(df, means):
    """Neighbours in the ranking at each ε whose order is noise: (ε, a, b, difference, its se).

    Every algorithm runs on the same data draw in a run, so a pair is compared run by run (the
    paired difference); its order is noise when the mean difference is within 2 standard errors
    (a two-sided test at about 5 %).
    """
    wide = df.pivot_table(index=["epsilon", "run"], columns="algorithm",
                          values="captured_energy_ratio")
    out = []
    for eps in means.columns:
        ranked = means[eps].sort_values(ascending=False).index
        runs = wide.loc[eps]
        for a, b in itertools.pairwise(ranked):
            diff = runs[a] - runs[b]
            se = diff.std() / len(diff) ** 0.5
            if abs(diff.mean()) < 2 * se or se == 0 == diff.mean():
                out.append((eps, a, b, diff.mean(), se))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    algorithms = [a for a in TRUSTED if a in dpcore.algorithm_names("pca")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcore.ClassicGaussianWarning)
        df = dpcore.pca_sweep(
            epsilon=[0.1, 0.5, 1.0, 5.0],
            sites=10,
            n_per_site=500,
            dim=20,
            k=4,
            pool_size=10_000,
            algorithms=algorithms,
            runs=args.runs,
            rng=args.seed,
        )
    means, errors = standard_errors(df)
    print(f"mean captured energy / optimum ± standard error ({args.runs} runs), "
          "and who must be trusted:")
    print(f"{'ε =':>11}  " + "  ".join(f"{e:<13g}" for e in means.columns))
    for alg in algorithms:
        values = "  ".join(
            f"{m:.3f} ± {s:.3f}" for m, s in zip(means.loc[alg], errors.loc[alg], strict=True)
        )
        print(f"{alg:>11}  {values}   trusts: {TRUSTED[alg]}")
    within = ties(df, means)
    print("order within noise (mean paired difference < 2 standard errors; more --runs to "
          "separate them):" if within else "every neighbouring order is beyond 2 standard errors")
    for eps, a, b, diff, se in within:
        print(f"  ε = {eps:g}: {a} − {b} = {diff:+.4f} ± {se:.4f}")


if __name__ == "__main__":
    main()
