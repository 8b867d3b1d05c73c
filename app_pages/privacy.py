"""Privacy explorer: who sees what, collusion, dropouts and honest calibration."""

from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

import dpcore
from dpcore import DropoutAnalysis
from figures.charts import calibration_figure, collusion_figure
from figures.memo import built
from figures.privacy import (
    coalition_shown,
    dropout_pca_table,
    views_table,
    worst_table,
)
from figures.theme import VERDICT_ICON
from learning import explanations, sections, snippets
from learning.glossary import terms_line
from ui import presenter
from ui.cached import (
    CALIBRATION_GRID,
    DESIGNS,
    agn_budget,
    averaging_design,
    calibration_curve,
    call_core,
    classic_warning,
    coalition_table,
    collusion_curve_table,
    dropout_pca_frame,
    dropout_report,
    party_table,
    remedy_worst_table,
    rounds_coalition_table,
    rounds_collusion_table,
    rounds_party_table,
)
from ui.controls import seed_controls
from ui.explain import explain, paragraphs, tex
from ui.export import FigureExport, export_controls
from ui.sites_table import preset_buttons, site_args, site_settings
from ui.sites_table import site_params as site_params_of
from ui.state import bound as url_bound
from ui.tables import arrow

st.title("Privacy explorer")
presenter.intro(
    "The paper's threat model in one paragraph (Sec. 3): sites are honest but curious, the "
    "aggregator is untrusted, the noise generator is trusted, and sites may collude. Here "
    "you can see what that means for your sites: what each party receives, what is left "
    "to protect each site when parties pool their knowledge, and what happens when a site "
    "drops out. Each site releases its **mean** of values in [0, 1] (sensitivity 1/N_s), "
    "as on the *CAPE averaging* page.",
    terms=terms_line("privacy"),
)
stage = presenter.stage()  # presenting: the collusion demo here, on the first screen

P = "prv_"  # this page's keys (docs/state.md)
preset_buttons(P)
side = st.sidebar
table, calibration = site_settings(side, P)
seed = seed_controls(side, prefix=P)
the_sites = site_args(table, calibration)
classic_warning(calibration, the_sites.epsilon)
sites = len(table)
site_names = list(range(1, sites + 1))


def _valid(key: str) -> None:
    """Drop selections of sites that no longer exist (S was lowered)."""
    if key in st.session_state:
        st.session_state[key] = [s for s in st.session_state[key] if s in site_names]


ROUNDS = (1, 2, 5, 11, 20, 50)  # T of CAPE per round (11: the power method's default)


def _rounds_note(rounds: int) -> str:
    """What the page shows at T > 1, and why it equals the one-shot view."""
    return (
        f"**CAPE in every round of the noisy power method, T = {rounds}** (Hardt & Price, "
        "NeurIPS 2014, Fig. 1: every round releases A·X + G for the current basis X). "
        "Each round is one CAPE run with fresh, independent E, F and G and per-round std "
        f"√{rounds}·τ_s; a record moves a site's round value by at most Δ_s in every round. "
        "The rounds' noises are independent, so every party's view of all T rounds "
        "composes exactly: T Gaussian releases of std σ are one release of std σ/√T "
        "(Dong, Roth & Su, JRSS-B 2022, Cor. 3.3; adaptive: Thm. 3.2). Every ε below is "
        "over all T rounds, the aggregator's joint view included "
        "(dpcore.analysis.round_views). CAPE's design is linear in τ, so the views over the "
        "rounds equal the one-shot views: what the paper's design leaks to the aggregator "
        "in one shot it leaks over the rounds, no more and no less."
    )


design_kind = url_bound(
    st.radio,
    "CAPE design",
    f"{P}design",
    options=list(DESIGNS),
    format_func=DESIGNS.get,
    horizontal=True,
    help="The paper's design gives each release on its own noise τ_s. The joint-view-safe "
    "design (docs/privacy.md) also protects each site in the aggregator's view of all "
    "releases together, for an aggregate std 5% above the pooled requirement.",
)
rounds = int(
    url_bound(
        st.select_slider,
        "Rounds T (CAPE in every round of the power method)",
        f"{P}rounds",
        options=ROUNDS,
        value=1,
        help="T = 1: one release per site, the paper's protocol. T > 1: the noisy power method "
        "with CAPE's noise in every round (PCA page, Baselines): T protocol runs with fresh "
        "E, F and G, per-round std sqrt(T)·τ_s, so that the T rounds together spend each "
        "site's (ε_s, δ_s). Every ε below is then over all T rounds.",
    )
)
design_args = (the_sites, design_kind)
view_key = design_args if rounds == 1 else (*design_args, rounds)  # memo keys (figures/memo)
over = "" if rounds == 1 else f" over all {rounds} rounds"
if rounds > 1:
    st.info(_rounds_note(rounds), icon=":material/replay:")
