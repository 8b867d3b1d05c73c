"""A Jupyter notebook per lesson step: cells that re-create the step's figure with ``dpcore``.

:func:`notebook` returns the nbformat-4 document (a plain dict, written with :mod:`json`: no
new dependency) for one step of one lesson at one value of the step's control. Its cells:

1. markdown: the lesson and step, the setting, where the mechanism comes from in the paper
   (its section, equation or proposition, or the later work the lab adds) and what the figure
   shows;
2. the imports (``import dpcore`` and the names of ``dpcore.__all__`` only, numpy, pandas,
   plotly);
3. the step's parameters: the values the page used, the seed included (same seed, same
   figure);
4. the computation: the same core calls, in the same order, as the page's cached calls
   (:mod:`ui.lesson_scenes`, :mod:`ui.lesson_beyond`), ending in a dict ``numbers``;
5. the figure, with plotly (the same kind of chart as the page's, not pixel-identical);
6. a print of ``numbers``: the numbers the step quotes.

Every step of every lesson draws a computed figure, so every notebook has one. A question's
correct option is not in the notebook (a student may open it before answering); the numbers
that decide it are. tests/learning/test_notebooks.py executes every step's notebook and checks its
``numbers`` against the page's own, to the bit.

Pure: no Streamlit; the page (app_pages/learn.py) offers the download.
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import dpcore
from learning.lessons import LESSONS, Lesson, Step
from learning.settings import (
    AUDIT_DELTA,
    AUDIT_SITES,
    BEYOND_SITES,
    BITS_GRID,
    DEFAULT_SEED,
    DELTA_GRID,
    EPS_GRID,
    JOINT_VIEW,
    LESSON_DELTA,
    LESSON_SEED,
    N_MEAN,
    OTD_SETTINGS,
    PCA_N,
    PCA_SETTINGS,
    PCA_SITES,
    SITE_GRID,
    SPLIT_TOTAL,
    TOTAL,
    TRUST_DIM,
    TRUST_RUNS,
    UNEQUAL_SITES,
    VIEW_SITES,
)

NBFORMAT, NBFORMAT_MINOR = 4, 5
MIME = "application/x-ipynb+json"

# The tensor page's ε grid (ui/specs.py, OTD_GRIDS["epsilon"]): the lessons' ε options. The
# test compares the notebook's numbers with the page's to the bit, so a drift shows there.
OTD_EPS_GRID = EPS_GRID
# The tensor page's robust power method (ui/specs.py, POWER_METHODS["robust"])
ROBUST = {"restarts": 10, "max_iter": 100, "tol": 1e-8}

IMPORTS = """\
import math
import warnings

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import dpcore  # CAPE Lab's core: run from the lab's repository root, in its environment
"""

# the lab's colours (figures/theme.py): conventional, CAPE, the noise generator's E, grey
CONV, CAPE, GREEN, GREY = "#0072B2", "#D55E00", "#009E73", "#999999"

SIGMA = '''\
def sigma(sensitivity, epsilon, delta, calibration):
    """The Gaussian mechanism's noise std (dpcore.gaussian_sigma). The classic formula warns
    that it is no proof for ε ≥ 1; the page states that in its text, so it is silenced here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcore.ClassicGaussianWarning)
        return dpcore.gaussian_sigma(
            sensitivity, epsilon=epsilon, delta=delta, calibration=calibration
        )

'''

DESIGN = '''\
def design_numbers(n_per_site, epsilon, weights):
    """CAPE's design for sites that each release the mean of N_s values in [0, 1] (Δ_s = 1/N_s,
    analytic σ) and the numbers the lesson quotes: τ_s, the variances of E, F and G (eq. (2)),
    the aggregate std of CAPE and of conventional averaging, and the three gains."""
    designs = dpcore.mean_release_designs(
        n_per_site, epsilon=epsilon, delta=delta, weights=weights, calibration="analytic"
    )
    cape = designs.cape
    return {
        "tau": cape.tau_site.tolist(),
        "var_e": cape.var_e.tolist(),
        "var_f": cape.var_f.tolist(),
        "var_g": cape.var_g.tolist(),
        "tau_cape": cape.tau_agg,
        "tau_conv": cape.tau_conv,
        "tau_conv_equal": dpcore.conventional_std(
            cape.tau_site, np.full(cape.n_sites, 1 / cape.n_sites)
        ),
        "gain": designs.paper_formula,
        "gain_same": designs.gains["same_weights"],
        "gain_best": designs.gains["best_conventional"],
    }

'''

UNEQUAL = '''\
def unequal_sizes(share):
    """N samples over S sites: the largest holds `share`, the others split the rest."""
    big = round(share * total)
    rest = (total - big) // (sites - 1)
    return (big, *(rest,) * (sites - 2), total - big - rest * (sites - 2))


sizes = unequal_sizes(share)
weights = tuple(n / sum(sizes) for n in sizes)  # μ_s = N_s/N: the pooled mean
numbers = {"share": share, "sizes": sizes, **design_numbers(sizes, epsilon, weights)}
'''

VIEW_SITES_CODE = '''\
def view_sites(sites):
    """S equal sites of N_s = 1000 at ε = 0.5, δ = 0.01, analytic σ (dpcore.Sites)."""
    return dpcore.Sites((n_per_site,) * sites, epsilon, delta, calibration="analytic")

'''

SITE1 = '''\
def site1(colluding, noise_generator):
    """Site 1's row of dpcore.coalition_report: the noise it needs and has, and its ε."""
    made = lesson_sites.design("cape")
    report = dpcore.coalition_report(
        made,
        sensitivity=lesson_sites.sensitivities,
        delta=lesson_sites.delta,
        colluding=colluding,
        epsilon=lesson_sites.epsilon,
        noise_generator=noise_generator,
    )
    row = report[report["site"] == 1].iloc[0]
    keys = ("required_std", "release_std", "joint_std",
            "epsilon_at_required", "epsilon_release", "epsilon_joint")
    return {k: float(row[k]) for k in keys}

'''

DUEL = '''\
def stats(df, metric, epsilon):
    """Mean and standard error (std/√runs) of `metric` per algorithm at `epsilon`."""
    part = df[df["epsilon"] == epsilon].groupby("algorithm")[metric].agg(["mean", "std", "count"])
    return {
        str(a): (float(r["mean"]), float(r["std"] / math.sqrt(r["count"])))
        for a, r in part.iterrows()
    }


