"""dpcore.experiments.sweeps.rounds: the rounds axis at a fixed total ε, and the best T per
algorithm."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpcore
from dpcore.experiments.sweeps.rounds import best_rounds, rounds_sweep

pytestmark = pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")
SMALL = {"dim": 10, "k": 2, "sites": 3, "n_per_site": 150, "runs": 3, "pool_size": 800}


@pytest.fixture(scope="module")
def frame():
    return rounds_sweep(
        rounds=[1, 4, 12], rng=2, epsilon=[0.5, 1e4], algorithms=["cape", "npm", "npm_cape"],
        **SMALL,
    )


def test_every_iterative_algorithm_runs_at_every_t_and_a_one_shot_once(frame):
    counts = frame.groupby(["algorithm", "rounds"]).size()
    assert counts.loc[("cape", 1)] == 2 * SMALL["runs"]
    assert set(frame[frame.algorithm == "cape"].rounds) == {1}
    for name in ("npm", "npm_cape"):
        assert set(frame[frame.algorithm == name].rounds) == {1, 4, 12}


def test_each_t_is_the_sweep_with_that_many_rounds(frame):
    # the T = 4 rows are exactly pca_sweep with the records set to 4 rounds (same seed)
    spec = dpcore.PcaSpec.build(epsilon=[0.5, 1e4], algorithms=["npm"], **SMALL)
    record = spec.records[0]
    four = type(record)(**{**record.__dict__, "pca": record.pca.with_rounds(4)})
    spec = spec.__class__(**{**spec.__dict__, "records": (four,)})
    direct = dpcore.run_pca_sweep(spec, np.random.default_rng(2))
    ours = frame[(frame.algorithm == "npm") & (frame.rounds == 4)].drop(columns="rounds")
    pd.testing.assert_frame_equal(ours.reset_index(drop=True), direct)


def test_more_rounds_help_when_the_budget_is_large(frame):
    # at ε = 1e4 the per-round noise is negligible even at T = 12: the error of the power
    # method falls as (λ_{K+1}/λ_K)^T, so T = 12 beats T = 1 in every run
    high = frame[(frame.epsilon == 1e4) & (frame.algorithm == "npm")]
    by_t = high.pivot(index="run", columns="rounds", values="captured_energy_ratio")
    assert (by_t[12] > by_t[1]).all()
    assert by_t[12].min() > 0.99


def test_best_rounds_reads_the_argmax_with_its_standard_error(frame):
    best = best_rounds(frame)
    for row in best.itertuples():
        part = frame[(frame.algorithm == row.algorithm) & (frame.epsilon == row.epsilon)]
        means = part.groupby("rounds").captured_energy_ratio.mean()
        assert row.rounds == means.idxmax() and row.mean == pytest.approx(means.max())
        values = part[part.rounds == row.rounds].captured_energy_ratio
        assert row.se == pytest.approx(values.std(ddof=1) / np.sqrt(len(values)))


@pytest.mark.parametrize(
    ("rounds", "name"), [([], "rounds"), ([0], "rounds"), ([2, 2], "rounds"), ("3", "rounds")]
)
def test_bad_rounds_are_refused_by_name(rounds, name):
    with pytest.raises(ValueError, match=name):
        rounds_sweep(rounds=rounds, epsilon=1.0, algorithms=["npm"], **SMALL)


def test_bad_metric_is_refused(frame):
    with pytest.raises(ValueError, match="metric"):
        best_rounds(frame, metric="nope")
