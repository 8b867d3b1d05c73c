"""Questions answered from sweeps: target crossings and sites for a CAPE advantage."""

import math

import numpy as np
import pandas as pd
import pytest

from dpcore import cape_design, site_noise_std
from dpcore.experiments.questions import sites_for_advantage, sweep_crossings, target_crossing

GRID = np.array([0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0])


def _two_run_sweep(alg: str, x: np.ndarray, mean: np.ndarray, half: float) -> pd.DataFrame:
    # Two runs mean ± half: sample std half·√2 (ddof 1), standard error half·√2/√2 = half.
    rows = [
        {"algorithm": alg, "epsilon": e, "run": r, "q": m + sign * half}
        for e, m in zip(x, mean, strict=True)
        for r, sign in enumerate((-1.0, 1.0))
    ]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("target", [0.5, 0.7, 0.85])
def test_crossing_of_a_curve_linear_in_log_epsilon_is_exact(target):
    # q(ε) = a + b·ln ε is a straight line in ln ε, so log-ε interpolation is exact: the
    # crossing is exp((t − a)/b) and the ±1 s.e. curves cross at exp((t ∓ se − a)/b).
    a, b, se = 0.8, 0.05, 0.02
    df = _two_run_sweep("cape", GRID, a + b * np.log(GRID), se)
    out = sweep_crossings(df, axis="epsilon", metric="q", target=target).iloc[0]
    assert out["status"] == "crossed" and out["runs"] == 2
    assert out["crossing"] == pytest.approx(math.exp((target - a) / b), rel=1e-9)
    assert out["low"] == pytest.approx(math.exp((target - se - a) / b), rel=1e-9)
    assert out["high"] == pytest.approx(math.exp((target + se - a) / b), rel=1e-9)


def test_crossing_of_the_cape_aggregate_noise_matches_the_analytic_epsilon():
    # CAPE's aggregate std for S equal sites is τ_s/S = sqrt(2 ln(1.25/δ))/(N_s ε S) (eq. (2),
    # classic calibration), so "std below τ*" first holds at ε* = sqrt(2 ln(1.25/δ))/(N_s S τ*).
    # The curve is monotone, so the interpolated crossing lies in the grid interval that
    # brackets ε*: |ln ε̂ − ln ε*| ≤ one grid step, ln(10)/40 here.
    sites, n, delta, tau_star = 5, 1000, 1e-3, 2e-3
    grid = np.logspace(-2, 0, 81)[:-1]  # ε < 1: the classic formula is a proof there
    std = np.array(
        [
            cape_design(
                site_noise_std([n] * sites, epsilon=e, delta=delta, calibration="classic")
            ).tau_agg
            for e in grid
        ]
    )
    c = target_crossing(grid, std, np.zeros(grid.size), tau_star, higher_is_better=False)
    eps_star = math.sqrt(2 * math.log(1.25 / delta)) / (n * sites * tau_star)
    assert c.status == "crossed"
    assert 0.01 < eps_star < 1
    assert abs(math.log(c.value) - math.log(eps_star)) <= math.log(10) / 40
    assert c.low == c.high == c.value  # no run-to-run spread: a zero-width range


def test_lower_is_better_mirrors_higher_is_better():
    mean = np.linspace(1.0, 0.1, GRID.size)
    se = np.full(GRID.size, 0.05)
    down = target_crossing(GRID, mean, se, 0.5, higher_is_better=False)
    up = target_crossing(GRID, -mean, se, -0.5)
    assert down == up
    assert down.low < down.value < down.high


def test_targets_outside_the_grid_are_reported_not_extrapolated():
    mean = np.linspace(0.2, 0.8, GRID.size)
    se = np.zeros(GRID.size)
    never = target_crossing(GRID, mean, se, 0.95)
    assert never.status == "not reached" and math.isnan(never.value)
    start = target_crossing(GRID, mean, se, 0.1)
    assert start.status == "from the start" and math.isnan(start.value)
    # the mean crosses but the pessimistic curve (mean − s.e.) never does
    wide = target_crossing(GRID, mean, np.full(GRID.size, 0.1), 0.75)
    assert wide.status == "crossed" and math.isnan(wide.high) and wide.low < wide.value


def test_crossings_per_algorithm_keep_their_order():
    x = np.array([1.0, 2.0, 3.0])
    df = pd.concat(
        [
            _two_run_sweep("conv", x, np.array([0.0, 0.5, 1.0]), 0.0),
            _two_run_sweep("cape", x, np.array([0.5, 1.0, 1.5]), 0.0),
        ]
    )
    out = sweep_crossings(df, axis="epsilon", metric="q", target=0.75, log_x=False)
    assert out["algorithm"].tolist() == ["conv", "cape"]
    assert out["crossing"].tolist() == pytest.approx([2.5, 1.5])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"x": [1.0, 1.0], "mean": [0, 1], "stderr": [0, 0], "target": 0.5}, "increasing"),
        ({"x": [0.0, 1.0], "mean": [0, 1], "stderr": [0, 0], "target": 0.5}, "increasing"),
        ({"x": [1.0, 2.0], "mean": [0, 1], "stderr": [0, -1], "target": 0.5}, "stderr"),
        ({"x": [1.0], "mean": [0], "stderr": [0], "target": 0.5}, "length"),
        ({"x": [1.0, 2.0], "mean": [0, np.nan], "stderr": [0, 0], "target": 0.5}, "finite"),
        ({"x": [1.0, 2.0], "mean": [0, 1], "stderr": [0, 0], "target": math.nan}, "target"),
    ],
)
def test_bad_inputs_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        target_crossing(**kwargs)


def test_missing_column_is_refused():
    with pytest.raises(ValueError, match="column 'q'"):
        sweep_crossings(
            pd.DataFrame({"algorithm": [], "epsilon": []}), axis="epsilon", metric="q", target=1.0
        )


@pytest.mark.parametrize("target", [1.0, 2.5, 10.0, 37.0])
@pytest.mark.parametrize("measure", ["variance", "std"])
def test_sites_for_advantage_agrees_with_the_cape_design(target, measure):
    # The advantage of S equal sites, from dpcore's design: conventional over CAPE.
    def advantage(s: int) -> float:
        d = cape_design(np.full(s, 0.3))
        ratio = d.tau_conv**2 / d.tau_agg**2
        return ratio if measure == "variance" else math.sqrt(ratio)

    s = sites_for_advantage(target, measure=measure)
    assert advantage(s) >= target * (1 - 1e-12)
    assert s == 2 or advantage(s - 1) < target


def test_sites_for_advantage_refuses_targets_below_one():
    with pytest.raises(ValueError, match=r"target must be a float in \[1, 1e\+06\]"):
        sites_for_advantage(0.5)