def separation(diff, se):
    """How many standard errors `diff` is from zero."""
    return abs(diff) / se if se > 0 else (math.inf if diff else 0.0)

'''

SWEEP_FIGURE = '''\
def sweep_figure(df, axis, metric, y_title, marker=None):
    """Mean ± 1 std per algorithm along `axis` (log x for ε)."""
    summary = df.groupby(["algorithm", axis])[metric].agg(["mean", "std"]).reset_index()
    fig = go.Figure()
    looks = {"nonprivate": ("Non-private (pooled)", "#000000", "dash"),
             "cape": ("CAPE", "#D55E00", "solid"), "conv": ("Conventional", "#0072B2", "solid")}
    for alg, (name, color, dash) in looks.items():
        part = summary[summary["algorithm"] == alg].sort_values(axis)
        x = part[axis].tolist()
        lo, hi = (part["mean"] - part["std"]).tolist(), (part["mean"] + part["std"]).tolist()
        fig.add_trace(go.Scatter(x=x + x[::-1], y=hi + lo[::-1], fill="toself", opacity=0.2,
                                 line={"width": 0}, fillcolor=color, showlegend=False,
                                 hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=x, y=part["mean"], mode="lines+markers", name=name,
                                 line={"color": color, "dash": dash, "width": 3}))
    if axis == "epsilon":
        fig.update_xaxes(type="log")
    if marker is not None:
        fig.add_vline(x=marker, line={"color": "#666666", "dash": "dot"})
    fig.update_layout(xaxis_title=axis, yaxis_title=y_title, height=380)
    return fig

'''


@dataclass(frozen=True)
class Recipe:
    """How one scene's notebook computes and draws: ``params`` gives the parameter cell's
    lines (name, value, comment) for the control's value; ``compute`` and ``figure`` are code
    over those names (``compute`` ends with the dict ``numbers``); ``source`` says where the
    mechanism comes from."""

    source: str
    params: Callable[[Any], list[tuple[str, Any, str]]]
    compute: str
    figure: str


def _sites_params(value: Any, name: str, comment: str) -> list[tuple[str, Any, str]]:
    return [
        (name, value, comment),
        ("n_per_site", 1000, "samples per site (a mean of values in [0, 1]: Δ_s = 1/N_s)"),
        ("epsilon", 0.5, "every site's ε"),
        ("delta", LESSON_DELTA, "every site's δ"),
    ]


def _unequal_parameters(v: Any) -> list[tuple[str, Any, str]]:
    """Lesson 3's unequal sites (its weights, gain and fairness steps): the control is the
    largest site's share."""
    return [
        ("share", v, "the step's control: the largest site's share of all samples"),
        ("total", TOTAL, "N samples in all"),
        ("sites", UNEQUAL_SITES, "S sites"),
        ("epsilon", 0.5, "every site's ε"),
        ("delta", LESSON_DELTA, "every site's δ"),
    ]


RECIPES: dict[str, Recipe] = {
    "neighbours": Recipe(
        "The Gaussian mechanism of Sec. 2 of Imtiaz & Sarwate (the classic calibration "
        "σ = Δ·√(2 ln(1.25/δ))/ε of Dwork & Roth, Thm A.1); e^ε as the promise to one "
        "person is Dwork & Roth, Def. 2.4.",
        lambda v: [
            ("epsilon", v, "the step's control: privacy ε"),
            ("delta", LESSON_DELTA, "privacy δ"),
            ("n_mean", N_MEAN, "the site releases the mean of N values in [0, 1]"),
        ],
        SIGMA
        + '''\
sensitivity = 1.0 / n_mean  # one person moves the mean by at most 1/N


def odds(epsilon):
    """e^ε as the page says it (dpcore.likelihood_factor)."""
    factor = dpcore.likelihood_factor(epsilon=epsilon)
    return f"{factor:.3g}" if factor < 1000 else f"{factor:,.0f}"


classic, classic_half = (sigma(sensitivity, e, delta, "classic") for e in (epsilon, epsilon / 2))
analytic, analytic_half = (sigma(sensitivity, e, delta, "analytic") for e in (epsilon, epsilon / 2))
numbers = {
    "epsilon": epsilon,
    "odds": odds(epsilon),
    "odds_low": odds(0.5),
    "odds_high": odds(5.0),
    "sigma": classic,
    "half": classic_half,
    "ratio": classic_half / classic,
    "ratio_analytic": analytic_half / analytic,
}
''',
        f'''\
s = numbers["sigma"]
x = np.linspace(0.5 - 4 * s, 0.5 + sensitivity + 4 * s, 400)
fig = go.Figure()
for mean, name, color in ((0.5, "your data: true mean 0.50", "{CONV}"),
                          (0.5 + sensitivity, "one person changed: 0.51", "{CAPE}")):
    density = np.exp(-0.5 * ((x - mean) / s) ** 2) / (s * math.sqrt(2 * math.pi))
    fig.add_trace(go.Scatter(x=x, y=density, name=name, line={{"color": color, "width": 3}}))
