"""The attack audit's trade-off chart: per design, each view's exact Gaussian curve, the
promise's curve and the attack's measured (FPR, FNR) with its confidence box. Pure builder (no
Streamlit): it takes the frames of ``ui.cached.audit_tradeoff``.

Axes: false alarms α on a log scale; misses β on a log scale of 1 − β, reversed, so the curves
keep the textbook orientation (from β ≈ 1 at the top left down to β = 0) while the low-α corner,
where the attack works and the curves part, is legible. A view breaks its promise where its
curve passes *under* the promise's.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

import dpcore
from figures.audit import DESIGN_STYLES, _pale
from figures.charts import FONT

# view → (colour, label); Okabe–Ito colours not used for the designs
VIEW_STYLES = {
    "release": ("#009E73", "site's own release"),
    "joint": ("#CC79A7", "aggregator: all releases"),
    "coalition": ("#E69F00", "aggregator + colluding sites"),
}
PROMISE_COLOR = "#000000"
FLOOR = 1e-6  # the axes' least α and 1 − β (a box edge at 0 is drawn there)
BETA_TICKS = (1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0)  # 1 − β at the y ticks
ZOOM_PAD = 1.5  # the zoom's α reaches this factor beyond the dip and the boxes (log scale)
ZOOM_MANTISSAS = (1, 2, 3, 5)  # the zoom's α ticks: m·10^k
ZOOM_SHADE = "#888888"  # the zoomed window, shaded in the top row
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def power_label(value: float) -> str:
    """A tick of a log axis as a power of ten: 10⁻⁴, 2·10⁻², 1 (never Plotly's SI "100μ",
    which beside a formula whose μ is Δ/σ reads as that μ)."""
    k = int(np.floor(np.log10(value) + 1e-9))
    m = round(value / 10.0**k)
    if k == 0:
        return f"{m}"
    power = f"10{str(k).translate(SUPERSCRIPT)}"
    return power if m == 1 else f"{m}·{power}"


def _beta_label(power: float) -> str:
    """The β at a tick of 1 − β, written out (0.999, not 1 − 1e-3)."""
    return f"{1 - power:.{max(1, round(-np.log10(power)))}f}" if power < 1 else "0"


def _box(x0: float, x1: float, y0: float, y1: float, color: str, name: str, group: str):
    """The attack's 95 % confidence box [x0, x1] × [y0, y1], filled pale."""
    return go.Scatter(
        x=[x0, x1, x1, x0, x0],
        y=[y0, y0, y1, y1, y0],
        fill="toself",
        fillcolor=_pale(color),
        mode="lines",
        line={"color": color, "width": 1},
        name=f"{name}: attack, 95 % box",
        legendgroup=group,
        showlegend=False,
        hoverinfo="skip",
    )


def zoom_window(rows: pd.DataFrame) -> tuple[float, float, float, float]:
    """The lower panel's window (α from, α to, gap from, gap to): where the dip is deepest.

    It spans the deepest dip's α* and the attack's boxes of the views in focus (the views
    that dip under the promise; with none, the one that comes closest), α on a log scale a
    factor ZOOM_PAD beyond them, and the gap from 0 (the promise) to the dip's depth and the
    boxes, linear — the other views' boxes in the window as well, within the focus's range
    again on either side — with a fifth of that range to spare. Far from α = 1, so the mirror dip
    there (:func:`mirror_alpha`) is out of it.
    """
    focus = rows[rows["breaks"]] if rows["breaks"].any() else rows.nlargest(1, "dip_depth")
    alphas = np.concatenate([focus["dip_alpha"], focus["fpr_low"], focus["fpr_high"]]).astype(float)
    alphas = np.maximum(alphas, FLOOR)
    x0, x1 = alphas.min() / ZOOM_PAD, min(alphas.max() * ZOOM_PAD, 1.0)
    gaps = np.concatenate(
        [[0.0], focus["dip_depth"], focus["under_low"], focus["under_high"]]
    ).astype(float)
    low, high = float(gaps.min()), float(gaps.max())
    # the other views' boxes in the window too, unless that would squeeze the dip to under a
    # third of the panel
    inside = rows[(rows["fpr_low"] >= x0) & (rows["fpr_high"] <= x1)]
    if len(inside):
        reach = high - low
        low = max(min(low, float(inside["under_low"].min())), low - reach)
        high = min(max(high, float(inside["under_high"].max())), high + reach)
    spare = 0.2 * max(high - low, float(rows["delta"].iloc[0]))
    return float(x0), float(x1), low - spare, high + spare


def mirror_alpha(rows: pd.DataFrame) -> float:
    """Where the deepest dip's mirror image lies: α′ = β_view(α*), near α = 1 (both curves are
    symmetric about β = α, so the gap has the same peak there); NaN when no view dips."""
    dips = rows[rows["breaks"]]
    if not len(dips):
        return float("nan")
    return float(dips["dip_beta_view"].iloc[int(dips["dip_depth"].to_numpy().argmax())])


