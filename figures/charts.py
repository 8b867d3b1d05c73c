"""Plotly figure builders. Pure functions of data frames: unit-tested without Streamlit."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from figures.theme import AXIS_LABELS, LOG_AXES, fit_axis_title, label, style

FONT = {"size": 16}


def _rgba(hex_color: str, alpha: float) -> str:
    r, g, b = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def band_trace(
    x: np.ndarray, lo: np.ndarray, hi: np.ndarray, *, color: str, group: str
) -> go.Scatter:
    """A shaded band between ``lo`` and ``hi`` over ``x`` in a pale ``color``: no legend
    entry, no hover, in the legend group of its line (toggled with it)."""
    return go.Scatter(
        x=np.concatenate([x, x[::-1]]),
        y=np.concatenate([hi, lo[::-1]]),
        mode="lines",
        fill="toself",
        fillcolor=_rgba(color, 0.15),
        line={"width": 0},
        hoverinfo="skip",
        showlegend=False,
        legendgroup=group,
    )


def summarise(df: pd.DataFrame, axis: str, metric: str) -> pd.DataFrame:
    """Mean, std and count of ``metric`` per (algorithm, axis value)."""
    out = df.groupby(["algorithm", axis])[metric].agg(["mean", "std", "count"]).reset_index()
    out["std"] = out["std"].fillna(0.0)
    return out


# Legends sit under the plot: the chart's toolbar (modebar) appears over the top edge, and on a
# phone it covered legend entries there.
LEGEND_BELOW = {"orientation": "h", "yanchor": "top", "y": -0.2, "x": 0}


def _label_height(fig: go.Figure, x: float, *, log: bool) -> float:
    """Paper height (0 = foot, 1 = top of the plot area) of the widest gap between the mean
    lines where they cross ``x``: there the marker's label touches no curve (the foot held the
    tensor page's non-private line; the top holds the PCA page's, and the toolbar on hover)."""
    ys = [np.asarray(t.y, dtype=float) for t in fig.data if t.y is not None and len(t.y)]
    if fig.layout.yaxis.range is not None:
        lo, hi = (float(v) for v in fig.layout.yaxis.range)
    elif ys:
        lo, hi = float(min(y.min() for y in ys)), float(max(y.max() for y in ys))
    else:
        return 0.5
    span = hi - lo or 1.0
    lo, hi = lo - 0.05 * span, hi + 0.05 * span  # about Plotly's own padding
    crossings = []
    for trace in fig.data:
        if trace.showlegend is False or trace.x is None or len(trace.x) < 1:
            continue  # the ±1 std bands: the label may sit on a pale band
        xs, y = np.asarray(trace.x, dtype=float), np.asarray(trace.y, dtype=float)
        if log:
            xs, at = np.log10(xs), np.log10(x)
        else:
            at = x
        order = np.argsort(xs)
        if xs.min() <= at <= xs.max():
            crossings.append((np.interp(at, xs[order], y[order]) - lo) / (hi - lo))
    edges = np.sort(np.clip([0.0, *crossings, 1.0], 0.0, 1.0))
    widest = int(np.argmax(np.diff(edges)))
    return float(np.clip((edges[widest] + edges[widest + 1]) / 2, 0.06, 0.94))


def _current_marker(fig: go.Figure, x: float, *, log: bool) -> None:
    """A dotted vertical line at the slider value, labelled beside it in the widest gap
    between the curves (:func:`_label_height`).

    Plotly reads an annotation's x on a log axis in log10 units (add_vline's own label would
    land at 10^x), so the label is placed explicitly.
    """
    fig.add_vline(x=x, line={"color": "#888888", "dash": "dot", "width": 2})
    fig.add_annotation(
        x=float(np.log10(x)) if log else x,
        y=_label_height(fig, x, log=log),
        xref="x",
        yref="paper",
        text="current",
        showarrow=False,
        xanchor="left",
        yanchor="middle",
        xshift=4,
        font={"color": "#888888"},
    )


def sweep_figure(
    df: pd.DataFrame,
    *,
    axis: str,
    metric: str,
    y_title: str,
    algorithms: Sequence[str] | None = None,
    marker: float | None = None,
    y_range: tuple[float, float] | None = None,
    compact: bool = False,
) -> go.Figure:
    """One line per algorithm: mean over runs with a ±1 std band; non-private dashed.

    Parameters
    ----------
    df : DataFrame
        Tidy sweep output (one row per algorithm, grid point, run).
    axis : str
        Swept column; ε, δ and N_s are drawn on log axes.
    metric : str
        Column to plot.
    y_title : str
    algorithms : sequence of str, optional
        Order of the lines (default: as they appear).
    marker : float, optional
        Draw a vertical line at the current slider value.
    y_range : (float, float), optional
    compact : bool
        For a small panel: only decades are labelled on a log x-axis.
    """
    stats = summarise(df, axis, metric)
    order = list(algorithms) if algorithms else list(dict.fromkeys(df["algorithm"]))
    fig = go.Figure()
    for alg in order:
        part = stats[stats["algorithm"] == alg].sort_values(axis)
        if part.empty:
            continue
        line_style = style(alg)
        color = line_style.color
        x = part[axis].to_numpy()
        lo, hi = (part["mean"] - part["std"]).to_numpy(), (part["mean"] + part["std"]).to_numpy()
        fig.add_trace(band_trace(x, lo, hi, color=color, group=alg))
        fig.add_trace(
            go.Scatter(
                x=x,
                y=part["mean"],
                mode="lines+markers",
                name=label(alg),
                legendgroup=alg,
                line={"color": color, "dash": line_style.dash, "width": 3},
                customdata=np.column_stack([part["std"], part["count"]]),
                hovertemplate=(
                    f"<b>{label(alg)}</b><br>{AXIS_LABELS.get(axis, axis)} = %{{x:.4g}}<br>"
                    f"{y_title} = %{{y:.4g}} ± %{{customdata[0]:.2g}} (%{{customdata[1]}} runs)"
                    "<extra></extra>"
                ),
            )
        )
    fig.update_layout(
        font=FONT,
        xaxis_title=AXIS_LABELS.get(axis, axis),
        yaxis_title=y_title,
        hovermode="closest",
        legend=LEGEND_BELOW,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        height=480,
    )
    ticks = sorted(stats[axis].unique())
    if compact and axis in LOG_AXES:  # a narrow panel: label decades only
        lo, hi = np.log10(ticks[0]), np.log10(ticks[-1])
        ticks = [10.0**e for e in range(int(np.ceil(lo - 1e-9)), int(np.floor(hi + 1e-9)) + 1)]
    fig.update_xaxes(tickvals=ticks, ticktext=[f"{t:g}" for t in ticks])
    if axis in LOG_AXES:
        fig.update_xaxes(type="log")
    if y_range is not None:
        fig.update_yaxes(range=list(y_range))
    if marker is not None:  # last: its label goes where the curves leave room
        _current_marker(fig, marker, log=axis in LOG_AXES)
    return fig


def add_pool_band(fig: go.Figure, spread: pd.DataFrame, *, axis: str, metric: str) -> None:
    """Shade the range of one algorithm's mean curve over data pools
    (:func:`dpcore.experiments.paper.
    pool_spread`), so a single pool's luck is visible beside the drawn curve."""
    band = spread.groupby(axis)[metric].agg(["min", "max"]).reset_index()
    color = _rgba(style("cape").color, 0.18)
    fig.add_trace(
        go.Scatter(
            x=band[axis],
            y=band["max"],
            mode="lines",
            line={"width": 0},
            showlegend=False,
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=band[axis],
            y=band["min"],
            mode="lines",
            line={"width": 0},
            fill="tonexty",
            fillcolor=color,
            name=f"CAPE over {spread['seed'].nunique()} data pools (min–max)",
            hovertemplate="CAPE over pools: %{y:.3f} (min)<extra></extra>",
        )
    )


