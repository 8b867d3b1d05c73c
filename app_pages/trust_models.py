"""Trust models: CAPE beside central, local, conventional, secure aggregation and shuffling."""

import pandas as pd
import streamlit as st

from dpcore import count_text
from figures.memo import built
from figures.trust import display_table, explanation, iterative_display, trust_figure
from learning import sections
from learning.glossary import terms_line
from ui import presenter
from ui.cached import (
    call_core,
    classic_warning,
    trust_models_federation,
    trust_models_iterative,
    trust_models_pca,
    trust_models_table,
)
from ui.controls import seed_controls
from ui.explain import explain, paragraphs, tex
from ui.sites_table import preset_buttons, site_args, site_settings
from ui.state import bound as url_bound
from ui.tables import arrow
from ui.tables import table as show_table

st.title("Trust models")
presenter.intro(
    "CAPE reaches a trusted curator's noise level without pooling the data, but it trusts a "
    "**noise generator**. Federated learning reaches the same level with **no trusted party**: "
    "sites quantise their statistic, add a small share of discrete Gaussian noise and hide "
    "their messages under pairwise masks that cancel in the sum (secure aggregation). Here "
    "the same sites and budgets go through every scheme: what each costs in noise, who must "
    "be trusted, how many colluders and dropouts it survives, what it sends, and how well "
    "PCA works with it. Each site releases its D×D second-moment matrix (add-remove "
    "neighbours, Δ_s = 1/N_s). The simulation runs the protocol's algebra, not its "
    "cryptography (docs/trust-models.md).",
    terms=terms_line("trust_models"),
)
stage = presenter.stage()

P = "tm_"  # this page's keys (docs/state.md)
preset_buttons(P)
side = st.sidebar
table_in, calibration = site_settings(side, P)
seed = seed_controls(side, prefix=P)
dim = url_bound(
    side.slider,
    "Dimension D",
    f"{P}dim",
    min_value=5,
    max_value=40,
    value=20,
    help="Each site sends its D×D second-moment matrix: d = D(D+1)/2 integers in secure "
    "aggregation. PCA keeps K = 5 directions.",
)
runs = url_bound(
    side.slider,
    "PCA runs",
    f"{P}runs",
    min_value=5,
    max_value=50,
    value=10,
    help="Noise draws per scheme for the captured energy (mean ± std).",
)
the_sites = site_args(table_in, calibration)
classic_warning(calibration, the_sites.epsilon)

SCALES = ["automatic", "1e-9", "1e-8", "1e-7", "1e-6", "1e-5", "1e-4", "1e-3", "1e-2"]
if stage is not None:  # presenting: the two controls the demo turns, beside the chart
    with stage:
        controls, chart_box = presenter.split()
    boxes = [controls, controls, controls]
else:
    boxes = list(st.columns(3))
    chart_box = st.container()
bits = url_bound(
    boxes[0].slider,
    "Bit width b",
    f"{P}bits",
    min_value=4,
    max_value=64,
    value=32,
    help="Secure aggregation adds integers modulo 2^b. Too few bits and the sum wraps around "
    "(2^(b−1)·γ below the largest entry plus noise): the decoded sum is wrong.",
)
scale_text = url_bound(
    boxes[1].select_slider,
    "Scale γ (one integer step)",
    f"{P}scale",
    options=SCALES,
    value="automatic",
    help="Data units per integer step. Automatic: the largest γ at which rounding inflates "
    "the sensitivity by at most 1%. Larger γ: coarser rounding (more error, more noise); "
    "smaller γ: larger integers (wrap-around sooner).",
)
SA_LABELS = {"matched": "same as the others", "ddg": "KLS accountant (a proof)"}
sa_choice = url_bound(
    boxes[2].radio,
    "Secure aggregation's calibration",
    f"{P}sacal",
    options=["matched", "ddg"],
    format_func=lambda v: SA_LABELS.get(v, v),
    horizontal=True,
    help="Same as the others: the summed shares get the variance of this page's Gaussian "
    "calibration at the rounded sensitivity — isolates the protocol's cost. KLS: the "
    "smallest share σ whose sum is proven (ε_s, δ_s)-DP by Kairouz–Liu–Steinke eq. (17).",
)
scale = None if scale_text == "automatic" else float(scale_text)
sa_cal = calibration if sa_choice == "matched" else "ddg"
common = (the_sites, int(dim), int(bits), scale, sa_cal)
info = call_core(
    trust_models_table, the_sites, dim=int(dim), bits=int(bits), scale=scale, sa_cal=sa_cal
)
pca = call_core(
    trust_models_pca,
    the_sites,
    dim=int(dim),
    bits=int(bits),
    scale=scale,
    sa_cal=sa_cal,
    runs=int(runs),
    seed=seed,
)
table = info.table
settings = (common, int(runs), seed)  # what every figure and table below is a function of


