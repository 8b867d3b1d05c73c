"""Trust models compared: who must be trusted, and what each buys in accuracy.

Every registered PCA algorithm on the same data, noise draws and ε grid (one tidy frame from
:func:`dpcore.pca_sweep`): ``local`` trusts nobody and uses one site; ``conv`` trusts nobody
and averages independently noised releases; ``cape`` trusts a noise generator not to collude
with the aggregator (Imtiaz & Sarwate, Algorithm 1); ``cape_joint`` is CAPE designed so that
even the joint view of all releases meets every site's ε_s; ``secagg`` (where registered)
trusts nobody but relies on secure aggregation's masks (docs/trust-models.md); ``nonprivate``
is the curator with all the data and no noise.

    python examples/trust_models.py
    python examples/trust_models.py --runs 10
"""

import argparse
import warnings

import dpcore
from dpcore.factorization import registry

TRUSTED = {
    "nonprivate": "a curator with all the data (no privacy)",
    "local": "nobody (one site's data only)",
    "conv": "nobody",
    "dpdis": "nobody",
    "cape": "the noise generator (not to collude with the aggregator)",
    "cape_joint": "the noise generator; safe even for the joint view",
    "secagg": "nobody (cryptographic masks; honest-but-curious parties)",
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    algorithms = [a for a in TRUSTED if a in registry.names("pca")]
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
    table = df.groupby(["algorithm", "epsilon"]).captured_energy_ratio.mean().unstack()
    print("mean captured energy / optimum, and who must be trusted:")
    print(f"{'ε =':>11}  " + "  ".join(f"{e:<5g}" for e in table.columns))
    for alg in algorithms:
        values = "  ".join(f"{v:.3f}" for v in table.loc[alg])
        print(f"{alg:>11}  {values}   trusts: {TRUSTED[alg]}")


if __name__ == "__main__":
    main()