noise = call_core(averaging_design, the_sites)
st.caption(
    f"The price in accuracy — aggregate noise std: pooled requirement {noise.cape.tau_pool:.3g}; "
    f"paper's design {noise.cape.tau_agg:.3g} (= pooled); joint-view-safe "
    f"{noise.joint.tau_agg:.3g} ({noise.joint.tau_agg / noise.cape.tau_pool - 1:+.1%}); "
    f"conventional averaging {noise.cape.tau_conv:.3g}."
)

# --- per-party views ------------------------------------------------------------------------
st.header("Who sees what", anchor=sections.PRIVACY_VIEWS)


parties = (
    call_core(party_table, the_sites, design_kind)
    if rounds == 1
    else call_core(rounds_party_table, the_sites, design_kind, rounds)
)
# built once per table of views (figures/memo.py): no pandas reshaping on a cached rerun
st.dataframe(arrow(built(views_table, parties, key=view_key)), width="stretch")
st.caption(
    "Each cell: the exact ε (at the site's δ_s) of **everything that party sees at once** "
    f"about the site{over}, against the ε_s the site was promised: ✓ when ε ≤ ε_s. The paper's "
    "argument looks at each release on its own (the collusion table below shows both)."
    + ("" if rounds == 1 else " 'receives': in each round.")
)
coalition0 = (
    call_core(coalition_table, the_sites, (), False, design_kind)
    if rounds == 1
    else call_core(rounds_coalition_table, the_sites, (), False, design_kind, rounds)
)


def _promise(parties: pd.DataFrame, coalition0: pd.DataFrame) -> tuple[str, Any]:
    """The aggregator's joint view against the promise: ("breaks", its worst row), ("slack",
    the row the exact calibration breaks) or ("holds", None); a row is a pandas.Series."""
    agg = parties[parties.party == "aggregator"]
    if not agg.meets.all():
        return "breaks", agg.iloc[int((agg.epsilon_joint / agg.promised_epsilon).argmax())]
    if "joint_meets_exact" in coalition0 and not coalition0.joint_meets_exact.all():
        return "slack", coalition0.iloc[int(coalition0.epsilon_joint_exact.argmax())]
    return "holds", None


# what the page reads of the frames, once per view (figures/memo.py): no pandas on a rerun
verdict, worst = built(_promise, parties, coalition0, key=view_key)


def _aggregator(parties: pd.DataFrame) -> tuple[int, bool, bool, int, float, float]:
    """The aggregator's joint view in numbers: how many sites it breaks, whether every site
    has the same ε and ε_s, whether every release on its own keeps its promise, and the most
    exposed site (largest ε/ε_s) with its ε and ε_s."""
    agg = parties[parties.party == "aggregator"]
    ratio = agg.epsilon_joint / agg.promised_epsilon
    row = agg.iloc[int(ratio.argmax())]
    same = bool(np.ptp(agg.epsilon_joint) <= 1e-9 * agg.epsilon_joint.max()) and bool(
        agg.promised_epsilon.nunique() == 1
    )
    own = bool((agg.epsilon_release <= agg.promised_epsilon * (1 + 1e-9)).all())
    return (
        int((~agg.meets).sum()),  # meets: the core's verdict (its tolerance), as the table's ✓
        same,
        own,
        int(row.site),
        float(row.epsilon_joint),
        float(row.promised_epsilon),
    )


def _views(sites: dpcore.Sites, design: str) -> pd.DataFrame:
    """:func:`party_table` (or its T-round form) of other sites or another design."""
    if rounds == 1:
        return call_core(party_table, sites, design)
    return call_core(rounds_party_table, sites, design, rounds)


def _worst(numbers: tuple[int, bool, bool, int, float, float]) -> str:
    """'every site ε = …' or 'site k ε = …' (the most exposed), against its ε_s."""
    broken, same, _, site, eps, promised = numbers
    sign = ">" if broken else "≤"  # the most exposed site breaks it iff any site does
    who = "every site" if same else f"site {site} (the most exposed)"
    return f"{who} ε = {eps:.3g} {sign} ε_s = {promised:.3g}"


