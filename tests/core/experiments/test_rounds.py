"""dpcore.experiments.sweeps.rounds: the rounds axis at a fixed total ε, and the best T per
algorithm."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpcore
from dpcore.experiments.sweeps.rounds import (
    PROG,
    RoundsSpec,
    best_rounds,
    draws_summary,
    iterative_algorithms,
    main,
    rounds_summary,
    rounds_sweep,
    run_rounds_sweep,
    versus,
)

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
    ours = frame[(frame.algorithm == "npm") & (frame.rounds == 4)].drop(columns=["rounds", "draw"])
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


# --- the page's request and its command (issue #38, item 1) --------------------------------


def test_the_command_reproduces_a_specs_numbers_exactly(capsys):
    spec = RoundsSpec.build(
        rounds=[1, 3], dim=10, k=2, sites=3, n_per_site=150, epsilon=0.7, delta=1e-3, runs=2,
        algorithms=["cape", "npm_cape", "fedpower"], calibration="analytic",
        neighbouring="replace", site_shares=(2, 1, 1), pool_size=800,
    )  # fmt: skip
    command = spec.command(5)
    words = command.split()
    assert words[: len(PROG.split())] == PROG.split()
    printed = main(words[len(PROG.split()) :])
    direct = rounds_summary(run_rounds_sweep(spec, 5))
    pd.testing.assert_frame_equal(printed, direct, check_exact=True)
    assert "fedpower" in capsys.readouterr().out


def test_the_command_refuses_what_it_cannot_express():
    spec = RoundsSpec.build(rounds=[1], epsilon=1.0, algorithms=["npm"], faithful=True, **SMALL)
    with pytest.raises(ValueError, match="faithful"):
        spec.command(0)
    with pytest.raises(ValueError, match="seed"):
        spec.command(-1)


def test_the_estimate_sums_the_sweeps_it_runs():
    spec = RoundsSpec.build(rounds=[1, 2, 5], epsilon=1.0, algorithms=["cape", "npm"], **SMALL)
    parts = spec.parts()
    assert [t for t, _ in parts] == [1, 1, 2, 5]  # the one-shot part, then one per T
    # the synthetic pool is drawn once for all the parts (run_rounds_sweep), read by each
    drawn = dpcore.pool_seconds(800, 10) - dpcore.pool_seconds(800, 10, draw=False)
    summed = sum(p.estimate().seconds for _, p in parts) - (len(parts) - 1) * drawn
    assert spec.estimate().seconds == pytest.approx(summed)
    assert spec.estimate().tasks == sum(p.estimate().tasks for _, p in parts)


def test_the_iterative_algorithms_are_the_registrys_records_with_rounds():
    names = iterative_algorithms()
    assert {"npm", "npm_cape", "fedpower"} <= set(names)
    assert "cape" not in names and "fedpca" not in names  # one-shot


def test_versus_is_the_difference_of_independent_means(frame):
    table = versus(frame, "cape")
    best = best_rounds(frame).set_index(["algorithm", "epsilon"])
    for row in table[table.algorithm != "cape"].itertuples():
        ref = best.loc[("cape", row.epsilon)]
        assert row.difference == pytest.approx(row.mean - ref["mean"])
        assert row.se_difference == pytest.approx(np.hypot(row.se, ref["se"]))
    own = table[table.algorithm == "cape"]
    assert len(own) == 2 and own.difference.isna().all()  # the reference, uncompared
    with pytest.raises(ValueError, match="reference"):
        versus(frame, "conv")


def test_the_pool_drawn_once_gives_each_parts_own_numbers():
    # run_rounds_sweep draws the synthetic pool once from run_pca_sweep's data stream; every
    # part's rows must be those of that part run on its own (which draws the pool itself)
    spec = RoundsSpec.build(rounds=[2, 5], epsilon=0.8, algorithms=["cape", "fedpower"], **SMALL)
    ours = run_rounds_sweep(spec, 4)
    for t, part in spec.parts():
        alone = dpcore.run_pca_sweep(part, np.random.default_rng(4))
        rows = ours[(ours.rounds == t) & ours.algorithm.isin(part.algorithms)]
        pd.testing.assert_frame_equal(
            rows.drop(columns=["rounds", "draw"]).reset_index(drop=True), alone, check_exact=True
        )


def test_draw_d_is_the_one_draw_sweep_from_seed_plus_d():
    # the data-draw axis (issue #52): draw d re-runs everything from seed + d, so each draw
    # is reproducible alone and draw 0 is the one-draw sweep, bit for bit
    spec = RoundsSpec.build(rounds=[1, 3], epsilon=0.8, algorithms=["cape", "npm_cape"], **SMALL)
    many = run_rounds_sweep(spec, 6, draws=3)
    assert sorted(set(many["draw"])) == [0, 1, 2]
    for d in range(3):
        alone = run_rounds_sweep(spec, 6 + d)
        rows = many[many["draw"] == d].reset_index(drop=True)
        pd.testing.assert_frame_equal(
            rows.drop(columns="draw"), alone.drop(columns="draw"), check_exact=True
        )
    # a new draw is new data: the levels move between draws
    levels = many[many.algorithm == "cape"].groupby("draw").captured_energy_ratio.mean()
    assert levels.nunique() == 3


def test_draws_summary_is_the_spread_of_the_per_draw_means():
    spec = RoundsSpec.build(rounds=[1, 2], epsilon=[0.5, 2.0], algorithms=["npm"], **SMALL)
    frame = run_rounds_sweep(spec, 1, draws=4)
    table = draws_summary(frame).set_index(["algorithm", "epsilon", "rounds"])
    for (eps, t), rows in frame.groupby(["epsilon", "rounds"]):
        means = [g.captured_energy_ratio.mean() for _, g in rows.groupby("draw")]
        row = table.loc[("npm", eps, t)]
        assert row["median"] == pytest.approx(float(np.median(means)), rel=1e-12)
        # pandas' grouped mean may sum in another order than Series.mean: a rounding apart
        assert row["min"] == pytest.approx(min(means), rel=1e-12)
        assert row["max"] == pytest.approx(max(means), rel=1e-12)
        assert (row["draws"], row["runs"]) == (4, SMALL["runs"])
    with pytest.raises(ValueError, match="draw column"):
        draws_summary(frame.drop(columns="draw"))


@pytest.mark.parametrize("draws", [0, 101, 2.5])
def test_draws_out_of_range_is_refused_by_name(draws):
    spec = RoundsSpec.build(rounds=[1], epsilon=1.0, algorithms=["npm"], **SMALL)
    with pytest.raises((ValueError, TypeError), match="draws"):
        run_rounds_sweep(spec, 0, draws=draws)


def test_the_command_prints_the_draws_table(capsys):
    out = main(
        ["--epsilon", "1", "--rounds", "1", "2", "--algorithms", "npm", "--runs", "2",
         "--dim", "10", "--k", "2", "--sites", "3", "--n-per-site", "150",
         "--pool-size", "800", "--draws", "2", "--table", "draws"]
    )  # fmt: skip
    assert list(out.columns) == ["algorithm", "epsilon", "rounds", "median", "min", "max",
                                 "draws", "runs"]  # fmt: skip
    assert (out["draws"] == 2).all() and "median" in capsys.readouterr().out


def test_the_rounds_axis_runs_on_any_executor_with_the_same_frame():
    # issue #51: "the rounds axis takes no executor": each T's tasks go where pca_sweep's go
    from concurrent.futures import ThreadPoolExecutor

    keywords = dict(rounds=[1, 3], rng=4, epsilon=[0.5, 2.0], algorithms=["cape", "npm_cape"])
    alone = rounds_sweep(**keywords, **SMALL)
    with ThreadPoolExecutor(2) as pool:
        pooled = rounds_sweep(**keywords, executor=pool, **SMALL)
    pd.testing.assert_frame_equal(alone, pooled, check_exact=True)


@pytest.mark.slow  # a pool of two processes started
def test_the_command_on_processes_prints_the_same_table():
    argv = ["--epsilon", "1", "--rounds", "1", "3", "--algorithms", "cape", "npm_cape",
            "--runs", "2", "--dim", "10", "--k", "2", "--sites", "3", "--n-per-site", "150",
            "--pool-size", "800", "--table", "all"]  # fmt: skip
    pd.testing.assert_frame_equal(main(argv), main([*argv, "--processes", "2"]), check_exact=True)
    with pytest.raises(ValueError, match="--processes"):
        main([*argv, "--processes", "0"])
