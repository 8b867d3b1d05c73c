"""The PCA page's Baselines section (issue #38): its numbers are the command's numbers.

The page shows the rounds axis of every registered iterative algorithm beside the chosen
one-shot ones, and the command that reproduces it; running that command here must give the
same table to the last bit (same spec, same seed), and the chart must draw those numbers.
"""

import os
import shlex
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpcore import ROUNDS_PROG as PROG
from dpcore import iterative_algorithms
from dpcore import rounds_main as main

ROOT = Path(__file__).resolve().parents[2]
MODULE = PROG.removeprefix("python ")  # "-m dpcore.experiments.sweeps.rounds"
pytestmark = [pytest.mark.app, pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")]


@pytest.fixture(scope="module")
def shown():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page("app_pages/pca.py")
    at.query_params.update(
        {
            "pca_dim": "20",
            "pca_k": "3",
            "pca_runs": "3",
            "pca_algs": ["CAPE", "DP-PCA (Liu et al. 2022)"],  # a one-shot baseline of #52 too
            "pca_rounds": "true",
        }
    )
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    table = next(d.value for d in at.dataframe if "rounds" in d.value.columns)
    command = next(c.value for c in at.code if MODULE in c.value)
    best = next(d.value for d in at.dataframe if "best T" in d.value.columns)
    return table, command, best


def test_the_page_shows_every_iterative_method_at_every_t_beside_one_shot_cape(shown):
    table, _, _ = shown
    assert set(table[table.algorithm == "cape"].rounds) == {1}
    assert set(table[table.algorithm == "dp_pca"].rounds) == {1}  # chosen in the picker: flat
    for name in iterative_algorithms():  # from the registry, not from a list in the page
        assert len(table[table.algorithm == name]) > 1, name
    assert (table.se > 0).all() and (table.runs == 3).all()


def test_the_pages_numbers_are_the_commands_numbers(shown, capsys):
    table, command, _ = shown
    words = shlex.split(command)
    assert words[1 : len(PROG.split())] == MODULE.split()
    ours = main(words[len(PROG.split()) :])
    pd.testing.assert_frame_equal(
        table.reset_index(drop=True), ours.reset_index(drop=True), check_exact=True
    )
    assert "npm_cape" in capsys.readouterr().out  # the command prints the table


def test_the_chart_draws_the_tables_means_and_standard_error_bands(shown):
    from figures.rounds import rounds_figure
    from figures.theme import label

    table, _, _ = shown
    fig = rounds_figure(table, y_title="ratio")
    lines = {t.name: t for t in fig.data if t.showlegend is not False}
    bands = [t for t in fig.data if t.showlegend is False]
    for name in iterative_algorithms():
        part = table[table.algorithm == name].sort_values("rounds")
        line = lines[label(name)]
        np.testing.assert_array_equal(line.x, part.rounds.to_numpy(float))
        np.testing.assert_array_equal(line.y, part["mean"].to_numpy())
        band = next(b for b in bands if b.legendgroup == name)
        upper = np.asarray(band.y)[: len(part)]
        np.testing.assert_allclose(upper, (part["mean"] + part.se).to_numpy(), rtol=1e-15)
    # one-shot CAPE: one release, a flat line over the whole T range
    cape = lines[f"{label('cape')} (one release)"]
    assert list(cape.x) == [table.rounds.min(), table.rounds.max()]
    assert len(set(cape.y)) == 1


def test_the_pages_answer_is_each_methods_best_t_against_one_shot_cape(shown):
    # the page's "does it beat one-shot CAPE" column, read back against versus_of
    from dpcore import versus_of
    from figures.theme import label

    table, _, best = shown
    expected = versus_of(table, "cape").set_index("algorithm")
    page = best.set_index("algorithm")
    column = next(c for c in page.columns if "CAPE" in c)
    for name in iterative_algorithms():
        row, want = page.loc[label(name)], expected.loc[name]
        assert row["best T"] == want["rounds"]
        assert row[column] == f"{want['difference']:+.4f} ± {want['se_difference']:.4f}"
    assert page.loc[label("cape"), column] == ""  # the reference itself


def test_the_heavy_job_gives_the_pages_numbers_on_a_bundled_data_set():
    # the child's path (serving.worker): a bundled set is named ("wine",), with no argument;
    # pca_frame failed on it with a TypeError before (load_source(*source, data_dir))
    import dataclasses

    import dpcore
    from dpcore import RoundsSpec, rounds_summary, run_rounds_sweep
    from serving import worker

    wine = dpcore.load_bundled("wine")
    spec = RoundsSpec.build(
        rounds=[1, 2], dim=wine.dim, k=2, sites=2, n_per_site=50, epsilon=1.0, runs=2,
        algorithms=["cape", "npm_cape"], pool_size=wine.n_samples,
    )  # fmt: skip
    job = worker.rounds_table(spec, 3, ("wine",), None)
    direct = rounds_summary(
        run_rounds_sweep(dataclasses.replace(spec, sweep=spec.sweep.replace(data=wine)), 3)
    )
    pd.testing.assert_frame_equal(job, direct, check_exact=True)
    frame = worker.pca_frame(spec.sweep, 3, ("wine",), None)
    assert set(frame.algorithm) == {"cape", "npm_cape"}


@pytest.mark.slow
def test_the_command_runs_as_printed_in_a_fresh_terminal_at_the_root(shown, capsys):
    """Issue #49: the page printed ``python -m …``, which a fresh terminal runs with the
    system's Python: "No module named pandas". It names the project's venv now, says so under
    it, and runs as printed (bash, at the checkout's root, no venv activated, no PYTHONPATH)
    to the same table."""
    _, command, _ = shown
    assert command.startswith(".venv/bin/python -m dpcore.experiments.sweeps.rounds ")
    # a fresh terminal: no activated venv, no PYTHONPATH; only the CPU pins that make the
    # numbers comparable to this process's (tests/conftest.py) are kept
    fresh = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8"}
    fresh |= {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES")
              if k in os.environ}  # fmt: skip
    done = subprocess.run(
        ["bash", "-c", command], cwd=ROOT, env=fresh, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    main(shlex.split(command)[len(PROG.split()) :])  # the same words, in this process
    assert done.stdout == capsys.readouterr().out