def _headline(table: pd.DataFrame, pca: pd.DataFrame) -> dict[str, float]:
    """The numbers of the metrics row: secure aggregation's means over the runs, central's
    and CAPE's energy (built once per settings: no frame filtering on a cached rerun)."""
    sa = pca[pca.scheme == "secagg"]
    return {
        "wraps": float(sa.wraparounds.mean()),
        "used": float(sa.range_used.max()),
        "rms": float(sa.quantisation_rms.mean()),
        "bound": float(sa.quantisation_bound.iloc[0]),
        "std_ratio": float(table.loc[table.scheme == "secagg", "std_ratio"].iloc[0]),
        "measured": float(sa.error_ratio.mean()),
        "central": float(pca[pca.scheme == "central"].captured_energy_ratio.mean()),
        "secagg": float(sa.captured_energy_ratio.mean()),
        "cape": float(pca[pca.scheme == "cape"].captured_energy_ratio.mean()),
    }


head = built(_headline, table, pca, key=settings)
with chart_box:
    cols = st.columns(4)
    wraps, used = head["wraps"], head["used"]
    cols[0].metric(
        "Wrap-arounds",
        f"{wraps:.3g} of {info.secagg.coordinates}",
        delta=f"sums reach {used:.3g}× the range" if used > 1 else f"{used:.0%} of the range used",
        delta_color="off",
        delta_arrow="off",
        help="Coordinates whose true sum left [−2^(b−1), 2^(b−1)) and decoded wrongly, "
        f"mean over {int(runs)} rounds. Representable: ±{info.secagg.representable:.3g}. "
        "Range used: the largest integer sum over 2^(b−1), worst round — beyond the range "
        "the sum wraps; each bit fewer doubles it.",
    )
    cols[1].metric(
        "Rounding error (RMS)",
        f"{head['rms']:.2g}",
        help=f"γ Σ r_s − Σ μ_s a_s per entry; bound γ√(S/4) = "
        f"{head['bound']:.2g}. γ = {info.secagg.scale:.3g}; rounding "
        f"inflates Δ by {info.secagg.rounding_inflation - 1:.2%}.",
    )
    cols[2].metric(
        "Secure agg.: error ÷ central noise",
        f"{head['measured']:.3g}×",
        help="Measured: the RMS error of the decoded sum (noise, rounding and wrap-around "
        f"together) over central's noise std, mean over {int(runs)} rounds. Designed noise alone: "
        f"{head['std_ratio']:.3g}× — each share N_ℤ(0, σ²) with σ = {info.secagg.sigma:.4g} "
        f"integer steps; KLS-accounted ε of the sum (worst site): "
        f"{info.accounted_epsilon:.3g}.",
    )
    cols[3].metric(
        "Secure agg.: PCA energy",
        f"{head['secagg']:.3f}",
        delta=f"{head['secagg'] - head['central']:+.3f} vs central",
        delta_arrow="off",
        help=f"Of the optimum, mean over runs (CAPE's: {head['cape']:.3f}).",
    )
    fig = built(trust_figure, table, pca, key=settings)
    st.plotly_chart(
        presenter.style(fig), key="trust_chart", config=presenter.chart_config("trust_models")
    )
    explain(
        built(
            explanation,
            table,
            pca,
            shuffle_parties=info.shuffle_parties,
            dim=int(dim),
            bits=int(bits),
            sites=the_sites.count,
            key=settings,
        )
    )

