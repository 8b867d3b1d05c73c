"""Live figures of the lessons and the numbers their text and reveals quote.

A scene maps the step's control value to a figure and a dict of numbers. Numbers come from
dpcore through the cached wrappers of :mod:`ui.learn_core` and :mod:`ui.cached`; a question's
correct option (``answer``) is derived here from those numbers, never written in the lesson.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import dpcore
from dpcore import EPS_TOL, conventional_std, likelihood_factor
from figures.charts import calibration_figure, collusion_figure, gain_figure, sweep_figure
from figures.theme import style
from figures.tradeoff import theory_figure
from learning.protocol_steps import protocol_steps
from learning.settings import (
    DELTA_GRID,
    LESSON_DELTA,
    LESSON_SEED,
    N_MEAN,
    OTD_RUNS,
    PCA_N,
    PCA_SETTINGS,
    PCA_SITES,
    SITE_GRID,
    SIZE,
    SPLIT_TOTAL,
    TOTAL,
    UNEQUAL_SITES,
    VIEW_SITES,
)
from ui.cached import (
    GAINS,
    calibration_curve,
    coalition_table,
    collusion_curve_table,
    gain_curve,
    party_table,
)
from ui.learn_core import (
    classic_check,
    lesson_otd,
    lesson_pca,
    protocol_run,
    sigmas,
    site_designs,
)
from ui.lesson_beyond import BEYOND_SCENES
from ui.scene_parts import Scene, chart_layout, nearest, sites_text, you_are_here


def times(factor: float) -> str:
    """A likelihood factor as a reader says it: 1.65, 148, 22,026."""
    return f"{factor:.3g}" if factor < 1000 else f"{factor:,.0f}"


def promise(epsilon: float) -> dict[str, str]:
    """What ε promises one person (:func:`dpcore.likelihood_factor`, e^ε): at
    this ε, and at the two ε's a class compares, 0.5 and 5."""
    return {
        "odds": times(likelihood_factor(epsilon=epsilon)),
        "odds_low": times(likelihood_factor(epsilon=0.5)),
        "odds_high": times(likelihood_factor(epsilon=5.0)),
    }


# --- lesson 1: why noise, and how much ---------------------------------------------------------


def neighbours(epsilon: float) -> Scene:
    """Released mean under two neighbouring data sets (means 1/N apart), classic σ."""
    sens = 1.0 / N_MEAN
    sigma, half = sigmas(sens, (epsilon, epsilon / 2), delta=LESSON_DELTA, method="classic")
    a_sigma, a_half = sigmas(sens, (epsilon, epsilon / 2), delta=LESSON_DELTA, method="analytic")
    x = np.linspace(0.5 - 4 * sigma, 0.5 + sens + 4 * sigma, 400)
    fig = go.Figure()
    for mean, name, color in (
        (0.5, "your data: true mean 0.50", style("conv").color),
        (0.5 + sens, "one person changed: 0.51", style("cape").color),
    ):
        dens = np.exp(-0.5 * ((x - mean) / sigma) ** 2) / (sigma * math.sqrt(2 * math.pi))
        fig.add_trace(go.Scatter(x=x, y=dens, name=name, line={"color": color, "width": 3}))
    ratio = half / sigma
    return Scene(
        chart_layout(fig, "released mean", "probability density"),
        {
            "epsilon": epsilon,
            **promise(epsilon),
            "sigma": sigma,
            "half": half,
            "ratio": ratio,
            "ratio_analytic": a_half / a_sigma,
            "table": sites_text([N_MEAN] * 5, epsilon),
            "answer": nearest(
                ratio,
                {"it halves": 0.5, "it stays": 1.0, "it doubles": 2.0, "it quadruples": 4.0},
            ),
        },
    )


