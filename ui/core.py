"""Cached wrappers around dpcore: pages call these, never the linear algebra directly."""

from __future__ import annotations

import streamlit as st

import dpcore


@st.cache_data(show_spinner=False)
def equal_sites_noise(sites: int, n_per_site: int, epsilon: float, delta: float) -> dict:
    """Site, conventional and CAPE aggregate noise std for S equal sites (paper eq. (2))."""
    tau = dpcore.site_noise_std([n_per_site] * sites, epsilon, delta)
    design = dpcore.cape_design(tau)
    return {
        "tau_site": float(tau[0]),
        "tau_conv": design.tau_conv,
        "tau_cape": design.tau_agg,
        "variance_gain": design.tau_conv**2 / design.tau_agg**2,
    }