st.header("The schemes side by side", anchor=sections.TRUST_SCHEMES)
shown = built(display_table, table, pca, sites=the_sites.count, key=settings)
# Two views of one table, each as wide as the page (issue #40: at 1400 px 61 % of the one wide
# grid was off-screen): the numbers in a grid, the worded columns in a table that wraps.
st.dataframe(
    arrow(shown),
    hide_index=True,
    width="stretch",
    column_order=[
        "scheme",
        "noise std ÷ central",
        "PCA captured energy",
        "± std",
        "messages and bits",
    ],
    column_config={
        "noise std ÷ central": st.column_config.NumberColumn(format="%.3f"),
        "PCA captured energy": st.column_config.NumberColumn(format="%.3f"),
        "± std": st.column_config.NumberColumn(format="%.3f"),
    },
)
iterative = call_core(trust_models_iterative, the_sites, int(dim))
WORDED = ["what the aggregator sees", "who must be trusted", "colluders tolerated"]


def _worded(shown: pd.DataFrame, iterative: pd.DataFrame, sites: int) -> pd.DataFrame:
    """The schemes' worded columns, the iterative schemes' rows under them."""
    return pd.concat(
        [
            shown[["scheme", *WORDED, "one dropout (worst site)", "source"]],
            iterative_display(iterative, sites=sites),
        ]
    ).set_index("scheme")


show_table(built(_worded, shown, iterative, the_sites.count, key=settings))
st.caption(
    "Noise std: of the pooled estimate Σ μ_s A_s per entry (local: site 1's own estimate). "
    "Worst ε: the site with the largest ε/ε_s in everything the aggregator (or server, or "
    "analyst) sees, exact at its δ_s. Secure aggregation has no exact ε: its verdict is "
    "'certified' when the KLS accountant's certificate (an upper bound) is within ε_s, "
    "'refuted' when the exact ε at δ_s of a move the data can make (one entry moved by "
    "1/N_s, rounded to ⌊c⌋ or ⌈c⌉ at random: a lower bound) exceeds it, and 'open' between, "
    "with the interval [refutation ε, certificate] shown. Colluders tolerated: the "
    "largest k such that the aggregator with any k sites — whichever they are — keeps every "
    "honest site's promise (for secure aggregation, the masks hide each message from up to t − 1 "
    f"colluders, t = {info.secagg.threshold}, but each colluder removes its noise share from "
    "the sum). One dropout: one site leaves after the set-up — each site in turn, the one "
    "leaving its survivors' worst ε/ε_t shown and named; std relative to what the "
    "survivors' pooled estimate needs. Bits: float64 reals (matrices counted in full, as in "
    "the paper) or b-bit integers of the D(D+1)/2 free entries plus key material."
    + (
        " Secure aggregation is calibrated like the others here: its KLS-accounted ε may "
        "exceed ε_s because that accountant is looser than the exact Gaussian calibration "
        "(then open or refuted, never certified) — choose the KLS accountant "
        "above for a proof."
        if sa_choice == "matched"
        else ""
    )
)

st.header("CAPE across real sites", anchor=sections.TRUST_FEDERATION)
st.markdown(
    "Run across real processes (`python -m federated`, docs/federated.md), the aggregator may "
    "do more than look: hold a dropped site's **late release**, ask for the remedy **again**, "
    "or collude with **one site**. CAPE runs two ways: with a trusted noise generator "
    "(Alg. 1 and 5), or with **pairwise noise** the sites agree among themselves (no noise "
    "generator; each pair adds ±σ_st Z_st with the design's covariance). The worst site's "
    "exact ε in each case:"
)
# worded cells that wrap, as the schemes' worded columns above (a grid would scroll sideways)
show_table(call_core(trust_models_federation, the_sites).set_index("case"))
st.caption(
    "✓: ε ≤ the promised ε_s. The sealed remedy is the lab's federation: each site seals its "
    "release under a key only the noise generator hands over, once per run and never a "
    "dropped site's, so a late release stays unreadable and a repeated request gets the same "
    "c; the open remedy is the one the paper's setting suggests. Pairwise noise trusts no "
    "noise generator, but a colluding site knows every pair noise it shares with an honest "
    "site (not only its own E), so the aggregator with any one site learns more than with "
    "the noise generator's E's; a dropout is a refusal — no party knows the missing pair "
    "noises. Secure aggregation (Bonawitz et al.) recovers a dropped site's pair seeds from "
    "Shamir shares held by the others (t of them); with that, the pairwise scheme could "
    "cancel a dropped site's noise and release, trusting that fewer than t sites collude. "
    "Threat model and checks: docs/trust-models.md."
)

