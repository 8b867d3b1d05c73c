"""Repeated releases: ε over many releases per accountant, every view's privacy profile, and a
privacy ledger with a generated statement."""

import numpy as np
import pandas as pd
import streamlit as st

import dpcore
from dpcore import accountants
from figures.composition import (
    DEFAULT_PROFILE_CURVES,
    accountant_styles,
    accountants_figure,
    accountants_notice,
    accountants_text,
    ledger_text,
    profile_curve_name,
    profile_curves,
    profiles_figure,
    profiles_notice,
    profiles_text,
)
from figures.memo import built
from learning import sections
from learning.explanations import ACCOUNTANTS_IN_WORDS
from learning.glossary import terms_line
from ui import presenter
from ui.cached import (
    DESIGNS,
    accountant_curve,
    call_core,
    classic_warning,
    release_growth,
    release_ledger,
    release_multipliers,
    release_profiles,
)
from ui.explain import explain, paragraphs, tex
from ui.sites_table import preset_buttons, site_args, site_settings
from ui.state import bound
from ui.tables import arrow

P = "rr_"  # this page's keys (docs/state.md)
LABELS = {name: label for name, (_, _, label) in accountant_styles().items()}
VIEWS = {
    "aggregator's joint view": "aggregator's joint view (all releases together)",
    "own release": "own release (the paper's argument)",
}
MAX_MADE = 1000


def _md(text: str) -> str:
    """Computed text for st.markdown: the subscripts' underscores (δ_s) are not emphasis."""
    return text.replace("_", r"\_")


def _explain(text: str) -> None:
    explain(_md(text))


st.title("Repeated releases")
presenter.intro(
    "Every release on the same data spends privacy again: a new noise draw, a re-run, another "
    "ε tried on a page. Here one site's protection is added up over T releases by five "
    "accountants — from exact to loose — and every party's view is drawn as a privacy profile "
    "δ(ε). The ledger below records releases, warns before one would exceed a site's budget, "
    "and writes the privacy statement. Each site releases its **mean** of values in [0, 1] "
    "(sensitivity 1/N_s), as on the *CAPE averaging* page.",
    terms=terms_line("composition"),
)

side = st.sidebar
presenting = presenter.is_on()
if not presenting:
    preset_buttons(P)
controls, main = presenter.split()
table, calibration = site_settings(side, P)
the_sites = site_args(table, calibration)
classic_warning(calibration, the_sites.epsilon)
sites = len(table)
site_names = list(range(1, sites + 1))
for key in (f"{P}site",):  # S was lowered below the chosen site: back to site 1
    if st.session_state.get(key, 1) not in site_names:
        st.session_state[key] = 1
if f"{P}colluders" in st.session_state:
    st.session_state[f"{P}colluders"] = [
        s for s in st.session_state[f"{P}colluders"] if s in site_names
    ]

design_kind = bound(
    controls.radio,
    "CAPE design",
    f"{P}design",
    options=list(DESIGNS),
    format_func=DESIGNS.get,
    help="The paper's design gives each release on its own noise τ_s; the joint-view-safe "
    "design (docs/privacy.md) gives it to all releases together.",
)
view = bound(
    controls.radio,
    "View that is counted",
    f"{P}view",
    options=list(VIEWS),
    help="What the accountant adds up per release. Aggregator's joint view: everything the "
    "aggregator holds at once (σ_joint = 1/√[C⁻¹]_ss). Own release: the site's release on its "
    "own (σ_own = √C_ss), the paper's argument (Thm. 1).",
)
site = bound(
    controls.selectbox,
    "Site",
    f"{P}site",
    options=site_names,
    format_func=lambda s: f"site {s}",
    help="The site whose privacy the first two charts follow.",
)
max_releases = bound(
    controls.slider,
    "Releases T on the chart",
    f"{P}tmax",
    min_value=2,
    max_value=200,
    value=50,
    help="The composition chart runs from T = 1 to this.",
)
made = bound(
    controls.number_input,
    "Releases made so far on this data",
    f"{P}made",
    min_value=0,
    max_value=MAX_MADE,
    value=0,
    step=1,
    help="The ledger below (its 'Release again' button adds one). Part of the URL: a shared "
    "link carries the ledger. Every release repeats the current settings.",
)
s0 = site - 1
delta_s = the_sites.delta[s0]
epsilon_s = the_sites.epsilon[s0]
z_all = call_core(release_multipliers, the_sites, design=design_kind, view=view)
z = z_all[s0]

