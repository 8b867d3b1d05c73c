"""The rounds axis (issue #38): captured energy against the number of rounds T at one total ε.

Pure function of :func:`dpcore.experiments.sweeps.rounds.rounds_summary`'s frame, so the chart draws
exactly the numbers of the table beside it and of the command that reproduces it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from figures.charts import FONT, LEGEND_BELOW, band_trace
from figures.theme import label, style


def rounds_figure(
    summary: pd.DataFrame, *, y_title: str, algorithms: Sequence[str] | None = None
) -> go.Figure:
    """One line per algorithm against T, with a mean ± standard error band.

    Parameters
    ----------
    summary : DataFrame
        :func:`dpcore.experiments.sweeps.rounds.rounds_summary` at one ε (columns ``algorithm``,
        ``rounds``, ``mean``, ``se``, ``runs``).
    y_title : str
    algorithms : sequence of str, optional
        Order of the lines (default: as they appear).

    Notes
    -----
    An algorithm with one T (a one-shot release, T = 1) is drawn as a horizontal line with
    its band across the whole T range: it spends the same total ε once, whatever T the
    iterative ones use.
    """
    if summary["epsilon"].nunique() > 1:
        raise ValueError(f"summary must hold one ε; got {sorted(summary['epsilon'].unique())}")
    order = list(algorithms) if algorithms else list(dict.fromkeys(summary["algorithm"]))
    span = np.array([summary["rounds"].min(), summary["rounds"].max()], dtype=float)
    fig = go.Figure()
    for alg in order:
        part = summary[summary["algorithm"] == alg].sort_values("rounds")
        if part.empty:
            continue
        line = style(alg)
        one_shot = len(part) == 1 and span[1] > span[0]
        x = span if one_shot else part["rounds"].to_numpy(dtype=float)
        mean = np.resize(part["mean"].to_numpy(), x.size)
        se = np.resize(part["se"].to_numpy(), x.size)
        runs = np.resize(part["runs"].to_numpy(), x.size)
        fig.add_trace(band_trace(x, mean - se, mean + se, color=line.color, group=alg))
        name = f"{label(alg)} (one release)" if one_shot else label(alg)
        fig.add_trace(
            go.Scatter(
                x=x,
                y=mean,
                mode="lines" if one_shot else "lines+markers",
                name=name,
                legendgroup=alg,
                line={"color": line.color, "dash": line.dash, "width": 3},
                customdata=np.column_stack([se, runs]),
                hovertemplate=(
                    f"<b>{label(alg)}</b><br>T = %{{x:g}}<br>{y_title} = %{{y:.4g}} "
                    "± %{customdata[0]:.2g} (s.e., %{customdata[1]} runs)<extra></extra>"
                ),
            )
        )
    ticks = sorted(summary["rounds"].unique())
    fig.update_layout(
        font=FONT,
        xaxis_title="rounds T (the total ε is the same for every T)",
        yaxis_title=y_title,
        hovermode="closest",
        legend=LEGEND_BELOW,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        height=480,
    )
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[f"{t:g}" for t in ticks])
    return fig