def results_figure(
    df: pd.DataFrame,
    *,
    axis: str,
    metric: str,
    y_title: str,
    algorithms: Sequence[str],
    marker: float,
    target: float | None = None,
) -> go.Figure:
    """An experiment page's sweep (:func:`sweep_figure`) with the question's ``target`` as a
    dotted horizontal line."""
    fig = sweep_figure(
        df, axis=axis, metric=metric, y_title=y_title, algorithms=algorithms, marker=marker
    )
    if target is not None:
        fig.add_hline(
            y=target,
            line={"color": "#666666", "dash": "dot", "width": 2},
            annotation_text="target",
            annotation_position="bottom right",
        )
    return fig


def panel_figure(
    df: pd.DataFrame,
    *,
    axis: str,
    metric: str,
    y_title: str,
    x_title: str,
    height: int,
    spread: pd.DataFrame | None = None,
) -> go.Figure:
    """A small panel of the paper's figures: :func:`sweep_figure` without legend, small
    lettering, and the spread over data pools (:func:`add_pool_band`) when given."""
    fig = sweep_figure(df, axis=axis, metric=metric, y_title=y_title, compact=True)
    fig.update_layout(
        height=height, showlegend=False, font={"size": 12}, xaxis_title=x_title, margin={"t": 10}
    )
    fig.update_yaxes(title_text=fit_axis_title(y_title, height, 12))  # hover keeps one line
    if spread is not None:
        add_pool_band(fig, spread, axis=axis, metric=metric)
    return fig