if verdict == "breaks":
    shown_view = built(_aggregator, parties, key=view_key)
    # the same view with the paper's classic τ_s, and with the joint-view-safe design: computed
    classic_sites = the_sites.replace(calibration="classic")
    classic = built(
        _aggregator, _views(classic_sites, design_kind), key=(classic_sites, design_kind, rounds)
    )
    safe = built(_aggregator, _views(the_sites, "joint"), key=(the_sites, "joint", rounds))
    name = "The paper's design" if design_kind == "cape" else "The joint-view-safe design"
    words = [
        f"**{name}: the aggregator's joint view{over} breaks the promise.** "
        + ("Each release on its own keeps it, but all" if shown_view[2] else "All")
        + f" releases together (their E's sum to zero) give {_worst(shown_view)} at δ_s."
    ]
    if the_sites.calibration.kind != "classic" and classic[0] == 0:
        words.append(
            "**What hid it:** the paper checks each release on its own (Sec. 3.2: each Â_s "
            "is (ε, δ)-DP, the rest post-processing), with τ_s from the classic formula, which "
            "at these ε adds more noise than (ε_s, δ_s) needs. With classic τ_s the same view "
            f"gives {_worst(classic)}: the paper's design keeps the promise in the aggregator's "
            "joint view only through classic's slack."
        )
    elif the_sites.calibration.kind != "classic":
        words.append(f"With the paper's classic τ_s it breaks too: {_worst(classic)}.")
    if design_kind == "cape" and safe[0] == 0:
        words.append(
            f"**What keeps it:** the joint-view-safe design above, {_worst(safe)} in the same "
            f"view, for an aggregate std {noise.joint.tau_agg / noise.cape.tau_pool:.2f}× the "
            "pooled requirement (docs/privacy.md)."
        )
    st.error("\n\n".join(words), icon=VERDICT_ICON)  # a verdict, not a failure
elif verdict == "slack":
    exact = worst
    who = "every site" if built(_aggregator, parties, key=view_key)[1] else f"site {exact.site}"
    st.warning(
        f"**The promise holds here only because the classic calibration over-calibrates.** "
        f"In the aggregator's joint view{over} {who} has "
        f"ε = {exact.epsilon_joint:.3g} ≤ ε_s = {exact.promised_epsilon:.3g}, but the design "
        f"leaves {exact.joint_ratio:.2f} × τ_s: with τ_s calibrated exactly (analytic) the "
        f"same view gives ε = {exact.epsilon_joint_exact:.3g} > ε_s. The joint-view-safe "
        "design closes the gap.",
        icon=":material/warning:",
    )
else:
    st.success(
        f"Every site's promise (ε_s, δ_s) holds in the aggregator's joint view{over}.",
        icon=":material/check_circle:",
    )

# --- collusion ----------------------------------------------------------------------------------
st.header("Collusion", anchor=sections.PRIVACY_COLLUSION)
_valid(f"{P}colluders")
table_box: AbstractContextManager[object]  # a container, or nothing: the page's flow
chart_box: AbstractContextManager[object]
if stage is not None:  # presenting: the demo's two controls beside its chart, the table under both
    with stage:
        left, chart_box = presenter.split()
    right = left
    table_box = st.container()
else:
    left, right = st.columns([3, 2])
    # drawn in order under the controls: no container blocks needed (each costs a message, #36)
    table_box = chart_box = nullcontext()
colluders = url_bound(
    left.multiselect,
    "Sites colluding with the aggregator",
    f"{P}colluders",
    options=site_names,
    default=[],
    format_func=lambda s: f"site {s}",
    help="They hand the aggregator their E_j and G_j.",
)
with_ng = url_bound(
    right.toggle,
    "The noise generator colludes too",
    f"{P}ng",
    help="It knows every E_s: with the aggregator, only the G's are left.",
)


def _largest(report: pd.DataFrame) -> tuple[float, float]:
    """The coalition's largest ε of a release and of the joint view (the chart's marker)."""
    return float(report.epsilon_release.max()), float(report.epsilon_joint.max())


def _all_exact(curve: pd.DataFrame) -> bool:
    """Whether every row of the collusion curve is exact (no greedy lower bound)."""
    return bool(curve.exact.all())


def _remedies(drop: DropoutAnalysis) -> list[Any]:
    """The dropout report's rows (remedy, aggregate std, verdict, …) as named tuples."""
    return list(drop.table().itertuples())