# --- ε over T releases, five accountants --------------------------------------------------------
with main:
    st.header("ε after T releases: five accountants", anchor=sections.COMPOSITION_ACCOUNTANTS)
    curve = call_core(
        accountant_curve,
        the_sites,
        design=design_kind,
        view=view,
        site=s0,
        max_releases=int(max_releases),
    )
    # the curve is a function of these settings: name the built results by them (figures/memo)
    acc_key = (the_sites, design_kind, view, site, int(max_releases))
    current = made if 0 < made <= max_releases else None
    fig = built(accountants_figure, curve, current=current, key=(*acc_key, current))
    st.plotly_chart(
        presenter.style(fig), key=f"{P}chart", config=presenter.chart_config("composition")
    )
    growth = call_core(
        release_growth,
        the_sites,
        design=design_kind,
        view=view,
        site=s0,
        releases=int(max_releases),
    )
    lesson = built(
        accountants_text,
        curve,
        growth,
        site=site,
        noise_multiplier=z,
        delta=delta_s,
        key=acc_key,
    )
    st.markdown(_md(lesson))
    _explain(
        "x: the number of releases T of the same statistic on the same data; y (log scale): "
        f"the total ε of site {site} at its δ_s = {delta_s:g}, in the "
        f"{VIEWS[view]} of the {DESIGNS[design_kind]}, where one release has noise "
        f"multiplier σ/Δ = {z:.4g}. One line per accountant: "
        + ", ".join(LABELS.values())
        + ". Every line but the exact one is an upper bound; the vertical gap between a line "
        "and the exact one is privacy the accountant wastes. "
        + (
            f"The dotted vertical line marks the {made} releases made (ledger below). "
            if made
            else ""
        )
        + lesson
        + " "
        + built(accountants_notice, curve, key=acc_key)
    )

