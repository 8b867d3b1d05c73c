"""Cached core calls: pages call these, never the linear algebra directly.

What it holds: the ``st.cache_data`` wrappers around dpcore, the compute slots and single
flight that share them between sessions, and the one error boundary (:func:`call_core`).

Every wrapper takes hashable primitives or frozen records (a spec, one :class:`dpcore.Sites`
for the sites-table pages; seed included) and builds its Generator inside, so the same
arguments give the same numbers in every session and process.
"""

from __future__ import annotations

import contextlib
import dataclasses
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import streamlit as st

import dpcore
from dpcore import (
    CapeDesign,
    ClassicGaussianWarning,
    OtdSpec,
    PcaSpec,
    Sites,
    cluster,
)
from dpcore.analysis import tradeoff
from dpcore.analysis.audit import AuditResult
from dpcore.analysis.site_releases import SiteReleases
from dpcore.analysis.trust_iterative import iterative_trust_table
from dpcore.analysis.trust_models import TrustOverview
from dpcore.analysis.views import EPS_TOL
from dpcore.experiments import realdata
from dpcore.experiments.sweeps.rounds import RoundsSpec, rounds_summary, run_rounds_sweep
from dpcore.factorization.iterative import cape_round_design
from serving import classroom, worker
from serving.datafiles import data_dir
from serving.flight import compute_slot, flight
from serving.jobs import load_blocking
from ui import jobs
from ui.guard import show_error

T = TypeVar("T")


def call_core(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a core call; a ValueError becomes one ``st.error`` and stops the page.

    Only ValueError: it is the core's answer to a bad setting. Anything else (a TypeError
    from a wrong call, say) is a bug in the app and must surface as one, in the tests too.
    Core warnings are silenced here: a cached result would not repeat them, so pages show
    the classic-bound warning from the parameters (:func:`classic_warning`).
    """
    lock = flight(fn, args, kwargs)
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
def equal_sites_noise(sites: int, n_per_site: int, epsilon: float, delta: float) -> CapeDesign:
    """CAPE design for S equal sites releasing a mean in [0, 1] (paper eq. (2)): τ_s, and
    the conventional and CAPE aggregate noise std; the classic calibration of Sec. 3.1."""
    return dpcore.mean_release_designs(
        [n_per_site] * sites, epsilon=epsilon, delta=delta, calibration="classic"
    ).cape


# What the data-set picker shows (and the URL holds) → the source kind.
DATA_SOURCES = {
    "synthetic": "synthetic",
    "digits": "digits",
    "breast cancer": "breast_cancer",
    "wine": "wine",
    "MNIST": "mnist",
    "MNIST, 5,000-sample subset": "mnist_5k",
    "Covertype": "covtype",
    "CSV upload": "upload",
}
# Sources read from a file on this machine: parsed again in the heavy job's child, so their
# sweeps run as a job whatever their work (the server holds one copy, the child its own).
FILE_SOURCES = ("mnist", "covtype")


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
        # files and uploads are parsed in a bounded child process (serving.worker)
        return load_blocking(worker.load_source, kind, arg, directory), ""
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


# How st.cache_data keys a spec or the sites (dpcore.Sites): its repr, which names every field
# that decides the frame (grid, sites, privacy, runs, the data's name, D, K, …, the algorithms)
# in the same text in every session and process (floats by repr: every bit). Hashing the
# dataclass field by field would reach the registry records it carries (functions: unhashable)
# and cost more. The page's spec names its data ("synthetic"; a real data set joins only where
# the sweep runs), so its repr stays short.
SPEC_HASH = {PcaSpec: repr, OtdSpec: repr, RoundsSpec: repr, Sites: repr}


def load_source(source: tuple) -> dpcore.Dataset:
    """:func:`load_dataset` of a page's ``source``: ``(kind,)`` or ``(kind, name or bytes)``."""
    return load_dataset(source[0], source[1] if len(source) > 1 else None)


def _on_source(spec: PcaSpec, source: tuple) -> PcaSpec:
    """The spec on its data: a page's spec names the data by ``source`` (small, hashable),
    the data set itself joins it only here, where the sweep runs."""
    return spec if source[0] == "synthetic" else spec.replace(data=load_source(source))