def delta_curve(delta: float) -> Scene:
    """Classic σ/Δ over δ at ε = 0.5 (σ ∝ √(2 ln(1.25/δ)))."""
    values = [sigmas(1.0, (0.5,), delta=d, method="classic")[0] for d in DELTA_GRID]
    at = sigmas(1.0, (0.5,), delta=delta, method="classic")[0]
    # the mean of N_MEAN values
    tau = sigmas(1.0 / N_MEAN, (0.5,), delta=delta, method="classic")[0]
    lo, hi = values[DELTA_GRID.index(1e-2)], values[DELTA_GRID.index(1e-6)]
    fig = go.Figure(
        go.Scatter(
            x=DELTA_GRID,
            y=values,
            mode="lines+markers",
            name="classic σ/Δ at ε = 0.5",
            line={"color": style("conv").color, "width": 3},
        )
    )
    fig.update_xaxes(type="log", tickvals=DELTA_GRID, ticktext=[f"{d:g}" for d in DELTA_GRID])
    you_are_here(fig, delta)
    ratio = hi / lo
    return Scene(
        chart_layout(fig, "privacy δ", "noise σ / sensitivity Δ"),
        {
            "delta": delta,
            "sigma": at,
            "tau": tau,
            "table": sites_text([N_MEAN] * 5, 0.5, delta=delta),
            "ratio": ratio,
            "answer": nearest(ratio, {"about 1.7×": 1.7, "about 10×": 10.0, "about 10 000×": 1e4}),
        },
    )


def calibrations(epsilon: float) -> Scene:
    """Classic vs analytic σ/Δ over ε, and whether the classic σ is private at ε."""
    curve = calibration_curve(LESSON_DELTA, tuple(np.logspace(-2, 1, 31)))
    check = classic_check(sensitivity=1.0, epsilon=epsilon, delta=LESSON_DELTA)
    enough = check["classic"] >= check["analytic"]
    return Scene(
        calibration_figure(curve, current=[epsilon]),
        {
            "epsilon": epsilon,
            **check,
            "ratio": check["analytic"] / check["classic"],
            "table": sites_text([N_MEAN] * 5, epsilon),
            "answer": "yes, at least enough" if enough else "no, too little",
        },
    )


# --- lesson 2: many sites -------------------------------------------------------------------------


def design_numbers(designs: dpcore.MeanReleaseDesigns) -> dict:
    """A design's numbers by the names the lesson texts quote: τ_s and the per-site
    variances, the aggregate std of CAPE (``tau_cape``, the core's τ_agg), of conventional
    averaging with the same weights and with 1/S, and the three gains (Sec. 3, Prop. 1)."""
    cape = designs.cape
    return {
        "tau": cape.tau_site.tolist(),
        "var_e": cape.var_e.tolist(),
        "var_f": cape.var_f.tolist(),
        "var_g": cape.var_g.tolist(),
        "tau_cape": cape.tau_agg,
        "tau_conv": cape.tau_conv,
        "tau_conv_equal": conventional_std(cape.tau_site, np.full(cape.n_sites, 1 / cape.n_sites)),
        "gain": designs.paper_formula,
        "gain_same": designs.gains["same_weights"],
        "gain_best": designs.gains["best_conventional"],
    }


def _equal(sites: int) -> dict:
    return design_numbers(site_designs((1000,) * sites, 0.5, (1.0 / sites,) * sites))


def conventional_cost(sites: int) -> Scene:
    """Aggregate noise std of conventional averaging and of CAPE (= pooled) against S."""
    grid = list(range(2, 11))
    designs = [_equal(s) for s in grid]
    fig = go.Figure()
    for key, alg in (("tau_conv", "conv"), ("tau_cape", "cape")):
        look = style(alg)
        fig.add_trace(
            go.Scatter(
                x=grid,
                y=[d[key] for d in designs],
                mode="lines+markers",
                name=look.label + (" (= pooled)" if alg == "cape" else ""),
                line={"color": look.color, "width": 3},
            )
        )
    you_are_here(fig, sites)
    d = _equal(sites)
    ratio = d["tau_conv"] ** 2 / d["tau_cape"] ** 2
    options = {"1× (the same)": 1.0, "√S×": math.sqrt(sites), "S×": sites, "S²×": sites**2}
    return Scene(
        chart_layout(fig, "number of sites S (N_s = 1000 each, ε = 0.5)", "aggregate noise std"),
        {
            "sites": sites,
            **d,
            "ratio": ratio,
            "table": sites_text([1000] * sites, 0.5),
            "answer": nearest(ratio, options),
        },
    )