HISTOGRAM_BINS = 60  # bins of each Monte Carlo histogram (as plotly's nbinsx=60 asked before)


def noise_histogram_figure(
    samples: dict[str, np.ndarray], stds: dict[str, float], colors: dict[str, str]
) -> go.Figure:
    """Monte Carlo histograms of aggregate noise with the N(0, σ²) density overlaid.

    Each histogram is binned here (:data:`HISTOGRAM_BINS` equal bins over its draws' range) and
    sent as its counts: the browser draws the same bars (``histfunc="sum"`` over one point
    per bin, normalised to a density) from 2 × 60 numbers instead of every draw — 20,000 a
    trace made a 560 kB chart that every rerun serialised, hashed and sent (issue #36 item 4).
    """
    fig = go.Figure()
    span = 4 * max(stds.values()) if stds else 1.0
    grid = np.linspace(-span, span, 400)
    for name, draws in samples.items():
        std = stds[name]
        counts, edges = np.histogram(np.asarray(draws, dtype=float), bins=HISTOGRAM_BINS)
        fig.add_trace(
            go.Histogram(
                x=(edges[:-1] + edges[1:]) / 2,  # one point per bin, at its centre
                y=counts,
                histfunc="sum",
                histnorm="probability density",
                xbins={"start": edges[0], "end": edges[-1], "size": edges[1] - edges[0]},
                autobinx=False,
                name=f"{name} (draws)",
                marker_color=_rgba(colors[name], 0.45),
                legendgroup=name,
            )
        )
        dens = np.exp(-0.5 * (grid / std) ** 2) / (std * np.sqrt(2 * np.pi)) if std > 0 else None
        if dens is not None:
            fig.add_trace(
                go.Scatter(
                    x=grid,
                    y=dens,
                    mode="lines",
                    name=f"{name}: N(0, {std:.3g}²)",
                    line={"color": colors[name], "width": 3},
                    legendgroup=name,
                )
            )
    fig.update_layout(
        barmode="overlay",
        font=FONT,
        xaxis_title="noise in the aggregate",
        yaxis_title="density",
        height=420,
        legend=LEGEND_BELOW,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
    )
    return fig


GAIN_STYLES = {  # key → (colour, dash); labels and meanings in ui.cached.GAINS
    "same_weights": ("#D55E00", "solid"),
    "joint_same_weights": ("#CC79A7", "dash"),
    "best_conventional": ("#0072B2", "solid"),
    "paper_g": ("#666666", "dot"),
}