def tradeoff_figure(rows: pd.DataFrame, curves: pd.DataFrame) -> go.Figure:
    """Trade-off curves, the promise and the attack, one column per design.

    Top row: the whole curves (α and 1 − β on log scales, ticks as powers of ten), the
    zoomed window shaded. Bottom row: the zoom (:func:`zoom_window`), how far each curve
    lies under the promise's, linear, with the attack's 95 % boxes drawn at their size.

    Parameters
    ----------
    rows : DataFrame
        One row per (design, view): ``mu``, ``epsilon``, ``fpr``, ``fnr``, the box
        (``fpr_low`` … ``fnr_high``), ``dip_alpha``, ``dip_depth``, ``breaks``,
        ``promised_epsilon``, ``delta``.
    curves : DataFrame
        ``design``, ``view`` (with ``"promise"``), ``alpha``, ``power``
        (:func:`dpcore.analysis.tradeoff.tradeoff_curves`).
    """
    designs = [d for d in DESIGN_STYLES if d in set(rows["design"])]
    fig = make_subplots(
        rows=2,
        cols=len(designs),
        shared_yaxes=True,
        horizontal_spacing=0.04,
        vertical_spacing=0.11,
        row_heights=[0.5, 0.5],
        subplot_titles=[DESIGN_STYLES[d][1] for d in designs],
    )
    promised, delta = float(rows["promised_epsilon"].iloc[0]), float(rows["delta"].iloc[0])
    x0, x1, y0, y1 = zoom_window(rows)
    for col, design in enumerate(designs, 1):
        first = col == 1
        part = curves[curves["design"] == design]
        promise = part[part["view"] == "promise"]
        fig.add_trace(
            go.Scatter(
                x=promise["alpha"],
                y=np.maximum(promise["power"], FLOOR),
                name=f"promise (ε_s, δ_s) = ({promised:.3g}, {delta:.2g})",
                legendgroup="promise",
                showlegend=first,
                line={"color": PROMISE_COLOR, "dash": "dot", "width": 3},
                hovertemplate="promise: α = %{x:.3g}, 1 − β ≤ %{y:.3g}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        for r in rows[rows["design"] == design].to_dict("records"):
            color, name = VIEW_STYLES[r["view"]]
            line = part[part["view"] == r["view"]]
            zoom = _in_window(line, x0, x1)
            fig.add_trace(
                go.Scatter(
                    x=line["alpha"],
                    y=np.maximum(line["power"], FLOOR),
                    name=f"{name}: theory",
                    legendgroup=r["view"],
                    showlegend=first,
                    line={"color": color, "width": 3},
                    hovertemplate=f"{name}: μ = {r['mu']:.3g}, ε = {r['epsilon']:.3g}<br>"
                    "α = %{x:.3g}, 1 − β = %{y:.3g}<extra></extra>",
                ),
                row=1,
                col=col,
            )
            fig.add_trace(
                go.Scatter(
                    x=zoom["alpha"],
                    y=zoom["under"],
                    name=f"{name}: under the promise by",
                    legendgroup=r["view"],
                    showlegend=False,
                    line={"color": color, "width": 3},
                    hovertemplate=f"{name}: α = %{{x:.3g}}, under the promise's β by "
                    "%{y:.3g}<extra></extra>",
                ),
                row=2,
                col=col,
            )
            bx0, bx1 = max(r["fpr_low"], FLOOR), max(r["fpr_high"], FLOOR)
            fig.add_trace(
                _box(bx0, bx1, r["under_low"], r["under_high"], color, name, r["view"]),
                row=2,
                col=col,
            )
            fig.add_trace(
                go.Scatter(
                    x=[max(r["fpr"], FLOOR)],
                    y=[r["under"]],
                    mode="markers",
                    marker=_marker(color, r["breaks"]),
                    name=f"{name}: attack",
                    legendgroup=r["view"],
                    showlegend=False,
                    hovertemplate=f"{name}: the attack is under the promise's β by "
                    f"{r['under']:.3g}; its box by {r['under_low']:.3g} to {r['under_high']:.3g}"
                    "<extra></extra>",
                ),
                row=2,
                col=col,
            )
            by0, by1 = max(1 - r["fnr_high"], FLOOR), max(1 - r["fnr_low"], FLOOR)
            fig.add_trace(_box(bx0, bx1, by0, by1, color, name, r["view"]), row=1, col=col)
            fig.add_trace(
                go.Scatter(
                    x=[max(r["fpr"], FLOOR)],
                    y=[max(1 - r["fnr"], FLOOR)],
                    mode="markers",
                    marker=_marker(color, r["breaks"]),
                    name=f"{name}: attack (FPR, FNR)",
                    legendgroup=r["view"],
                    showlegend=first,
                    hovertemplate=f"{name}: the attack's {r['trials']:,} games<br>"
                    f"FPR = {r['fpr']:.3g} [{r['fpr_low']:.3g}, {r['fpr_high']:.3g}]<br>"
                    f"FNR = {r['fnr']:.4g} [{r['fnr_low']:.4g}, {r['fnr_high']:.4g}]"
                    "<extra></extra>",
                ),
                row=1,
                col=col,
            )
            if r["breaks"]:  # the largest dip, in the zoom: from 0 (the promise) up to its depth
                fig.add_trace(
                    go.Scatter(
                        x=[r["dip_alpha"], r["dip_alpha"]],
                        y=[0.0, r["dip_depth"]],
                        mode="lines+markers",
                        line={"color": color, "width": 2},
                        marker={"symbol": "arrow-bar-up", "size": 9, "angleref": "previous"},
                        name=f"{name}: largest dip under the promise",
                        legendgroup=r["view"],
                        showlegend=False,
                        hovertemplate=f"{name} dips under the promise by {r['dip_depth']:.3g} "
                        f"at α = {r['dip_alpha']:.3g}<br>(= δ of the view at ε_s − δ_s)"
                        "<extra></extra>",
                    ),
                    row=2,
                    col=col,
                )
        fig.add_hline(y=0, line={"color": PROMISE_COLOR, "dash": "dot", "width": 2}, row=2, col=col)
        fig.add_vrect(  # after the traces: an empty subplot would drop it
            x0=x0,
            x1=x1,
            fillcolor=ZOOM_SHADE,
            opacity=0.13,
            line_width=0,
            layer="below",
            row=1,
            col=col,
        )
        fig.add_annotation(  # on a log axis an annotation's x is log10 of its α
            x=float(np.log10(x0 * x1) / 2),
            y=0,
            yref="y domain",
            yanchor="bottom",
            text="zoomed below ↓",
            font={"size": 13},
            showarrow=False,
            row=1,
            col=col,
        )
    least = np.log10(_least(rows))
    _alpha_axis(fig, least, row=1)
    _zoom_axis(fig, x0, x1, row=2)
    fig.update_xaxes(title_text="false alarms α = FPR, zoomed", row=2)
    _beta_axis(fig, least, row=1)
    fig.update_yaxes(title_text="misses β", row=1, col=1)
    fig.update_yaxes(range=[y0, y1], row=2, zeroline=False, exponentformat="power")
    fig.update_yaxes(title_text="β under the promise's by", row=2, col=1)
    fig.update_layout(
        font=FONT,
        height=700,
        margin={"l": 80, "r": 10, "t": 40, "b": 10},
        legend={"orientation": "h", "y": -0.16},
    )
    return fig


def _marker(color: str, breaks: bool) -> dict:
    """The attack's marker: a cross where the view breaks its promise in theory."""
    return {
        "color": color,
        "size": 11,
        "symbol": "x" if breaks else "circle",
        "line": {"color": "#000000", "width": 1},
    }


def _in_window(line: pd.DataFrame, x0: float, x1: float) -> pd.DataFrame:
    """A curve's points in [x0, x1] and one beyond each end (the line reaches the edges)."""
    alpha = line["alpha"].to_numpy()
    inside = np.flatnonzero((alpha >= x0) & (alpha <= x1))
    if not len(inside):
        inside = np.array([int(np.searchsorted(alpha, x0))])
    lo, hi = max(int(inside[0]) - 1, 0), min(int(inside[-1]) + 2, len(alpha))
    return line.iloc[lo:hi]


def curve_sides(rows: pd.DataFrame) -> tuple[int, int]:
    """How many attack points lie under their own view's curve (β below the least β any test
    reaches: chance, about one in two, since the likelihood-ratio test's true rates lie on
    the curve), and how many 95 % boxes reach their curve (the box's corner (FPR⁺, FNR⁺)
    on or above it: what a sound audit guarantees with 95 % confidence)."""
    under = reaching = 0
    for r in rows.to_dict("records"):
        under += int(r["fnr"] < float(dpcore.gaussian_tradeoff(r["fpr"], r["mu"])))
        reaching += int(r["fnr_high"] >= float(dpcore.gaussian_tradeoff(r["fpr_high"], r["mu"])))
    return under, reaching


def _least(rows: pd.DataFrame) -> float:
    """The axes' least α and 1 − β: a decade under the attack's boxes, at least FLOOR."""
    low = min(rows["fpr_low"].where(rows["fpr_low"] > 0, FLOOR).min(), 1e-3)
    return max(FLOOR, 10 ** np.floor(np.log10(low) - 1))


def _alpha_axis(fig: go.Figure, least: float, **where) -> None:
    """α on a log scale from 10^least to 1, a tick at each power of ten."""
    decades = [10.0**k for k in range(int(np.ceil(least - 1e-9)), 1)]
    fig.update_xaxes(
        type="log",
        range=[least, 0],
        tickvals=decades,
        ticktext=[power_label(v) for v in decades],
        exponentformat="power",
        **where,
    )


def _zoom_axis(fig: go.Figure, x0: float, x1: float, **where) -> None:
    """The zoom's α on a log scale over [x0, x1], ticks at m·10^k (:data:`ZOOM_MANTISSAS`)."""
    ticks = [
        m * 10.0**k
        for k in range(int(np.floor(np.log10(x0))), int(np.ceil(np.log10(x1))) + 1)
        for m in ZOOM_MANTISSAS
        if x0 <= m * 10.0**k <= x1
    ]
    fig.update_xaxes(
        type="log",
        range=[np.log10(x0), np.log10(x1)],
        tickvals=ticks,
        ticktext=[power_label(v) for v in ticks],
        exponentformat="power",
        **where,
    )


def _beta_axis(fig: go.Figure, least: float, **where) -> None:
    """β on a log scale of 1 − β: from β = 0 at the bottom up to 1 − β = 10^least."""
    fig.update_yaxes(
        type="log",
        tickvals=list(BETA_TICKS),
        ticktext=[_beta_label(p) for p in BETA_TICKS],
        range=[0, least],
        **where,
    )


def theory_figure(curves: pd.DataFrame, *, labels: dict[str, str], chosen: str) -> go.Figure:
    """Trade-off curves of some views and the promise, without an attack (lesson 4).

    Parameters
    ----------
    curves : DataFrame
        :func:`dpcore.analysis.tradeoff.tradeoff_curves` (``view``, ``alpha``, ``power``).
    labels : dict
        View → (legend) name; the promise's rows are labelled "the promise".
    chosen : str
        The view drawn bold; the others thin.
    """
    fig = go.Figure()
    colors = iter(VIEW_STYLES[v][0] for v in ("release", "joint", "coalition"))
    for view_key, part in curves.groupby("view", sort=False):
        view = str(view_key)
        promise = view == "promise"
        fig.add_trace(
            go.Scatter(
                x=part["alpha"],
                y=np.maximum(part["power"], FLOOR),
                name="the promise (ε, δ)" if promise else labels[view],
                line={
                    "color": PROMISE_COLOR if promise else next(colors),
                    "dash": "dot" if promise else "solid",
                    "width": 3 if promise or view == chosen else 1.5,
                },
            )
        )
    least = np.log10(float(curves["alpha"].min()))
    _alpha_axis(fig, least)
    fig.update_xaxes(title_text="false alarms α = FPR")
    _beta_axis(fig, least)
    fig.update_layout(
        font=FONT,
        height=380,
        yaxis_title="misses β",
        margin={"l": 80, "r": 10, "t": 40, "b": 10},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
    )
    return fig


def tradeoff_words(rows: pd.DataFrame) -> str:
    """What the trade-off chart shows, in sentences true of these rows: where the points and
    the boxes lie against their curves (:func:`curve_sides`), the mirror dip near α = 1
    (:func:`mirror_alpha`) and the one thing to notice, every number from ``rows``."""
    n = len(rows)
    under, reaching = curve_sides(rows)
    words = (
        "A curve is the least β any test reaches, so a test's true (FPR, FNR) lies on or above "
        "its curve, and the attack's likelihood-ratio test's lie on it. Its *points* are random "
        "draws around those true rates and fall under their curve about half the time, by "
        f"chance (here {under} of {n}); its *95 % boxes* are what must reach their curves, "
        f"and here {reaching} of {n} do (a box misses in at most one audit in twenty). "
    )
    dips = rows[rows["breaks"]]
    if not len(dips):
        return words + "**The one thing to notice:** no curve dips under the promise's."
    deepest = dips.iloc[int(dips["dip_depth"].to_numpy().argmax())]
    proven = int((dips["under_low"] > 0).sum())
    return words + (
        "Both curves are symmetric about the line β = α, so a dip has a mirror image of the "
        f"same depth near α = 1 (at α = {mirror_alpha(rows):.3g}), where the log scale "
        "squeezes it out of sight; the zoom shows the first. **The one thing to notice:** "
        f"{len(dips)} view(s) dip under the promise (deepest: {deepest['dip_depth']:.3g} at "
        f"α = {deepest['dip_alpha']:.3g}), and the attack's box sits wholly above 0 in the "
        f"zoom for {proven} of them: "
        + ("the break shown from the games." if proven else "not yet shown from the games.")
    )