def cancelling(sites: int) -> Scene:
    """One real CAPE draw: each site's E_s and G_s, and their weighted sums."""
    demo = protocol_run(sites=sites, kind="scalar", epsilon=0.5, seed=LESSON_SEED)
    run = demo.run
    labels = [f"site {s + 1}" for s in range(sites)]
    fig = go.Figure()
    for values, name, color in (
        (run.e, "E_s from the noise generator", "#009E73"),
        (run.g, "G_s, the site's own", style("cape").color),
    ):
        fig.add_trace(go.Bar(x=labels, y=values, name=name, marker_color=color))
    fig.add_trace(
        go.Bar(
            x=["weighted sum"],
            y=[demo.e_sum],
            name="Σ μ_s E_s",
            marker_color="#009E73",
            showlegend=False,
        )
    )
    fig.add_trace(
        go.Bar(
            x=["weighted sum"],
            y=[demo.g_sum],
            name="Σ μ_s G_s",
            marker_color=style("cape").color,
            showlegend=False,
        )
    )
    if run.design is None:  # the demo runs CAPE's protocol: its run always has a design
        raise ValueError("the noise-cancellation scene needs a CAPE run; got one without a design")
    tau_e = float(run.design.tau_e[0])
    e_sum = float(demo.e_sum)
    shown = min(max(sites, 3), 5)  # the protocol page draws 3 to 5 sites
    options = {"about τ_e": tau_e, "about τ_e/√S": tau_e / math.sqrt(sites)}
    answer = "zero (to rounding)" if abs(e_sum) <= 1e-12 * tau_e else nearest(abs(e_sum), options)
    return Scene(
        chart_layout(fig, "", "noise value in this draw"),
        {
            "sites": sites,
            "protocol_sites": shown,
            "protocol_last": len(
                protocol_steps(
                    protocol_run(sites=shown, kind="scalar", epsilon=0.5, seed=LESSON_SEED)
                )
            ),
            "e_first": float(run.e[0]),
            "e_sum": e_sum,
            "g_sum": float(demo.g_sum),
            "tau_e": tau_e,
            "answer": answer,
        },
    )


def views_of_one_release(sites: int) -> Scene:
    """Noise variance protecting site 1 in each view, as a multiple of τ_s²."""
    d = _equal(sites)
    tau2 = d["tau"][0] ** 2
    parts = {
        "aggregator (knows F): E + G": (d["var_e"][0] + d["var_g"][0]) / tau2,
        "noise generator (knows E): F + G": (d["var_f"][0] + d["var_g"][0]) / tau2,
        "outsider: E + F + G": (d["var_e"][0] + d["var_f"][0] + d["var_g"][0]) / tau2,
        "final average, relative to site 1's 1/S share": sites**2 * d["tau_cape"] ** 2 / tau2,
    }
    fig = go.Figure(
        go.Bar(
            x=list(parts.values()),
            y=list(parts),
            orientation="h",
            marker_color=[style("conv").color, "#009E73", "#999999", style("cape").color],
            text=[f"{v:.2f} τ_s²" for v in parts.values()],
            textposition="auto",
        )
    )
    fig.add_vline(x=1.0, line={"color": "#000000", "dash": "dash"})
    ratio = parts["aggregator (knows F): E + G"]
    answer = nearest(ratio, {"τ_s²/S": 1.0 / sites, "τ_s² (what it needs)": 1.0, "2τ_s²": 2.0})
    fig.update_yaxes(autorange="reversed")
    return Scene(
        chart_layout(fig, "noise variance on site 1's release / τ_s²", ""),
        {
            "sites": sites,
            "ratio": ratio,
            "tau": d["tau"][0],
            "table": sites_text([1000] * sites, 0.5),
            "answer": answer,
        },
    )


# --- lesson 3: unequal sites --------------------------------------------------------------------


