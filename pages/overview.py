"""Overview: what CAPE is, with the noise levels of an equal-sites example from dpcore."""

import streamlit as st

from ui.core import equal_sites_noise

st.title("CAPE Lab")
st.markdown(
    """
Explore **distributed differentially private PCA** with the **CAPE** correlated-noise protocol
(Imtiaz & Sarwate, *Distributed Differentially-Private Algorithms for Matrix and Tensor
Factorization*).

S sites each hold private data. A trusted **noise generator** sends each site noise E_s that
sums to zero over the sites; the untrusted **aggregator** sends each site noise F_s; each site
adds its own noise G_s and releases its statistic plus E_s + F_s + G_s. The aggregator
subtracts the F_s, the E_s cancel, and the average carries exactly the noise a trusted
curator holding all the data would add — S times less variance than sites adding noise on
their own.
"""
)

st.subheader("Try it: noise levels for equal sites")
col1, col2, col3 = st.columns(3)
sites = col1.slider(
    "Sites S",
    2,
    50,
    10,
    key="sites",
    help="More sites: CAPE's advantage over conventional averaging grows with S.",
)
n_per_site = col2.select_slider(
    "Samples per site N_s",
    [100, 500, 1000, 5000, 10000],
    1000,
    key="n_per_site",
    help="More samples: less noise per site.",
)
epsilon = col3.select_slider(
    "Privacy ε",
    [0.01, 0.05, 0.1, 0.5, 0.9],
    0.5,
    key="epsilon",
    help="Smaller ε: stronger privacy, more noise everywhere.",
)
try:
    noise = equal_sites_noise(sites, n_per_site, epsilon, 0.01)
except ValueError as err:
    st.error(str(err))
    st.stop()
m1, m2, m3 = st.columns(3)
m1.metric("Site noise std τ_s", f"{noise['tau_site']:.3g}")
m2.metric("Conventional aggregate std", f"{noise['tau_conv']:.3g}")
m3.metric(
    "CAPE aggregate std (= pooled)",
    f"{noise['tau_cape']:.3g}",
    delta=f"{noise['variance_gain']:.1f}× less variance",
    delta_color="off",
)
st.caption(
    "τ_s from the classic Gaussian mechanism with Δ = 1/N_s and δ = 0.01 (paper, Sec. 2); "
    "CAPE noise design from eq. (2). The full dashboard is under construction."
)
