"""Questions a sweep answers: the target line and where each algorithm crosses it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from dpcore import sweep_crossings
from figures.memo import built
from figures.theme import AXIS_LABELS, LOG_AXES, label
from ui.box import Box
from ui.state import bound


@dataclass(frozen=True)
class Target:
    """A level on the sweep's metric and what reaching it means."""

    value: float
    higher_is_better: bool
    text: str  # e.g. "90 % of the non-private captured energy"


def crossing_table(
    df: pd.DataFrame, axis: str, metric: str, target: float, higher_is_better: bool
) -> pd.DataFrame:
    """:func:`dpcore.experiments.questions.sweep_crossings` (log interpolation on log axes)."""
    return sweep_crossings(
        df,
        axis=axis,
        metric=metric,
        target=target,
        higher_is_better=higher_is_better,
        log_x=axis in LOG_AXES,
    )


def _describe(row: pd.Series, axis: str, grid: Sequence[float]) -> tuple[str, str]:
    name = AXIS_LABELS[axis].split(" ")[-1]
    if row["status"] == "from the start":
        return f"≤ {min(grid):g}", f"met already at the smallest {name} of the grid"
    if row["status"] == "not reached":
        return "not reached", f"not reached on the grid (up to {name} = {max(grid):g})"
    lo = "below the grid" if math.isnan(row["low"]) else f"{row['low']:.3g}"
    hi = "beyond the grid" if math.isnan(row["high"]) else f"{row['high']:.3g}"
    spread = f"{lo} – {hi}" if row["runs"] > 1 else "one run per point: no spread"
    return f"{row['crossing']:.3g}", spread


def _crossings_shown(
    df: pd.DataFrame, axis: str, metric: str, target: Target, algorithms: tuple[str, ...]
) -> pd.DataFrame:
    """The crossings table as shown: one row per algorithm, worded."""
    table = crossing_table(df, axis, metric, target.value, target.higher_is_better)
    grid = sorted(df[axis].unique())
    name = AXIS_LABELS[axis].split(" ")[-1]
    rows = []
    for _, row in table[table["algorithm"].isin(algorithms)].iterrows():
        value, spread = _describe(row, axis, grid)
        rows.append({"algorithm": label(row["algorithm"]), name: value, "±1 s.e.": spread})
    return pd.DataFrame(rows, columns=["algorithm", name, "±1 s.e."])


def show_crossings(
    df: pd.DataFrame,
    *,
    axis: str,
    metric: str,
    target: Target,
    algorithms: Sequence[str],
    key: Any = None,
) -> pd.DataFrame:
    """Answer "which ε (or other swept value) reaches the target?" per algorithm.

    ``key``: the settings that made ``df`` (:func:`figures.memo.built`): the table is then
    found by them instead of a digest of the whole sweep on every rerun.
    Returns the table shown (one row per algorithm) so tests and callers can read it.
    """
    algorithms = tuple(algorithms)
    named = None if key is None else (key, axis, metric, target, algorithms)
    shown = built(_crossings_shown, df, axis, metric, target, algorithms, key=named)
    name = AXIS_LABELS[axis].split(" ")[-1]
    st.markdown(f"**Which {name} reaches {target.text}?**")
    st.dataframe(shown, hide_index=True)
    interpolation = "linearly in log " + name if axis in LOG_AXES else "linearly in " + name
    st.caption(
        f"The first grid interval where each mean curve reaches the dotted target line, "
        f"interpolated {interpolation}; the range is where the curves mean ± one standard "
        "error (std/√runs) reach it. Nothing is extrapolated beyond the grid."
    )
    return shown


@st.cache_data(show_spinner=False, max_entries=64)
def sites_needed(target: float) -> dict[str, int]:
    """:func:`dpcore.experiments.questions.sites_for_advantage` for both measures, cached."""
    from dpcore import sites_for_advantage

    return {m: sites_for_advantage(target, measure=m) for m in ("variance", "std")}


def advantage_question(container: Box, *, prefix: str) -> dict[str, int]:
    """Answer "how many sites until CAPE's advantage is 10×?" analytically (eq. (2))."""
    container.markdown("**How many sites until CAPE's advantage is …?**")
    left, mid, right = container.columns([1, 1, 1])
    target = bound(
        left.number_input,
        "Advantage wanted (×)",
        f"{prefix}adv",
        min_value=1.0,
        max_value=1000.0,
        value=10.0,
        step=1.0,
        help="Conventional averaging's aggregate noise over CAPE's.",
    )
    need = sites_needed(float(target))
    mid.metric(
        "Sites for that variance ratio",
        f"S = {need['variance']}",
        help="Equal sites (or weights μ_s = N_s/N with one ε): the variance ratio is exactly S.",
    )
    right.metric(
        "Sites for that std ratio",
        f"S = {need['std']}",
        help="The std ratio is √S: ten times less noise std needs a hundred sites.",
    )
    container.caption(
        "Eq. (2): conventional averaging leaves τ_s²/S, CAPE τ_s²/S² — a ratio of exactly S, "
        "whatever ε, δ and N_s are, as long as every site's μ_s τ_s is the same."
    )
    return need