def unequal_sizes(share: float) -> tuple[int, ...]:
    """N = 10 000 samples: the largest site holds ``share``, the other four split the rest."""
    big = round(share * TOTAL)
    rest = (TOTAL - big) // (UNEQUAL_SITES - 1)
    return (big, *(rest,) * (UNEQUAL_SITES - 2), TOTAL - big - rest * (UNEQUAL_SITES - 2))


def _unequal(share: float) -> dict:
    sizes = unequal_sizes(share)
    weights = tuple(n / sum(sizes) for n in sizes)
    return {
        "sizes": sizes,
        "table": sites_text(sizes, 0.5, SIZE),
        **design_numbers(site_designs(sizes, 0.5, weights)),
    }


def weights_scene(share: float) -> Scene:
    """Aggregate noise std with weights μ_s = N_s/N: conventional vs CAPE, per site sizes."""
    d = _unequal(share)
    names = ["conventional, μ_s = 1/S", "conventional, μ_s = N_s/N", "CAPE, μ_s = N_s/N"]
    values = [d["tau_conv_equal"], d["tau_conv"], d["tau_cape"]]
    fig = go.Figure(
        go.Bar(
            x=names,
            y=values,
            marker_color=["#56B4E9", style("conv").color, style("cape").color],
            text=[f"{v:.2e}" for v in values],
            textposition="outside",
        )
    )
    ratio = d["tau_conv"] ** 2 / d["tau_cape"] ** 2
    answer = nearest(
        ratio,
        {
            "1×": 1.0,
            f"S× = {UNEQUAL_SITES}×": UNEQUAL_SITES,
            f"G(n)× = {d['gain']:.3g}×": d["gain"],
        },
    )
    return Scene(
        chart_layout(
            fig, f"sites of sizes {', '.join(map(str, d['sizes']))}", "aggregate noise std"
        ),
        {**d, "share": share, "ratio": ratio, "answer": answer},
    )


def gain_scene(share: float) -> Scene:
    """The paper's G(n) as the largest site grows, with this split marked (Prop. 1)."""
    d = _unequal(share)
    curve = gain_curve(total=TOTAL, sites=UNEQUAL_SITES)
    shown = ("same_weights", "paper_g")  # G(n) beside the like-for-like gain, S
    fig = gain_figure(
        curve,
        labels={k: GAINS[k][0] for k in shown},
        current={"same_weights": float(UNEQUAL_SITES), "paper_g": d["gain"]},
        share=d["sizes"][0] / TOTAL,
    )
    you_are_here(fig, d["sizes"][0] / TOTAL, "this split")
    gain = d["gain"]
    answer = (
        "exactly S"
        if math.isclose(gain, UNEQUAL_SITES, rel_tol=1e-9)
        else "more than S"
        if gain > UNEQUAL_SITES
        else "less than S"
    )
    return Scene(fig, {**d, "share": share, "answer": answer})


def fair_scene(share: float) -> Scene:
    """Three gains of CAPE: against the same weights, the paper's G(n), the best weights."""
    d = _unequal(share)
    gains = {  # dpcore's three gains (#14): only the last is a fair comparison
        "same weights N_s/N": d["gain_same"],
        "paper's G(n) (conv. with 1/S)": d["gain"],
        "best conventional weights": d["gain_best"],
    }
    fig = go.Figure(
        go.Bar(
            x=list(gains),
            y=list(gains.values()),
            marker_color=[style("conv").color, "#56B4E9", "#999999"],
            text=[f"{v:.3g}×" for v in gains.values()],
            textposition="outside",
        )
    )
    fig.add_hline(y=1.0, line={"color": "#000000", "dash": "dash"})
    fig.update_yaxes(type="log")
    best = gains["best conventional weights"]
    answer = (
        "more than S"
        if best > UNEQUAL_SITES * (1 + 1e-9)
        else "none (1×)"
        if best <= 1 + 1e-9
        else "between 1 and S"
    )
    return Scene(
        chart_layout(fig, "", "conventional variance / CAPE variance"),
        {**d, "share": share, "best": best, "answer": answer, "same": gains["same weights N_s/N"]},
    )


# --- lesson 4: who sees what ----------------------------------------------------------------------