fig.update_layout(xaxis_title="released mean", yaxis_title="probability density", height=380)
fig.show()
''',
    ),
    "delta_curve": Recipe(
        "The classic Gaussian mechanism of Sec. 2 (σ = Δ·√(2 ln(1.25/δ))/ε): δ sits inside "
        "the logarithm.",
        lambda v: [
            ("delta", v, "the step's control: privacy δ"),
            ("epsilon", 0.5, "privacy ε"),
            ("delta_grid", DELTA_GRID, "the δ's of the curve"),
            ("n_mean", N_MEAN, "a mean of N values in [0, 1]: Δ = 1/N"),
        ],
        SIGMA
        + """\
values = [sigma(1.0, epsilon, d, "classic") for d in delta_grid]  # σ/Δ
low, high = values[delta_grid.index(1e-2)], values[delta_grid.index(1e-6)]
numbers = {
    "delta": delta,
    "sigma": sigma(1.0, epsilon, delta, "classic"),  # σ in units of Δ
    "tau": sigma(1.0 / n_mean, epsilon, delta, "classic"),  # σ of the mean of N values
    "ratio": high / low,  # from δ = 10⁻² to δ = 10⁻⁶
}
""",
        f"""\
fig = go.Figure(go.Scatter(x=delta_grid, y=values, mode="lines+markers",
                           name="classic σ/Δ at ε = 0.5", line={{"color": "{CONV}", "width": 3}}))
fig.update_xaxes(type="log")
fig.add_vline(x=delta, line={{"color": "#666666", "dash": "dot"}})
fig.update_layout(xaxis_title="privacy δ", yaxis_title="noise σ / sensitivity Δ", height=380)
fig.show()
""",
    ),
    "calibrations": Recipe(
        "The classic formula of Sec. 2 (a proof only for ε < 1, Dwork & Roth Thm A.1) against "
        "the analytic Gaussian mechanism (Balle & Wang 2018, Thm 8), which the lab adds.",
        lambda v: [
            ("epsilon", v, "the step's control: privacy ε"),
            ("delta", LESSON_DELTA, "privacy δ"),
        ],
        SIGMA
        + """\
grid = tuple(np.logspace(-2, 1, 31))  # the curve's ε's
curve = dpcore.calibration_comparison(grid, delta=delta)  # classic and analytic σ/Δ, Δ = 1
classic, analytic = (sigma(1.0, epsilon, delta, m) for m in ("classic", "analytic"))
numbers = {
    "epsilon": epsilon,
    "classic": classic,
    "analytic": analytic,
    # the δ the classic σ really attains at ε
    "real_delta": dpcore.gaussian_delta(classic, sensitivity=1.0, epsilon=epsilon),
    "ratio": analytic / classic,
}
""",
        f"""\
fig = go.Figure()
fig.add_vrect(x0=1, x1=10, fillcolor="{GREY}", opacity=0.15, line_width=0)  # no proof: ε ≥ 1
fig.add_trace(go.Scatter(x=curve["epsilon"], y=curve["classic"], name="classic",
                         line={{"color": "{CONV}", "dash": "dash", "width": 3}}))
fig.add_trace(go.Scatter(x=curve["epsilon"], y=curve["analytic"], name="analytic",
                         line={{"color": "{CAPE}", "width": 3}}))
fig.add_vline(x=epsilon, line={{"color": "#666666", "dash": "dot"}})
fig.update_xaxes(type="log")
fig.update_yaxes(type="log")
fig.update_layout(xaxis_title="privacy ε", yaxis_title="noise σ / sensitivity Δ", height=380)
fig.show()
""",
    ),
    "conventional_cost": Recipe(
        "Conventional averaging and the pooled curator of Sec. 2; CAPE's noise design, "
        "eq. (2) of Sec. 3, reaches the pooled noise.",
        lambda v: [
            ("sites", v, "the step's control: the number of sites S"),
            ("n_per_site", 1000, "samples per site"),
            ("epsilon", 0.5, "every site's ε"),
            ("delta", LESSON_DELTA, "every site's δ"),
        ],
        DESIGN
        + """\
def equal(s):
    return design_numbers((n_per_site,) * s, epsilon, (1.0 / s,) * s)


curve = {s: equal(s) for s in range(2, 11)}
numbers = {"sites": sites, **equal(sites)}
numbers["ratio"] = numbers["tau_conv"] ** 2 / numbers["tau_cape"] ** 2  # variance ratio
""",
        f"""\
fig = go.Figure()
for key, name, color in (("tau_conv", "Conventional", "{CONV}"),
                         ("tau_cape", "CAPE (= pooled)", "{CAPE}")):
    fig.add_trace(go.Scatter(x=list(curve), y=[d[key] for d in curve.values()],
                             mode="lines+markers", name=name,
                             line={{"color": color, "width": 3}}))
fig.add_vline(x=sites, line={{"color": "#666666", "dash": "dot"}})
fig.update_layout(xaxis_title="number of sites S (N_s = 1000 each, ε = 0.5)",
                  yaxis_title="aggregate noise std", height=380)
fig.show()
""",
    ),
    "cancelling": Recipe(
        "CAPE's three noises, eq. (2) of Sec. 3 and the CAPE algorithm of the appendix: E_s "
        "from the noise "
        "generator with Σ_s E_s = 0, F_s from the aggregator, G_s the site's own.",
        lambda v: [
            ("sites", v, "the step's control: the number of sites S"),
            ("epsilon", 0.5, "every site's ε (δ = 0.01, N_s = 50, analytic σ)"),
            ("seed", LESSON_SEED, "the draw's seed: same seed, same draw"),
        ],
        """\
demo = dpcore.protocol_demo(sites=sites, kind="scalar", epsilon=epsilon, seed=seed)
run = demo.run  # one real run of the protocol
numbers = {
    "sites": sites,
    "protocol_sites": min(max(sites, 3), 5),  # the protocol page draws 3 to 5 sites
    "e_first": float(run.e[0]),
    "e_sum": float(demo.e_sum),  # Σ μ_s E_s: zero to rounding
    "g_sum": float(demo.g_sum),
    "tau_e": float(run.design.tau_e[0]),
}
""",
        f"""\
labels = [f"site {{s + 1}}" for s in range(sites)]
fig = go.Figure()
fig.add_trace(go.Bar(x=labels, y=run.e, name="E_s from the noise generator",
                     marker_color="{GREEN}"))
fig.add_trace(go.Bar(x=labels, y=run.g, name="G_s, the site's own", marker_color="{CAPE}"))
fig.add_trace(go.Bar(x=["weighted sum"], y=[demo.e_sum], name="Σ μ_s E_s",
                     marker_color="{GREEN}", showlegend=False))
fig.add_trace(go.Bar(x=["weighted sum"], y=[demo.g_sum], name="Σ μ_s G_s",
                     marker_color="{CAPE}", showlegend=False))
fig.update_layout(yaxis_title="noise value in this draw", height=380)
fig.show()
""",
    ),
    "views_of_one_release": Recipe(
        "The privacy of one release in CAPE, eq. (2) of Sec. 3: τ_e² + τ_g² = τ_s² in the "
        "aggregator's view, τ_f² + τ_g² = τ_s² in the noise generator's.",
        lambda v: [
            ("sites", v, "the step's control: the number of sites S"),
            ("n_per_site", 1000, "samples per site"),
            ("epsilon", 0.5, "every site's ε"),
            ("delta", LESSON_DELTA, "every site's δ"),
        ],
        DESIGN
        + """\
d = design_numbers((n_per_site,) * sites, epsilon, (1.0 / sites,) * sites)
tau2 = d["tau"][0] ** 2  # what site 1 needs
parts = {
    "aggregator (knows F): E + G": (d["var_e"][0] + d["var_g"][0]) / tau2,
    "noise generator (knows E): F + G": (d["var_f"][0] + d["var_g"][0]) / tau2,
    "outsider: E + F + G": (d["var_e"][0] + d["var_f"][0] + d["var_g"][0]) / tau2,
    "final average, relative to site 1's 1/S share": sites**2 * d["tau_cape"] ** 2 / tau2,
}
numbers = {"sites": sites, "ratio": parts["aggregator (knows F): E + G"], "tau": d["tau"][0]}
""",
        f"""\
fig = go.Figure(go.Bar(x=list(parts.values()), y=list(parts), orientation="h",
                       marker_color=["{CONV}", "{GREEN}", "{GREY}", "{CAPE}"],
                       text=[f"{{v:.2f}} τ_s²" for v in parts.values()]))
fig.add_vline(x=1.0, line={{"color": "#000000", "dash": "dash"}})  # enough
fig.update_yaxes(autorange="reversed")
fig.update_layout(xaxis_title="noise variance on site 1's release / τ_s²", height=380)
fig.show()
""",
    ),
    "weights_scene": Recipe(
        "CAPE with weights μ_s = N_s/N, Sec. 3.1 (unequal sample sizes) of Imtiaz & Sarwate.",
        _unequal_parameters,
        DESIGN
        + UNEQUAL
        + """\
numbers["ratio"] = numbers["tau_conv"] ** 2 / numbers["tau_cape"] ** 2
""",
        f"""\
names = ["conventional, μ_s = 1/S", "conventional, μ_s = N_s/N", "CAPE, μ_s = N_s/N"]
values = [numbers["tau_conv_equal"], numbers["tau_conv"], numbers["tau_cape"]]
fig = go.Figure(go.Bar(x=names, y=values, marker_color=["#56B4E9", "{CONV}", "{CAPE}"],
                       text=[f"{{v:.2e}}" for v in values], textposition="outside"))
fig.update_layout(xaxis_title=f"sites of sizes {{', '.join(map(str, sizes))}}",
                  yaxis_title="aggregate noise std", height=380)
fig.show()
""",
    ),
    "gain_scene": Recipe(
        "The gain G(n) = (N²/S²) Σ 1/N_s² of Proposition 1 (Sec. 3).",
        _unequal_parameters,
        DESIGN
        + UNEQUAL
        + """\
# the gains as the largest site grows from N/S to N − S + 1, the rest sharing equally
rows = []
for s in np.linspace(1.0 / sites, (total - sites + 1) / total, 60):
    n = dpcore.one_large_site(total, sites, float(s))
    made = dpcore.cape_design(1.0 / n, weights=n / n.sum())  # τ_s ∝ 1/N_s at a common ε
    rows.append({"largest_share": n[0] / n.sum(), "same_weights": made.gain_same_weights,
                 "paper_g": dpcore.cape_gain(n)})
curve = pd.DataFrame(rows)
""",
        f"""\
fig = go.Figure()
fig.add_trace(go.Scatter(x=curve["largest_share"], y=curve["paper_g"], name="paper's G(n)",
                         line={{"color": "{CAPE}", "width": 3}}))
fig.add_trace(go.Scatter(x=curve["largest_share"], y=curve["same_weights"],
                         name="CAPE vs conventional, same weights",
                         line={{"color": "{CONV}", "width": 3}}))
fig.add_vline(x=sizes[0] / total, line={{"color": "#666666", "dash": "dot"}})
fig.update_yaxes(type="log")
fig.update_layout(xaxis_title="largest site's share of all samples",
                  yaxis_title="gain (variance ratio)", height=380)
fig.show()
""",
    ),
    "fair_scene": Recipe(
        "Proposition 1's G(n) (Sec. 3) against the least-variance conventional weights "
        "μ_s ∝ 1/τ_s², a baseline the lab adds (docs/theory.md).",
        _unequal_parameters,
        DESIGN
        + UNEQUAL
        + """\
numbers["best"] = numbers["gain_best"]  # against the best conventional weights
numbers["same"] = numbers["gain_same"]  # against the same weights N_s/N
""",
        f"""\
gains = {{"same weights N_s/N": numbers["gain_same"],
         "paper's G(n) (conv. with 1/S)": numbers["gain"],
         "best conventional weights": numbers["gain_best"]}}
fig = go.Figure(go.Bar(x=list(gains), y=list(gains.values()),
                       marker_color=["{CONV}", "#56B4E9", "{GREY}"],
                       text=[f"{{v:.3g}}×" for v in gains.values()], textposition="outside"))
fig.add_hline(y=1.0, line={{"color": "#000000", "dash": "dash"}})
fig.update_yaxes(type="log")
fig.update_layout(yaxis_title="conventional variance / CAPE variance", height=380)
fig.show()
""",
    ),
    "joint_view_scene": Recipe(
        "The paper checks each release alone (eq. (2), Sec. 3); the aggregator's joint view of "
        "all releases is the lab's analysis (docs/privacy.md, dpcore.party_views).",
        lambda v: _sites_params(v, "sites", "the step's control: the number of sites S"),
        VIEW_SITES_CODE
        + """\
lesson_sites = view_sites(sites)
table = dpcore.party_views(
    lesson_sites.design("cape"),
    sensitivity=lesson_sites.sensitivities,
    delta=lesson_sites.delta,
    epsilon=lesson_sites.epsilon,
)
row = table[(table["party"] == "aggregator") & (table["site"] == 1)].iloc[0]
numbers = {
    "sites": sites,
    "own": row["release_std"] / row["required_std"],  # site 1's release alone
    "joint": row["joint_std"] / row["required_std"],  # all releases together
}
""",
        f"""\
own, joint = numbers["own"], numbers["joint"]
fig = go.Figure(go.Bar(x=["site 1's release alone", "all releases together"], y=[own, joint],
                       marker_color=["{CONV}", "{CAPE}"],
                       text=[f"{{own:.3f}} τ_s", f"{{joint:.3f}} τ_s"], textposition="outside"))
fig.add_hline(y=1.0, line={{"color": "#000000", "dash": "dash"}})
fig.update_yaxes(range=[0, 1.25])
fig.update_layout(yaxis_title="noise left on site 1 / τ_s (aggregator's view)", height=380)
fig.show()
""",
    ),
    "collusion_scene": Recipe(
        "Colluding sites and the collusion bound ⌈S/3⌉ − 1 of the CAPE protocol (Sec. 3; "
        "Imtiaz et al. 2019); the effective ε of each coalition's view is the lab's "
        "(dpcore.coalition_report, dpcore.collusion_curve).",
        lambda v: [
            ("colluding", v, "the step's control: sites colluding with the aggregator"),
            ("sites", VIEW_SITES, "S equal sites"),
            ("n_per_site", 1000, "samples per site"),
            ("epsilon", 0.5, "every site's ε"),
            ("delta", LESSON_DELTA, "every site's δ"),
        ],
        VIEW_SITES_CODE
        + SITE1
        + """\
lesson_sites = view_sites(sites)
curve = dpcore.collusion_curve(  # the worst coalition of each size
    lesson_sites.design("cape"),
    sensitivity=lesson_sites.sensitivities,
    delta=lesson_sites.delta,
    epsilon=lesson_sites.epsilon,
    noise_generator=False,
)
bound = math.ceil(sites / 3) - 1
# sites 2 … k+1 collude (0-based 1 … k)
numbers = {"colluding": colluding, **site1(tuple(range(1, colluding + 1)), False)}
""",
        f"""\
fig = go.Figure()
for view, dash in (("own release", "solid"), ("all releases", "dash")):
    part = curve[curve["view"] == view]
    fig.add_trace(go.Scatter(x=part["colluding"], y=part["epsilon"], mode="lines+markers",
                             name=f"from its {{view}}",
                             line={{"color": "{CAPE}", "dash": dash, "width": 3}}))
fig.add_hline(y=epsilon, line={{"color": "#000000", "dash": "dot"}})  # the promised ε
fig.add_vline(x=bound, line={{"color": "{GREY}", "dash": "dash"}})  # ⌈S/3⌉ − 1
fig.add_vline(x=colluding, line={{"color": "#666666", "dash": "dot"}})
fig.update_layout(xaxis_title="sites colluding with the aggregator",
                  yaxis_title="effective ε of the most exposed honest site", height=380)
fig.show()
""",
    ),
    "generator_scene": Recipe(
        "The trusted noise generator of Sec. 3 (it draws every E_s); what it learns jointly "
        "with the aggregator is the lab's analysis (dpcore.coalition_report).",
        lambda v: [
            ("who", v, "the step's control: who looks at site 1's release"),
            ("sites", VIEW_SITES, "S equal sites"),
            ("n_per_site", 1000, "samples per site"),
            ("epsilon", 0.5, "every site's ε"),
            ("delta", LESSON_DELTA, "every site's δ"),
        ],
        VIEW_SITES_CODE
        + SITE1
        + """\
lesson_sites = view_sites(sites)
alone = site1((), False)  # the aggregator alone
both = site1((), True)  # the aggregator and the noise generator
ratio = both["epsilon_release"] / alone["epsilon_at_required"]
numbers = {
    "who": who,
    **(both if who == "aggregator + noise generator" else alone),
    "ratio": ratio,
    "alone": alone["epsilon_release"],
    "both": both["epsilon_release"],
    "root": math.sqrt(sites),
    "excess": ratio / math.sqrt(sites) - 1.0,
}
""",
        f"""\
labels = ["promised", "aggregator alone", "aggregator + noise generator"]
values = [alone["epsilon_at_required"], alone["epsilon_release"], both["epsilon_release"]]
colors = ["#000000", "{CONV}", "{CAPE}" if who != "aggregator alone" else "{GREY}"]
fig = go.Figure(go.Bar(x=labels, y=values, marker_color=colors,
                       text=[f"ε = {{v:.3g}}" for v in values], textposition="outside"))
fig.update_layout(yaxis_title="effective ε of site 1's own release", height=380)
fig.show()
""",
    ),
    "attacker_scene": Recipe(
        "Trade-off curves of Gaussian differential privacy (Dong, Roth & Su 2022): "
        "β = Φ(Φ⁻¹(1 − α) − μ), with μ = Δ_s/σ of the noise a view of CAPE (Sec. 3) leaves; "
        "the lab's reading of each view (dpcore.read_view).",
        lambda v: [
            ("view", v, "the step's control: what the attacker sees of site 1"),
            ("sites", VIEW_SITES, "S equal sites"),
            ("n_per_site", 1000, "samples per site"),
            ("epsilon", 0.5, "every site's ε"),
            ("delta", LESSON_DELTA, "every site's δ"),
        ],
        VIEW_SITES_CODE
        + """\
lesson_sites = view_sites(sites)
table = dpcore.party_views(
    lesson_sites.design("cape"),
    sensitivity=lesson_sites.sensitivities,
    delta=lesson_sites.delta,
    epsilon=lesson_sites.epsilon,
)
row = table[(table["party"] == "aggregator") & (table["site"] == 1)].iloc[0]
sensitivity = 1.0 / n_per_site
mus = {"release": sensitivity / row["release_std"], "joint": sensitivity / row["joint_std"]}
chosen = {"site 1's own release": "release", "all releases (aggregator)": "joint"}[view]
prior = dpcore.PRIORS[1]  # how sure the attacker is before it looks
seen = dpcore.read_view(mus[chosen], epsilon=epsilon, delta=delta, priors=(prior,))
curves = dpcore.tradeoff_curves(mus, epsilon=epsilon, delta=delta, smallest=1e-4)
numbers = {
    "view": view,
    "mu": seen.mu,
    "epsilon_view": seen.epsilon,  # this view's ε at δ
    "view_delta": seen.dip.depth + delta,  # this view's δ at ε = 0.5
    "prior": prior,
    "posterior": seen.posteriors[0],
    "promise_posterior": dpcore.posterior_bound(epsilon=epsilon, prior=prior),
}
""",
        f"""\
alpha = np.geomspace(1e-4, 1, 400)
promise = np.maximum.reduce([np.zeros_like(alpha), 1 - delta - math.exp(epsilon) * alpha,
                             math.exp(-epsilon) * (1 - delta - alpha)])
fig = go.Figure()
fig.add_trace(go.Scatter(x=alpha, y=1 - promise, name="the promise (ε, δ) = (0.5, 0.01)",
                         line={{"color": "#000000", "dash": "dot", "width": 2}}))
for key, name, color in (("release", "site 1's own release", "{CONV}"),
                         ("joint", "all releases (aggregator)", "{CAPE}")):
    part = curves[curves["view"] == key]
    fig.add_trace(go.Scatter(x=part["alpha"], y=1 - part["beta"], name=name,
                             line={{"color": color, "width": 4 if key == chosen else 1.5}}))
fig.update_xaxes(type="log")
fig.update_yaxes(type="log")
fig.update_layout(xaxis_title="false alarms α", yaxis_title="1 − misses β (higher: better attack)",
                  height=380)
fig.show()
""",
    ),
}


def _pca_params(v: Any) -> list[tuple[str, Any, str]]:
    s = PCA_SETTINGS
    return [
        ("epsilon", v, "the step's control: privacy ε (the sweep's marker)"),
        ("dim", s.dim, "D"),
        ("k", s.k, "K, the subspace's dimension"),
        ("delta", s.delta, "privacy δ"),
        ("runs", s.runs, "runs per ε"),
        ("algorithms", s.algorithms, ""),
        ("calibration", s.calibration, ""),
        ("neighbouring", s.neighbouring, ""),
        ("seed", s.seed, "the sweep's seed: same seed, same figure"),
        # the PCA page's ε grid, the paper's (Sec. 6), with the control's value added
        ("grid", tuple(sorted({*dpcore.PAPER_EPSILONS, v})), "the PCA page's ε grid"),
    ]


PCA_SWEEP = """\
def pca_sweep(sites, n_per_site):
    \"\"\"The PCA page's ε sweep on S equal sites of N_s samples of its synthetic pool.\"\"\"
    spec = dpcore.PcaSpec.build(
        dim=dim, k=k, sites=sites, n_per_site=n_per_site, epsilon=grid, delta=delta,
        runs=runs, algorithms=algorithms, calibration=calibration, neighbouring=neighbouring,
    )
    return dpcore.run_pca_sweep(spec, np.random.default_rng(seed))

"""

DUEL_NUMBERS = """\
(cm, cs), (vm, vs) = at["cape"], at["conv"]
se = math.hypot(cs, vs)
numbers = {
    "epsilon": epsilon,
    "runs": runs,
    "cape": cm,
    "conv": vm,
    "cape_se": cs,
    "conv_se": vs,
    "diff_se": se,
    "z": separation(cm - vm, se),  # their difference in standard errors (≤ 2: a tie)
}
"""

RECIPES["pca_scene"] = Recipe(
    "capePCA, Algorithm 1 of Sec. 4 (CAPE on each site's second-moment matrix); the "
    "experiments of Sec. 6.",
    lambda v: [
        *_pca_params(v),
        ("sites", PCA_SITES, "S sites"),
        ("n_per_site", PCA_N, "N_s samples per site"),
    ],
    PCA_SWEEP
    + DUEL
    + """\
df = pca_sweep(sites, n_per_site)
at = stats(df, "captured_energy_ratio", epsilon)
"""
    + DUEL_NUMBERS,
    SWEEP_FIGURE
    + """\
fig = sweep_figure(df, "epsilon", "captured_energy_ratio", "captured energy / optimum", epsilon)
fig.show()
""",
)

RECIPES["pca_sites_scene"] = Recipe(
    "capePCA, Algorithm 1 of Sec. 4: CAPE keeps the pooled noise whatever S (eq. (2)); "
    "conventional averaging's grows like √S.",
    lambda v: [
        *_pca_params(v),
        ("site_grid", SITE_GRID, "S: the same N samples split equally"),
        ("total", SPLIT_TOTAL, "N samples in all"),
    ],
    PCA_SWEEP
    + DUEL
    + """\
rows, at = [], {}
for s in site_grid:
    df = pca_sweep(s, total // s)  # the page's sweep for (S, N_s), read at ε
    rows.append(df[df["epsilon"] == epsilon])
    at[s] = stats(df, "captured_energy_ratio", epsilon)
first, last = at[site_grid[0]], at[site_grid[-1]]
gap_first = first["cape"][0] - first["conv"][0]
gap_last = last["cape"][0] - last["conv"][0]
# independent runs at the two ends: the variances of the four means add
se = math.sqrt(sum(end[a][1] ** 2 for end in (first, last) for a in ("cape", "conv")))
numbers = {
    "epsilon": epsilon,
    "runs": runs,
    "gap_first": gap_first,
    "gap_last": gap_last,
    "gap_se": se,
    "z": separation(gap_last - gap_first, se),
    "sites_last": site_grid[-1],
    "ns_last": total // site_grid[-1],
    "cape_last": last["cape"][0],
    "conv_last": last["conv"][0],
}
""",
    SWEEP_FIGURE
    + """\
fig = sweep_figure(pd.concat(rows, ignore_index=True), "sites", "captured_energy_ratio",
                   "captured energy / optimum")
fig.show()
""",
)


def _otd_params(v: Any) -> list[tuple[str, Any, str]]:
    s = OTD_SETTINGS
    return [
        ("epsilon", v, "the step's control: privacy ε (the sweep's marker)"),
        ("model", s.model, "a mixture of Gaussians"),
        ("dim", s.dim, "D"),
        ("k", s.k, "K components"),
        ("sites", s.sites, "S sites"),
        ("n_per_site", s.n_per_site, "N_s samples per site"),
        ("delta", s.delta, "privacy δ"),
        ("runs", s.runs, "runs per ε"),
        ("algorithms", s.algorithms, ""),
        ("calibration", s.calibration, ""),
        ("sensitivity", s.sensitivity, ""),
        ("scaling", s.scaling, ""),
        ("power", ROBUST, "the robust tensor power method"),
        ("seed", s.seed, "the sweep's seed: same seed, same figure"),
        ("grid", tuple(sorted({*OTD_EPS_GRID, v})), "the tensor page's ε grid"),
    ]


RECIPES["tensor_scene"] = Recipe(
    "capeAGN, Algorithm 2 of Sec. 5: CAPE on the moment matrix M2 and the projected tensor M3, "
    "(ε, δ) split between them by Theorem 2.",
    _otd_params,
    DUEL
    + """\
spec = dpcore.OtdSpec.build(
    model=model, dim=dim, k=k, sites=sites, n_per_site=n_per_site, epsilon=grid, delta=delta,
    runs=runs, algorithms=algorithms, calibration=calibration, sensitivity=sensitivity,
    scaling=scaling, **power,
)
df = dpcore.otd_frame(spec, dpcore.run_otd_sweep(spec, np.random.default_rng(seed)))
at = stats(df, "component_error", epsilon)
"""
    + DUEL_NUMBERS,
    SWEEP_FIGURE
    + """\
fig = sweep_figure(df, "epsilon", "component_error", "component error q_comp", epsilon)
fig.show()
""",
)


def _beyond_params(value: Any, name: str, comment: str, sites: int, delta: float):
    return [
        (name, value, comment),
        ("sites", sites, "S equal sites"),
        ("n_per_site", 1000, "samples per site"),
        ("epsilon", 0.5, "every site's ε"),
        ("delta", delta, "every site's δ"),
    ]


BEYOND_SITES_CODE = """\
lesson_sites = dpcore.Sites((n_per_site,) * sites, epsilon, delta, calibration="analytic")
"""

RECIPES["bits_scene"] = Recipe(
    "Beyond the paper: secure aggregation (Bonawitz et al. 2017) with the distributed "
    "discrete Gaussian (Kairouz, Liu & Steinke 2021) in place of CAPE's trusted noise "
    "generator (Sec. 3).",
    lambda v: [
        *_beyond_params(v, "bits", "the step's control: the bit width b", BEYOND_SITES, 0.01),
        ("bits_grid", BITS_GRID, "the curve's b's"),
        ("dim", TRUST_DIM, "D"),
        ("runs", TRUST_RUNS, "rounds"),
        ("seed", DEFAULT_SEED, "the rounds' seed: same seed, same figure"),
    ],
    BEYOND_SITES_CODE
    + """\


def secure_aggregation(b):
    \"\"\"The Trust models page's round at b bits (automatic γ, matched calibration).\"\"\"
    pca = dpcore.trust_pca(lesson_sites, dim=dim, k=min(5, dim), bits=b, scale=None,
                           secagg_calibration="analytic", runs=runs, rng=seed)
    sa = pca[pca.scheme == "secagg"]
    return {
        "ratio": float(sa.error_ratio.mean()),  # decoded sum's error / central's noise
        "wraps": float(sa.wraparounds.mean()),
        "coordinates": int(sa.coordinates.iloc[0]),
        "energy": float(sa.captured_energy_ratio.mean()),
        "central": float(pca[pca.scheme == "central"].captured_energy_ratio.mean()),
    }


curve = {b: secure_aggregation(b) for b in bits_grid}
numbers = {"bits": bits, **curve[bits]}
""",
    f"""\
fig = go.Figure(go.Scatter(x=list(curve), y=[r["ratio"] for r in curve.values()],
                           mode="lines+markers", name="secure aggregation: error ÷ central noise",
                           line={{"color": "{CAPE}", "width": 3}}))
fig.add_hline(y=1.0, line={{"color": "#000000", "dash": "dash"}})  # as good as central
fig.add_vline(x=bits, line={{"color": "#666666", "dash": "dot"}})
fig.update_yaxes(type="log")
fig.update_layout(xaxis_title="bit width b of the integers added modulo 2^b",
                  yaxis_title="error ÷ central noise", height=380)
fig.show()
""",
)

RECIPES["releases_scene"] = Recipe(
    "Beyond the paper: T releases of CAPE's mean (Sec. 3) counted by composition, exactly "
    "with Gaussian DP (Dong, Roth & Su 2022), and by Rényi DP, zCDP, advanced and basic "
    "composition.",
    lambda v: [
        *_beyond_params(v, "releases", "the step's control: T releases", BEYOND_SITES, 0.01),
        ("view", JOINT_VIEW, "the view counted"),
    ],
    BEYOND_SITES_CODE
    + """\
seen = dpcore.SiteReleases(lesson_sites, "cape", view)  # the paper's design
curve = seen.epsilon_curve(0, max_releases=releases)  # site 1, every accountant
growth = seen.growth(0, releases=releases)
exact, basic = curve[curve.accountant == "exact"], curve[curve.accountant == "basic"]
numbers = {
    "releases": releases,
    "z": float(dpcore.view_noise_multipliers(lesson_sites.design("cape"),
               sensitivity=lesson_sites.sensitivities, view=view)[0]),  # σ/Δ of one release
    "one": float(exact[exact.releases == 1].epsilon.iloc[0]),
    "total": growth.epsilon_total,
    "ratio": growth.ratio if growth.ratio is not None else 1.0,
    "root": math.sqrt(releases),
    "basic": float(basic[basic.releases == releases].epsilon.iloc[0]),
    "crossover": growth.crossover,
}
""",
    """\
fig = go.Figure()
for name, part in curve.groupby("accountant", sort=False):
    fig.add_trace(go.Scatter(x=part["releases"], y=part["epsilon"], mode="lines", name=name,
                             line={"width": 4 if name == "exact" else 2}))
fig.update_yaxes(type="log")
fig.update_layout(xaxis_title="releases T of the same mean", yaxis_title="total ε of site 1",
                  height=380)
fig.show()
""",
)

RECIPES["audit_scene"] = Recipe(
    "Beyond the paper: a privacy audit (Jagielski et al. 2020) of CAPE's messages (Sec. 3), "
    "with Clopper–Pearson bounds on the attack's false alarms and misses.",
    lambda v: [
        *_beyond_params(
            v, "trials", "the step's control: games per audit", AUDIT_SITES, AUDIT_DELTA
        ),
        ("seed", DEFAULT_SEED, "the games' seed: same seed, same audit"),
    ],
    BEYOND_SITES_CODE
    + """\
views = ("release", "joint")  # site 1's own release; the aggregator's view of all releases
streams = iter(np.random.default_rng(seed).spawn(2 * len(views)))
rows = []
for design in ("cape", "joint"):  # the paper's design; the joint-view-safe design
    for view in views:
        audit = dpcore.audit_protocol(
            lesson_sites.design(design), sensitivity=lesson_sites.sensitivities, site=0,
            view=view, colluding=(), delta=lesson_sites.delta[0], trials=trials,
            rng=next(streams),
        ).audit
        rows.append({"design": design, "view": view, "epsilon": audit.epsilon,
                     "epsilon_lower": audit.epsilon_lower, "audit": audit})
audits = pd.DataFrame(rows)
row = audits[(audits.design == "cape") & (audits.view == "joint")].iloc[0]
promised = float(lesson_sites.epsilon[0])
needed = dpcore.audit_trials_needed(row.audit.noise_multiplier, delta=row.audit.delta,
                                    target=promised)
numbers = {
    "trials": trials,
    "epsilon": float(row.epsilon),  # the theory's exact ε of this view
    "lower": float(row.epsilon_lower),  # what the attack proves, at 95 % confidence
    "promised": promised,
    "needed": f"{int(needed):,}" if needed is not None and np.isfinite(needed) else "—",
    "fpr": float(row.audit.fpr),
    "fnr": float(row.audit.fnr),
}
""",
    f"""\
fig = go.Figure()
for design, color in (("cape", "{CAPE}"), ("joint", "{CONV}")):
    part = audits[audits.design == design]
    fig.add_trace(go.Bar(x=part["view"], y=part["epsilon"], name=f"{{design}}: theory",
                         marker_color=color, opacity=0.35))
    fig.add_trace(go.Bar(x=part["view"], y=part["epsilon_lower"],
                         name=f"{{design}}: the attack proves", marker_color=color))
fig.add_hline(y=promised, line={{"color": "#666666", "dash": "dot"}})  # the promise ε_s
fig.update_layout(barmode="group", yaxis_title="ε of site 1", height=380)
fig.show()
""",
)

SHOW = """\
for name, value in numbers.items():
    print(f"{name} = {value}")
"""


# --- the notebook ---------------------------------------------------------------------------


def _lesson(lesson: str) -> tuple[int, Lesson]:
    keys = [x.key for x in LESSONS]
    if lesson not in keys:
        raise ValueError(f"lesson must be one of {keys}; got {lesson!r}")
    return keys.index(lesson) + 1, LESSONS[keys.index(lesson)]


def _step(chosen: Lesson, step: int) -> Step:
    count = len(chosen.steps)
    if isinstance(step, bool) or not isinstance(step, int) or not 1 <= step <= count:
        raise ValueError(
            f"step must be an integer in [1, {count}] (lesson {chosen.key!r}); got {step!r}"
        )
    return chosen.steps[step - 1]


def _value(chosen: Step, value: Any) -> Any:
    control = chosen.control
    if value is None:
        return control.default
    options = list(control.options)
    if isinstance(value, bool) or value not in options:
        raise ValueError(f"value must be one of {options} ({control.label}); got {value!r}")
    return options[options.index(value)]  # the option itself: 4, not 4.0


def _names(template: str) -> str:
    """A text template with each ``{number:fmt}`` written as the number's name (the notebook's
    last cell prints it)."""
    out = []
    for literal, field, _spec, _conv in string.Formatter().parse(template):
        out.append(literal)
        if field is not None:
            out.append(f"`{field}`")
    return "".join(out)


def _params_cell(rows: Sequence[tuple[str, Any, str]]) -> str:
    lines = ["# The step's settings, as the page used them\n"]
    for name, value, comment in rows:
        note = f"  # {comment}" if comment else ""
        lines.append(f"{name} = {value!r}{note}\n")
    return "".join(lines)


def _source(text: str) -> list[str]:
    """A cell's source as nbformat stores it: lines, each but the last ending in a newline."""
    return text.rstrip("\n").splitlines(keepends=True)


def _markdown(cell_id: str, text: str) -> dict[str, Any]:
    return {"id": cell_id, "cell_type": "markdown", "metadata": {}, "source": _source(text)}


def _code(cell_id: str, text: str) -> dict[str, Any]:
    """A code cell never run: no outputs, no execution count (nbformat 4.5 also asks an id:
    letters, digits, - and _, at most 64 characters)."""
    return {
        "id": cell_id,
        "cell_type": "code",
        "execution_count": None,
        "metadata": {},
        "outputs": [],
        "source": _source(text),
    }


def _shown(value: Any) -> str:
    """A control's value as the page shows it: 0.5, 1e-06, 16, "aggregator alone"."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def notebook(lesson: str, step: int, value: Any = None) -> dict[str, Any]:
    """The nbformat-4 notebook of one lesson step at one value of its control.

    Parameters
    ----------
    lesson : str
        The lesson's key (``"noise"``, ``"sites"``, … :data:`learning.lessons.LESSONS`).
    step : int
        The step's number in the lesson, from 1.
    value : optional
        The step's control value, one of its options (default: the control's default).

    Returns
    -------
    dict
        The notebook (``json.dumps`` it to write a ``.ipynb`` file).

    Raises
    ------
    ValueError
        For an unknown lesson, a step out of range or a value that is not an option.
    """
    number, chosen = _lesson(lesson)
    at = _step(chosen, step)
    value = _value(at, value)
    recipe = RECIPES[at.scene]
    about = (
        f"# {chosen.title} — step {step} of {len(chosen.steps)}: {at.title}\n\n"
        f"CAPE Lab, lesson {number}, at **{at.control.label} = {_shown(value)}** (the page's "
        "setting; its other settings and the seed are in the parameter cell below). Run the "
        "cells in order in a Jupyter kernel where `dpcore` and plotly import (`pip install "
        '"/path/to/cape-lab[app]" jupyter`, README "Install as a package", or Jupyter added '
        "to the lab's `.venv`); the same settings and seed give the page's numbers to the "
        "last digit (with the same dpcore and numpy).\n\n"
        f"**Where it comes from.** {recipe.source} Paper: Imtiaz & Sarwate, *Distributed "
        "Differentially-Private Algorithms for Matrix and Tensor Factorization*.\n\n"
        f"**What the figure shows.** {_names(at.explain)}\n\n"
        "The last cell prints the numbers the step quotes (named as in the notebook's "
        f"`numbers`). Made by dpcore {dpcore.__version__}."
    )
    stem = f"{chosen.key}-{step}"  # cell ids, unique in the notebook
    cells = [
        _markdown(f"{stem}-about", about),
        _code(f"{stem}-imports", IMPORTS),
        _code(f"{stem}-parameters", _params_cell(recipe.params(value))),
        _code(f"{stem}-compute", recipe.compute),
        _code(f"{stem}-figure", recipe.figure),
        _code(f"{stem}-numbers", SHOW),
    ]
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "cape_lab": {"lesson": chosen.key, "step": step, "control": at.control.key},
        },
        "nbformat": NBFORMAT,
        "nbformat_minor": NBFORMAT_MINOR,
    }


def notebook_bytes(lesson: str, step: int, value: Any = None) -> bytes:
    """:func:`notebook` as the bytes of a ``.ipynb`` file (UTF-8 JSON)."""
    return (json.dumps(notebook(lesson, step, value), ensure_ascii=False, indent=1) + "\n").encode()


def file_name(lesson: str, step: int) -> str:
    """The download's file name, naming the lesson and the step:
    ``cape_lesson_1_noise_step_2_delta.ipynb``."""
    number, chosen = _lesson(lesson)
    at = _step(chosen, step)
    return f"cape_lesson_{number}_{chosen.key}_step_{step}_{at.key}.ipynb"
