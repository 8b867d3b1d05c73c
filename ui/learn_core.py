"""Cached wrappers for the Learn section: the lessons' and the protocol stepper's numbers."""

from __future__ import annotations

import warnings

import pandas as pd
import streamlit as st

import dpcore
from dpcore.protocol_demo import ProtocolDemo, protocol_demo


@st.cache_data(show_spinner=False, max_entries=256)
def protocol_run(sites: int, kind: str, epsilon: float, seed: int) -> ProtocolDemo:
    """:func:`dpcore.protocol_demo.protocol_demo` (δ = 0.01, N_s = 50, analytic), cached."""
    return protocol_demo(sites=sites, kind=kind, epsilon=epsilon, seed=seed)


# --- lessons: every number a lesson shows comes through one of these --------------------------

LESSON_DELTA = 0.01  # δ of every lesson step that does not vary it (as on the Overview page)


@st.cache_data(show_spinner=False, max_entries=256)
def sigmas(
    sensitivity: float, epsilons: tuple[float, ...], delta: float, method: str
) -> list[float]:
    """Gaussian-mechanism σ for each ε (:func:`dpcore.gaussian_sigma`), warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcore.ClassicGaussianWarning)
        return [
            dpcore.gaussian_sigma(sensitivity, epsilon=e, delta=delta, method=method)
            for e in epsilons
        ]


@st.cache_data(show_spinner=False, max_entries=256)
def classic_check(sensitivity: float, epsilon: float, delta: float) -> dict[str, float]:
    """Classic and analytic σ at (ε, δ), and the δ the classic σ really attains at ε."""
    classic, analytic = (
        sigmas(sensitivity, (epsilon,), delta, m)[0] for m in ("classic", "analytic")
    )
    real = dpcore.gaussian_delta(classic, sensitivity=sensitivity, epsilon=epsilon)
    return {"classic": classic, "analytic": analytic, "real_delta": real}


@st.cache_data(show_spinner=False, max_entries=256)
def site_designs(n_per_site: tuple[int, ...], epsilon: float, weights: tuple[float, ...]) -> dict:
    """CAPE design for sites releasing a mean (Δ = 1/N_s, analytic σ, δ = LESSON_DELTA):
    per-site variances, aggregate stds of CAPE and of conventional averaging (same weights,
    and equal weights 1/S), and the three gains: same weights, the paper's G(n) and against
    the best conventional weights (N²/ΣN_s², Sec. 3 and Proposition 1)."""
    tau = dpcore.mean_noise_std(
        n_per_site, epsilon=epsilon, delta=LESSON_DELTA, method="analytic"
    )
    design = dpcore.cape_design(tau, weights=weights)
    equal = dpcore.cape_design(tau).tau_conv  # conventional with weights 1/S
    return {
        "tau": tau.tolist(),
        "var_e": design.var_e.tolist(),
        "var_f": design.var_f.tolist(),
        "var_g": design.var_g.tolist(),
        "tau_cape": design.tau_agg,
        "tau_conv": design.tau_conv,
        "tau_conv_equal": equal,
        "gain": dpcore.cape_gain(n_per_site),
        "gain_same": design.gain_same_weights,
        "gain_best": dpcore.best_conventional_gain(n_per_site),
    }


def _small_pca(**overrides) -> pd.DataFrame:
    """The lessons' capePCA sweep: D = 20, K = 5, 4 runs, analytic σ, δ = LESSON_DELTA."""
    params = {
        "dim": 20,
        "k": 5,
        "runs": 4,
        "seed": 0,
        "algorithms": ("nonprivate", "cape", "conv"),
        "calibration": "analytic",
        "delta": LESSON_DELTA,
        **overrides,
    }
    return dpcore.pca_sweep(**params)


@st.cache_data(show_spinner=False, max_entries=16)
def lesson_pca(epsilons: tuple[float, ...], sites: int) -> pd.DataFrame:
    """capePCA over ε for S sites of N_s = 1000 (lesson 5)."""
    return _small_pca(epsilon=epsilons, sites=sites, n_per_site=1000)


@st.cache_data(show_spinner=False, max_entries=16)
def lesson_pca_split(total: int, sites: tuple[int, ...], epsilon: float) -> pd.DataFrame:
    """capePCA against S with the same N = ``total`` samples split equally (N_s = N/S)."""
    return pd.concat(
        [_small_pca(epsilon=epsilon, sites=(s,), n_per_site=total // s) for s in sites],
        ignore_index=True,
    )


@st.cache_data(show_spinner=False, max_entries=32)
def lesson_otd(epsilons: tuple[float, ...]) -> pd.DataFrame:
    """A small capeAGN sweep over ε for lesson 5 (MOG, D = 10, K = 5, S = 5, N_s = 20000)."""
    return dpcore.otd_sweep(
        model="mog",
        dim=10,
        k=5,
        runs=3,
        seed=0,
        algorithms=("nonprivate", "cape", "conv"),
        calibration="analytic",
        n_per_site=20000,
        sites=5,
        delta=LESSON_DELTA,
        epsilon=epsilons,
    )
