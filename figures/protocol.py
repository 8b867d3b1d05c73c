"""Figures of the protocol stepper: the network with its messages, and the E's cancelling."""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from dpcore import ProtocolDemo
from figures.charts import FONT
from figures.theme import style
from learning.protocol_steps import AGG, NG, ProtocolStep, fmt, site_name
from learning.run_replay import faint_pairs

PARTY_COLORS = {NG: "#009E73", AGG: style("conv").color, "site": style("cape").color}
MESSAGE_COLORS = {"E": "#009E73", "F": style("conv").color, "Â": style("cape").color}


def _positions(n: int) -> dict[str, tuple[float, float]]:
    mid = (n - 1) / 2
    pos = {NG: (mid, 2.0), AGG: (mid, 0.0)}
    pos.update({site_name(s): (float(s), 1.0) for s in range(n)})
    return pos


def _arrow(fig: go.Figure, start, end, *, color: str, width: float, text: str = "") -> None:
    # Stop short of the nodes so the heads stay visible; site → aggregator runs beside the
    # aggregator → site line (offset), so both directions can be told apart.
    (x0, y0), (x1, y1) = start, end
    shrink = 0.16
    fig.add_annotation(
        x=x1 - shrink * (x1 - x0),
        y=y1 - shrink * (y1 - y0),
        ax=x0 + shrink * (x1 - x0),
        ay=y0 + shrink * (y1 - y0),
        xref="x",
        yref="y",
        axref="x",
        ayref="y",
        showarrow=True,
        arrowhead=3,
        arrowsize=1.2,
        arrowwidth=width,
        arrowcolor=color,
        text="",
    )
    if text:
        fig.add_annotation(
            x=(x0 + x1) / 2,
            y=(y0 + y1) / 2,
            text=text,
            showarrow=False,
            font={"size": 15, "color": color},
            bgcolor="rgba(255,255,255,0.85)",
            bordercolor=color,
            borderpad=3,
        )


def _endpoints(pos, sender: str, receiver: str):
    a, b = pos[sender], pos[receiver]
    if {sender, receiver} == {NG, AGG}:  # a real run's log: beside the middle site, if any
        odd = sum(p.startswith("site") for p in pos) % 2
        x = a[0] + 0.5 * odd + (0.08 if sender == NG else -0.08)
        return (x, a[1]), (x, b[1])
    offset = 0.12 if sender.startswith("site") else -0.12 if receiver.startswith("site") else 0
    if AGG in (sender, receiver):  # the two directions between a site and the aggregator
        a, b = (a[0] + offset, a[1]), (b[0] + offset, b[1])
    return a, b


def network_figure(demo: ProtocolDemo, step: ProtocolStep) -> go.Figure:
    """Noise generator on top, sites in the middle, aggregator below; this step's message
    highlighted with its value, earlier messages faint."""
    n = demo.run.values.shape[0]
    highlight = None
    if step.message is not None:
        name = step.message[2]
        value = next(m.value for m in demo.run.messages if m.name == name)
        highlight = (MESSAGE_COLORS[name[0]], f"{name} = {fmt(value)}")
    hover = [f"site {s + 1}: a = {fmt(demo.run.values[s])}" for s in range(n)]
    return _network(n, step, highlight, hover)


def replay_figure(sites: int, step: ProtocolStep) -> go.Figure:
    """:func:`network_figure` for a step of a real run's log: the message's round and size
    instead of a value (a real run's values stay private; learning/run_replay.py).

    The round's name is the log's text, shown as written (HTML-escaped: Plotly reads tags and
    links in annotations); a party the log never named (a node that sent no reply) has no
    place in the picture, so its messages are not drawn."""
    highlight = None
    if step.message is not None:
        sender = step.message[0]
        color = PARTY_COLORS[sender] if sender in PARTY_COLORS else PARTY_COLORS["site"]
        highlight = (color, html.escape(step.title.rsplit(": ", 1)[-1]))
    return _network(sites, step, highlight, [f"site {s + 1}" for s in range(sites)])


