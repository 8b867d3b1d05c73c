"""Cached wrappers for the Learn section: the lessons' and the protocol stepper's numbers."""

from __future__ import annotations

import warnings
from dataclasses import replace

import pandas as pd
import streamlit as st

import dpcore
from dpcore import ProtocolDemo, protocol_demo
from learning.settings import LESSON_DELTA, OTD_SETTINGS, PCA_SETTINGS
from ui.cached import otd_frame, pca_frame
from ui.specs import otd_spec, pca_spec


@st.cache_data(show_spinner=False, max_entries=256)
def protocol_run(*, sites: int, kind: str, epsilon: float, seed: int) -> ProtocolDemo:
    """:func:`dpcore.protocol.protocol_demo.protocol_demo` (δ = 0.01, N_s = 50, analytic),
    cached."""
    return protocol_demo(sites=sites, kind=kind, epsilon=epsilon, seed=seed)


# --- lessons: every number a lesson shows comes through one of these --------------------------


@st.cache_data(show_spinner=False, max_entries=256)
def sigmas(
    sensitivity: float, epsilons: tuple[float, ...], *, delta: float, method: str
) -> list[float]:
    """Gaussian-mechanism σ for each ε (:func:`dpcore.gaussian_sigma`), warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcore.ClassicGaussianWarning)
        return [
            dpcore.gaussian_sigma(sensitivity, epsilon=e, delta=delta, calibration=method)
            for e in epsilons
        ]


@st.cache_data(show_spinner=False, max_entries=256)
def classic_check(*, sensitivity: float, epsilon: float, delta: float) -> dict[str, float]:
    """Classic and analytic σ at (ε, δ), and the δ the classic σ really attains at ε."""
    classic, analytic = (
        sigmas(sensitivity, (epsilon,), delta=delta, method=m)[0] for m in ("classic", "analytic")
    )
    real = dpcore.gaussian_delta(classic, sensitivity=sensitivity, epsilon=epsilon)
    return {"classic": classic, "analytic": analytic, "real_delta": real}


@st.cache_data(show_spinner=False, max_entries=256)
def site_designs(
    n_per_site: tuple[int, ...], epsilon: float, weights: tuple[float, ...]
) -> dpcore.MeanReleaseDesigns:
    """CAPE's designs for sites releasing a mean (:func:`dpcore.mean_release_designs`:
    Δ = 1/N_s, analytic σ, δ = LESSON_DELTA)."""
    return dpcore.mean_release_designs(
        n_per_site, epsilon=epsilon, delta=LESSON_DELTA, weights=weights, calibration="analytic"
    )


def lesson_pca(sites: int, n_per_site: int, epsilon: float) -> pd.DataFrame:
    """The PCA page's ε sweep for lesson 5's settings (:data:`PCA_SETTINGS`) with S sites of
    N_s samples and the marker at ``epsilon``: the page's own spec and cache entry."""
    chosen = replace(PCA_SETTINGS, sites=int(sites), n_per_site=int(n_per_site), epsilon=epsilon)
    return pca_frame(pca_spec(chosen), chosen.seed)


def lesson_otd(epsilon: float) -> pd.DataFrame:
    """The tensor page's ε sweep for lesson 5's settings (:data:`OTD_SETTINGS`) with the
    marker at ``epsilon``: the page's own spec and cache entry."""
    chosen = replace(OTD_SETTINGS, epsilon=epsilon)
    return otd_frame(otd_spec(chosen), chosen.seed)
