"""Figures of the "Repeated releases" page: ε against the number of releases per accountant,
and the privacy profiles δ(ε) of every view. Pure functions of data frames from dpcore."""

from __future__ import annotations

import math
from collections.abc import Collection

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dpcore import CompositionGrowth, accountants
from figures.charts import FONT, LEGEND_BELOW

# Okabe–Ito colours (colour-blind safe), and a dash each, given to the accountants in their
# order (dpcore.analysis.accounting.accountants): a registered accountant gets the next pair.
ACCOUNTANT_COLOURS = (
    "#0072B2",
    "#009E73",
    "#E69F00",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#000000",
)
ACCOUNTANT_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")


def accountant_styles() -> dict[str, tuple[str, str, str]]:
    """Accountant name → (colour, dash, label) for every accountant record, in order."""
    return {
        a.name: (
            ACCOUNTANT_COLOURS[i % len(ACCOUNTANT_COLOURS)],
            ACCOUNTANT_DASHES[i % len(ACCOUNTANT_DASHES)],
            a.label,
        )
        for i, a in enumerate(accountants())
    }


VIEW_STYLES = {
    "calibration τ_s": ("#AAAAAA", "the site's calibration τ_s (its promise; wide grey)"),
    "own release": ("#0072B2", "own release"),
    "aggregator's joint view": ("#D55E00", "aggregator's joint view"),
    "coalition": ("#CC79A7", "aggregator + colluders"),
}
DESIGN_DASH = {"cape": ("solid", "paper's design"), "joint": ("dash", "joint-view-safe")}
CALIBRATION_VIEW = "calibration τ_s"  # the site's own promise: drawn once, always
# The profile chart's default curves besides the promise (issue #40 item 7: seven overlaid
# curves were unreadable): the paper's design, its per-release argument and the joint view.
DEFAULT_PROFILE_CURVES = (("cape", "own release"), ("cape", "aggregator's joint view"))


def profile_curve_name(design: str, view: str) -> str:
    """A profile curve's name in the legend and in the chart's curve picker."""
    if view == CALIBRATION_VIEW:
        return VIEW_STYLES[view][1]
    return f"{VIEW_STYLES[view][1]} — {DESIGN_DASH[design][1]}"


