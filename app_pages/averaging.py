"""CAPE averaging: the protocol on a private mean, site by site."""

import numpy as np
import pandas as pd
import streamlit as st

import dpcore
from figures.charts import gain_figure, noise_histogram_figure
from figures.memo import built
from figures.theme import style
from learning import explanations, sections, snippets
from ui import presenter
from ui.cached import (
    GAINS,
    averaging_design,
    averaging_monte_carlo,
    call_core,
    classic_warning,
    gain_curve,
)
from ui.controls import seed_controls
from ui.explain import explain, paragraphs, tex
from ui.export import FigureExport, export_controls
from ui.questions import advantage_question
from ui.sites_table import preset_buttons, site_args, site_settings
from ui.sites_table import site_params as site_params_of
from ui.state import bound
from ui.tables import arrow
from ui.tables import table as show_table

P = "avg_"  # this page's keys (docs/state.md)

st.title("CAPE averaging")
presenter.intro(
    "Each site holds values in [0, 1] and releases its **mean** with its own privacy level "
    "(ε_s, δ_s). Alone, site s must add Gaussian noise of std τ_s. With CAPE, the noise "
    "generator's E_s cancel in the weighted sum and the aggregator removes its own F_s, so "
    "only the sites' small G_s remain: the aggregate is as accurate as if one trusted curator "
    "held all the data."
)
side = st.sidebar
presenting = presenter.is_on()
if not presenting:
    preset_buttons(P)
controls, main = presenter.split()
if presenting:  # presets, S and the rule beside the chart; the table folded under them
    preset_buttons(P, controls)
table_box = (lambda: controls.expander("Sites")) if presenting else main
table, calibration = site_settings(controls, P, side=side, table_box=table_box)
sites = len(table)
draws = bound(
    side.select_slider,
    "Monte Carlo draws",
    f"{P}draws",
    options=[1000, 5000, 20000, 50000],
    value=20000,
    help="Independent runs of the protocol for the histograms.",
)
seed = seed_controls(side, prefix=P)

the_sites = site_args(table, calibration)
design = call_core(averaging_design, the_sites)


def _design_table(design: dpcore.MeanReleaseDesigns) -> pd.DataFrame:
    """The noise design per site, as shown (built once per setting)."""
    return design.table()


def _gains_table(gains: dict) -> pd.DataFrame:
    """What CAPE gains against each baseline, as shown."""
    return pd.DataFrame(
        {
            "comparison": [GAINS[k][0] for k in GAINS],
            "gain for your sites": [f"{gains[k]:.3g}×" for k in GAINS],
            "what it compares": [GAINS[k][1] for k in GAINS],
        }
    ).set_index("comparison")


classic_warning(calibration, the_sites.epsilon)

if not presenting:
    main.header("Noise in the aggregate")
c1, c2, c3, c4 = main.columns(4)
c1.metric(
    "Pooled requirement",
    f"{design.cape.tau_pool:.3g}",
    help="Std a trusted curator with all the data must add: max_s μ_s τ_s.",
)
c2.metric(
    "CAPE, paper's design",
    f"{design.cape.tau_agg:.3g}",
    help="Std of Σ μ_s G_s — equal to the pooled requirement (eq. (2) and Sec. 3.1). Each "
    "release on its own carries τ_s; all releases together do not (Privacy explorer).",
)
c3.metric(
    "CAPE, joint-view-safe design",
    f"{design.joint.tau_agg:.3g}",
    delta=f"{design.joint.tau_agg / design.cape.tau_pool - 1:+.1%} vs pooled",
    delta_color="off",
    help="The aggregator's view of all releases together also meets every site's (ε_s, δ_s): "
    "larger E's (free: they cancel) and slightly larger G's. docs/privacy.md derives it.",
)
c4.metric(
    "Conventional aggregate std",
    f"{design.cape.tau_conv:.3g}",
    help="Each site adds its own τ_s: std sqrt(Σ μ_s² τ_s²), same weights μ_s.",
)

st.header("Noise design per site", anchor=sections.AVERAGING_DESIGN)  # lesson 1's σ = τ_s
st.markdown(
    "τ_e from the noise generator, τ_f from the "
    "aggregator, τ_g the site's own. In the paper's design every site's release carries τ_s² "
    "both in the aggregator's view (τ_e² + τ_g²) and in the noise generator's view "
    "(τ_f² + τ_g²). The joint-view-safe design's columns: its noise in the aggregator's view "
    "of all releases together is exactly τ_s."
)
st.dataframe(
    arrow(built(_design_table, design, key=the_sites)),
    hide_index=True,
    column_config={
        c: st.column_config.NumberColumn(format="%.4g")
        for c in (
            "μ_s",
            "τ_s",
            "τ_e",
            "τ_f",
            "τ_g",
            "paper τ_g²",
            "joint-safe τ_e",
            "joint-safe τ_f",
            "joint-safe τ_g",
        )
    },
)
if design.paper.feasible:
    st.success(
        "The paper's closed-form design (Sec. 3.1) is feasible here too.",
        icon=":material/check_circle:",
    )
else:
    st.warning(
        "The paper's closed-form design (Sec. 3.1, last column) asks for a **negative "
        "variance** here, so it cannot be used; for S equal sites its last site gets "
        "τ_g² = τ_s²(3 − S)/2. CAPE Lab uses a design that is always feasible "
        "(see docs/cape-design.md).",
        icon=":material/warning:",
    )