# The sweeps below run here under a compute slot, or on CAPE_DASK_SCHEDULER's cluster
# holding no slot while they wait (cluster.run_slotted: a stalled scheduler must not take
# the slots every other page computes in, issue #36).


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def pca_frame(spec: PcaSpec, seed: int, source: tuple = ("synthetic",)) -> pd.DataFrame:
    """:func:`dpcore.run_pca_sweep` of a page's spec, its Generator seeded with ``seed``.

    ``source`` is ``("synthetic",)`` or the arguments of :func:`load_dataset`.
    """
    rng = np.random.default_rng(seed)
    spec = _on_source(spec, source)
    classroom.check(spec)  # the class server's limits: here, not in the core (issue #39)
    return cluster.run_slotted(compute_slot, dpcore.run_pca_sweep, spec, rng)


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def otd_frame(spec: OtdSpec, seed: int) -> pd.DataFrame:
    """:func:`dpcore.run_otd_sweep` of a page's spec as its tidy frame."""
    rng = np.random.default_rng(seed)
    classroom.check(spec)
    run = cluster.run_slotted(compute_slot, dpcore.run_otd_sweep, spec, rng)
    return dpcore.otd_frame(spec, run)


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs=SPEC_HASH)
def otd_example(spec: OtdSpec, seed: int) -> pd.DataFrame:
    """True vs recovered weights of one run (``spec`` at one grid point, one run)."""
    rng = np.random.default_rng(seed)
    classroom.check(spec if spec.runs.count == 1 else spec.replace(runs=1))  # as it runs
    return cluster.run_slotted(compute_slot, dpcore.otd_example_of, spec, rng)


def pca_job(spec: PcaSpec, seed: int, source: tuple = ("synthetic",), *, gate: str) -> pd.DataFrame:
    """:func:`pca_frame` as this session's heavy job (:func:`ui.jobs.run_heavy`); ``gate``
    is the key of the page's :func:`ui.controls.run_gate`."""
    return jobs.run_heavy(worker.pca_frame, spec, seed, source, data_dir(), gate=gate)


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs=SPEC_HASH)
def rounds_table(spec: RoundsSpec, seed: int, source: tuple = ("synthetic",)) -> pd.DataFrame:
    """Mean ± standard error per (algorithm, ε, T) of a page's rounds axis
    (:func:`dpcore.experiments.sweeps.rounds.rounds_summary` of
    :func:`~dpcore.experiments.sweeps.rounds.run_rounds_sweep`, seeded with ``seed``):
    the numbers ``spec.command(seed)`` prints."""
    if source[0] != "synthetic":
        spec = dataclasses.replace(spec, sweep=_on_source(spec.sweep, source))
    classroom.check(spec)  # the class server's limits (issue #39)
    frame = cluster.run_slotted(compute_slot, run_rounds_sweep, spec, seed)
    return rounds_summary(frame)


def rounds_job(spec: RoundsSpec, seed: int, source: tuple = ("synthetic",), *, gate: str):
    """:func:`rounds_table` as this session's heavy job (:func:`ui.jobs.run_heavy`)."""
    return jobs.run_heavy(worker.rounds_table, spec, seed, source, data_dir(), gate=gate)


def otd_job(spec: OtdSpec, seed: int, *, gate: str, example: bool = False) -> pd.DataFrame:
    """:func:`otd_frame` (or, with ``example``, :func:`otd_example`) as this session's heavy
    job; the example after the sweep is its follow-up and keeps the queue place (issue #26)
    and the slot the sweep freed (issue #36)."""
    fn = worker.otd_example if example else worker.otd_frame
    return jobs.run_heavy(fn, spec, seed, gate=gate, follow_up=example, then_follow_up=not example)


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def averaging_design(
    sites: Sites,
) -> dpcore.MeanReleaseDesigns:
    """:func:`dpcore.mean_release_designs` for per-site settings (a mean in [0, 1])."""
    return dpcore.mean_release_designs(
        sites.n_per_site,
        epsilon=sites.epsilon,
        delta=sites.delta,
        weights=sites.weights,
        calibration=sites.calibration,
    )


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs=SPEC_HASH)
@compute_slot
def averaging_monte_carlo(
    sites: Sites,
    draws: int,
    seed: int,
) -> dict[str, np.ndarray]:
    """Aggregate noise of many faithful CAPE runs and conventional runs on a scalar mean."""
    tau = sites.taus
    rng = np.random.default_rng(seed)
    zeros = np.zeros((len(tau), draws))  # one protocol run, `draws` independent entries
    cape_rng, conv_rng = rng.spawn(2)
    cape = dpcore.cape_average(zeros, tau, weights=sites.weights, rng=cape_rng)
    conv = dpcore.conventional_average(zeros, tau, weights=sites.weights, rng=conv_rng)
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
        "CAPE vs conventional with equal weights 1/S (Prop. 1; G(n) at a common ε)",
        "conventional averaging with weights 1/S against CAPE with weights μ_s: it mixes the "
        "gain of reweighting into CAPE's gain. The paper's G(n) = (N²/S²)Σ1/N_s² is this "
        "ratio only for one common (ε, δ) and μ_s = N_s/N",
    ),
}