chosen = None
with table_box:
    if len(colluders) == sites:
        st.info("Every site colludes: no honest site is left to protect.")
    else:
        gang = tuple(s - 1 for s in colluders)
        report = (
            call_core(coalition_table, the_sites, gang, bool(with_ng), design_kind)
            if rounds == 1
            else call_core(
                rounds_coalition_table, the_sites, gang, bool(with_ng), design_kind, rounds
            )
        )
        coalition_key = (view_key, tuple(colluders), with_ng)
        chosen = (len(colluders), *built(_largest, report, key=coalition_key))
        shown = built(coalition_shown, report, key=coalition_key)
        st.dataframe(
            arrow(shown),
            hide_index=True,
            width="stretch",
            column_config={
                c: st.column_config.NumberColumn(format="%.4g")
                for c in shown.columns
                if c not in ("site", "own", "joint")
            },
        )
        st.caption(
            "ε: the exact (analytic) ε at the site's δ_s of its own release, and of all honest "
            f"releases together{over}, once the coalition removes what it knows. ✓ means ε ≤ the "
            "promised ε_s — nothing else. σ/τ_s < 1: the design leaves less noise than the "
            "site's τ_s. "
            "'ε of τ_s alone' is what the site's own calibration gives (below ε_s for classic at "
            "small ε, which over-calibrates; above it at large ε, where classic fails)."
            + (
                " 'τ_s exact': the same view with τ_s from the analytic calibration — above ε_s "
                "where classic's slack hides a break."
                if "epsilon_joint_exact" in report
                else ""
            )
        )
with chart_box:
    curve = (
        call_core(collusion_curve_table, the_sites, bool(with_ng), design_kind)
        if rounds == 1
        else call_core(rounds_collusion_table, the_sites, bool(with_ng), design_kind, rounds)
    )
    bound = call_core(dpcore.collusion_bound, sites)
    shown_key = (view_key, bool(with_ng), chosen)
    collusion_fig = built(collusion_figure, curve, bound=bound, chosen=chosen, key=shown_key)
    st.plotly_chart(
        presenter.style(collusion_fig),
        key="collusion_chart",
        config=presenter.chart_config("cape_collusion"),
    )
    explain(
        built(
            explanations.collusion,
            curve,
            bound=bound,
            noise_generator=bool(with_ng),
            chosen=chosen,
            key=shown_key,
        )
    )
    site_params = {**site_params_of(the_sites), "design": design_kind}
    export_controls(
        st,
        collusion_fig,
        lambda: curve,
        FigureExport(
            stem="cape_collusion",
            title="Privacy explorer: effective ε of the most exposed site vs colluding sites",
            page="privacy",
            params={**site_params, "noise generator colludes": bool(with_ng), "rounds T": rounds},
            snippet=snippets.collusion(
                the_sites, ng=bool(with_ng), design=design_kind, rounds=rounds
            ),
        ),
    )
    st.markdown(
        "**The worst coalition of each size**"
        + (" (the noise generator colludes too)" if with_ng else "")
        + ": the honest site with the largest ε/ε_s over "
        + (
            "every coalition of that size — each row exact."
            if built(_all_exact, curve, key=shown_key[:2])
            else "the coalitions tried. Rows marked *lower bound* had too many coalitions to "
            "try them all: a greedy search per site found the ε shown, a worse coalition may "
            "exist, so they get no ✓."
        )
    )
    st.dataframe(
        arrow(built(worst_table, curve, bool(with_ng), sites, key=shown_key[:2])),
        hide_index=True,
        width="stretch",
    )
    st.caption(
        "With every other site colluding only G_s is left: τ_s/√S for equal sites in the "
        "paper's design. The dotted vertical line marks the collusion bound S_C ≤ ⌈S/3⌉ − 1 of "
        "the follow-up CAPE paper (Imtiaz, Mohammadi & Sarwate, arXiv:1904.10059)."
    )

# --- dropouts -----------------------------------------------------------------------------------
st.header("Dropouts", anchor=sections.PRIVACY_DROPOUTS)
st.caption(
    "Shown for the paper's design, whichever design is chosen above"
    + (
        "."
        if rounds == 1
        else ", and for one release (T = 1): a dropout in a later round is not modelled."
    )
)
_valid(f"{P}dropped")
dropped = url_bound(
    st.multiselect,
    "Sites that drop out after the noise generator sent the E's",
    f"{P}dropped",
    options=site_names,
    default=[1],
    format_func=lambda s: f"site {s}",
    help="They release nothing; their E's no longer cancel in the sum.",
)
if not dropped:
    st.info("Pick at least one site to drop.")