def _view_sites(sites: int = VIEW_SITES) -> dpcore.Sites:
    """The lesson's sites: S equal sites of N_s = 1000 at ε = 0.5 (the pages' record)."""
    return dpcore.Sites((1000,) * sites, 0.5, LESSON_DELTA, calibration="analytic")


def _site1(colluders: Sequence[int], ng: bool) -> dict:
    report = coalition_table(_view_sites(), tuple(colluders), ng)
    row = report[report["site"] == 1].iloc[0]
    return {
        k: float(row[k])
        for k in (
            "required_std",
            "release_std",
            "joint_std",
            "epsilon_at_required",
            "epsilon_release",
            "epsilon_joint",
        )
    }


def joint_view_scene(sites: int) -> Scene:
    """Noise on site 1 in the aggregator's view: one release alone, and all releases."""
    table = party_table(_view_sites(sites))
    row = table[(table["party"] == "aggregator") & (table["site"] == 1)].iloc[0]
    own, joint = row["release_std"] / row["required_std"], row["joint_std"] / row["required_std"]
    fig = go.Figure(
        go.Bar(
            x=["site 1's release alone", "all releases together"],
            y=[own, joint],
            marker_color=[style("conv").color, style("cape").color],
            text=[f"{own:.3f} τ_s", f"{joint:.3f} τ_s"],
            textposition="outside",
        )
    )
    fig.add_hline(y=1.0, line={"color": "#000000", "dash": "dash"})
    fig.update_yaxes(range=[0, 1.25])
    answer = (
        "exactly τ_s"
        if math.isclose(joint, 1.0, rel_tol=1e-9)
        else "less than τ_s"
        if joint < 1
        else "more than τ_s"
    )
    return Scene(
        chart_layout(fig, "", "noise left on site 1 / τ_s (aggregator's view)"),
        {
            "sites": sites,
            "own": own,
            "joint": joint,
            "table": sites_text([1000] * sites, 0.5),
            "answer": answer,
        },
    )


def collusion_scene(colluding: int) -> Scene:
    """Effective ε of the most exposed site against the number of colluding sites."""
    curve = collusion_curve_table(_view_sites(), False)
    site1 = _site1(tuple(range(1, colluding + 1)), False)  # sites 2 … k+1 (0-based 1 … k)
    bound = math.ceil(VIEW_SITES / 3) - 1
    fig = collusion_figure(curve, bound=bound)  # draws the promised ε_s
    you_are_here(fig, colluding, f"{colluding} colluding", top=True)
    promised, joint = site1["epsilon_at_required"], site1["epsilon_joint"]
    answer = (
        "the promised ε"
        if math.isclose(joint, promised, rel_tol=1e-6)
        else "larger: weaker privacy"
        if joint > promised
        else "smaller: stronger privacy"
    )
    table = sites_text([1000] * VIEW_SITES, 0.5)
    names = tuple(f"site {s}" for s in range(2, colluding + 2))  # the Privacy explorer's picks
    return Scene(
        fig,
        {"colluding": colluding, "colluders": names, **site1, "table": table, "answer": answer},
    )


def generator_scene(who: str) -> Scene:
    """Site 1's effective ε when the aggregator alone, or with the noise generator, looks."""
    alone = _site1((), False)
    both = _site1((), True)
    chosen = both if who == "aggregator + noise generator" else alone
    labels = ["promised", "aggregator alone", "aggregator + noise generator"]
    values = [alone["epsilon_at_required"], alone["epsilon_release"], both["epsilon_release"]]
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=values,
            marker_color=[
                "#000000",
                style("conv").color,
                style("cape").color if who != "aggregator alone" else "#999999",
            ],
            text=[f"ε = {v:.3g}" for v in values],
            textposition="outside",
        )
    )
    ratio = both["epsilon_release"] / alone["epsilon_at_required"]
    answer = nearest(
        ratio,
        {
            "unchanged": 1.0,
            "about √S× larger": math.sqrt(VIEW_SITES),
            "about S× larger": VIEW_SITES,
        },
    )
    return Scene(
        chart_layout(fig, "", "effective ε of site 1's own release"),
        {
            "who": who,
            **chosen,
            "ratio": ratio,
            "alone": alone["epsilon_release"],
            "both": both["epsilon_release"],
            "root": math.sqrt(VIEW_SITES),
            "excess": ratio / math.sqrt(VIEW_SITES) - 1.0,
            "table": sites_text([1000] * VIEW_SITES, 0.5),
            "answer": answer,
        },
    )