with st.expander("How it works — the equations"):
    st.markdown(
        paragraphs(
            "**Central, CAPE** (Imtiaz & Sarwate, Sec. 3.1 and Prop. 1): one curator — or CAPE's "
            "correlated noise — leaves the pooled requirement; the joint-view-safe design 5% more. "
            "**Conventional** (their eq. (2)): every site's full noise averaged.",
            tex(
                r"\tau_{\text{pool}} = \max_s \mu_s \tau_s,\qquad "
                r"\tau_{\text{conv}} = \sqrt{\textstyle\sum_s \mu_s^2 \tau_s^2}"
            ),
            "**Secure aggregation** (Bonawitz et al., CCS 2017; Kairouz, Liu & Steinke, ICML "
            "2021): "
            "site s sends (⌊μ_s a_s/γ + U⌋ + Z_s + M_s) mod 2^b with Z_s ~ N_ℤ(0, σ²) and pairwise "
            "masks Σ M_s ≡ 0. Rounding bounds the sensitivity by KLS Theorem 1, and the sum of n "
            "shares is accounted by KLS Proposition 14, eq. (17), converted to (ε, δ) by "
            "Canonne–Kamath–Steinke Proposition 12:",
            tex(
                r"\tilde\Delta_s = \sqrt{c_s^2 + \tfrac{d}{4} + \sqrt{2\log(1/\beta)}"
                r"\,(c_s + \tfrac{\sqrt d}{2})},\quad c_s = \mu_s\Delta_s/\gamma"
            ),
            tex(
                r"\varepsilon(\alpha) \le \min\Big\{\tfrac{\alpha\tilde\Delta^2}{2s^2} + \tau d,\;"
                r"\tfrac{\alpha}{2}\big(\tfrac{\tilde\Delta^2}{s^2} + \tfrac{2\Delta_1\tau}{s}"
                r" + \tau^2 d\big),"
                r"\;\tfrac{\alpha}{2}\big(\tfrac{\tilde\Delta}{s} + \tau\sqrt d\big)^2\Big\}"
            ),
            tex(
                r"s = \sqrt n\,\sigma,\quad \tau = 10\sum_{k=1}^{n-1} e^{-2\pi^2\sigma^2 "
                r"k/(k+1)},\quad"
                r"\varepsilon = \min_\alpha\, \varepsilon(\alpha) + \log(1 - 1/\alpha)"
                r" - \frac{\log(\alpha\delta)}{\alpha - 1}"
            ),
            "**Shuffle model** (Feldman, McMillan & Talwar, FOCS 2021, Theorem 3.1; the form of "
            "the authors' reference code): n shuffled ε₀-DP reports are (ε, δ)-DP with",
            tex(
                r"\varepsilon = \log\!\Big(1 + \tfrac{1 - e^{-\varepsilon_0}}{1 + "
                r"e^{-\varepsilon_0 - e_1}}"
                r"(a + c)\Big),\ a = 8\sqrt{\tfrac{e^{\varepsilon_0}\ln(4/\delta)}{n}},\ "
                r"c = \tfrac{8e^{\varepsilon_0}}{n},\ e_1 = \log(1 + a + c)"
            ),
            "only when ε₀ ≤ ln(n / (16 ln(4/δ))), i.e. n ≥ "
            f"{count_text(info.shuffle_parties)} parties at site 1's ε₀ = "
            f"{the_sites.epsilon[0]:g}. With S = {the_sites.count} sites it "
            "gives nothing, "
            "and the theorem also needs a pure-DP local randomiser (the Gaussian is not): the row "
            "is a negative control, its noise is conventional's.",
        )
    )