def _network(
    n: int, step: ProtocolStep, highlight: tuple[str, str] | None, hover: list[str]
) -> go.Figure:
    pos = _positions(n)
    fig = go.Figure()
    for sender, receiver in faint_pairs(step.sent):  # each pair once, however often it spoke
        if sender in pos and receiver in pos:
            a, b = _endpoints(pos, sender, receiver)
            _arrow(fig, a, b, color="rgba(128,128,128,0.45)", width=1.5)
    placed = step.message is not None and all(p in pos for p in step.message[:2])
    if step.message is not None and highlight is not None and placed:
        sender, receiver, _ = step.message
        a, b = _endpoints(pos, sender, receiver)
        _arrow(fig, a, b, color=highlight[0], width=4, text=highlight[1])
    # Parties outside the row are labelled beside them; sites carry their number inside the
    # marker (names under them collided with the aggregator's arrows), values are in the ledger.
    for party, position in ((NG, "top center"), (AGG, "bottom center")):
        fig.add_trace(
            go.Scatter(
                x=[pos[party][0]],
                y=[pos[party][1]],
                mode="markers+text",
                marker={"size": 34, "color": PARTY_COLORS[party], "line": {"width": 0}},
                text=[party],
                textposition=position,
                textfont={"size": 15},
                hoverinfo="skip",
                showlegend=False,
            )
        )
    fig.add_trace(
        go.Scatter(
            x=[pos[site_name(s)][0] for s in range(n)],
            y=[1.0] * n,
            mode="markers+text",
            marker={"size": 34, "color": PARTY_COLORS["site"], "line": {"width": 0}},
            text=[str(s + 1) for s in range(n)],
            textposition="middle center",
            textfont={"size": 15, "color": "white"},
            hovertext=hover,
            hoverinfo="text",
            showlegend=False,
        )
    )
    fig.add_annotation(
        x=-0.45, y=1.0, text="sites", showarrow=False, xanchor="right", font={"size": 15}
    )
    fig.update_layout(
        font=FONT,
        height=360,
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        xaxis={"visible": False, "range": [-1.0, n - 0.3]},
        yaxis={"visible": False, "range": [-0.45, 2.6]},
        plot_bgcolor="rgba(0,0,0,0)",
    )
    return fig


def cancel_figure(demo: ProtocolDemo) -> go.Figure:
    """The aggregator's weighted sum as a waterfall: Σμa, then each μ_s E_s (they return to
    zero), then each μ_s G_s, ending at the estimate. Entry [1,1] of a 2×2 value."""
    run = demo.run
    first = (0,) * (run.values.ndim - 1)
    mu = run.weights
    n = mu.size
    steps = [("Σ μ_s a_s", float(demo.value_sum[first]), "absolute")]
    steps += [(f"μ{s + 1}·E_{s + 1}", float(mu[s] * run.e[s][first]), "relative") for s in range(n)]
    steps += [(f"μ{s + 1}·G_{s + 1}", float(mu[s] * run.g[s][first]), "relative") for s in range(n)]
    steps += [("estimate", float(run.estimate[first]), "total")]
    labels, values, kinds = zip(*steps, strict=True)
    fig = go.Figure(
        go.Waterfall(
            x=list(labels),
            y=[0.0 if k == "total" else v for _, v, k in steps],
            measure=list(kinds),
            increasing={"marker": {"color": "#56B4E9"}},
            decreasing={"marker": {"color": "#999999"}},
            totals={"marker": {"color": PARTY_COLORS["site"]}},
            connector={"line": {"color": "#888888", "dash": "dot"}},
            text=[f"{v:+.4f}" for v in values],
            textposition="outside",
            hovertemplate="%{x}: %{y:+.5f}<extra></extra>",
        )
    )
    # every bar's ends: the running sum after each step (E's may climb above start and end)
    running = np.cumsum([v for v, k in zip(values, kinds, strict=True) if k != "total"])
    lo, hi = float(running.min()), float(running.max())
    span = max(abs(hi - lo), 1e-9)
    for x0, color, text in (
        (0.5, PARTY_COLORS[NG], "E's cancel"),
        (n + 0.5, PARTY_COLORS["site"], "G's remain"),
    ):
        fig.add_vrect(x0=x0, x1=x0 + n, fillcolor=color, opacity=0.10, line_width=0)
        fig.add_annotation(
            x=x0 + n / 2,
            y=1.0,
            yref="paper",
            text=text,
            showarrow=False,
            yanchor="bottom",  # above the plot, clear of the bars' value labels
            font={"size": 13},
        )
    fig.update_layout(
        font=FONT,
        height=360,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        yaxis={
            "title": "running sum" + (" (entry [1,1])" if first else ""),
            "range": [lo - 0.4 * span, hi + 0.4 * span],
        },
        showlegend=False,
    )
    return fig