ATTACK_VIEWS = {"site 1's own release": "release", "all releases (aggregator)": "joint"}
ATTACK_PRIOR = dpcore.PRIORS[1]  # the prior the lesson reads the posterior at (10 %)


def attacker_scene(view: str) -> Scene:
    """Site 1's two views as trade-off curves against the promise's, and what they allow an
    attacker (:mod:`dpcore.analysis.tradeoff`): S = 5 equal sites, N_s = 1000, ε = 0.5, δ = 0.01."""
    table = party_table(_view_sites())
    row = table[(table["party"] == "aggregator") & (table["site"] == 1)].iloc[0]
    sens = 1.0 / 1000  # a site's mean of 1000 values in [0, 1]
    mus = {"release": sens / row["release_std"], "joint": sens / row["joint_std"]}
    key = ATTACK_VIEWS[view]
    seen = dpcore.read_view(mus[key], epsilon=0.5, delta=LESSON_DELTA, priors=(ATTACK_PRIOR,))
    curves = dpcore.tradeoff_curves(mus, epsilon=0.5, delta=LESSON_DELTA, smallest=1e-4)
    labels = {v: name for name, v in ATTACK_VIEWS.items()}
    breaks = seen.epsilon > 0.5 * (1 + EPS_TOL)  # as every page judges a promise
    depth = (
        f"**{seen.dip.depth:.2g}**, at false alarms α = {seen.dip.alpha:.2g}"
        if breaks
        else "**none**: the curve touches the promise's and never crosses it"
    )
    return Scene(
        theory_figure(curves, labels=labels, chosen=key),
        {
            "view": view,
            "mu": seen.mu,
            "epsilon_view": seen.epsilon,
            "depth": depth,
            "view_delta": seen.dip.depth + LESSON_DELTA,
            "prior": ATTACK_PRIOR,
            "posterior": seen.posteriors[0],
            "promise_posterior": dpcore.posterior_bound(epsilon=0.5, prior=ATTACK_PRIOR),
            "table": sites_text([1000] * VIEW_SITES, 0.5),
            "answer": "yes: somewhere under it" if breaks else "no: never under it",
        },
    )


# --- lesson 5: from averages to PCA and tensors --------------------------------------------------

TIE_SE = 2.0  # a difference within this many standard errors is "about the same"


def _stats(df: pd.DataFrame, metric: str, epsilon: float) -> dict[str, tuple[float, float]]:
    """Mean and standard error (std/√runs) of ``metric`` per algorithm at ``epsilon``."""
    part = df[df["epsilon"] == epsilon].groupby("algorithm")[metric].agg(["mean", "std", "count"])
    return {
        str(a): (float(r["mean"]), float(r["std"] / math.sqrt(r["count"])))
        for a, r in part.iterrows()
    }


def separation(diff: float, se: float) -> float:
    """How many standard errors ``diff`` is from zero (∞ when there is no spread)."""
    return abs(diff) / se if se > 0 else (math.inf if diff else 0.0)


def _duel(stats: dict, higher_is_better: bool, winner: str) -> dict:
    """CAPE against conventional: means, standard errors, their difference in standard
    errors, the honest answer — a tie only within :data:`TIE_SE` standard errors — and the
    step's sentence saying the same (``finding``)."""
    (cm, cs), (vm, vs) = stats["cape"], stats["conv"]
    se = math.hypot(cs, vs)
    z = separation(cm - vm, se)
    answer = (
        "about the same"
        if z <= TIE_SE
        else winner
        if (cm > vm) == higher_is_better
        else "conventional"
    )
    better = "higher" if higher_is_better else "lower"
    finding = (
        f"about the same: {z:.1f} standard errors apart, within the {TIE_SE:g} of a tie"
        if answer == "about the same"
        else f"{'CAPE' if answer == winner else 'conventional'}'s is the {better} one, by "
        f"{z:.1f} standard errors"
    )
    return {
        "cape": cm,
        "conv": vm,
        "cape_se": cs,
        "conv_se": vs,
        "diff_se": se,
        "z": z,
        "answer": answer,
        "finding": finding,
    }