# --- privacy profiles ---------------------------------------------------------------------------
st.header("Privacy profiles: every view of the site", anchor=sections.COMPOSITION_PROFILES)
colluders = bound(
    st.multiselect,
    "Sites colluding with the aggregator (the coalition curve)",
    f"{P}colluders",
    options=site_names,
    default=[2],
    format_func=lambda s: f"site {s}",
    help="They hand the aggregator their E_j and G_j. The site followed is never one of them.",
)
coalition = tuple(sorted(s - 1 for s in colluders if s != site))
profile_releases = max(made, 1)
joint_cape = call_core(
    release_multipliers, the_sites, design="cape", view="aggregator's joint view"
)[s0]
top = call_core(dpcore.composed_epsilon, joint_cape, releases=profile_releases, delta=delta_s)
top = max(2.5 * top, 2.0 * epsilon_s, 0.5)
grid = tuple(sorted({*(top * (i + 1) / 80 for i in range(80)), epsilon_s}))
profiles = call_core(
    release_profiles,
    the_sites,
    site=s0,
    colluding=coalition,
    releases=profile_releases,
    grid=grid,
)
prof_key = (the_sites, s0, coalition, profile_releases)
# name → (design, view); the promise is always drawn. Built once per profiles (figures/memo.py)
offered = built(profile_curves, profiles, key=prof_key)
picked = bound(
    st.pills,
    "Curves beside the site's promise",
    f"{P}curves",
    options=list(offered),
    selection_mode="multi",
    default=[profile_curve_name(*c) for c in DEFAULT_PROFILE_CURVES],
    help="Colour: what is seen — the site's own release, the aggregator's view of all "
    "releases, or that view with the colluders' knowledge. Solid: the paper's design; "
    "dashed: the joint-view-safe one. Add curves to compare; fewer read better.",
)
curves = tuple(offered[name] for name in picked or () if name in offered)
pfig = built(
    profiles_figure,
    profiles,
    promise=(epsilon_s, delta_s) if profile_releases == 1 else None,
    curves=curves,
    key=(*prof_key, curves),
)
st.plotly_chart(
    presenter.style(pfig), key=f"{P}profiles", config=presenter.chart_config("privacy_profiles")
)
profile_words = built(
    profiles_text,
    profiles,
    site=site,
    epsilon=epsilon_s,
    delta=delta_s,
    releases=profile_releases,
    curves=curves,
    key=(*prof_key, curves),
)
st.markdown(_md(profile_words))
_explain(
    f"x: ε; y (log scale): δ(ε), the smallest δ for which what a party sees about site "
    f"{site} after {profile_releases} release(s) is (ε, δ)-DP (Balle & Wang 2018, Thm. 8; "
    "T releases compose exactly, Dong, Roth & Su 2022, Cor. 3.3). Colour: the view — the "
    "site's own calibration τ_s (wide grey band), its own release, the aggregator's joint "
    "view, and "
    + (
        f"the aggregator with site(s) {', '.join(str(s + 1) for s in coalition)}"
        if coalition
        else "no coalition (none chosen)"
    )
    + "; solid: the paper's design, dashed: the joint-view-safe one (pick the curves above "
    "the chart). A curve above another "
    "is less private at every ε. "
    + ("The star is the promise (ε_s, δ_s). " if profile_releases == 1 else "")
    + profile_words
    + " "
    + built(profiles_notice, profiles, epsilon=epsilon_s, delta=delta_s, key=prof_key)
)

# --- the ledger ---------------------------------------------------------------------------------
st.header("The ledger: releases on the same data add up", anchor=sections.COMPOSITION_LEDGER)
left, right = st.columns(2)
accountant = bound(
    left.radio,
    "Accountant",
    f"{P}acct",
    options=list(LABELS),
    format_func=lambda a: LABELS[a],
    horizontal=True,
    help="How the ledger adds up releases (equations under *How it works*). "
    + " ".join(ACCOUNTANTS_IN_WORDS.values()),
)
budget_multiple = bound(
    right.slider,
    "Lifetime budget of each site, × its ε_s",
    f"{P}budget",
    min_value=1.0,
    max_value=20.0,
    value=4.0,
    step=0.5,
    help="Each site may spend this multiple of its per-release ε_s in total, at its δ_s.",
)


def _ledger_shown(summary: pd.DataFrame, after: np.ndarray) -> pd.DataFrame:
    """The ledger's table as shown: the share used, ε after one more release, the status."""
    return summary.assign(
        used=summary.fraction,  # the true share: the column caps the bar, not its label
        after=after,
        status=["over budget" if x else "within" for x in summary.exceeded],
    )[["site", "spent", "budget", "used", "after", "status"]]


def _release_again() -> None:
    st.session_state[f"{P}made"] = min(int(st.session_state.get(f"{P}made", 0) or 0) + 1, MAX_MADE)


def _start_over() -> None:
    st.session_state[f"{P}made"] = 0


ledger_key = (the_sites, design_kind, view, accountant, float(budget_multiple), int(made))
ledger, summary, after, exceed = call_core(
    release_ledger,
    the_sites,
    design=design_kind,
    view=view,
    accountant=accountant,
    budget_multiple=float(budget_multiple),
    made=int(made),
)
shown = built(_ledger_shown, summary, after, key=ledger_key)
st.dataframe(
    arrow(shown),
    hide_index=True,
    width="stretch",
    column_config={
        "spent": st.column_config.NumberColumn("ε spent", format="%.4g"),
        "budget": st.column_config.NumberColumn("budget", format="%.4g"),
        "used": st.column_config.ProgressColumn(
            "budget used", min_value=0.0, max_value=1.0, format="percent"
        ),
        "after": st.column_config.NumberColumn("ε after one more release", format="%.4g"),
        "status": st.column_config.TextColumn("status"),
    },
)
already = summary["exceeded"].to_numpy()
if already.any():
    over = [
        f"site {i + 1} (ε {summary.spent[i]:.3g} > {summary.budget[i]:.3g}, "
        f"{summary.fraction[i]:.0%} of it)"
        for i in range(sites)
        if already[i]
    ]
    st.warning(
        "**Already over budget:** " + ", ".join(over) + ". Any further release on this data "
        "spends privacy these sites no longer have.",
        icon=":material/warning:",
    )
