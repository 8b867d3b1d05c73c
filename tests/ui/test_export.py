"""Exports: each 'reproduce in Python' snippet gives the page's numbers; the standalone figure
states every parameter and the link that reproduces it."""

from __future__ import annotations

import html
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from test_public_imports import reaches

import dpcore
from learning import snippets
from learning.settings import OTD_SETTINGS, PcaControls
from ui import cached
from ui.export import FigureExport, caption, standalone_html
from ui.specs import otd_spec, pca_spec

SITES = dpcore.Sites((1000, 500, 2000), (0.5, 1.0, 0.5), (1e-3, 1e-3, 1e-2), (0.3, 0.2, 0.5))


def run(code: str) -> dict:
    """Execute a snippet as a user would paste it; return its variables."""
    assert reaches(code) == []  # what we teach imports only dpcore's public names (#51)
    scope: dict = {}
    exec(compile(code, "<snippet>", "exec"), scope)  # the snippet is our own text
    return scope


def test_sweep_snippet_gives_the_pages_frame():
    chosen = PcaControls(
        dim=20,
        k=3,
        sites=3,
        n_per_site=200,
        epsilon=2.0,
        delta=0.01,
        runs=2,
        seed=4,
        algorithms=("nonprivate", "cape", "conv"),
        calibration="classic",
        neighbouring="add-remove",
        axis="delta",
        unequal=True,
    )
    spec = pca_spec(chosen)
    got = run(snippets.sweep(spec, chosen.seed))["df"]
    pd.testing.assert_frame_equal(got, cached.pca_frame(spec, chosen.seed))


def test_sweep_snippet_on_a_bundled_data_set_loads_it_like_the_app():
    wine = cached.load_dataset("wine")
    chosen = PcaControls(
        dim=wine.dim,
        k=2,
        sites=2,
        n_per_site=50,
        epsilon=1.0,
        delta=0.01,
        runs=1,
        seed=0,
        algorithms=("cape",),
        calibration="analytic",
        neighbouring="replace",
        axis="n_per_site",
        pool=wine.n_samples,
    )
    spec = pca_spec(chosen)
    assert max(spec.grid.values) * 2 <= wine.n_samples  # the grid fits the pool
    code = snippets.sweep(spec, chosen.seed, ("wine",))
    assert "dim=" not in code and "pool_size=" not in code  # the data set decides D
    got = run(code)["df"]
    pd.testing.assert_frame_equal(got, cached.pca_frame(spec, chosen.seed, ("wine",)))


def test_tensor_snippet_gives_the_pages_frame():
    chosen = replace(OTD_SETTINGS, dim=5, k=2, sites=3, n_per_site=2000, runs=2, seed=7)
    chosen = replace(chosen, model="stm", power="authors", axis="sites")
    spec = otd_spec(chosen)
    got = run(snippets.sweep(spec, chosen.seed))["df"]
    pd.testing.assert_frame_equal(got, cached.otd_frame(spec, chosen.seed))


def test_averaging_snippet_gives_the_histograms_draws():
    scope = run(snippets.averaging(SITES, draws=500, seed=3))
    mc = cached.averaging_monte_carlo(SITES, draws=500, seed=3)
    np.testing.assert_array_equal(scope["cape"], mc["cape"])
    np.testing.assert_array_equal(scope["conv"], mc["conv"])


@pytest.mark.parametrize("design", ["cape", "joint"])
def test_collusion_snippet_gives_the_curve(design):
    scope = run(snippets.collusion(SITES, ng=True, design=design))
    expected = cached.collusion_curve_table(SITES, True, design)
    pd.testing.assert_frame_equal(scope["curve"], expected)


def test_collusion_snippet_over_the_rounds_gives_the_curve():
    scope = run(snippets.collusion(SITES, ng=False, design="joint", rounds=5))
    expected = cached.rounds_collusion_table(SITES, False, "joint", 5)
    pd.testing.assert_frame_equal(scope["curve"], expected)