def _sweep_scene(
    df: pd.DataFrame,
    metric: str,
    y_title: str,
    epsilon: float,
    runs: int,
    *,
    higher_is_better: bool,
    winner: str,
) -> Scene:
    """A lesson's ε sweep (marker at the control) and CAPE vs conventional at that ε."""
    fig = sweep_figure(df, axis="epsilon", metric=metric, y_title=y_title, marker=epsilon)
    fig.update_layout(height=380)
    numbers = _duel(_stats(df, metric, epsilon), higher_is_better, winner)
    return Scene(fig, {"epsilon": epsilon, "runs": runs, **numbers})


def pca_scene(epsilon: float) -> Scene:
    """Captured energy of capePCA, conventional and non-private PCA over ε: the PCA page's
    own sweep for the link's settings."""
    return _sweep_scene(
        lesson_pca(PCA_SITES, PCA_N, epsilon),
        "captured_energy_ratio",
        "captured energy / optimum",
        epsilon,
        PCA_SETTINGS.runs,
        higher_is_better=True,
        winner="capePCA",
    )


def pca_sites_scene(epsilon: float) -> Scene:
    """Captured energy against S for N = 10 000 samples split equally (N_s = N/S): at each
    S the PCA page's ε sweep for (S, N_s), read at ``epsilon``."""
    metric = "captured_energy_ratio"
    rows, stats = [], {}
    for sites in SITE_GRID:
        df = lesson_pca(sites, SPLIT_TOTAL // sites, epsilon)
        rows.append(df[df["epsilon"] == epsilon])
        stats[sites] = _stats(df, metric, epsilon)
    fig = sweep_figure(
        pd.concat(rows, ignore_index=True),
        axis="sites",
        metric=metric,
        y_title="captured energy / optimum",
    )
    fig.update_layout(height=380)
    first, last = stats[SITE_GRID[0]], stats[SITE_GRID[-1]]
    gap_first = first["cape"][0] - first["conv"][0]
    gap_last = last["cape"][0] - last["conv"][0]
    # independent runs at the two ends: the variances of the four means add
    se = math.sqrt(sum(end[a][1] ** 2 for end in (first, last) for a in ("cape", "conv")))
    z = separation(gap_last - gap_first, se)
    answer = (
        "about the same" if z <= TIE_SE else "it grows" if gap_last > gap_first else "it shrinks"
    )
    return Scene(
        fig,
        {
            "epsilon": epsilon,
            "runs": PCA_SETTINGS.runs,
            "gap_first": gap_first,
            "gap_last": gap_last,
            "gap_se": se,
            "z": z,
            "sites_last": SITE_GRID[-1],
            "ns_last": SPLIT_TOTAL // SITE_GRID[-1],
            "cape_last": last["cape"][0],
            "conv_last": last["conv"][0],
            "answer": answer,
        },
    )


def tensor_scene(epsilon: float) -> Scene:
    """Component error of capeAGN, conventional and non-private over ε (MOG): the tensor
    page's own sweep for the link's settings."""
    return _sweep_scene(
        lesson_otd(epsilon),
        "component_error",
        "component error q_comp",
        epsilon,
        OTD_RUNS,
        higher_is_better=False,
        winner="capeAGN",
    )


SCENES: dict[str, Callable[..., Scene]] = {
    f.__name__: f
    for f in (
        neighbours,
        delta_curve,
        calibrations,
        conventional_cost,
        cancelling,
        views_of_one_release,
        weights_scene,
        gain_scene,
        fair_scene,
        joint_view_scene,
        collusion_scene,
        generator_scene,
        attacker_scene,
        pca_scene,
        pca_sites_scene,
        tensor_scene,
        *BEYOND_SCENES,
    )
}
