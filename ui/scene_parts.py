"""What every lesson scene is built from: the scene record, the site table its link carries,
the nearest option of a question, and the chart's layout and "you are here" marker."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go

from figures.charts import FONT
from learning.settings import EQUAL, LESSON_DELTA
from ui.sites_table import encode, with_rule


def sites_text(
    n_per_site: Sequence[int], epsilon: float, rule: str = EQUAL, delta: float = LESSON_DELTA
) -> str:
    """The site table of the CAPE averaging and Privacy pages (their URL text) for sites of
    these sizes at one (ε, δ = LESSON_DELTA), weighted by ``rule``: the explore links."""
    n = len(n_per_site)
    table = pd.DataFrame(
        {"N_s": list(n_per_site), "ε_s": [epsilon] * n, "δ_s": [delta] * n, "μ_s": 0.0}
    )
    return encode(with_rule(table, rule))


@dataclass(frozen=True)
class Scene:
    """A step's figure and the numbers its text quotes."""

    figure: go.Figure
    numbers: dict


def nearest(value: float, candidates: dict[str, float]) -> str:
    """The option whose value is closest to ``value`` on a log scale."""
    return min(candidates, key=lambda k: abs(math.log(candidates[k]) - math.log(value)))


def chart_layout(fig: go.Figure, x: str, y: str, *, height: int = 380) -> go.Figure:
    fig.update_layout(
        font=FONT,
        height=height,
        xaxis_title=x,
        yaxis_title=y,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
    )
    return fig


def you_are_here(
    fig: go.Figure, x: float, text: str = "you are here", *, top: bool = False
) -> None:
    """A dotted vertical line at the control's value, labelled at its foot (the legend sits
    above most plots) or, with ``top``, at its head."""
    fig.add_vline(x=x, line={"color": "#666666", "dash": "dot"})
    fig.add_annotation(
        x=math.log10(x) if fig.layout.xaxis.type == "log" else x,
        y=1.0 if top else 0.0,
        yref="paper",
        text=text,
        showarrow=False,
        xanchor="left",
        yanchor="top" if top else "bottom",
        font={"size": 13, "color": "#666666"},
    )