# The CAPE designs a page can choose: the paper's (each release on its own carries τ_s) and
# the joint-view-safe one (all releases together do), :mod:`dpcore.protocol.joint_safe`.
DESIGNS = {
    "cape": "paper's design (each release on its own)",
    "joint": "joint-view-safe design (all releases together)",
}


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def party_table(sites: Sites, design: str = "cape") -> pd.DataFrame:
    """What each party receives and each site's ε in its view against the promised ε_s."""
    made, sens = (sites.design(design), sites.sensitivities)
    return dpcore.party_views(made, sensitivity=sens, delta=sites.delta, epsilon=sites.epsilon)


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def coalition_table(
    sites: Sites,
    colluding: tuple[int, ...],
    ng: bool,
    design: str = "cape",
) -> pd.DataFrame:
    """The chosen coalition's report: effective ε per honest site against its ε_s.

    With the classic calibration, also the ε the same views give when τ_s is calibrated
    exactly (analytic): where classic's slack hides a break, that one exceeds ε_s.
    """
    made, sens = (sites.design(design), sites.sensitivities)
    exact = (
        sites.replace(calibration="analytic").design(design)
        if sites.calibration == "classic"
        else None
    )
    return dpcore.coalition_report(
        made,
        sensitivity=sens,
        delta=sites.delta,
        colluding=colluding,
        epsilon=sites.epsilon,
        noise_generator=ng,
        exact_design=exact,
    )


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
@compute_slot
def collusion_curve_table(
    sites: Sites, ng: bool, design: str = "cape"
) -> pd.DataFrame:
    """The worst coalition of each size (:func:`dpcore.collusion_curve`: exact up to S = 12)."""
    made, sens = (sites.design(design), sites.sensitivities)
    return dpcore.collusion_curve(
        made, sensitivity=sens, delta=sites.delta, epsilon=sites.epsilon, noise_generator=ng
    )


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def dropout_report(
    sites: Sites, dropped: tuple[int, ...]
) -> dpcore.DropoutAnalysis:
    """Dropout noise per remedy (:func:`dpcore.dropout_analysis`) on the sites' mean design."""
    design = sites.design()
    return dpcore.dropout_analysis(design, dropped)


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
@compute_slot
def dropout_pca_frame(
    sites: Sites, dropped: tuple[int, ...], seed: int
) -> pd.DataFrame:
    """capePCA's captured energy with and without the dropout (:func:`dpcore.dropout_pca`)."""
    return dpcore.dropout_pca(
        n_per_site=sites.n_per_site,
        epsilon=sites.epsilon,
        delta=sites.delta,
        weights=sites.weights,
        dropped=dropped,
        calibration=sites.calibration,
        rng=seed,
        budget=classroom.BUDGET,
    )


@st.cache_data(show_spinner=False, max_entries=64)
def calibration_curve(delta: float, grid: tuple[float, ...]) -> pd.DataFrame:
    """Classic vs analytic σ over ε, Δ = 1 (:func:`dpcore.calibration_comparison`)."""
    return dpcore.calibration_comparison(grid, delta=delta)


@st.cache_data(show_spinner=False, max_entries=64)
def agn_budget(epsilon: float, delta: float) -> dict[str, float]:
    """capeAGN's split of (ε, δ) between M2 and M3 (:func:`dpcore.agn_budget`)."""
    return dpcore.agn_budget(epsilon=epsilon, delta=delta)


@st.cache_data(show_spinner=False, max_entries=128)
def paper_panel(key: str, runs: int, seed: int, calibration: str, path: str = "") -> pd.DataFrame:
    """One panel of the paper's figures (:func:`dpcore.experiments.paper.run_panel`), cached; here
    under
    a compute slot, or on the cluster holding none."""
    from dpcore.experiments import paper

    panel = paper.panel_by_key(key)  # a paper panel or a bundled stand-in ("2b~digits")
    data = None
    if panel.task == "pca" and panel.data != "synthetic":
        data = load_dataset(panel.data, path)
    return cluster.run_slotted(
        compute_slot,
        paper.run_panel,
        key,
        runs=runs,
        seed=seed,
        calibration=calibration,
        data=data,
        budget=classroom.BUDGET,
    )


