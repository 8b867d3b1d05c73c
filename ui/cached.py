"""Cached core calls: pages call these, never the linear algebra directly.

What it holds: the ``st.cache_data`` wrappers around dpcore, the compute slots and single
flight that share them between sessions, and the one error boundary (:func:`call_core`).

Every wrapper takes hashable primitives (seed included) and builds its Generator inside, so
the same arguments give the same numbers in every session and process.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import streamlit as st

import dpcore
from dpcore import ClassicGaussianWarning, cluster, realdata
from dpcore.joint_safe import design_for
from dpcore.parallel import default_workers
from ui import jobs, worker
from ui.datafiles import data_dir
from ui.guard import show_error

T = TypeVar("T")


# A classroom opens the same link at once. Identical requests wait for the first one and then
# read its cache entry (single flight), and at most one heavy computation per core runs at a
# time (compute slots): thirty sessions do not compute the same sweep thirty times over.
_SLOTS = threading.BoundedSemaphore(default_workers())  # CAPE_WORKERS or the CPUs
_FLIGHTS: dict[int, threading.Lock] = {}
_FLIGHTS_GUARD = threading.Lock()


def compute_slot(fn: Callable[..., T]) -> Callable[..., T]:
    """Run ``fn`` holding one of the compute slots (put it under ``st.cache_data``, so that
    cache hits never wait)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        with _SLOTS:
            return fn(*args, **kwargs)

    return wrapper


def _flight(fn: Callable, args: tuple, kwargs: dict) -> threading.Lock | None:
    try:
        key = hash((fn, args, tuple(sorted(kwargs.items()))))
    except TypeError:  # unhashable arguments: no deduplication
        return None
    with _FLIGHTS_GUARD:
        if len(_FLIGHTS) > 4096:
            _FLIGHTS.clear()
        return _FLIGHTS.setdefault(key, threading.Lock())


def call_core(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a core call; a ValueError becomes one ``st.error`` and stops the page.

    Only ValueError: it is the core's answer to a bad setting. Anything else (a TypeError
    from a wrong call, say) is a bug in the app and must surface as one, in the tests too.
    Core warnings are silenced here: a cached result would not repeat them, so pages show
    the classic-bound warning from the parameters (:func:`classic_warning`).
    """
    lock = _flight(fn, args, kwargs)
    try:
        with lock or contextlib.nullcontext(), warnings.catch_warnings():
            warnings.simplefilter("ignore", ClassicGaussianWarning)
            return fn(*args, **kwargs)
    except ValueError as err:
        show_error(err)
        st.stop()


def classic_warning(calibration: str, epsilons) -> None:
    """Show the warning when the classic calibration meets ε ≥ 1 (not a proof there)."""
    if calibration == "classic" and max(epsilons) >= dpcore.CLASSIC_PROOF_LIMIT:
        st.warning(
            "Some settings use ε ≥ 1 with the **classic** Gaussian calibration, which is proven "
            "only for ε < 1 (the paper uses it up to ε = 10). Choose the *analytic* calibration "
            "for noise that is a proof of privacy at every ε.",
            icon=":material/warning:",
        )


@st.cache_data(show_spinner=False, max_entries=256)
def equal_sites_noise(sites: int, n_per_site: int, epsilon: float, delta: float) -> dict:
    """Site, conventional and CAPE aggregate noise std for S equal sites (paper eq. (2))."""
    tau = dpcore.site_noise_std([n_per_site] * sites, epsilon=epsilon, delta=delta)
    design = dpcore.cape_design(tau)
    return {
        "tau_site": float(tau[0]),
        "tau_conv": design.tau_conv,
        "tau_cape": design.tau_agg,
        "variance_gain": design.tau_conv**2 / design.tau_agg**2,
    }


# What the data-set picker shows (and the URL holds) → the source kind.
DATA_SOURCES = {
    "synthetic": "synthetic",
    "digits": "digits",
    "breast cancer": "breast_cancer",
    "wine": "wine",
    "MNIST": "mnist",
    "Covertype": "covtype",
    "CSV upload": "upload",
}


@st.cache_resource(show_spinner="Loading the data set…", max_entries=4)
def _load_outcome(kind: str, arg: Any, directory: str) -> tuple[dpcore.Dataset | None, str]:
    """(data set, "") or (None, why not): a refusal is cached like a result, so a bad file is
    read once, not on every rerun of every panel that asks for it."""
    try:
        if kind in realdata.BUNDLED:
            return realdata.load_bundled(kind), ""
        if kind == "upload":  # cheap structural checks in the server, before any parse
            realdata.check_csv_bytes(arg, "your CSV")
        elif kind in realdata.ENV:  # a missing file is refused at once, without a child
            realdata.locate(kind, arg or None, data_dir=directory)
        # files and uploads are parsed in a bounded child process (ui.worker)
        return jobs.load_blocking(worker.load_source, kind, arg, directory), ""
    except (ValueError, TypeError) as err:
        return None, str(err)


def load_dataset(kind: str, arg: Any = None) -> dpcore.Dataset:
    """A real data set by source: bundled name, file name in DATA_DIR (MNIST, Covertype) or
    CSV bytes. Cached as a shared resource (one read-only copy per server: MNIST is ~380 MB
    in float64); raises ValueError saying why a source cannot be used."""
    dataset, refusal = _load_outcome(kind, arg, data_dir())
    if dataset is None:
        raise ValueError(refusal)
    return dataset


@st.cache_data(show_spinner=False, max_entries=64)
@compute_slot
def pca_results(source: tuple = ("synthetic",), **params: Any) -> pd.DataFrame:
    """:func:`dpcore.pca_sweep` with keyword primitives (the swept axis as a tuple).

    ``source`` is ``("synthetic",)`` or the arguments of :func:`load_dataset`.
    """
    if source[0] != "synthetic":
        params = {**params, "data": load_dataset(*source)}
        params.pop("dim", None)
    return cluster.run(dpcore.pca_sweep, **params)  # here, or CAPE_DASK_SCHEDULER's cluster


@st.cache_data(show_spinner=False, max_entries=64)
@compute_slot
def otd_results(**params: Any) -> pd.DataFrame:
    """:func:`dpcore.otd_sweep` with keyword primitives (the swept axis as a tuple)."""
    return cluster.run(dpcore.otd_sweep, **params)


def pca_job(source: tuple = ("synthetic",), *, gate: str, **params: Any) -> pd.DataFrame:
    """:func:`pca_results` as this session's heavy job (:func:`ui.jobs.run_heavy`); ``gate``
    is the key of the page's :func:`ui.controls.run_gate`."""
    return jobs.run_heavy(worker.pca_on_source, source, data_dir(), params, gate=gate)


