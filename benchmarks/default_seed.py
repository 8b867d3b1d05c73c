"""How the app's default seed was chosen: a seed whose default views are typical.

One synthetic data pool is drawn per seed, so the numbers a class sees first (the PCA and
tensor pages at their defaults) carry that pool's luck: seed 0's one-site PCA number sits
1.98 robust σ above the median over 50 seeds. This module recomputes each page's default-view
numbers (the metrics above its chart: each algorithm's mean at the slider's ε) for every seed
and ranks seeds by how far their numbers sit from the median over seeds, in units of the
spread over seeds (a robust z-score, median absolute deviation scaled to σ). The default seed
(:data:`learning.settings.DEFAULT_SEED`, 36) has every number shown within one robust σ of the
median (worst |z| 0.85, 5 of the 50 seeds do). It was the seed with the smallest worst-case z
when chosen; streams keyed by algorithm name (issue #51) moved every number by its Monte Carlo
spread and made seed 37 the most typical (0.63), and 36 was kept: changing it would move every
number the docs quote at the default. ``python -m benchmarks.default_seed`` prints the table;
docs/deviations.md records the choice.
"""

from __future__ import annotations

import warnings

import pandas as pd

import dpcore

# The core calls of the PCA and tensor pages at their defaults (app_pages/pca.py,
# app_pages/tensor.py); tests/benchmarks/test_default_seed.py checks that the pages show these
# numbers.
PCA_DEFAULTS = {
    "dim": 50,
    "k": 10,
    "runs": 5,
    "algorithms": ("nonprivate", "cape", "conv", "local", "dpdis"),
    "calibration": dpcore.DEFAULT_CALIBRATION.kind,  # the pages' since issue #51
    "neighbouring": "add-remove",
    "sites": 10,
    "n_per_site": 1000,
    "epsilon": (0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0),
    "delta": 0.01,
}
TENSOR_DEFAULTS = {
    "model": "mog",
    "dim": 10,
    "k": 5,
    "calibration": dpcore.DEFAULT_CALIBRATION.kind,  # the pages' since issue #51
    "sensitivity": "paper",
    "scaling": "public",
    "algorithms": ("nonprivate", "cape", "conv", "local_agn", "random"),
    "restarts": 10,
    "max_iter": 100,
    "tol": 1e-08,
    "sites": 5,
    "n_per_site": 20000,
    "epsilon": (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0),
    "delta": 0.01,
    "runs": 5,
}
EPSILON = 0.5  # both pages' slider default: the metrics show the sweep at this ε
SEEDS = range(50)


def _up_to_shown(defaults: dict) -> dict:
    """The page's sweep cut after :data:`EPSILON`: a grid point's numbers do not depend on the
    points after it (its streams are spawned by its place in the grid:
    ``dpcore.experiments.sweeps.spec``), so the numbers at ``EPSILON`` are the page's, for
    about two thirds of the work (tests/benchmarks/test_default_seed.py compares them with the
    pages)."""
    grid = defaults["epsilon"]
    return {**defaults, "epsilon": grid[: grid.index(EPSILON) + 1]}


def default_view(seed: int) -> dict[str, float]:
    """The numbers above the PCA and tensor charts at their defaults, for one seed.

    PCA: captured energy / optimum per algorithm; tensor: component error q_comp. The
    non-private PCA number is 1 for every pool (it is the optimum) and is left out.
    """
    out: dict[str, float] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the classic calibration's ε ≥ 1 warning
        pca = dpcore.pca_sweep(rng=seed, **_up_to_shown(PCA_DEFAULTS))
        otd = dpcore.otd_sweep(rng=seed, **_up_to_shown(TENSOR_DEFAULTS))
    at = pca[pca.epsilon == EPSILON].groupby("algorithm")["captured_energy_ratio"].mean()
    out |= {f"pca {a}": float(at[a]) for a in PCA_DEFAULTS["algorithms"] if a != "nonprivate"}
    at = otd[otd.epsilon == EPSILON].groupby("algorithm")["component_error"].mean()
    out |= {f"tensor {a}": float(at[a]) for a in TENSOR_DEFAULTS["algorithms"]}
    return out


def seed_table(seeds=SEEDS) -> pd.DataFrame:
    """One row per seed, one column per default-view number."""
    return pd.DataFrame([default_view(s) for s in seeds], index=pd.Index(list(seeds), name="seed"))


def robust_z(table: pd.DataFrame) -> pd.DataFrame:
    """(value − median over seeds) / (1.4826 · MAD): a z-score that one odd pool cannot move
    (1.4826·MAD estimates σ for normal data)."""
    med = table.median()
    mad = 1.4826 * (table - med).abs().median()
    return (table - med) / mad


def most_typical(table: pd.DataFrame) -> int:
    """The seed whose worst |robust z| over every number is smallest."""
    return int(robust_z(table).abs().max(axis=1).idxmin())


def main() -> None:
    from learning.settings import DEFAULT_SEED  # the pages' seed (pure data)

    table = seed_table()
    z = robust_z(table).abs().max(axis=1)
    best = most_typical(table)
    pd.set_option("display.width", 200)
    print(table.assign(worst_z=z).sort_values("worst_z").head(10).round(4))
    print("median over seeds:\n" + table.median().round(4).to_string())
    print(f"seed 0: worst |z| = {z[0]:.2f}; most typical: seed {best} (worst |z| = {z[best]:.2f})")
    print(f"default seed {DEFAULT_SEED}: worst |z| = {z[DEFAULT_SEED]:.2f}")


if __name__ == "__main__":
    main()
