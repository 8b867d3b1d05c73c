"""The Trust models page's chart, its table's display form and its computed explanation.

Every number comes from :func:`dpcore.analysis.trust_models.trust_table` and
:func:`dpcore.analysis.trust_models.trust_pca`; this module only shapes and words them.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpcore import TRUST_LABELS as LABELS
from dpcore import TRUST_SCHEMES as SCHEMES
from dpcore import algorithm_names, count_text
from dpcore import get_algorithm as get
from figures import theme

# Each scheme's colour, derived: a new scheme gets one with no edit here. A scheme that is a
# registered algorithm wears that algorithm's colour (one colour per algorithm on every page),
# found by its own name or by the one _ALGORITHM gives; central and the shuffle control are
# greys that read on both themes; any other scheme takes, in registry order, the next colour
# of _SPARE that no algorithm and no other scheme wears (from Paul Tol's palettes, none of
# them in the registry, each at least 3:1 against both themes' backgrounds, WCAG 2.1's
# contrast for a mark; past its six they repeat, and tests/figures/test_trust_figures.py
# names the schemes that share a colour).
_ALGORITHM = {"conventional": "conv"}  # a scheme registered under another name
_GREYS = {"central": "#666666", "shuffle": "#999999"}
_SPARE = ("#EE3377", "#997700", "#4477AA", "#228833", "#EE6677", "#CC3311")


def scheme_colors(schemes: Sequence[str]) -> dict[str, str]:
    """The colour of each of ``schemes`` (trust schemes' names, in registry order)."""
    registered = set(algorithm_names())
    out = {s: _GREYS[s] for s in schemes if s in _GREYS}
    for s in schemes:
        if s not in out and _ALGORITHM.get(s, s) in registered:
            out[s] = theme.style(_ALGORITHM.get(s, s)).color
    worn = set(out.values()) | {theme.style(a).color for a in registered}
    spare = [c for c in _SPARE if c not in worn] or list(_SPARE)
    rest = [s for s in schemes if s not in out]
    out.update({s: spare[i % len(spare)] for i, s in enumerate(rest)})
    return {s: out[s] for s in schemes}


COLORS = scheme_colors(SCHEMES)


def _at(frame: pd.DataFrame, row: str, column: str) -> float:
    """One number of a frame indexed by name (the scheme), as a float."""
    return float(frame[column].to_numpy()[frame.index.get_loc(row)])

def _fmt_eps(eps: float) -> str:
    return "∞" if math.isinf(eps) else f"{eps:.3g}"


def _bits(bits: float) -> str:
    for unit, size in (("GB", 8e9), ("MB", 8e6), ("kB", 8e3)):
        if bits >= size:
            return f"{bits / size:.3g} {unit}"
    return f"{bits:.0f} bit" if bits else "0"


def _within(eps: float, promised: float) -> bool:
    return eps <= promised * (1 + 1e-7)


def _interval(refutation: float, certificate: float) -> str:
    """Where the true ε lies: [refutation ε, KLS certificate]."""
    return f"ε ∈ [{_fmt_eps(refutation)}, {_fmt_eps(certificate)}]"


def _epsilon_words(r: dict[Hashable, Any]) -> str:
    """The worst site's ε in the aggregator's view: ✓ certified, ✗ refuted, or open.

    Secure aggregation's ε is the KLS certificate (an upper bound) beside the refutation ε,
    the exact ε at δ_s of a move the data can make (a lower bound): ✓ when the certificate
    is within ε_s, ✗ when the refutation ε is above it, "open" between; the interval
    [refutation ε, certificate] is shown whenever the two differ.
    """
    eps, exact = r["aggregator_epsilon"], r["aggregator_exact_epsilon"]
    promised = r["aggregator_promised"]
    if r.get("scheme") != "secagg" or exact == eps:  # an exact ε: no interval
        mark = "✓" if _within(eps, promised) else "✗"
        return f"worst ε {_fmt_eps(eps)} {'≤' if mark == '✓' else '>'} ε_s {promised:.3g} {mark}"
    interval = _interval(exact, eps)
    if _within(eps, promised):
        return f"certified: KLS bound {_fmt_eps(eps)} ≤ ε_s {promised:.3g} ✓ ({interval})"
    if _within(exact, promised):
        return (
            f"open: {interval} contains ε_s {promised:.3g} (neither certified by the KLS "
            "bound nor refuted by an achievable move)"
        )
    return (
        f"refuted: an achievable move's exact ε {_fmt_eps(exact)} > ε_s {promised:.3g} ✗ "
        f"({interval})"
    )


def _colluder_words(r: dict[Hashable, Any], sites: int) -> str:
    """Colluders tolerated whichever sites collude: certified, open, and refuted from where."""
    certified, exact = int(r["colluders_tolerated"]), int(r["colluders_exact"])
    if certified >= sites - 1:
        return f"all {sites - 1} others"
    if exact < 0:
        secagg = r.get("scheme") == "secagg"
        return "none: refuted with 0" if secagg else "none: the promise fails with 0"
    words = "none" if certified < 0 else f"{certified}"
    if exact > certified:
        upto = f"all {sites - 1}" if exact >= sites - 1 else f"{exact}"
        words += f" certified by the KLS bound; open up to {upto}"
    if r.get("scheme") == "secagg" and exact < sites - 1:
        words += f"; refuted from {exact + 1}"
    return words


def pca_summary(pca: pd.DataFrame) -> pd.DataFrame:
    """Mean and std over runs of each scheme's captured energy ratio (index: scheme)."""
    return pca.groupby("scheme", sort=False)["captured_energy_ratio"].agg(["mean", "std"])


def display_table(table: pd.DataFrame, pca: pd.DataFrame, *, sites: int) -> pd.DataFrame:
    """The table as shown: one row per scheme, every cell worded from the core's numbers."""
    energy = pca_summary(pca)
    rows = []
    for r in table.to_dict("records"):
        if r["scheme"] == "central":
            sees = "the curator: all raw data"
        elif r["scheme"] == "local":
            sees = "nobody: site 1 publishes its own release"
        else:
            who = {
                "conventional": "aggregator: every noisy release",
                "cape": "aggregator: every release",
                "cape_joint": "aggregator: every release",
                "secagg": "server: only the sum (messages masked)",
                "shuffle": "analyst: the releases, shuffled",
            }[r["scheme"]]
            sees = f"{who} — {_epsilon_words(r)}"
        colluders = _colluder_words(r, sites)
        if r["masks_tolerated"] >= 0:
            colluders += f" (masks: {r['masks_tolerated']})"
        if r["scheme"] == "local":
            dropout = "site 1's output is gone; no one else affected"
        else:
            eps = _fmt_eps(r["dropout_epsilon"])
            left = (
                f"worst when site {r['dropout_site']} drops: {r['dropout_std_ratio']:.3g}× the "
                f"std needed, worst ε {eps} (promised {r['dropout_promised']:g})"
            )
            if r["remedy"].startswith("none needed"):
                dropout = f"{r['remedy']}: {left}"
            else:
                dropout = (
                    f"no remedy: {left}; {r['remedy']}: {r['remedy_std_ratio']:.3g}× "
                    f"({r['remedy_rounds']} round{'s' if r['remedy_rounds'] > 1 else ''})"
                )
        comm = (
            "nothing sent"
            if r["messages"] == 0
            else f"{r['messages']} messages; {_bits(r['bits_per_site'])} per site, "
            f"{_bits(r['bits_total'])} in all"
        )
        rows.append(
            {
                "scheme": LABELS[r["scheme"]],
                "noise std ÷ central": r["std_ratio"],
                "what the aggregator sees": sees,
                "who must be trusted": r["trusted"],
                "colluders tolerated": colluders,
                "one dropout (worst site)": dropout,
                "messages and bits": comm,
                "PCA captured energy": energy.loc[r["scheme"], "mean"],
                "± std": energy.loc[r["scheme"], "std"],
                "source": r["source"],
            }
        )
    return pd.DataFrame(rows)


def trust_figure(table: pd.DataFrame, pca: pd.DataFrame) -> go.Figure:
    """Two panels sharing the schemes: noise std ÷ central (log) and PCA captured energy.

    Parameters
    ----------
    table : DataFrame
        :func:`dpcore.analysis.trust_models.trust_table` output.
    pca : DataFrame
        :func:`dpcore.analysis.trust_models.trust_pca` output (``nonprivate`` drawn as a line).
    """
    energy = pca_summary(pca)
    order = [s for s in SCHEMES if s in set(table["scheme"])][::-1]  # central on top
    labels = [LABELS[s] for s in order]
    ratio = table.set_index("scheme").loc[order, "std_ratio"].to_numpy(float)
    colors = [COLORS[s] for s in order]
    fig = make_subplots(
        rows=1,
        cols=2,
        shared_yaxes=True,
        horizontal_spacing=0.04,
        column_widths=[0.5, 0.5],
        subplot_titles=(
            "Aggregate noise std ÷ central (dotted: 1)",
            "PCA captured energy ÷ optimum (dashed: non-private)",
        ),
    )
    fig.add_trace(
        go.Bar(
            y=labels,
            x=ratio,
            orientation="h",
            marker={"color": colors},
            text=[f"{v:.2f}×" for v in ratio],
            textposition="outside",
            cliponaxis=False,
            hovertemplate="%{y}: %{x:.3g} × central<extra></extra>",
            showlegend=False,
        ),
        row=1,
        col=1,
    )
    mean = energy.loc[order, "mean"].to_numpy(float)
    std = np.nan_to_num(energy.loc[order, "std"].to_numpy(float))
    fig.add_trace(
        go.Scatter(
            y=labels,
            x=mean,
            mode="markers",
            marker={"color": colors, "size": 13, "line": {"width": 1, "color": "#333333"}},
            error_x={"type": "data", "array": std, "thickness": 2, "color": "#666666"},
            hovertemplate="%{y}: %{x:.3f} ± %{error_x.array:.3f}<extra></extra>",
            showlegend=False,
        ),
        row=1,
        col=2,
    )
    fig.add_vline(x=1.0, line={"dash": "dot", "color": "#000000", "width": 1.5}, row=1, col=1)
    if "nonprivate" in energy.index:
        fig.add_vline(
            x=_at(energy, "nonprivate", "mean"),
            line={"dash": "dash", "color": "#000000", "width": 1.5},
            row=1,
            col=2,
        )
    hi = max(float(ratio.max()), 1.0)
    lo = min(float(ratio.min()), 1.0)
    ticks = [v for v in (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100) if lo / 1.3 <= v <= hi * 2.3]
    fig.update_xaxes(
        type="log", range=[math.log10(lo) - 0.1, math.log10(hi) + 0.35], row=1, col=1,
        tickvals=ticks, ticktext=[f"{v:g}×" for v in ticks], title_text="log scale",
    )  # fmt: skip
    low_energy = float(np.min(mean - std))
    fig.update_xaxes(
        range=[max(0.0, min(low_energy, 0.9) - 0.05), 1.02], row=1, col=2,
        title_text="mean ± std over runs",
    )  # fmt: skip
    fig.update_layout(height=420, margin={"l": 10, "r": 20, "t": 40, "b": 60}, bargap=0.35)
    return fig


def explanation(
    table: pd.DataFrame,
    pca: pd.DataFrame,
    *,
    shuffle_parties: int,
    dim: int,
    bits: int,
    sites: int,
) -> str:
    """'What am I looking at?' for :func:`trust_figure`, from the numbers on screen."""
    t = table.set_index("scheme")
    energy = pca_summary(pca)["mean"]
    runs = int(pca["run"].nunique())
    sa = pca[pca["scheme"] == "secagg"]
    wraps = float(sa["wraparounds"].mean())
    coords = int(sa["coordinates"].iloc[0])
    r = t["std_ratio"]
    if wraps > 0:
        wrap_text = (
            f"At b = {bits} bits an average of {wraps:.3g} of the {coords} coordinates per "
            "round wrapped around (their sum left the representable range and decoded "
            f"wrongly): secure aggregation's captured energy is {energy['secagg']:.3f} "
            f"against CAPE's {energy['cape']:.3f}."
        )
    else:
        wrap_text = (
            f"At b = {bits} bits no coordinate wrapped around in {runs} rounds, and rounding "
            f"added an error of RMS {float(sa['quantisation_rms'].mean()):.2g} per entry "
            f"(at most {float(sa['quantisation_bound'].iloc[0]):.2g}, against a noise std of "
            f"{_at(t, 'secagg', 'noise_std'):.2g})."
        )
    shuffled = _at(t, "shuffle", "shuffle_epsilon")
    eps1 = _at(t, "local", "aggregator_promised")
    if sites < shuffle_parties:
        shuffle_text = (
            "Feldman–McMillan–Talwar's bound needs at least "
            f"{count_text(shuffle_parties)} parties at ε₀ = ε_1 = {eps1:g}; with {sites} sites "
            "it gives no amplification "
            f"(ε = {shuffled:.3g}), so its noise is conventional's"
        )
    else:
        shuffle_text = (
            f"with {sites} parties Feldman–McMillan–Talwar's bound would turn ε₀ = {eps1:g} "
            f"into {shuffled:.3g}, but only for a pure-DP randomiser, which the Gaussian is "
            "not; its noise is conventional's"
        )
    return (
        f"**Left:** each scheme's noise std on the pooled estimate Σ μ_s A_s (D = {dim}), "
        f"divided by what one trusted curator adds, τ_pool = {_at(t, 'central', 'noise_std'):.3g} "
        f"(dotted line: 1). CAPE's paper design reaches {r['cape']:.2f}×, the joint-view-safe "
        f"design {r['cape_joint']:.2f}× — both trusting a noise generator. Secure aggregation "
        f"reaches {r['secagg']:.2f}× with no trusted party (the ratio moves with its "
        f"calibration, the scale and the bit width). Conventional averaging pays "
        f"{r['conventional']:.2f}×, site 1 alone {r['local']:.2f}×. The shuffle row is a "
        f"negative control: {shuffle_text}.\n\n"
        f"**Right:** the top-K subspace's captured energy as a fraction of the optimum, mean "
        f"± one std over {runs} runs on a synthetic pool split into these sites (dashed: "
        f"non-private, {energy['nonprivate']:.3f}): central {energy['central']:.3f}, CAPE "
        f"{energy['cape']:.3f} and {energy['cape_joint']:.3f} (joint-view-safe), secure "
        f"aggregation {energy['secagg']:.3f}, conventional {energy['conventional']:.3f}, site "
        f"1 alone {energy['local']:.3f}. {wrap_text}"
    )


def iterative_display(table: pd.DataFrame, *, sites: int) -> pd.DataFrame:
    """The iterative methods' rows (:func:`dpcore.analysis.trust_iterative.iterative_trust_table`)
    in the worded table's columns; what does not apply is said in words, never left blank."""
    rows = []
    for r in table.to_dict("records"):
        sees = "the curator: all raw data" if math.isinf(r["aggregator_epsilon"]) else "aggregator"
        not_applicable = dict(part.split(": ", 1) for part in r["not_applicable"].split("; "))
        noise = (
            f"per round {r['std_ratio']:.3g}× central's one-shot std"
            if r["noise_std"] is not None and not pd.isna(r["noise_std"])
            else not_applicable["noise std"]
        )
        rows.append(
            {
                "scheme": f"{get(r['scheme'], 'pca').label} (T = {r['rounds']})",
                "what the aggregator sees": f"{sees}, all {r['rounds']} round(s) — "
                f"{_epsilon_words(r)}; {noise}",
                "who must be trusted": r["trusted"],
                "colluders tolerated": (
                    f"all {sites - 1} others"
                    if r["colluders_tolerated"] >= sites - 1
                    else "none: the promise fails with 0"
                    if r["colluders_tolerated"] < 0
                    else f"{r['colluders_tolerated']}"
                )
                + f" ({not_applicable['masks']})",
                "one dropout (worst site)": not_applicable["dropout"],
                "source": r["source"],
            }
        )
    return pd.DataFrame(rows)
