"""Figures of the attack audit page: theory against the attacker's bound, and what the attacker
sees. Pure builders (no Streamlit): they take the tables of ``ui.cached.audit_table``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from figures.charts import FONT

# design → (colour, label); Okabe–Ito, as the rest of the app
DESIGN_STYLES = {
    "cape": ("#D55E00", "paper's design"),
    "joint": ("#0072B2", "joint-view-safe design"),
}
VIEW_LABELS = {
    "release": "site's own release<br>(the paper's argument)",
    "joint": "aggregator:<br>all releases together",
    "coalition": "aggregator +<br>colluding sites",
}


def _pale(hex_color: str) -> str:
    r, g, b = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},0.25)"


def audit_figure(table: pd.DataFrame) -> go.Figure:
    """Per view and design: the theory's ε (pale bar) and the attack's lower bound (solid).

    Parameters
    ----------
    table : DataFrame
        One row per (design, view) with ``epsilon``, ``epsilon_lower`` and
        ``promised_epsilon`` (:func:`ui.cached.audit_table`).
    """
    fig = go.Figure()
    for design, (color, name) in DESIGN_STYLES.items():
        part = table[table["design"] == design]
        x = [VIEW_LABELS[v] for v in part["view"]]
        fig.add_trace(
            go.Bar(
                x=x,
                y=part["epsilon"],
                name=f"{name}: theory's ε",
                marker={"color": _pale(color), "line": {"color": color, "width": 2}},
                offsetgroup=f"{design}-theory",
                hovertemplate="theory: ε = %{y:.3g}<extra>" + name + "</extra>",
            )
        )
        fig.add_trace(
            go.Bar(
                x=x,
                y=part["epsilon_lower"],
                name=f"{name}: attack's 95 % lower bound",
                marker={"color": color},
                offsetgroup=f"{design}-attack",
                customdata=np.stack([part["trials"], part["fpr"], part["fnr"]], axis=-1),
                hovertemplate="attack proves ε ≥ %{y:.3g}<br>%{customdata[0]:,} trials, "
                "FPR %{customdata[1]:.2g}, FNR %{customdata[2]:.3g}<extra>" + name + "</extra>",
            )
        )
    level = float(table["promised_epsilon"].iloc[0])
    fig.add_hline(y=level, line={"dash": "dot", "color": "#000000", "width": 2})
    fig.add_annotation(
        x=1.0,
        xref="paper",
        y=level,
        yref="y",
        text=f"promised ε_s = {level:.3g}",
        showarrow=False,
        xanchor="right",
        yanchor="bottom",
        font={"size": 14, "color": "#000000"},
    )
    fig.update_layout(
        font=FONT,
        height=440,
        barmode="group",
        yaxis_title="ε at the site's δ_s",
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend={"orientation": "h", "y": -0.25},
    )
    return fig


def statistic_figure(
    on_d: np.ndarray, on_d_prime: np.ndarray, *, mu: float, threshold: float
) -> go.Figure:
    """Histograms of the attacker's statistic without and with the record, and its threshold."""
    fig = go.Figure()
    for values, name, color in (
        (on_d, "without the record (D)", "#0072B2"),
        (on_d_prime, "with the record (D′)", "#D55E00"),
    ):
        fig.add_trace(
            go.Histogram(
                x=values,
                name=name,
                histnorm="probability density",
                marker={"color": color},
                opacity=0.55,
                nbinsx=80,
            )
        )
    fig.add_vline(x=threshold, line={"dash": "dash", "color": "#000000", "width": 2})
    fig.add_annotation(
        x=threshold,
        y=1.0,
        yref="paper",
        text=f"guess “D′” beyond {threshold:.2f}",
        showarrow=False,
        xanchor="left",
        yanchor="top",
        font={"size": 14, "color": "#000000"},
    )
    fig.update_layout(
        font=FONT,
        height=340,
        barmode="overlay",
        xaxis_title=f"likelihood-ratio statistic (noise std's; the record adds {mu:.2f})",
        yaxis_title="density",
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend={"orientation": "h", "y": -0.3},
    )
    return fig


# --- the words: a 95 % lower bound, not a bound that can never overshoot (issue #34) ----------

CONFIDENCE_WORDS = (
    "a 95 % lower bound: below the true ε in at least 19 audits of 20, so one audit in twenty "
    "may overshoot"
)


def verdict(row) -> str:
    """What the attack shows for one design and view (a row of the audit table), in words."""
    if not row.theory_breaks:
        if row.attack_breaks:  # possible: a 95 % bound overshoots in up to 5 % of audits
            return "✓ theory: ε ≤ ε_s; the bound overshot it (the 1-in-20 chance of a 95 % bound)"
        return "✓ theory: ε ≤ ε_s; a sound attack shows a break only by chance (≤ 1 in 20)"
    if row.attack_breaks:
        return f"✗ demonstrated: ε ≥ {row.epsilon_lower:.3g} > ε_s"
    if row.trials_needed is None or pd.isna(row.trials_needed):
        return "✗ in theory; beyond 10¹² trials to demonstrate"
    return f"✗ in theory; needs ≈ {int(row.trials_needed):,} trials to demonstrate"


def soundness_words(table: pd.DataFrame) -> str:
    """Whether the attack's bounds stayed below the theory's ε, counted, not assumed."""
    over = int((table["epsilon_lower"] > table["epsilon"]).sum())
    if over == 0:
        return (
            "every solid bar stays below its pale bar, as a 95 % lower bound does in at least "
            "19 audits of 20"
        )
    return (
        f"{over} of {len(table)} solid bars rise above their pale bar: {CONFIDENCE_WORDS} "
        "(re-run with another seed)"
    )