@st.cache_data(show_spinner=False, max_entries=16)
@compute_slot
def paper_pool_spread(key: str, calibration: str) -> pd.DataFrame:
    """capePCA's curve over several synthetic data pools
    (:func:`dpcore.experiments.paper.pool_spread`)."""
    from dpcore.experiments import paper

    return paper.pool_spread(key, calibration=calibration)


def paper_claims(key: str, df: pd.DataFrame) -> list:
    """The verdicts of a panel's claims on its numbers
    (:func:`dpcore.experiments.paper.check_claims`):
    deciding them reads the frame point by point, ~40 ms a panel, so a page keeps them with
    ``figures.memo.built(paper_claims, key, df, key=<the panel's settings>)`` instead of
    hashing the frame on every rerun."""
    from dpcore.experiments import paper

    return paper.check_claims(paper.panel_by_key(key), df)


def paper_panel_job(
    key: str, runs: int, seed: int, calibration: str, path: str = "", *, gate: str
) -> pd.DataFrame:
    """:func:`paper_panel` as this session's heavy job (the heavy panels)."""
    return jobs.run_heavy(
        worker.paper_panel, key, runs, seed, calibration, path, data_dir(), gate=gate
    )


# --- the attack audit (app_pages/audit.py) ----------------------------------------------------

# Site-trials per audit per click: a protocol run costs ∝ S × trials, and 4·10⁶ take about
# 0.25 s here (docs/performance.md), so the page's up to six audits stay near a second.
AUDIT_WORK = 4_000_000
AUDIT_VIEWS = {
    "release": "its own release (the paper's argument)",
    "joint": "aggregator: all releases",
    "coalition": "aggregator + colluding sites",
}