def gain_figure(
    curve: pd.DataFrame, *, labels: dict[str, str], current: dict[str, float], share: float
) -> go.Figure:
    """Every gain of CAPE, each labelled with what it compares, on one chart.

    Parameters
    ----------
    curve : DataFrame
        ``largest_share`` and one column per gain key (``ui.cached.gain_curve``).
    labels : dict
        Gain key → legend label.
    current : dict
        Gain key → the gain for the page's own sites, drawn as a marker at ``share``.
    share : float
        The page's largest site's share of all samples.
    """
    fig = go.Figure()
    for key, name in labels.items():
        color, dash = GAIN_STYLES[key]
        fig.add_trace(
            go.Scatter(
                x=curve["largest_share"],
                y=curve[key],
                mode="lines",
                name=name,
                line={"color": color, "dash": dash, "width": 3},
                hovertemplate="largest site holds %{x:.1%}<br>gain %{y:.3g}<extra></extra>",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=[share],
                y=[current[key]],
                mode="markers",
                showlegend=False,
                marker={"size": 13, "color": color, "symbol": "diamond"},
                hovertemplate=f"your sites: {name} = %{{y:.3g}}<extra></extra>",
            )
        )
    fig.update_layout(
        font=FONT,
        height=460,
        xaxis_title="share of all samples at the largest site",
        yaxis_title="variance gain (baseline / CAPE)",
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend={"orientation": "h", "y": -0.25},
    )
    fig.update_yaxes(type="log", dtick=1)  # powers of ten only: G(n) spans decades
    fig.update_xaxes(tickformat=".0%")
    return fig


VIEW_STYLES = {
    "own release": ("#0072B2", "solid", "own release only (the paper's argument)"),
    "all releases": ("#D55E00", "dash", "all releases together (joint view)"),
}


def collusion_figure(
    curve: pd.DataFrame, *, bound: int, chosen: tuple[int, float, float] | None = None
) -> go.Figure:
    """Effective ε of the most exposed honest site in the worst coalition of each size.

    Parameters
    ----------
    curve : DataFrame
        :func:`dpcore.collusion_curve` output (with ``promised_epsilon`` and ``exact``).
        Exact worst cases are filled markers; lower bounds (``exact`` False) open ones, named
        in the legend and the hover text.
    bound : int
        ⌈S/3⌉ − 1 (arXiv:1904.10059), drawn as a vertical line.
    chosen : (int, float, float), optional
        The coalition picked on the page: its size and the largest ε of an honest site in
        its own-release and joint views, drawn as two large markers.
    """
    fig = go.Figure()
    for view, (color, dash, name) in VIEW_STYLES.items():
        part = curve[curve["view"] == view]
        exact = part["exact"].to_numpy(bool)
        fig.add_trace(
            go.Scatter(
                x=part["colluding"],
                y=part["epsilon"],
                mode="lines+markers",
                name=name,
                line={"color": color, "dash": dash, "width": 3},
                marker={
                    "size": np.where(exact, 8, 11).tolist(),
                    "symbol": np.where(exact, "circle", "circle-open").tolist(),
                    "line": {"width": 2, "color": color},
                },
                customdata=[
                    [float(p), "worst of every coalition" if e else "lower bound (greedy)"]
                    for p, e in zip(part["promised_epsilon"], exact, strict=True)
                ],
                hovertemplate="%{x} colluding sites: %{customdata[1]}<br>effective ε = "
                "%{y:.3g}<br>promised ε_s = %{customdata[0]:.3g}<extra></extra>",
            )
        )
    if not curve["exact"].all():  # say in the legend what the open markers are
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name="open marker: lower bound (greedy search; no ✓)",
                marker={"size": 11, "symbol": "circle-open", "color": "#444444"},
            )
        )
    promised = curve.drop_duplicates("colluding")["promised_epsilon"]
    if np.allclose(curve["promised_epsilon"], promised.iloc[0]):
        level = float(promised.iloc[0])
        fig.add_hline(y=level, line={"dash": "dot", "color": "#000000", "width": 1.5})
        fig.add_annotation(
            x=0.01,
            xref="paper",
            y=level,
            yref="y",
            text=f"promised ε_s = {level:.3g} (✓ on or below)",
            showarrow=False,
            xanchor="left",
            yanchor="bottom",
            font={"size": 14},
        )
    else:  # unequal promises: the promise of the site each curve point refers to
        for view, (color, _, _) in VIEW_STYLES.items():
            part = curve[curve["view"] == view]
            fig.add_trace(
                go.Scatter(
                    x=part["colluding"],
                    y=part["promised_epsilon"],
                    mode="lines",
                    name=f"its promised ε_s ({view})",
                    line={"color": color, "dash": "dot", "width": 1.5},
                )
            )
    if chosen is not None:
        size, own, joint = chosen
        for view, eps in (("own release", own), ("all releases", joint)):
            fig.add_trace(
                go.Scatter(
                    x=[size],
                    y=[eps],
                    mode="markers",
                    name=f"your coalition ({view})",
                    marker={
                        "size": 16,
                        "symbol": "diamond-open",
                        "line": {"width": 3, "color": VIEW_STYLES[view][0]},
                    },
                    hovertemplate="your coalition: %{x} sites<br>largest ε = %{y:.3g}"
                    "<extra></extra>",
                )
            )
    fig.add_vline(x=bound, line={"dash": "dot", "color": "#666666", "width": 1.5})
    fig.add_annotation(
        x=bound,
        y=1.0,
        yref="paper",
        text=f"⌈S/3⌉ − 1 = {bound}",
        showarrow=False,
        xanchor="left",
        yanchor="top",
        font={"size": 14, "color": "#666666"},
    )
    fig.update_layout(
        font=FONT,
        height=440,
        xaxis_title="colluding sites (with the aggregator)",
        yaxis_title="effective ε of the most exposed site",
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend={"orientation": "h", "y": -0.25},
    )
    fig.update_xaxes(dtick=1)
    return fig


