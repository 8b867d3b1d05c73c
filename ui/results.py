"""The results block shared by the experiment pages: metrics, chart, downloads, cost."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
import streamlit as st

import dpcore
from figures.charts import results_figure
from figures.memo import built
from figures.theme import AXIS_LABELS, label
from ui import presenter
from ui.cached import call_core
from ui.explain import explain
from ui.export import FigureExport, export_controls
from ui.tables import arrow


def _means_at(df: pd.DataFrame, axis: str, metric: str, current: float) -> dict[str, float]:
    """Each algorithm's mean of ``metric`` over runs at ``axis`` = ``current``."""
    means = df[df[axis] == current].groupby("algorithm")[metric].mean()
    return {str(a): float(m) for a, m in means.items()}


def _runs(df: pd.DataFrame) -> int:
    return int(df["run"].nunique())


def show_sweep(
    df: pd.DataFrame,
    *,
    axis: str,
    metric: str,
    y_title: str,
    current: float,
    algorithms: Sequence[str],
    value_format: Callable[[float], str],
    export: FigureExport,
    help_text: str,
    target: float | None = None,
    explanation: str | None = None,
    key: Any = None,
) -> None:
    """One metric per algorithm at the current value, the sweep chart and the downloads.

    ``target``: a level drawn as a dotted horizontal line (the question's target);
    ``explanation``: the chart's "What am I looking at?" paragraph;
    ``export``: what the CSV, HTML and Python exports say (:mod:`ui.export`);
    ``key``: the settings that made ``df`` (:func:`figures.memo.built`): what is built from it
    is then found by them instead of a digest of the whole sweep on every rerun.
    """
    stem = export.stem
    algorithms = tuple(algorithms)

    def named(*what: Any) -> Any:
        return None if key is None else (key, axis, metric, *what)

    at_current = built(_means_at, df, axis, metric, current, key=named(current))
    runs = built(_runs, df, key=named())
    for col, alg in zip(st.columns(len(algorithms)), algorithms, strict=True):
        col.metric(
            label(alg),
            value_format(at_current[alg]),
            help=f"{help_text}: mean over {runs} runs at {AXIS_LABELS[axis]} = {current:g}.",
        )
    fig = built(  # the figure built before for these numbers (figures/memo.py)
        results_figure,
        df,
        axis=axis,
        metric=metric,
        y_title=y_title,
        algorithms=algorithms,
        marker=current,
        target=target,
        key=named(y_title, algorithms, current, target),
    )
    st.plotly_chart(presenter.style(fig), key=f"{stem}_chart", config=presenter.chart_config(stem))
    if explanation:
        explain(explanation)
    export_controls(st, fig, lambda: df, export)


def _costs(problem: str, algorithms: tuple[str, ...], dim: int, k: int, sites: int) -> pd.DataFrame:
    """The communication table's rows (:func:`dpcore.communication_cost` per algorithm)."""
    return pd.DataFrame(
        [
            {
                "algorithm": label(a),
                **call_core(
                    dpcore.communication_cost,
                    a,
                    problem=problem,
                    dim=dim,
                    k=min(k, dim),
                    sites=sites,
                ),
            }
            for a in algorithms
        ]
    )


def communication_table(
    problem: str, algorithms: Sequence[str], *, dim: int, k: int, sites: int
) -> None:
    """Reals sent per run by each party, per algorithm (dpcore.communication_cost)."""
    st.header("Communication cost")
    algorithms = tuple(algorithms)
    rows = built(
        _costs, problem, algorithms, dim, k, sites, key=(problem, algorithms, dim, k, sites)
    )
    st.dataframe(arrow(rows), hide_index=True)
    st.caption(f"Real numbers sent per run at D = {dim}, K = {k}, S = {sites}.")