elif len(dropped) == sites:
    st.error("Every site dropped out: there is nothing to aggregate.", icon=":material/error:")
else:
    gone = tuple(s - 1 for s in dropped)
    drop = call_core(dropout_report, the_sites, gone)
    names = {
        "none": "no remedy (the E's do not cancel)",
        "naive": "noise generator sends Σ μ_d E_d",
        "cape": "… plus stand-in G's (our remedy)",
    }
    cols = st.columns(4)
    cols[0].metric(
        "Noise required",
        f"{drop.required_std:.3g}",
        help="max over remaining sites of μ_t τ_t / W: the pooled requirement of what is left.",
    )
    remedies = built(_remedies, drop, key=(the_sites, gone))
    for col, row in zip(cols[1:], remedies, strict=True):
        col.metric(
            names[row.remedy],
            f"{row.aggregate_std:.3g}",
            delta={
                "meets": "meets",
                "too little noise": "too little noise",
                "excess noise": f"private, but {row.noise_ratio:.2f}× the noise required",
            }[row.verdict],
            delta_color="green" if row.verdict == "meets" else "red",
            delta_arrow="off",
            help=f"Aggregate noise std of the renormalised estimate. Worst remaining site in "
            f"the aggregator's joint view: {row.joint_ratio:.3f} τ_s "
            f"(normal run: {drop.normal_joint_std:.3f} τ_s).",
        )
    st.markdown("**Effect on capePCA** (synthetic D = 50, K = 10, 20 runs, these sites):")
    st.dataframe(
        arrow(
            built(
                dropout_pca_table,
                call_core(dropout_pca_frame, the_sites, gone, seed),
                names,
                key=(the_sites, gone, seed),
            )
        ),
        hide_index=True,
        column_config={
            "captured energy (of optimum)": st.column_config.NumberColumn(format="%.3f"),
            "± std over runs": st.column_config.NumberColumn(format="%.3f"),
        },
    )
    st.markdown(
        "**The remedy.** The noise generator, told who dropped, sends the aggregator "
        "c = Σ_d μ_d (E_d + H_d) with fresh H_d ~ N(0, τ_gd²). Adding c cancels the missing "
        "E's, and the H's stand in for the dropped sites' G's, so the aggregate carries "
        "τ_pool again — at least what the remaining sites need. The noise generator may do "
        "this: it is trusted, already knows every E, and sees no data. Nothing new leaks: "
        "(releases, c) is distributed exactly like (releases, μ_d(â_d − F_d)) of a normal "
        "run in which the dropped site held zeros. The naive correction (E's only) leaves "
        "too little noise and tells the aggregator Σ μ_d E_d exactly.\n\n"
        "**If the aggregator holds more.** A dropped site may only be slow: its release "
        "arrives after c was sent (or the aggregator claimed a drop it did not see). Holding "
        "that release and c, the aggregator can subtract the two and keep a_d + G_d − H_d; "
        "asking again and again for fresh H's averages them away. The most exposed site's "
        "exact ε in each case:"
    )
    st.dataframe(
        arrow(call_core(remedy_worst_table, the_sites, gone)), hide_index=True, width="stretch"
    )
    # the paper's design in a normal run (T = 1), whatever the design and T chosen above
    normal = built(_aggregator, call_core(party_table, the_sites, "cape"), key=(the_sites, "cape"))
    st.caption(
        "✓ means ε ≤ the promised ε_s in that view. The lab's federation (docs/federated.md) "
        "keeps the aggregator to the first row: each site seals its release under a key only "
        "the noise generator hands over — once per run, and never a dropped site's key — so a "
        "late release stays unreadable and a repeated request gets the same c. "
        + (
            f"The paper's design exceeds ε_s in a normal run's joint view already "
            f"({_worst(normal)}); the sealed remedy adds nothing to that. "
            if normal[0]
            else f"The sealed remedy adds nothing to a normal run's joint view (paper's design: "
            f"{_worst(normal)}). "
        )
        + "Derivation: docs/privacy.md, “A remedy safe against a lying aggregator”."
    )

