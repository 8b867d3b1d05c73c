"""The pairwise scheme's noise: empirical covariance against the derived one, and its views.

Usage::

    .venv/bin/python -m benchmarks.pairwise_noise            # 400 runs per case
    .venv/bin/python -m benchmarks.pairwise_noise --runs 200

For three configurations of unequal sites (N_s and ε_s; the federated tests' layouts) and
both designs, runs :func:`dpcore.protocol.pairwise.pairwise_average` ``--runs`` times (each case
with seeds of its own; the sites' values are means of D = 4 columns, so each run gives 4
independent draws of (E_1, …, E_S)) and compares the empirical covariance of E with the derived one
(:func:`dpcore.protocol.pairwise.pairwise_covariance`, docs/federated.md) entry by entry:
z = (Ĉ_st − C_st) / sqrt((C_ss C_tt + C_st²)/n), the standard error of a zero-mean Gaussian
sample covariance from n draws. Every |z| must be below 3. The distributed sites call the
same function with the same streams (tests/federated/test_federated.py shows the releases equal to
1e-12), so this is the covariance of a real run's E as well.

Then each site's ε in the views that matter, against its promise ε_s (analytic Gaussian at
δ_s, :func:`dpcore.analysis.views.effective_epsilons`): its own release, the aggregator's joint
view of all releases, and the aggregator with one other site (the coalition that knows
that site's pair noises), the last beside CAPE's with a trusted noise generator.
"""

from __future__ import annotations

import argparse
import itertools
import sys

import numpy as np
import pandas as pd

from dpcore import (
    coalition_view,
    effective_epsilons,
    mean_sensitivity,
    pairwise_average,
    pairwise_coalition_covariance,
    pairwise_covariance,
)
from dpcore.analysis.views import _joint_std
from federated.protocol import make_design, site_tau

EPSILON = (0.5, 1.0, 2.0)  # tests/federated/test_federated.py: EPS, DELTA and the three layouts
DELTA = (1e-5, 1e-5, 1e-6)
LAYOUTS = {"A": (250, 350, 450), "B": (40, 900, 120), "C": (1000, 30, 300)}
DIM = 4
Z_LIMIT = 3.0


def covariance_check(n_samples, design_kind: str, runs: int, first_seed: int) -> pd.DataFrame:
    """One row per entry (s, t), s ≤ t: derived and empirical covariance and their z."""
    tau = site_tau(n_samples, EPSILON, DELTA)
    design = make_design("mean", design_kind, tau, n_samples)
    derived = pairwise_covariance(design)
    values = np.zeros((len(n_samples), DIM))
    draws = np.concatenate(
        [pairwise_average(values, design, seed=first_seed + r).e.T for r in range(runs)]
    )  # (runs·D, S)
    n = draws.shape[0]
    empirical = draws.T @ draws / n
    rows = []
    for s, t in itertools.combinations_with_replacement(range(len(n_samples)), 2):
        se = np.sqrt((derived[s, s] * derived[t, t] + derived[s, t] ** 2) / n)
        rows.append(
            {
                "entry": f"({s + 1},{t + 1})",
                "derived": derived[s, t],
                "empirical": empirical[s, t],
                "z": (empirical[s, t] - derived[s, t]) / se,
            }
        )
    return pd.DataFrame(rows)


def views(n_samples, design_kind: str) -> pd.DataFrame:
    """Each site's ε in its own release, the aggregator's joint view and with one colluder."""
    tau = site_tau(n_samples, EPSILON, DELTA)
    design = make_design("mean", design_kind, tau, n_samples)
    sens = mean_sensitivity(np.asarray(n_samples))
    rows = []

    def add(view, site, std, cape_std=None):
        eps = float(effective_epsilons(std, sens[site], delta=DELTA[site]))
        row = {"view": view, "site": site + 1, "promised": EPSILON[site], "epsilon": eps}
        row["meets"] = eps <= EPSILON[site] * (1 + 1e-9)
        if cape_std is not None:
            row["helper epsilon"] = float(
                effective_epsilons(cape_std, sens[site], delta=DELTA[site])
            )
        rows.append(row)

    honest, cov = pairwise_coalition_covariance(design)
    for i, s in enumerate(honest):
        add("own release", int(s), float(np.sqrt(cov[i, i])))
    for i, std in enumerate(_joint_std(cov)):
        add("aggregator, all releases", int(honest[i]), float(std))
    for colluder in range(design.n_sites):
        honest, cov = pairwise_coalition_covariance(design, (colluder,))
        helper = coalition_view(design, (colluder,))
        for i, std in enumerate(_joint_std(cov)):
            add(f"aggregator + site {colluder + 1}", int(honest[i]), float(std),
                float(helper.joint_std[i]))  # fmt: skip
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    """Print both tables; exit 1 if any |z| ≥ 3."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pairwise_noise")
    parser.add_argument("--runs", type=int, default=400, help="runs per case (≥ 200)")
    args = parser.parse_args(argv)
    if args.runs < 200:
        parser.error(f"--runs must be at least 200; got {args.runs}")
    pd.set_option("display.width", 160)
    worst = 0.0
    cases = itertools.product(LAYOUTS.items(), ("cape", "joint"))
    for case, ((name, n_samples), kind) in enumerate(cases):
        # seeds of their own per case: the same seeds would give the same Z_st in every case
        table = covariance_check(n_samples, kind, args.runs, first_seed=case * args.runs)
        worst = max(worst, float(table["z"].abs().max()))
        print(f"\n## {name}: N_s = {n_samples}, {kind} design, {args.runs} runs × D = {DIM}")
        print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
        print(views(n_samples, kind).to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    verdict = "PASS" if worst < Z_LIMIT else "FAIL"
    print(f"\nlargest |z| over every entry and case: {worst:.2f} ({verdict}: limit {Z_LIMIT:g})")
    return 0 if worst < Z_LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