if (exceed & ~already).any():
    over = [
        f"site {i + 1} (ε {after[i]:.3g} > {summary.budget[i]:.3g})"
        for i in range(sites)
        if exceed[i] and not already[i]
    ]
    st.warning(
        "**The next release would exceed the budget of** " + ", ".join(over) + ".",
        icon=":material/warning:",
    )
buttons = st.columns(2)
buttons[0].button(
    "Release again",
    key=f"{P}release",
    icon=":material/repeat:",
    on_click=_release_again,
    help="Record one more release of every site's mean with the current settings.",
    width="stretch",
)
buttons[1].button(
    "Start over", key=f"{P}reset", on_click=_start_over, width="stretch", help="An empty ledger."
)
st.markdown(_md(ledger_text(summary, releases=made, accountant=LABELS[accountant])))

statement = call_core(
    built,
    dpcore.privacy_statement,
    ledger,
    key=ledger_key,
    calibration=calibration,
    design=design_kind,
    view=view,
    statistic="each site's mean of values in [0, 1] (sensitivity 1/N_s)",
)
with st.expander("Privacy statement", expanded=True):
    st.code(statement, language=None, wrap_lines=True)
    st.download_button(
        "Download the statement (.txt)",
        data=statement,
        file_name="cape_privacy_statement.txt",
        mime="text/plain",
        key=f"{P}download",
        icon=":material/download:",
        on_click="ignore",  # a download, not a change: no rerun of the page
    )

EQUATIONS = {  # each accountant's ε, with μ² = Σ_t z_t⁻² and ρ = μ²/2
    "exact": r"\delta = \Phi\!\left(\tfrac{\mu}{2} - \tfrac{\varepsilon}{\mu}\right) - "
    r"e^{\varepsilon}\,\Phi\!\left(-\tfrac{\mu}{2} - \tfrac{\varepsilon}{\mu}\right)",
    "rdp": r"\varepsilon = \min_\alpha \left[\alpha\rho + \log\!\left(1 - \tfrac{1}{\alpha}\right)"
    r" - \frac{\log(\delta\alpha)}{\alpha - 1}\right]",
    "zcdp": r"\varepsilon = \rho + 2\sqrt{\rho \log(1/\delta)}",
    "advanced": r"\varepsilon = \sum_t \varepsilon_t \tanh(\varepsilon_t/2) + "
    r"\sqrt{2 \log(2/\delta) \textstyle\sum_t \varepsilon_t^2}",
    "basic": r"\varepsilon = \sum_t \varepsilon_t",
}
with st.expander("How it works — the equations"):
    # one Markdown element (ui.explain.paragraphs): each accountant's record (its label and
    # citation), then its equation
    st.markdown(
        paragraphs(
            "Release t protects a site like a Gaussian mechanism with noise multiplier "
            "z_t = σ_t/Δ (σ: the std left in the counted view). With μ² = Σ_t z_t⁻² and "
            "ρ = μ²/2:",
            *(
                part
                for record in accountants()
                for part in (
                    f"**{record.label}** ({record.citation}). "
                    + ACCOUNTANTS_IN_WORDS.get(record.name, ""),
                    *((tex(EQUATIONS[record.name]),) if record.name in EQUATIONS else ()),
                )
            ),
            "More in docs/composition.md.",
        )
    )