def audit_trials_cap(sites: int) -> int:
    """Most trials one audit runs per click for S sites (a multiple of 10,000)."""
    return max(10_000, AUDIT_WORK // sites // 10_000 * 10_000)


def _audit_row(kind: str, view: str, r: AuditResult, promised: float) -> dict[str, Any]:
    """One row of the audit tables: an audit's theory, bound, verdict and counts."""
    return {
        "design": kind,
        "view": view,
        "epsilon": r.epsilon,
        "epsilon_lower": r.epsilon_lower,
        "promised_epsilon": promised,
        "theory_breaks": r.epsilon > promised * (1 + EPS_TOL),
        "attack_breaks": r.proves_above(promised),
        "trials_needed": dpcore.audit_trials_needed(
            r.noise_multiplier, delta=r.delta, target=promised
        ),
        "noise_multiplier": r.noise_multiplier,
        "fpr": r.fpr,
        "fnr": r.fnr,
        "fpr_upper": r.fpr_upper,
        "fnr_upper": r.fnr_upper,
        "threshold": r.threshold,
        "planned_lower": r.planned_lower,
        "trials": r.trials,
        "confidence": r.confidence,
        "false_positives": r.false_positives,
        "negatives": r.negatives,
        "false_negatives": r.false_negatives,
        "positives": r.positives,
    }


@st.cache_data(
    show_spinner="Playing the distinguishing game…", max_entries=64, hash_funcs=SPEC_HASH
)
@compute_slot
def audit_table(
    sites: Sites,
    site: int,
    colluding: tuple[int, ...],
    trials: int,
    seed: int,
) -> pd.DataFrame:
    """:func:`dpcore.audit_protocol` for both designs and every view against one site (0-based),
    with the trials a demonstration of a broken promise needs (:func:`dpcore.audit_trials_needed`).
    """
    views = [("release", ()), ("joint", ())] + ([("coalition", colluding)] if colluding else [])
    streams = iter(np.random.default_rng(seed).spawn(len(DESIGNS) * len(views)))
    promised = sites.epsilon[site]
    rows = []
    for kind in DESIGNS:
        design, sens = (sites.design(kind), sites.sensitivities)
        for view, col in views:
            found = dpcore.audit_protocol(
                design,
                sensitivity=sens,
                site=site,
                view=view,
                colluding=col,
                delta=sites.delta[site],
                trials=trials,
                rng=next(streams),
            )
            rows.append(_audit_row(kind, view, found.audit, promised))
    return pd.DataFrame(rows)


@st.cache_data(
    show_spinner="Playing the game over the rounds…", max_entries=64, hash_funcs=SPEC_HASH
)
@compute_slot
def audit_rounds_table(
    sites: Sites,
    site: int,
    rounds: int,
    trials: int,
    seed: int,
) -> pd.DataFrame:
    """The aggregator's joint view of all T rounds of CAPE in every round of the power method
    (:func:`dpcore.factorization.iterative.cape_npm_pca`), audited for both per-round designs:
    T protocol runs per trial (:func:`dpcore.audit_protocol` with ``rounds``), the record
    moving site ``site``'s round value by Δ_s = 1/N_s every round (A_s X under add-remove
    neighbours: the same Δ_s, and so the same τ_s, as the site's mean). :func:`audit_table`'s
    columns, plus ``rounds``.
    """
    tau = sites.taus
    sens = sites.sensitivities
    streams = iter(np.random.default_rng(seed).spawn(len(DESIGNS)))
    rows = []
    for kind in DESIGNS:
        found = dpcore.audit_protocol(
            cape_round_design(tau, weights=sites.weights, rounds=rounds, design=kind),
            sensitivity=sens,
            site=site,
            view="joint",
            delta=sites.delta[site],
            trials=trials,
            rounds=rounds,
            rng=next(streams),
        )
        rows.append(_audit_row(kind, "joint", found.audit, sites.epsilon[site]))
    return pd.DataFrame(rows).assign(rounds=rounds)


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def audit_tradeoff(
    sites: Sites,
    site: int,
    colluding: tuple[int, ...],
    trials: int,
    seed: int,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The audit in an attacker's words (:mod:`dpcore.analysis.tradeoff`), for :func:`audit_table`'s
    designs and views: one row per view (μ = Δ_s/σ, its ε at δ_s, the dip under the promise,
    the largest posterior at each prior, the attack's (FPR, FNR) and its Clopper–Pearson box),
    and the curves (each view's and the promise's)."""
    audit = audit_table(sites, site, colluding, trials, seed)
    promised, d = sites.epsilon[site], sites.delta[site]
    rows, curves = [], []
    for design, part in audit.groupby("design", sort=False):
        mus = {}
        for r in part.itertuples():
            mu = 1.0 / r.noise_multiplier
            mus[r.view] = mu
            seen = tradeoff.read_view(mu, epsilon=promised, delta=d)
            box = tradeoff.attack_box(
                r.false_positives,
                r.negatives,
                r.false_negatives,
                r.positives,
                confidence=r.confidence,
            )
            # the promise's β at the point's and the box's α's: how far under it they lie
            at = tradeoff.dp_tradeoff([box.fpr, box.fpr_low, box.fpr_high], promised, d)
            rows.append(
                {
                    "design": design,
                    "view": r.view,
                    "mu": mu,
                    "epsilon": seen.epsilon,
                    "promised_epsilon": promised,
                    "delta": d,
                    "dip_alpha": seen.dip.alpha,
                    "dip_depth": seen.dip.depth,
                    "dip_beta_view": seen.dip.beta_view,
                    "dip_beta_promise": seen.dip.beta_promise,
                    "breaks": seen.dip.breaks,
                    **{
                        f"posterior_{p:g}": q
                        for p, q in zip(seen.priors, seen.posteriors, strict=True)
                    },
                    **{
                        f"promise_posterior_{p:g}": tradeoff.posterior_bound(promised, p)
                        for p in seen.priors
                    },
                    "fpr": box.fpr,
                    "fnr": box.fnr,
                    "fpr_low": box.fpr_low,
                    "fpr_high": box.fpr_high,
                    "fnr_low": box.fnr_low,
                    "fnr_high": box.fnr_high,
                    "under": at[0] - box.fnr,
                    "under_low": at[2] - box.fnr_high,  # > 0: the audit proves a break
                    "under_high": at[1] - box.fnr_low,
                    "attack_breaks": bool(r.attack_breaks),
                    "trials": r.trials,
                }
            )
        frame = tradeoff.tradeoff_curves(mus, epsilon=promised, delta=d)
        curves.append(frame.assign(design=design))
    return pd.DataFrame(rows), pd.concat(curves, ignore_index=True)


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs=SPEC_HASH)
def audit_statistics(
    sites: Sites,
    site: int,
    design: str,
    trials: int,
    seed: int,
) -> tuple[np.ndarray, np.ndarray, float]:
    """The aggregator's joint-view statistic in both worlds and the theory's separation μ
    (:func:`dpcore.attack_statistics`)."""
    made, sens = (sites.design(design), sites.sensitivities)
    return dpcore.attack_statistics(
        made, sensitivity=sens, site=site, view="joint", trials=trials, rng=seed
    )


# --- repeated releases (app_pages/composition.py) ---------------------------------------------


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def release_multipliers(
    sites: Sites, design: str, view: str
) -> tuple[float, ...]:
    """σ_s/Δ_s protecting each site in one view of one release (a site's mean in [0, 1])."""
    made, sens = (sites.design(design), sites.sensitivities)
    z = dpcore.view_noise_multipliers(made, sensitivity=sens, view=view)
    return tuple(float(v) for v in z)


# ε on the Repeated releases page reaches the accountants in one step from the sites
# (docs/architecture.md, "ε on the Repeated releases page"): the wrappers below take the page's
# Sites and choices, never a noise multiplier the page read out of another call.


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def accountant_curve(
    sites: Sites, design: str, view: str, site: int, max_releases: int
) -> pd.DataFrame:
    """Site ``site``'s (0-based) ε over T releases, every accountant record
    (:meth:`dpcore.analysis.site_releases.SiteReleases.epsilon_curve`)."""
    return SiteReleases(sites, design, view).epsilon_curve(site, max_releases=max_releases)


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def release_growth(sites: Sites, design: str, view: str, site: int, releases: int):
    """The exact ε of T releases against √T and T (:func:`dpcore.composition_growth`)."""
    return SiteReleases(sites, design, view).growth(site, releases=releases)


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def release_ledger(
    sites: Sites, design: str, view: str, accountant: str, budget_multiple: float, made: int
) -> tuple[dpcore.PrivacyLedger, pd.DataFrame, np.ndarray, np.ndarray]:
    """The ledger after ``made`` releases of every site's mean, its summary, each site's ε
    after one more release and whether that exceeds its budget
    (:meth:`~dpcore.analysis.site_releases.SiteReleases.ledger`)."""
    seen = SiteReleases(sites, design, view)
    ledger = seen.ledger(budget_multiple=budget_multiple, accountant=accountant, releases=made)
    z = [float(v) for v in seen.noise_multipliers]
    return ledger, ledger.summary(), ledger.spent_after(z), ledger.would_exceed(z)


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def release_profiles(
    sites: Sites,
    site: int,
    colluding: tuple[int, ...],
    releases: int,
    grid: tuple[float, ...],
) -> pd.DataFrame:
    """:func:`dpcore.view_profiles` of one site for both designs (a site's mean in [0, 1])."""
    tau = sites.taus
    return dpcore.view_profiles(
        tau,
        sensitivity=sites.sensitivities,
        weights=sites.weights,
        site=site,
        colluding=colluding,
        epsilons=grid,
        releases=releases,
    )


# --- trust models (app_pages/trust_models.py) -------------------------------------------------


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def trust_models_table(
    sites: Sites, dim: int, bits: int, scale, sa_cal: str
) -> TrustOverview:
    """:func:`dpcore.trust_overview`: the table and the secure-aggregation round."""
    return dpcore.trust_overview(
        sites.n_per_site,
        epsilon=sites.epsilon,
        delta=sites.delta,
        weights=sites.weights,
        dim=dim,
        calibration=sites.calibration,
        bits=bits,
        scale=scale,
        secagg_calibration=sa_cal,
    )


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def trust_models_iterative(
    sites: Sites, dim: int
) -> pd.DataFrame:
    """:func:`dpcore.analysis.trust_iterative.iterative_trust_table` at the page's sites."""
    return iterative_trust_table(
        sites.n_per_site,
        epsilon=sites.epsilon,
        delta=sites.delta,
        weights=sites.weights,
        dim=dim,
        calibration=sites.calibration,
    )


@st.cache_data(show_spinner="Running PCA for every scheme…", max_entries=64, hash_funcs=SPEC_HASH)
@compute_slot
def trust_models_pca(
    sites: Sites,
    dim: int,
    bits: int,
    scale,
    sa_cal: str,
    runs: int,
    seed: int,
) -> pd.DataFrame:
    """:func:`dpcore.analysis.trust_models.trust_pca` (K = 5) on a synthetic pool of Σ N_s
    samples."""
    from dpcore.analysis import trust_models

    return trust_models.trust_pca(
        sites.n_per_site,
        epsilon=sites.epsilon,
        delta=sites.delta,
        weights=sites.weights,
        dim=dim,
        k=min(5, dim),
        calibration=sites.calibration,
        bits=bits,
        scale=scale,
        secagg_calibration=sa_cal,
        runs=runs,
        rng=seed,
    )