def otd_job(*, gate: str, function: str = "otd_sweep", **params: Any) -> pd.DataFrame:
    """:func:`otd_results` (or ``dpcore.otd_example``) as this session's heavy job."""
    return jobs.run_heavy(worker.call, "dpcore", function, params, gate=gate)


def _mean_taus(n_per_site, epsilon, delta, calibration: str) -> np.ndarray:
    """τ_s for each site's mean of values in [0, 1] (:func:`dpcore.mean_noise_std`)."""
    return dpcore.mean_noise_std(n_per_site, epsilon=epsilon, delta=delta, method=calibration)


@st.cache_data(show_spinner=False, max_entries=64)
def averaging_design(
    n_per_site: tuple[int, ...],
    epsilon: tuple[float, ...],
    delta: tuple[float, ...],
    weights: tuple[float, ...],
    calibration: str,
) -> dict[str, Any]:
    """The CAPE design table and the paper's closed form for per-site settings (a mean in [0,1]).

    The released statistic is the site's mean of values in [0, 1]: sensitivity 1/N_s.
    """
    tau = _mean_taus(n_per_site, epsilon, delta, calibration)
    design = dpcore.cape_design(tau, weights=weights)
    joint = dpcore.joint_safe_design(tau, weights=weights)
    paper = dpcore.paper_design(tau, weights=weights, tau_pool=design.tau_pool)
    table = pd.DataFrame(
        {
            "site": np.arange(1, len(tau) + 1),
            "N_s": n_per_site,
            "μ_s": design.weights,
            "τ_s": tau,
            "τ_e": design.tau_e,
            "τ_f": design.tau_f,
            "τ_g": design.tau_g,
            "paper τ_g²": paper.var_g,
            "joint-safe τ_e": joint.tau_e,
            "joint-safe τ_f": joint.tau_f,
            "joint-safe τ_g": joint.tau_g,
        }
    )
    return {
        "table": table,
        "tau_pool": design.tau_pool,
        "tau_cape": design.tau_agg,
        "tau_joint": joint.tau_agg,
        "tau_conv": design.tau_conv,
        "paper_feasible": paper.feasible,
        "gains": {
            "same_weights": design.gain_same_weights,
            "joint_same_weights": joint.gain_same_weights,
            "best_conventional": design.gain_best_conventional,
            "paper_g": dpcore.cape_gain(n_per_site),
        },
    }


