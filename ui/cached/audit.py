"""The attack audit page: the distinguishing game's tables, its trade-off reading and the
attacker's statistic."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

import dpcore
from dpcore import (
    EPS_TOL,
    AuditResult,
    Sites,
    cape_round_design,
)
from serving.flight import compute_slot
from ui.cached.core import SPEC_HASH
from ui.cached.sites import DESIGNS

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
    *,
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
    *,
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
    *,
    site: int,
    colluding: tuple[int, ...],
    trials: int,
    seed: int,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The audit in an attacker's words (:mod:`dpcore.analysis.tradeoff`), for :func:`audit_table`'s
    designs and views: one row per view (μ = Δ_s/σ, its ε at δ_s, the dip under the promise,
    the largest posterior at each prior, the attack's (FPR, FNR) and its Clopper–Pearson box),
    and the curves (each view's and the promise's)."""
    audit = audit_table(sites, site=site, colluding=colluding, trials=trials, seed=seed)
    promised, d = sites.epsilon[site], sites.delta[site]
    rows, curves = [], []
    for design, part in audit.groupby("design", sort=False):
        mus = {}
        for r in part.to_dict("records"):  # plain Python values
            mu = 1.0 / r["noise_multiplier"]
            mus[r["view"]] = mu
            seen = dpcore.read_view(mu, epsilon=promised, delta=d)
            box = dpcore.attack_box(
                r["false_positives"],
                r["negatives"],
                r["false_negatives"],
                r["positives"],
                confidence=r["confidence"],
            )
            # the promise's β at the point's and the box's α's: how far under it they lie
            at = dpcore.dp_tradeoff([box.fpr, box.fpr_low, box.fpr_high], epsilon=promised, delta=d)
            rows.append(
                {
                    "design": design,
                    "view": r["view"],
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
                        f"promise_posterior_{p:g}": dpcore.posterior_bound(
                            epsilon=promised, prior=p
                        )
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
                    "attack_breaks": bool(r["attack_breaks"]),
                    "trials": r["trials"],
                }
            )
        frame = dpcore.tradeoff_curves(mus, epsilon=promised, delta=d)
        curves.append(frame.assign(design=design))
    return pd.DataFrame(rows), pd.concat(curves, ignore_index=True)


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs=SPEC_HASH)
def audit_statistics(
    sites: Sites,
    *,
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