def profile_curves(profiles: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """The curves a reader may pick, by name: every (design, view) of ``profiles`` but the
    promise, which is always drawn."""
    pairs = profiles[["design", "view"]].drop_duplicates().itertuples(index=False)
    return {profile_curve_name(d, v): (d, v) for d, v in pairs if v != CALIBRATION_VIEW}


def accountants_figure(curve: pd.DataFrame, *, current: int | None = None) -> go.Figure:
    """Total ε against the number of releases T, one line per accountant (log ε axis).

    ``curve`` is :func:`dpcore.epsilon_curve`'s output; ``current`` marks the releases made.
    """
    fig = go.Figure()
    for name, (color, dash, label) in accountant_styles().items():
        part = curve[curve["accountant"] == name]
        if part.empty:
            continue
        fig.add_trace(
            go.Scatter(
                x=part["releases"],
                y=part["epsilon"],
                mode="lines",
                name=label,
                line={"color": color, "dash": dash, "width": 3},
                hovertemplate=f"{label}<br>T = %{{x}} releases<br>ε = %{{y:.4g}}<extra></extra>",
            )
        )
    if current:
        fig.add_vline(x=current, line={"color": "#666666", "dash": "dot", "width": 2})
        fig.add_annotation(
            x=current,
            y=1.0,
            yref="paper",
            text=f"releases made: {current}",
            showarrow=False,
            xanchor="left",
            yanchor="top",
            font={"size": 14, "color": "#666666"},
        )
    fig.update_layout(
        font=FONT,
        height=440,
        xaxis_title="releases T on the same data",
        yaxis_title="total ε (at the site's δ_s)",
        yaxis_type="log",
        # 1-2-5 ticks written out in full: plotly's "D2" labels 20 and 50 as a bare "2", "5"
        yaxis_tickvals=_TICKS,
        yaxis_ticktext=[f"{t:g}" for t in _TICKS],
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend=LEGEND_BELOW,
    )
    return fig


_TICKS = [m * 10.0**e for e in range(-3, 5) for m in (1, 2, 5)]


def profiles_figure(
    profiles: pd.DataFrame,
    *,
    promise: tuple[float, float] | None = None,
    curves: Collection[tuple[str, str]] | None = None,
) -> go.Figure:
    """δ(ε) of each view (colour) for each design (dash); the promise (ε_s, δ_s) as a star.

    ``profiles`` is :func:`dpcore.view_profiles`' output. The calibration curve is the same
    for both designs and drawn once, always; ``curves`` names the (design, view) pairs drawn
    beside it (None: every one).
    """
    positive = profiles["delta"][profiles["delta"] > 0]
    fig = go.Figure()
    for (design_key, view_key), part in profiles.groupby(["design", "view"], sort=False):
        design, view = str(design_key), str(view_key)
        promise_curve = view == CALIBRATION_VIEW
        if promise_curve and design != "cape":
            continue
        if not promise_curve and curves is not None and (design, view) not in curves:
            continue
        color, _ = VIEW_STYLES[view]
        dash, _ = DESIGN_DASH[design]
        name = profile_curve_name(design, view)
        part = part.sort_values("epsilon")
        fig.add_trace(  # the promise as a wide pale band: curves that equal it run inside it
            go.Scatter(
                x=part["epsilon"],
                y=part["delta"],
                mode="lines",
                name=name,
                line={
                    "color": color,
                    "dash": "solid" if promise_curve else dash,
                    "width": 10 if promise_curve else 3,
                },
                opacity=0.6 if promise_curve else 1.0,
                hovertemplate=f"{name}<br>ε = %{{x:.3g}}<br>δ(ε) = %{{y:.3g}}<extra></extra>",
            )
        )
    if promise is not None:
        fig.add_trace(
            go.Scatter(
                x=[promise[0]],
                y=[promise[1]],
                mode="markers",
                name=f"promise (ε_s, δ_s) = ({promise[0]:.3g}, {promise[1]:.3g})",
                marker={"symbol": "star", "size": 16, "color": "#000000"},
            )
        )
    fig.update_layout(
        font=FONT,
        height=440,
        xaxis_title="ε",
        yaxis_title="δ(ε): smallest δ for (ε, δ)-DP",
        yaxis_type="log",
        yaxis_exponentformat="power",
        yaxis_range=[max(float(np.log10(positive.min())), -12.0) if len(positive) else -12.0, 0.0],
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend=LEGEND_BELOW,
    )
    return fig


# --- the words under the charts: computed from the numbers on screen ---------------------------


def _at(curve: pd.DataFrame, releases: int) -> dict[str, float]:
    row = curve[curve["releases"] == releases]
    return dict(zip(row["accountant"], row["epsilon"], strict=True))


def growth_text(growth: CompositionGrowth) -> str:
    """How the exact ε grew over T releases against √T and T, and where growth turns linear
    (:func:`dpcore.composition_growth`; issue #34: "about √T" understated it)."""
    t = growth.releases
    if growth.ratio is None:
        return f"One release costs ε = 0 at this δ; {t} cost ε = {growth.epsilon_total:.3g}."
    words = (
        f"{t} releases cost {growth.ratio:.1f}× one release exactly: "
        + ("more" if growth.ratio > math.sqrt(t) else "not more")
        + f" than √T = {math.sqrt(t):.1f}×"
        + (f", less than T = {t}×" if growth.ratio < t else f", not less than T = {t}×")
        + ". zCDP's ε ≈ μ²/2 + μ√(2 ln(1/δ)) (μ = √T·Δ/σ) has its √T term ahead up to "
        f"T* = 8(σ/Δ)² ln(1/δ) = {growth.crossover:,.0f} releases here, its linear term beyond"
    )
    return words + (f": at T = {t} growth is already turning linear." if growth.linear else ".")


def accountants_text(
    curve: pd.DataFrame,
    growth: CompositionGrowth,
    *,
    site: int,
    noise_multiplier: float,
    delta: float,
) -> str:
    """What the accountants chart shows, in numbers: the growth over T, the gaps at the
    largest T, and from which T on advanced composition beats basic (if it does)."""
    last = int(curve["releases"].max())
    one, end = _at(curve, 1), _at(curve, last)
    exact = end["exact"]
    parts = [
        f"One release of site {site}'s view (σ/Δ = {noise_multiplier:.3g}) costs ε = "
        f"{one['exact']:.3g} at δ_s = {delta:g}; after T = {last} releases the exact total is "
        f"**ε = {exact:.3g}**. " + growth_text(growth)
    ]
    if exact > 0:
        gaps = []
        for name, (_, _, label) in accountant_styles().items():
            if name != "exact" and name in end:
                ratio = end[name] / exact
                gaps.append(
                    f"{label} {end[name]:.3g} (+{ratio - 1:.0%})"
                    if ratio < 2
                    else f"{label} {end[name]:.3g} ({ratio:.1f}×)"
                )
        parts.append("The other accountants claim " + ", ".join(gaps) + ".")
    wide = curve.pivot(index="releases", columns="accountant", values="epsilon")
    if {"advanced", "basic"} <= set(wide.columns):
        better = wide.index[wide["advanced"] < wide["basic"]]
        if len(better) == 0:
            parts.append(
                f"Advanced composition never beats basic here (T ≤ {last}): its √T saving "
                f"pays only when each release's ε_t is small (here ε_t ≈ {one['basic']:.2g})."
            )
        else:
            parts.append(
                f"Advanced composition beats basic from T = {int(better.min())} on (its "
                "√(2 ln(2/δ) Σ ε_t²) term grows like √T, basic's sum like T)."
            )
    return " ".join(parts)


def profiles_text(
    profiles: pd.DataFrame,
    *,
    site: int,
    epsilon: float,
    delta: float,
    releases: int,
    curves: Collection[tuple[str, str]] | None = None,
) -> str:
    """δ at the site's promised ε_s in each view and design drawn (``curves``, as in
    :func:`profiles_figure`; None: every one), against its δ_s."""
    at = profiles[profiles["epsilon"] == epsilon]
    if at.empty:
        return ""
    words = []
    for design in ("cape", "joint"):
        rows = at[(at["design"] == design) & (at["view"] != CALIBRATION_VIEW)]
        if curves is not None:
            rows = rows[[(design, v) in curves for v in rows["view"]]]
        if rows.empty:
            continue
        name = DESIGN_DASH[design][1]
        cells = [
            f"{VIEW_STYLES[r['view']][1]} δ = {r['delta']:.3g} ({r['delta'] / delta:.3g}× δ_s)"
            for r in rows.to_dict("records")
        ]
        words.append(f"{name}: " + "; ".join(cells))
    if not words:
        return ""
    lead = f"At site {site}'s promised ε_s = {epsilon:.3g} (its δ_s = {delta:g}), " + (
        f"after {releases} releases, " if releases > 1 else ""
    )
    tail = (
        "Above 1× δ_s the promise (ε_s, δ_s) does not hold."
        if releases == 1
        else f"Above 1× δ_s the {releases} releases together are beyond the per-release "
        "promise (ε_s, δ_s): that is what the budget below is for."
    )
    return lead + " — ".join(words) + ". " + tail


def ledger_text(summary: pd.DataFrame, *, releases: int, accountant: str) -> str:
    """The ledger in one sentence: releases made, most-spent site, sites over budget."""
    if releases == 0:
        return "No release recorded yet: every site has its whole budget. Press *Release again*."
    fraction = summary["fraction"].to_numpy(dtype=float)
    worst = summary.iloc[int(np.argmax(fraction))]
    # sites level with the largest share (equal sites differ in the last bits at most)
    level = summary[np.isclose(fraction, fraction.max(), rtol=1e-9, atol=0.0)]
    over = summary[summary["exceeded"]]
    spent = f"ε = {worst.spent:.3g} of {worst.budget:.3g} ({worst.fraction:.0%})"
    if len(level) == len(summary) and len(summary) > 1:
        same = np.allclose(level["budget"], worst.budget, rtol=1e-9, atol=0.0)
        share = f"{spent} each" if same else f"{worst.fraction:.0%} each"
        who = f"Every site has spent the same share of its budget: {share}."
    elif len(level) > 1:
        names = ", ".join(str(int(s)) for s in level.site)
        who = f"Sites {names} have spent the largest share of their budgets ({worst.fraction:.0%})."
    else:
        who = f"Site {int(worst.site)} has spent the largest share of its budget: {spent}."
    text = f"{releases} release(s) recorded, added up by {accountant}. {who}"
    if len(over):
        text += f" Over budget: {', '.join(f'site {int(s)}' for s in over.site)}."
    return text


def accountants_notice(curve: pd.DataFrame) -> str:
    """The one thing to notice on the accountants chart, from its numbers."""
    last = int(curve["releases"].max())
    one, end = _at(curve, 1), _at(curve, last)
    if not one.get("exact") or not end.get("exact"):
        return "**The one thing to notice:** every accountant is an upper bound on the exact line."
    return (
        f"**The one thing to notice:** {last} releases cost {end['exact'] / one['exact']:.1f}× "
        f"one release exactly (√T = {last**0.5:.1f}, T = {last}), while summing "
        f"the ε's (basic composition) claims {end['basic'] / end['exact']:.1f}× that."
    )


def profiles_notice(profiles: pd.DataFrame, *, epsilon: float, delta: float) -> str:
    """The one thing to notice on the profiles chart: the joint view of each design at ε_s."""
    at = profiles[
        (profiles["epsilon"] == epsilon) & (profiles["view"] == "aggregator's joint view")
    ].set_index("design")["delta"]
    if at.empty:
        return ""
    cape, joint = float(at["cape"]), float(at["joint"])
    return (
        f"**The one thing to notice:** at ε_s = {epsilon:.3g} the aggregator's joint view has "
        f"δ = {cape:.3g} in the paper's design ({cape / delta:.3g}× δ_s) and {joint:.3g} in the "
        f"joint-view-safe one ({joint / delta:.3g}× δ_s): the safe design's joint view runs "
        "inside the grey band of the promise, the paper's above it."
    )