mc = call_core(averaging_monte_carlo, the_sites, draws=int(draws), seed=seed)
fig = built(
    noise_histogram_figure,
    {"CAPE": mc["cape"], "Conventional": mc["conv"]},
    {"CAPE": design.cape.tau_agg, "Conventional": design.cape.tau_conv},
    {"CAPE": style("cape").color, "Conventional": style("conv").color},
    key=(the_sites, int(draws), seed),  # what made mc and design
)
main.plotly_chart(
    presenter.style(fig), key="hist_chart", config=presenter.chart_config("cape_noise")
)
explain(explanations.NOISE_HISTOGRAM, container=main)
site_params = site_params_of(the_sites)
export_controls(
    main,
    fig,
    lambda: pd.DataFrame(
        {"draw": np.arange(len(mc["cape"])), "cape": mc["cape"], "conventional": mc["conv"]}
    ),
    FigureExport(
        stem="cape_noise",
        title="CAPE averaging: noise in the aggregate, CAPE vs conventional",
        page="averaging",
        params={**site_params, "draws": int(draws), "seed": seed},
        snippet=snippets.averaging(the_sites, draws=int(draws), seed=seed),
    ),
)
main.caption(
    f"{draws:,} runs of the full protocol. Largest |Σ μ_s e_s| over all runs: "
    f"{np.max(np.abs(mc['e_sum'])):.1e} — the noise generator's noise cancels to rounding."
)

st.header("What CAPE gains, and against what", anchor=sections.AVERAGING_GAINS)
sizes = np.asarray(the_sites.n_per_site)
gains = design.gains
show_table(built(_gains_table, gains, key=the_sites))
differs = design.paper_formula_differs
st.markdown(
    f"**The paper's G(n)** (Proposition 1) = (N²/S²) Σ 1/N_s² = {design.paper_formula:.3g}× "
    f"for sizes {list(the_sites.n_per_site)}"
    + (
        f" — a formula, **not your sites' gain**: it assumes one common (ε, δ) and "
        f"μ_s = N_s/N, and {' and '.join(differs)}. On your sites the comparison it stands for "
        f"(equal weights 1/S, row above) is {gains['paper_g']:.3g}×"
        + (": CAPE is the noisier." if gains["paper_g"] < 1 else ".")
        if differs
        else ": with one common (ε, δ) and μ_s = N_s/N it is your sites' equal-weights gain "
        "(row above)."
    )
)
curve = call_core(gain_curve, int(sizes.sum()), sites)
gain_fig = built(
    gain_figure,
    curve,
    labels={k: v[0] for k, v in GAINS.items()},
    current=gains,
    share=float(sizes.max() / sizes.sum()),
)
st.plotly_chart(
    presenter.style(gain_fig), key="gain_chart", config=presenter.chart_config("cape_gain")
)
explain(
    explanations.gain_curves(
        {k: v[0] for k, v in GAINS.items()},
        {k: gains[k] for k in GAINS},
        share=float(sizes.max() / sizes.sum()),
        formula=design.paper_formula,
        differs=differs,
    )
)
export_controls(
    st,
    gain_fig,
    lambda: curve,
    FigureExport(
        stem="cape_gain",
        title="CAPE averaging: what CAPE gains as one site grows",
        page="averaging",
        params={"N (total samples)": int(sizes.sum()), "S": sites, "your sites": site_params},
        snippet=snippets.gain(int(sizes.sum()), sites),
    ),
)
st.caption(
    "Variance ratios (baseline / CAPE). Lines: one site grows while the others share the rest "
    "equally, N fixed, a common (ε, δ), CAPE weights N_s/N. Diamonds: your sites with your "
    "weights and ε's. The equal-weights line, the paper's G(n), rises with imbalance as its "
    "baseline uses weights 1/S — a reweighting gain, not a correlated-noise gain; like for "
    "like CAPE gains exactly S, and against the best conventional estimator N²/ΣN_s², which "
    "falls to 1 as one site holds all the data."
)
advantage_question(st, prefix=P)

with st.expander("How it works — the equations"):
    st.markdown(
        paragraphs(
            "Site s releases (Algorithm 5, Appendix A) and the aggregator combines:",
            tex(
                r"\hat a_s = a_s + e_s + f_s + g_s,\qquad "
                r"a^{\text{imp}} = \sum_s \mu_s(\hat a_s - f_s) = \sum_s \mu_s a_s + \sum_s \mu_s "
                r"g_s"
            ),
            "Equal sites, eq. (2):",
            tex(
                r"\tau_e^2 = \tau_f^2 = \left(1-\tfrac1S\right)\tau_s^2,\quad \tau_g^2 = "
                r"\tfrac{\tau_s^2}{S}"
            ),
            "Unequal sites, the constraints of Sec. 3.1 (our design meets them with "
            "equality and pooled requirement max_s μ_s τ_s):",
            tex(
                r"\tau_{es}^2+\tau_{gs}^2 \ge \tau_s^2,\quad \tau_{fs}^2+\tau_{gs}^2\ge\tau_s^2,"
                r"\quad \sum_s\mu_s^2\tau_{gs}^2 = \tau_{\text{pool}}^2,\quad \sum_s\mu_s e_s = 0"
            ),
            "Gains at a common (ε, δ), τ_s = c/N_s: like for like (weights N_s/N both), "
            "against inverse-variance weights ∝ N_s², and Proposition 1's G(n) (baseline "
            "weights 1/S):",
            tex(
                r"\frac{\sum_s \mu_s^2\tau_s^2}{\tau_{\text{pool}}^2} = S,\qquad "
                r"\frac{(\sum_s \tau_s^{-2})^{-1}}{\tau_{\text{pool}}^2} = \frac{N^2}{\sum_s "
                r"N_s^2},"
                r"\qquad G(\mathbf n) = \frac{N^2}{S^2}\sum_s \frac{1}{N_s^2}"
            ),
        )
    )