@st.cache_data(show_spinner=False, max_entries=32)
@compute_slot
def averaging_monte_carlo(
    n_per_site: tuple[int, ...],
    epsilon: tuple[float, ...],
    delta: tuple[float, ...],
    weights: tuple[float, ...],
    calibration: str,
    draws: int,
    seed: int,
) -> dict[str, np.ndarray]:
    """Aggregate noise of many faithful CAPE runs and conventional runs on a scalar mean."""
    tau = _mean_taus(n_per_site, epsilon, delta, calibration)
    rng = np.random.default_rng(seed)
    zeros = np.zeros((len(tau), draws))  # one protocol run, `draws` independent entries
    cape_rng, conv_rng = rng.spawn(2)
    cape = dpcore.cape_average(zeros, tau, weights=weights, rng=cape_rng)
    conv = dpcore.conventional_average(zeros, tau, weights=weights, rng=conv_rng)
    return {
        "cape": cape.estimate,
        "conv": conv.estimate,
        "e_sum": np.tensordot(cape.weights, cape.e, axes=1),
    }


@st.cache_data(show_spinner=False, max_entries=64)
def gain_curve(total: int, sites: int, points: int = 60) -> pd.DataFrame:
    """The gains of :data:`GAINS` as the largest site grows from N/S to N − S + 1, the rest
    sharing equally; a common (ε, δ) (τ_s ∝ 1/N_s) and CAPE weights N_s/N."""
    shares = np.linspace(1.0 / sites, (total - sites + 1) / total, points)
    rows = []
    for share in shares:
        sizes = dpcore.one_large_site(total, sites, float(share))
        weights = sizes / sizes.sum()
        design = dpcore.cape_design(1.0 / sizes, weights=weights)
        joint = dpcore.joint_safe_design(1.0 / sizes, weights=weights)
        rows.append(
            {
                "largest_share": sizes[0] / sizes.sum(),
                "same_weights": design.gain_same_weights,
                "joint_same_weights": joint.gain_same_weights,
                "paper_g": dpcore.cape_gain(sizes),
                "best_conventional": dpcore.best_conventional_gain(sizes),
            }
        )
    return pd.DataFrame(rows)


# One gain story: each gain and exactly what it compares (issue #14).
GAINS = {
    "same_weights": (
        "CAPE vs conventional, same weights",
        "conventional averaging and CAPE with the same weights μ_s: the correlated-noise "
        "gain alone (exactly S for μ_s = N_s/N at a common ε)",
    ),
    "joint_same_weights": (
        "joint-view-safe CAPE vs conventional, same weights",
        "as above, for the design whose joint view also meets ε_s (aggregate std 5% above pooled)",
    ),
    "best_conventional": (
        "CAPE vs best conventional",
        "against the least-noise conventional estimator, weights ∝ 1/τ_s² (∝ N_s² at a "
        "common ε): N²/ΣN_s². It weights sites differently, so it estimates the same mean "
        "only when the sites' values agree",
    ),
    "paper_g": (
        "paper's G(n) (Prop. 1)",
        "conventional with weights 1/S vs CAPE with weights N_s/N at a common ε: mixes the "
        "gain of reweighting into CAPE's gain",
    ),
}


@st.cache_data(show_spinner=False, max_entries=32)
@compute_slot
def otd_example_table(**params: Any) -> pd.DataFrame:
    """:func:`dpcore.otd_example`: true vs recovered weights of one run."""
    return dpcore.otd_example(**params)


# The CAPE designs a page can choose: the paper's (each release on its own carries τ_s) and
# the joint-view-safe one (all releases together do), :mod:`dpcore.joint_safe`.
DESIGNS = {
    "cape": "paper's design (each release on its own)",
    "joint": "joint-view-safe design (all releases together)",
}


def _mean_design(n_per_site, epsilon, delta, weights, calibration, design: str = "cape"):
    """CAPE design and sensitivities for each site's mean of values in [0, 1]."""
    tau = _mean_taus(n_per_site, epsilon, delta, calibration)
    return design_for(design, tau, weights=weights), dpcore.mean_sensitivity(n_per_site)


@st.cache_data(show_spinner=False, max_entries=64)
def party_table(n_per_site, epsilon, delta, weights, calibration, design="cape") -> pd.DataFrame:
    """What each party receives and each site's ε in its view against the promised ε_s."""
    made, sens = _mean_design(n_per_site, epsilon, delta, weights, calibration, design)
    return dpcore.party_views(made, sensitivity=sens, delta=delta, epsilon=epsilon)


