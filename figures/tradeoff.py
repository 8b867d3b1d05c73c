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


def tradeoff_figure(rows: pd.DataFrame, curves: pd.DataFrame) -> go.Figure:
    """Trade-off curves, the promise and the attack, one panel per design.

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
        shared_xaxes=True,
        shared_yaxes=True,
        horizontal_spacing=0.04,
        vertical_spacing=0.06,
        row_heights=[0.6, 0.4],
        subplot_titles=[DESIGN_STYLES[d][1] for d in designs],
    )
    promised, delta = float(rows["promised_epsilon"].iloc[0]), float(rows["delta"].iloc[0])
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
                    x=line["alpha"],
                    y=line["under"],
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
            x0, x1 = max(r["fpr_low"], FLOOR), max(r["fpr_high"], FLOOR)
            fig.add_trace(
                _box(x0, x1, r["under_low"], r["under_high"], color, name, r["view"]),
                row=2,
                col=col,
            )
            fig.add_trace(
                go.Scatter(
                    x=[max(r["fpr"], FLOOR)],
                    y=[r["under"]],
                    mode="markers",
                    marker={
                        "color": color,
                        "size": 11,
                        "symbol": "x" if r["breaks"] else "circle",
                        "line": {"color": "#000000", "width": 1},
                    },
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
            y0, y1 = max(1 - r["fnr_high"], FLOOR), max(1 - r["fnr_low"], FLOOR)
            fig.add_trace(_box(x0, x1, y0, y1, color, name, r["view"]), row=1, col=col)
            fig.add_trace(
                go.Scatter(
                    x=[max(r["fpr"], FLOOR)],
                    y=[max(1 - r["fnr"], FLOOR)],
                    mode="markers",
                    marker={
                        "color": color,
                        "size": 11,
                        "symbol": "x" if r["breaks"] else "circle",
                        "line": {"color": "#000000", "width": 1},
                    },
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
            if r["breaks"]:  # the largest dip: from the promise's curve down to the view's
                fig.add_trace(
                    go.Scatter(
                        x=[r["dip_alpha"], r["dip_alpha"]],
                        y=[1 - r["dip_beta_promise"], 1 - r["dip_beta_view"]],
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
                    row=1,
                    col=col,
                )
        fig.add_hline(y=0, line={"color": PROMISE_COLOR, "dash": "dot", "width": 2}, row=2, col=col)
    least = np.log10(_least(rows))
    fig.update_xaxes(type="log", range=[least, 0])
    fig.update_xaxes(title_text="false alarms α = FPR", row=2)
    _beta_axis(fig, least, row=1)
    fig.update_yaxes(title_text="misses β", row=1, col=1)
    # every attack box and every dip in view, at least ±δ_s
    span = 1.3 * max(
        rows[["under_low", "under_high"]].abs().to_numpy().max(), rows["dip_depth"].max(), delta
    )
    fig.update_yaxes(range=[-span, span], row=2, zeroline=False)
    fig.update_yaxes(title_text="β under the promise's by", row=2, col=1)
    fig.update_layout(
        font=FONT,
        height=640,
        margin={"l": 80, "r": 10, "t": 40, "b": 10},
        legend={"orientation": "h", "y": -0.22},
    )
    return fig


def _least(rows: pd.DataFrame) -> float:
    """The axes' least α and 1 − β: a decade under the attack's boxes, at least FLOOR."""
    low = min(rows["fpr_low"].where(rows["fpr_low"] > 0, FLOOR).min(), 1e-3)
    return max(FLOOR, 10 ** np.floor(np.log10(low) - 1))


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
    fig.update_xaxes(type="log", range=[least, 0], title_text="false alarms α = FPR")
    _beta_axis(fig, least)
    fig.update_layout(
        font=FONT,
        height=380,
        yaxis_title="misses β",
        margin={"l": 80, "r": 10, "t": 40, "b": 10},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
    )
    return fig