def test_calibration_and_gain_snippets_give_the_plotted_numbers():
    grid = (0.01, 0.1, 1.0, 10.0)
    got = run(snippets.calibration(grid, 1e-5))["table"]
    pd.testing.assert_frame_equal(got, cached.calibration_curve(1e-5, grid))
    rows = run(snippets.gain(3500, 3, points=7))["rows"]
    curve = cached.gain_curve(total=3500, sites=3, points=7)
    np.testing.assert_allclose(np.array(rows), curve.to_numpy(), rtol=0, atol=0)


def test_paper_snippet_names_the_panel_and_the_cli():
    code = snippets.paper_panel("3a", runs=2, seed=1, calibration="classic")
    assert reaches(code) == [] and "dpcore.panel_by_key('3a')" in code
    assert "--figure 3a --runs 2 --seed 1" in code
    compile(code, "<snippet>", "exec")


def test_standalone_figure_states_every_parameter_the_link_and_the_code():
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))
    spec = FigureExport(
        stem="x",
        title="A <title> & more",
        page="pca",
        params={"ε": (0.1, 1.0), "S": 10, "calibration": "analytic"},
        snippet="df = dpcore.pca_sweep(k=1)\n",
    )
    link = "http://localhost:8501/pca?pca_eps=2&pca_sites=20"
    page = standalone_html(fig, spec, link)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert '<script src="http' not in page and len(page) > 1_000_000  # plotly.js embedded
    assert "<h1>A &lt;title&gt; &amp; more</h1>" in page  # escaped, never markup
    assert "ε = (0.1, 1); S = 10; calibration = analytic" in page
    assert "pca_eps=2&amp;pca_sites=20" in page
    assert "dpcore.pca_sweep(k=1)" in page
    # issue #39: the figure names the code that computed it
    commit = dpcore.source_commit()
    assert f"dpcore {dpcore.__version__}, commit {html.escape(commit)}" in page
    assert len(commit.split()[0]) == 40
    assert caption({"a": 0.5, "b": (1, 2)}) == "a = 0.5; b = (1, 2)"


class _Query(dict):
    """st.query_params as page_link reads it (iteration over keys, get_all)."""

    def get_all(self, key):
        return [self[key]]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        # st.context.url is the app's address with the current page's path (issue 22, item 3)
        ("http://localhost:8501/pca", "http://localhost:8501/pca?pca_eps=2"),
        ("http://localhost:8501/pca/", "http://localhost:8501/pca?pca_eps=2"),
        ("https://host.org/cape/pca", "https://host.org/cape/pca?pca_eps=2"),  # baseUrlPath kept
        ("http://localhost:8501", "http://localhost:8501/pca?pca_eps=2"),  # the default page
        (None, "http://localhost:8501/pca?pca_eps=2"),  # URL unknown: `bash run.sh`'s address
    ],
)
def test_the_reproduce_link_names_the_page_once(monkeypatch, url, expected):
    import ui.export as export

    fake = SimpleNamespace(context=SimpleNamespace(url=url), query_params=_Query(pca_eps="2"))
    monkeypatch.setattr(export, "st", fake)
    assert export.page_link("pca") == expected


def test_the_reproduce_link_keeps_every_value_of_a_repeated_key():
    from ui.export import reproduce_link

    query = [("fig_figure", "3"), ("pca_algs", "cape"), ("pca_algs", "conv")]
    got = reproduce_link("http://h:1/paper_figures", "paper_figures", query)
    assert got == "http://h:1/paper_figures?fig_figure=3&pca_algs=cape&pca_algs=conv"


@pytest.mark.slow
def test_audit_tradeoff_snippet_gives_the_charts_views_and_attack():
    from ui.cached import audit_tradeoff

    key = (SITES, 1, (2,), 2000, 7)  # site 2, site 3 colluding (0-based), few trials
    views, _ = audit_tradeoff(SITES, site=1, colluding=(2,), trials=2000, seed=7)
    rows = run(snippets.audit_tradeoff(*key))["rows"]
    assert [(k, v) for k, v, _, _ in rows] == list(zip(views.design, views.view, strict=True))
    for (_, _, reading, box), (_, row) in zip(rows, views.iterrows(), strict=True):
        assert reading.mu == row.mu and reading.epsilon == row.epsilon
        assert reading.posteriors[1] == row["posterior_0.1"]
        assert (box.fpr, box.fnr_high) == (row.fpr, row.fnr_high)  # the same games