@st.cache_data(show_spinner=False, max_entries=64)
def coalition_table(
    n_per_site,
    epsilon,
    delta,
    weights,
    calibration,
    colluding: tuple[int, ...],
    ng: bool,
    design: str = "cape",
) -> pd.DataFrame:
    """The chosen coalition's report: effective ε per honest site against its ε_s.

    With the classic calibration, also the ε the same views give when τ_s is calibrated
    exactly (analytic): where classic's slack hides a break, that one exceeds ε_s.
    """
    made, sens = _mean_design(n_per_site, epsilon, delta, weights, calibration, design)
    report = dpcore.coalition_report(
        made, sens, delta=delta, colluding=colluding, epsilon=epsilon, noise_generator=ng
    )
    if calibration == "classic":
        exact, _ = _mean_design(n_per_site, epsilon, delta, weights, "analytic", design)
        tight = dpcore.coalition_report(
            exact, sens, delta=delta, colluding=colluding, epsilon=epsilon, noise_generator=ng
        )
        report["epsilon_release_exact"] = tight["epsilon_release"].to_numpy()
        report["epsilon_joint_exact"] = tight["epsilon_joint"].to_numpy()
        report["joint_meets_exact"] = tight["joint_meets"].to_numpy()
    return report


@st.cache_data(show_spinner=False, max_entries=64)
@compute_slot
def collusion_curve_table(
    n_per_site, epsilon, delta, weights, calibration, ng: bool, design: str = "cape"
) -> pd.DataFrame:
    """Effective ε of the most exposed site against the number of colluders (O(S³) views)."""
    made, sens = _mean_design(n_per_site, epsilon, delta, weights, calibration, design)
    return dpcore.collusion_curve(made, sens, delta=delta, epsilon=epsilon, noise_generator=ng)


@st.cache_data(show_spinner=False, max_entries=64)
@compute_slot
def dropout_views(
    n_per_site, epsilon, delta, weights, calibration, dropped: tuple[int, ...], seed: int
) -> dict[str, Any]:
    """Dropout noise per remedy and its effect on capePCA's captured energy."""
    design, _ = _mean_design(n_per_site, epsilon, delta, weights, calibration)
    analysis = dpcore.dropout_analysis(design, dropped)
    table = pd.DataFrame(
        {
            "remedy": list(analysis.std),
            "aggregate_std": list(analysis.std.values()),
            "joint_ratio": [analysis.joint_std[r] for r in analysis.std],
        }
    )
    table["meets_requirement"] = [analysis.meets[r] for r in analysis.std]
    view = dpcore.coalition_view(design)
    normal_ratio = float(np.min(view.joint_std / view.required_std))
    pca = dpcore.dropout_pca(
        n_per_site=n_per_site,
        epsilon=epsilon,
        delta=delta,
        weights=weights,
        dropped=dropped,
        calibration=calibration,
        seed=seed,
    )
    return {
        "table": table,
        "required": analysis.required_std,
        "normal_std": design.tau_agg,
        "normal_joint": normal_ratio,
        "pca": pca,
    }


@st.cache_data(show_spinner=False, max_entries=64)
def calibration_table(epsilon: float, delta: float, grid: tuple[float, ...]) -> dict[str, Any]:
    """Classic vs analytic σ over ε (Δ = 1), and capeAGN's budget split at (ε, δ)."""
    return {
        "curve": dpcore.calibration_comparison(grid, delta=delta),
        "budget": dpcore.agn_budget(epsilon=epsilon, delta=delta),
    }


@st.cache_data(show_spinner=False, max_entries=128)
@compute_slot
def paper_panel(key: str, runs: int, seed: int, calibration: str, path: str = "") -> pd.DataFrame:
    """One panel of the paper's figures (:func:`dpcore.paper.run_panel`), cached."""
    from dpcore import paper

    panel = paper.panel_by_key(key)  # a paper panel or a bundled stand-in ("2b~digits")
    data = None
    if panel.task == "pca" and panel.data != "synthetic":
        data = load_dataset(panel.data, path)
    return cluster.run(
        paper.run_panel, key, runs=runs, seed=seed, calibration=calibration, data=data
    )


@st.cache_data(show_spinner=False, max_entries=16)
@compute_slot
def paper_pool_spread(key: str, calibration: str) -> pd.DataFrame:
    """capePCA's curve over several synthetic data pools (:func:`dpcore.paper.pool_spread`)."""
    from dpcore import paper

    return paper.pool_spread(key, calibration=calibration)


def paper_panel_job(
    key: str, runs: int, seed: int, calibration: str, path: str = "", *, gate: str
) -> pd.DataFrame:
    """:func:`paper_panel` as this session's heavy job (the heavy panels)."""
    return jobs.run_heavy(
        worker.paper_panel, key, runs, seed, calibration, path, data_dir(), gate=gate
    )