def calibration_figure(table: pd.DataFrame, *, current: Sequence[float]) -> go.Figure:
    """Classic and analytic σ/Δ over ε, the region where classic is no proof shaded."""
    fig = go.Figure()
    fig.add_vrect(
        x0=1.0,
        x1=float(table["epsilon"].max()),
        fillcolor="#999999",
        opacity=0.15,
        line_width=0,
    )
    fig.add_annotation(
        x=float(np.log10(3.0)),
        y=1.0,
        yref="paper",
        text="classic is not a proof (ε ≥ 1)",
        showarrow=False,
        yanchor="top",
        font={"size": 14, "color": "#444444"},
    )
    for col, color, dash, name in (
        ("classic", style("conv").color, "dash", "classic √(2 ln(1.25/δ))/ε"),
        ("analytic", style("cape").color, "solid", "analytic (Balle & Wang)"),
    ):
        fig.add_trace(
            go.Scatter(
                x=table["epsilon"],
                y=table[col],
                mode="lines",
                name=name,
                line={"color": color, "dash": dash, "width": 3},
                hovertemplate="ε = %{x:.3g}<br>σ/Δ = %{y:.3g}<extra></extra>",
            )
        )
    for eps in sorted(set(current)):
        fig.add_vline(x=eps, line={"dash": "dot", "color": "#000000", "width": 1})
    fig.update_layout(
        font=FONT,
        height=400,
        xaxis_title="privacy ε",
        yaxis_title="noise σ / sensitivity Δ",
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend={"orientation": "h", "y": -0.25},
    )
    fig.update_xaxes(type="log", dtick=1)
    fig.update_yaxes(type="log", dtick=1)
    return fig


def legend_figure(algorithms: Sequence[str]) -> go.Figure:
    """A legend alone (one entry per algorithm, in the app's styles), to share across panels."""
    fig = go.Figure()
    for alg in algorithms:
        line_style = style(alg)
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="lines",
                name=line_style.label,
                line={"color": line_style.color, "dash": line_style.dash, "width": 3},
            )
        )
    fig.update_layout(
        height=60,
        margin={"l": 0, "r": 0, "t": 0, "b": 0},
        font=FONT,
        legend={"orientation": "h", "x": 0, "y": 1, "yanchor": "top"},
        xaxis={"visible": False},
        yaxis={"visible": False},
        plot_bgcolor="rgba(0,0,0,0)",
    )
    return fig


def figure_html(fig: go.Figure) -> str:
    """Standalone HTML of a figure (plotly.js embedded, works offline)."""
    return fig.to_html(include_plotlyjs=True, full_html=True)
