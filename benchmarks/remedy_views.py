"""The dropout remedy against a lying aggregator (issue #48): its estimate of a site's value.

Usage::

    .venv/bin/python -m benchmarks.remedy_views              # 400 draws per case
    .venv/bin/python -m benchmarks.remedy_views --draws 200 --sites 3 10

For the federated command's demo sites (N_s = 150 + 100 s, ε_s = 1, δ_s = 1e-5, the mean of
D = 4 columns, joint-view-safe design) and each dropped site d, runs the protocol in process
``--draws`` times (dpcore's own steps: :func:`dpcore.protocol.cape.site_releases` and
:func:`dpcore.analysis.views.dropout_correction`, the functions the Flower app calls, each
draw from seeds of its own) and plays the aggregator: from what it holds it forms the best
linear unbiased estimate of a site's value, knowing every other site's value (the worst case
of DP), and the table reports that estimate's error std over the draws (4 entries each) as a
multiple of τ_s, beside the σ_joint / τ_s that :func:`dpcore.remedy_view_std` computes and
the ε it means. Views:

* ``sealed`` — the sealed remedy: the remaining releases and one c. The dropped site's late
  release stays sealed (its key is never handed over), so no estimate of its value exists;
  the row shows the most exposed remaining site.
* ``late`` — the open remedy: the dropped site's late release in the clear, and one c.
* ``late, 20 answers`` — that, and 20 answers with fresh H's.

An empirical std below 1 × τ_s beyond its standard error (sqrt(1/(2n)) relative) is a view
that breaks the promise; the sealed rows must stay at or above 1.
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

from dpcore import (
    design_for,
    dropout_correction,
    effective_epsilons,
    gaussian_sigmas,
    mean_sensitivity,
    remedy_view_std,
    site_releases,
)

DIM = 4
ANSWERS = 20
VIEWS = {"sealed": (False, 1), "late": (True, 1), f"late, {ANSWERS} answers": (True, ANSWERS)}


def demo_design(sites: int):
    """The demo sites' design and N_s, as federated.protocol.make_design makes it."""
    n = np.array([150 + 100 * (s + 1) for s in range(sites)])
    tau = gaussian_sigmas(mean_sensitivity(n), epsilon=1.0, delta=1e-5, calibration="analytic")
    return design_for("joint", tau, weights=n / n.sum()), n


def held_sites(n_sites: int, dropped: int, late: bool) -> list[int]:
    """The sites whose releases the aggregator can read."""
    return [s for s in range(n_sites) if late or s != dropped]


def draw(design, values, dropped: int, late: bool, answers: int, rng) -> np.ndarray:
    """One run: what the aggregator holds, one row per held release (minus F) or correction,
    each with the known values of every site subtracted but the target's (see ``estimate``)."""
    e, f, _, released = site_releases(values, design, symmetric=False, rng=rng)
    rows = [released[s] - f[s] for s in held_sites(design.n_sites, dropped, late)]
    rows += [dropout_correction(e, design, [dropped], rng=rng) for _ in range(answers)]
    return np.array(rows)


def covariance(design, dropped: int, late: bool, answers: int) -> np.ndarray:
    """The covariance of the rows of :func:`draw` per entry, from the design (E = M z)."""
    s = design.n_sites
    held = held_sites(s, dropped, late)
    mu_d = design.weights[dropped]
    width = 2 * s + answers
    a = np.zeros((len(held) + answers, width))
    for i, h in enumerate(held):
        a[i, :s] = design.e_mixing[h]
        a[i, s + h] = math.sqrt(design.var_g[h])
    for j in range(answers):
        a[len(held) + j, :s] = mu_d * design.e_mixing[dropped]
        a[len(held) + j, 2 * s + j] = mu_d * math.sqrt(design.var_g[dropped])
    return a @ a.T


def estimate_errors(design, dropped, late, answers, target, draws, seed) -> np.ndarray:
    """The aggregator's BLUE of site ``target``'s value, minus the truth, over ``draws``
    runs (D entries each): weights Σ⁻¹v / (vᵀΣ⁻¹v) with v the target's row."""
    held = held_sites(design.n_sites, dropped, late)
    cov = covariance(design, dropped, late, answers)
    v = np.zeros(cov.shape[0])
    v[held.index(target)] = 1.0
    w = np.linalg.solve(cov, v)
    w /= v @ w
    values = np.random.default_rng(seed).uniform(-1, 1, (design.n_sites, DIM)) / 4
    known = np.zeros((cov.shape[0], DIM))  # every other site's value, known to the attacker
    for i, h in enumerate(held):
        if h != target:
            known[i] = values[h]
    errors = []
    for run in np.random.SeedSequence(seed).spawn(draws):
        rows = draw(design, values, dropped, late, answers, np.random.default_rng(run)) - known
        errors.append(w @ rows - values[target])
    return np.concatenate(errors)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=400, help="runs per case (≥ 200)")
    parser.add_argument("--sites", type=int, nargs="+", default=[3, 10, 20])
    args = parser.parse_args(argv)
    if args.draws < 200:
        parser.error(f"--draws must be at least 200; got {args.draws}")
    print("| S | view | site | empirical std / τ_s (± s.e.) | computed σ_joint / τ_s | ε (1) |")
    print("|---|---|---|---|---|---|")
    broken = 0
    for sites in args.sites:
        design, n = demo_design(sites)
        dropped = sites // 2  # a middle site drops (or is only late)
        for view, (late, answers) in VIEWS.items():
            std = remedy_view_std(design, [dropped], late=late, answers=answers)
            ratio = np.where(np.isfinite(std), std / design.tau_site, np.inf)
            target = int(np.argmin(ratio))  # the most exposed site the aggregator can read
            err = estimate_errors(design, dropped, late, answers, target, args.draws, sites)
            measured = float(np.std(err)) / design.tau_site[target]
            se = measured / math.sqrt(2 * err.size)
            eps = float(effective_epsilons(std[target], mean_sensitivity(n)[target], delta=1e-5))
            print(
                f"| {sites} | {view} | {target + 1}{' (dropped)' if target == dropped else ''} | "
                f"{measured:.3f} ± {se:.3f} | {ratio[target]:.3f} | {eps:.3f} |"
            )
            if abs(measured - ratio[target]) > 4 * se:
                print("  the empirical std is off the computed one by > 4 s.e.", file=sys.stderr)
                broken += 1
            if view == "sealed" and measured < 1 - 4 * se:
                print("  the sealed view breaks the promise", file=sys.stderr)
                broken += 1
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