# --- calibration ----------------------------------------------------------------------------------
st.header("Calibration: classic or analytic", anchor=sections.PRIVACY_CALIBRATION)
grid = CALIBRATION_GRID
eps_sites = the_sites.epsilon
calib_curve = call_core(calibration_curve, float(the_sites.delta[0]), grid)
calib_fig = built(
    calibration_figure, calib_curve, current=eps_sites, key=(eps_sites, the_sites.delta[0])
)
st.plotly_chart(
    presenter.style(calib_fig), key="calib_chart", config=presenter.chart_config("calibration")
)
calibration_key = (eps_sites, float(the_sites.delta[0]))
# dpcore.calibration_comparison at your sites' ε (the cached wrapper: no recomputation)
mine = call_core(calibration_curve, calibration_key[1], eps_sites)


def _ratios(mine: pd.DataFrame) -> tuple[pd.Series, float, float]:
    """Analytic σ / classic σ at each of your sites' ε, its smallest and its largest."""
    ratio = 1.0 - mine.saving
    return ratio, float(ratio.min()), float(ratio.max())


ratio, low, high = built(_ratios, mine, key=calibration_key)
explain(
    built(explanations.calibration, eps_sites, ratio, delta=calibration_key[1], key=calibration_key)
)
export_controls(
    st,
    calib_fig,
    lambda: calib_curve,
    FigureExport(
        stem="calibration",
        title="Privacy explorer: classic vs analytic Gaussian calibration (σ/Δ over ε)",
        page="privacy",
        params={
            "δ": float(the_sites.delta[0]),
            "ε grid": f"{grid[0]:g} … {grid[-1]:g}, {len(grid)} log-spaced points",
            "your sites' ε": eps_sites,
        },
        snippet=snippets.calibration(grid, float(the_sites.delta[0])),
    ),
)
span = f"{low:.2f}×" if round(low, 2) == round(high, 2) else f"{low:.2f}–{high:.2f}×"
more = (
    " Above 1 (ε ≳ 7) the analytic σ is the larger: there the classic σ is too small to give "
    "(ε, δ)-DP."
    if high > 1
    else ""
)
st.caption(
    f"At δ = {the_sites.delta[0]:g} (site 1). Dotted lines: your sites' ε. The classic formula "
    f"σ = Δ√(2 ln(1.25/δ))/ε (Dwork & Roth, Thm. A.1; used by the paper for every τ) is a "
    f"proof only for ε < 1. The analytic calibration (Balle & Wang 2018) is exact for every ε; "
    f"for your sites its noise std is {span} the classic one.{more}"
)
b = call_core(agn_budget, epsilon=float(eps_sites[0]), delta=float(the_sites.delta[0]))
st.markdown(
    f"**capeAGN's budget** (Theorem 2): at (ε, δ) = ({eps_sites[0]:g}, {the_sites.delta[0]:g}) "
    f"it spends (ε₁, δ₁) = ({b['epsilon1']:g}, {b['delta1']:g}) on M2 and "
    f"(ε₂, δ₂) = ({b['epsilon2']:g}, {b['delta2']:g}) on M3; by composition the whole "
    f"algorithm is (ε₁ + ε₂, δ₁ + δ₂)-DP."
)

with st.expander("How it works — the equations"):
    st.markdown(
        paragraphs(
            "Noise is independent across entries, with the same S×S covariance C per entry. "
            "Changing site s's data by v shifts only release s, so the privacy loss is that of "
            "a Gaussian mechanism with sensitivity Δ_s and std",
            tex(
                r"\sigma_{\text{joint},s} = \frac{1}{\sqrt{[C^{-1}]_{ss}}}\quad\text{(all "
                r"releases)},"
                r"\qquad \sigma_{\text{own},s} = \sqrt{C_{ss}}\quad\text{(own release)}"
            ),
            "For a coalition knowing E_K (its sites) and the zero sum, C is the Gaussian "
            "conditional covariance plus the honest G's:",
            tex(
                r"C = \Sigma_{HH} - \Sigma_{HK}\Sigma_{KK}^{+}\Sigma_{KH} + "
                r"\operatorname{diag}(\tau_{g,H}^2)"
            ),
            "Effective ε: the root of the exact Gaussian privacy profile at δ_s:",
            tex(
                r"\delta_s = \Phi\!\left(\tfrac{\Delta}{2\sigma} - "
                r"\tfrac{\varepsilon\sigma}{\Delta}\right)"
                r" - e^{\varepsilon}\,\Phi\!\left(-\tfrac{\Delta}{2\sigma} - "
                r"\tfrac{\varepsilon\sigma}{\Delta}\right)"
            ),
        )
    )
