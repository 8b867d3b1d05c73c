"""Overview: what CAPE is, the network picture, presets and a first feel for the numbers."""

from pathlib import Path

import streamlit as st

from dpcore import likelihood_factor
from learning import sections
from learning.settings import DEFAULT_SEED
from ui import presenter
from ui.cached import call_core, equal_sites_noise
from ui.lesson_scenes import times
from ui.sites_table import PRESETS, preset_link
from ui.state import bound, link_params

ASSETS = Path(__file__).resolve().parents[1] / "assets"

st.title("CAPE Lab")
presenter.intro(  # folded while presenting: the picture on the first screen
    """
Hospitals, phones or labs (**sites**) each hold private data and want one joint analysis
without revealing any individual. With differential privacy, each site adds random noise
before sharing — but when every site adds its own noise, the average carries **S times more
noise variance** than a trusted curator holding all the data would add. **CAPE** fixes this with
correlated noise: a trusted noise generator sends each site noise that sums to zero over the
sites, the untrusted aggregator sends noise it later subtracts, and each site adds only a
little noise of its own. Every site's message is still fully private, yet the combined result
is as accurate as the pooled one. Here you can watch this happen for a simple average, for
PCA, and for tensor decomposition (Imtiaz & Sarwate, *Distributed Differentially-Private
Algorithms for Matrix and Tensor Factorization*).
"""
)
st.image(
    str(ASSETS / "network.svg"),
    caption="Left: conventional — each site adds its full noise. Right: CAPE — "
    "e_s from the noise generator cancel, the aggregator subtracts its f_s "
    "(after the paper's Figure 1).",
    alt="Two networks of S sites and an aggregator. Left, conventional: each site sends its "
    "value plus its own full noise, so the average carries S times the pooled noise variance. "
    "Right, CAPE: a trusted noise generator sends each site a noise e_s, and the e_s sum to "
    "zero; the untrusted aggregator sends each site a noise f_s; each site sends its value "
    "plus e_s, f_s and a little noise g_s of its own; the aggregator removes the f_s, the e_s "
    "cancel, and only the pooled noise is left.",
)

st.header("Explore")
c1, c2, c3 = st.columns(3)
c1.page_link(
    "app_pages/averaging.py",
    label="CAPE averaging",
    icon=":material/functions:",
    help="The protocol step by step on a private mean: who adds which noise.",
)
c2.page_link(
    "app_pages/pca.py",
    label="Distributed PCA",
    icon=":material/show_chart:",
    help="Captured energy of capePCA vs conventional, local and DPdisPCA.",
)
c3.page_link(
    "app_pages/tensor.py",
    label="Tensor decomposition",
    icon=":material/view_in_ar:",
    help="capeAGN for mixtures of Gaussians and topic models.",
)

# Every other PCA setting a preset link resets (the page's defaults).
PCA_LINK_DEFAULTS = {
    "pca_data": "synthetic",
    "pca_dim": 50,
    "pca_k": 10,
    "pca_sites": 10,
    "pca_ns": 1000,
    "pca_sizes": "equal",
    "pca_nbr": "add-remove",
    "pca_axis": "ε",  # the control shows (and the URL holds) the symbol
    "pca_runs": 5,
    "pca_seed": DEFAULT_SEED,  # the app's representative seed; Paper figures calls 0 unlucky
    "pca_absolute": False,
    "pca_target": 90,
}

st.header("Classroom presets")
st.caption("Each opens its page with every setting replaced, whatever you did there before.")
p1, p2, p3, p4 = st.columns(4)
for box, name in zip((p1, p2, p3), PRESETS, strict=True):
    box.page_link(
        "app_pages/averaging.py",
        label=PRESETS[name]["label"],
        icon=PRESETS[name]["icon"],
        query_params=preset_link(name),
        help=PRESETS[name]["help"],
    )
p4.page_link(
    "app_pages/pca.py",
    label="Strong privacy PCA",
    icon=":material/shield:",
    query_params=link_params(
        {"pca_eps": 0.05, "pca_delta": 1e-05, "pca_calib": "analytic"}, PCA_LINK_DEFAULTS
    ),
    help="ε = 0.05, δ = 1e-5 with the analytic calibration.",
)

st.header("Try it: noise levels for equal sites")
col1, col2, col3 = st.columns(3)
P = "ov_"  # this page's keys (docs/state.md)
sites = bound(
    col1.slider,
    "Sites S",
    f"{P}S",
    min_value=2,
    max_value=50,
    value=10,
    help="More sites: CAPE's advantage over conventional averaging grows with S.",
)
n_per_site = bound(
    col2.select_slider,
    "Samples per site N_s",
    f"{P}ns",
    options=[100, 500, 1000, 5000, 10000],
    value=1000,
    help="More samples: less noise per site (std ∝ 1/N_s).",
)
epsilon = bound(
    col3.select_slider,
    "Privacy ε",
    f"{P}eps",
    options=[0.01, 0.05, 0.1, 0.5, 0.9],
    value=0.5,
    help="Smaller ε: stronger privacy, more noise everywhere.",
)
noise = call_core(
    equal_sites_noise, sites=sites, n_per_site=n_per_site, epsilon=epsilon, delta=0.01
)
m1, m2, m3 = st.columns(3)
m1.metric(
    "Site noise std τ_s",
    f"{noise.tau_site[0]:.3g}",
    help="What one site must add on its own (a mean of values in [0, 1]).",
)
m2.metric("Conventional aggregate std", f"{noise.tau_conv:.3g}", help="τ_s/√S.")
m3.metric(
    "CAPE aggregate std (= pooled)",
    f"{noise.tau_agg:.3g}",
    delta=f"{noise.gain_same_weights:.1f}× less variance than conventional",
    delta_color="off",
    help="τ_s/S: exactly what a trusted curator with all the data would add.",
)
st.caption(
    "Gaussian mechanism with Δ = 1/N_s and δ = 0.01, calibrated exactly (the analytic "
    "calibration of Balle & Wang 2018, every page's default; the paper's classic formula of "
    "Sec. 2 adds more noise at these ε, and is a proof only below ε = 1); CAPE noise design "
    "from eq. (2)."
)
odds = {e: times(call_core(likelihood_factor, epsilon=e)) for e in (epsilon, 0.5, 5.0)}
st.subheader(f"What ε = {epsilon:g} promises one person", anchor=sections.OVERVIEW_PROMISE)
st.markdown(
    "Take Ana, a patient at one of the sites. "
    f"Whatever the released average shows, that outcome is at most e^ε = **{odds[epsilon]}×** "
    "as likely with Ana's record in the data as without it (and the other way round), apart "
    "from a slack δ = 0.01 (Dwork & Roth, Definition 2.4). So ε = 0.5 promises Ana at most "
    f"{odds[0.5]}×: nobody can tell much about whether she took part. ε = 5 would allow "
    f"{odds[5.0]}×: hardly a promise at all."
)
