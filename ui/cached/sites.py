"""The sites-table pages' calls, each on one :class:`dpcore.Sites`: CAPE averaging, the
privacy explorer, repeated releases and trust models."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

import dpcore
from dpcore import FEDERATION_DESIGN_COLUMNS as DESIGN_COLUMNS
from dpcore import (
    CapeDesign,
    CompositionGrowth,
    DropoutAnalysis,
    SiteReleases,
    Sites,
    TrustOverview,
    federation_trust,
    iterative_trust_table,
)
from serving import classroom
from serving.flight import compute_slot
from ui.cached.core import SPEC_HASH


@st.cache_data(show_spinner=False, max_entries=256)
def equal_sites_noise(*, sites: int, n_per_site: int, epsilon: float, delta: float) -> CapeDesign:
    """CAPE design for S equal sites releasing a mean in [0, 1] (paper eq. (2)): τ_s, and
    the conventional and CAPE aggregate noise std; the core's calibration
    (:data:`dpcore.DEFAULT_CALIBRATION`, analytic), as every page's default (issue #51)."""
    return dpcore.mean_release_designs(
        [n_per_site] * sites, epsilon=epsilon, delta=delta, calibration=dpcore.DEFAULT_CALIBRATION
    ).cape


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def averaging_design(
    sites: Sites,
) -> dpcore.MeanReleaseDesigns:
    """:func:`dpcore.mean_release_designs` for per-site settings (a mean in [0, 1])."""
    return dpcore.mean_release_designs(sites)


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs=SPEC_HASH)
@compute_slot
def averaging_monte_carlo(
    sites: Sites,
    *,
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
def gain_curve(*, total: int, sites: int, points: int = 60) -> pd.DataFrame:
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
        if sites.calibration.kind == "classic"
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
def collusion_curve_table(sites: Sites, ng: bool, design: str = "cape") -> pd.DataFrame:
    """The worst coalition of each size (:func:`dpcore.collusion_curve`: exact up to S = 12)."""
    made, sens = (sites.design(design), sites.sensitivities)
    return dpcore.collusion_curve(
        made, sensitivity=sens, delta=sites.delta, epsilon=sites.epsilon, noise_generator=ng
    )


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def dropout_report(sites: Sites, dropped: tuple[int, ...]) -> DropoutAnalysis:
    """Dropout noise per remedy (:func:`dpcore.dropout_analysis`) on the sites' mean design."""
    design = sites.design()
    return dpcore.dropout_analysis(design, dropped)


# What the aggregator may hold after a dropout (dpcore.remedy_worst_case's views), in words
REMEDY_HOLDS = {
    "sealed": "the remaining releases and one c (the sealed remedy: a late release stays sealed)",
    "late": "… and the dropped site's late release, readable (the open remedy)",
    "late, repeated": "… and as many answers c as it asks for (fresh H's, averaged away)",
}


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def remedy_worst_table(sites: Sites, dropped: tuple[int, ...]) -> pd.DataFrame:
    """Per view of :data:`REMEDY_HOLDS` and design, the most exposed site's ε against its
    promise (:func:`dpcore.remedy_worst_case` on the sites' mean design)."""
    rows = {view: {"the aggregator holds": words} for view, words in REMEDY_HOLDS.items()}
    for kind, label in (("cape", "paper's design"), ("joint", "joint-view-safe design")):
        case = dpcore.remedy_worst_case(
            sites.design(kind),
            dropped,
            sensitivity=sites.sensitivities,
            epsilon=sites.epsilon,
            delta=sites.delta,
        )
        for row in case.table().to_dict("records"):
            mark = "✓" if row["meets"] else "✗"
            rows[str(row["view"])][label] = (
                f"{mark} ε {row['epsilon']:.3g} (site {row['worst site']}, "
                f"promised {row['promised']:.3g})"
            )
    return pd.DataFrame(list(rows.values()))


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
@compute_slot
def dropout_pca_frame(sites: Sites, dropped: tuple[int, ...], seed: int) -> pd.DataFrame:
    """capePCA's captured energy with and without the dropout (:func:`dpcore.dropout_pca`)."""
    return dpcore.dropout_pca(
        sites,
        dropped=dropped,
        rng=seed,
        budget=classroom.BUDGET,
    )


# The Privacy explorer's ε grid for its classic-vs-analytic chart: 61 log-spaced points
CALIBRATION_GRID = tuple(float(x) for x in np.geomspace(0.01, 10, 61))


@st.cache_data(show_spinner=False, max_entries=64)
def calibration_curve(delta: float, grid: tuple[float, ...]) -> pd.DataFrame:
    """Classic vs analytic σ over ε, Δ = 1 (:func:`dpcore.calibration_comparison`)."""
    return dpcore.calibration_comparison(grid, delta=delta)


@st.cache_data(show_spinner=False, max_entries=64)
def agn_budget(*, epsilon: float, delta: float) -> dict[str, float]:
    """capeAGN's split of (ε, δ) between M2 and M3 (:func:`dpcore.agn_budget`)."""
    return dpcore.agn_budget(epsilon=epsilon, delta=delta)


# --- repeated releases (app_pages/composition.py) ---------------------------------------------


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def release_multipliers(sites: Sites, *, design: str, view: str) -> tuple[float, ...]:
    """σ_s/Δ_s protecting each site in one view of one release (a site's mean in [0, 1])."""
    made, sens = (sites.design(design), sites.sensitivities)
    z = dpcore.view_noise_multipliers(made, sensitivity=sens, view=view)
    return tuple(float(v) for v in z)


# ε on the Repeated releases page reaches the accountants in one step from the sites
# (docs/architecture.md, "ε on the Repeated releases page"): the wrappers below take the page's
# Sites and choices, never a noise multiplier the page read out of another call.


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def accountant_curve(
    sites: Sites, *, design: str, view: str, site: int, max_releases: int
) -> pd.DataFrame:
    """Site ``site``'s (0-based) ε over T releases, every accountant record
    (:meth:`dpcore.analysis.site_releases.SiteReleases.epsilon_curve`)."""
    return SiteReleases(sites, design, view).epsilon_curve(site, max_releases=max_releases)


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def release_growth(
    sites: Sites, *, design: str, view: str, site: int, releases: int
) -> CompositionGrowth:
    """The exact ε of T releases against √T and T (:func:`dpcore.composition_growth`)."""
    return SiteReleases(sites, design, view).growth(site, releases=releases)


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def release_ledger(
    sites: Sites,
    *,
    design: str,
    view: str,
    accountant: str,
    budget_multiple: float,
    made: int,
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
    *,
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
    sites: Sites, *, dim: int, bits: int, scale: float | None, sa_cal: str
) -> TrustOverview:
    """:func:`dpcore.trust_overview`: the table and the secure-aggregation round."""
    return dpcore.trust_overview(
        sites,
        dim=dim,
        bits=bits,
        scale=scale,
        secagg_calibration=sa_cal,
    )


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def trust_models_federation(sites: Sites) -> pd.DataFrame:
    """CAPE across real sites, worded: per case the worst site's ε against its promise for
    both designs (:func:`dpcore.analysis.trust_federation.federation_trust`)."""
    frame = federation_trust(sites)
    rows = []
    for r in frame.to_dict("records"):
        row = {
            "case": r["case"],
            "who must be trusted": r["trusted"],
            "the aggregator holds": r["holds"],
        }
        for kind, label in DESIGN_COLUMNS.items():
            if r[f"{kind} site"] == 0:
                row[label] = "✓ nothing released"
                continue
            mark = "✓" if r[f"{kind} meets"] else "✗"
            row[label] = (
                f"{mark} ε {r[f'{kind} epsilon']:.3g} (site {r[f'{kind} site']}, "
                f"promised {r[f'{kind} promised']:.3g})"
            )
        rows.append(row)
    return pd.DataFrame(rows)


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def trust_models_iterative(sites: Sites, dim: int) -> pd.DataFrame:
    """:func:`dpcore.analysis.trust_iterative.iterative_trust_table` at the page's sites."""
    return iterative_trust_table(sites, dim=dim)


@st.cache_data(show_spinner="Running PCA for every scheme…", max_entries=64, hash_funcs=SPEC_HASH)
@compute_slot
def trust_models_pca(
    sites: Sites,
    *,
    dim: int,
    bits: int,
    scale: float | None,
    sa_cal: str,
    runs: int,
    seed: int,
) -> pd.DataFrame:
    """:func:`dpcore.analysis.trust_models.trust_pca` (K = 5) on a synthetic pool of Σ N_s
    samples."""
    return dpcore.trust_pca(
        sites,
        dim=dim,
        k=min(5, dim),
        bits=bits,
        scale=scale,
        secagg_calibration=sa_cal,
        runs=runs,
        rng=seed,
    )


# CAPE in every round of the power method, all T rounds together (dpcore.analysis.round_views):
# the round value A_s X moves by Δ_s = 1/N_s under add-remove neighbours, as the site's mean.
@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def rounds_party_table(sites: Sites, design: str, rounds: int) -> pd.DataFrame:
    """:func:`party_table` over all T rounds (:func:`round_views.rounds_party_views`)."""
    return dpcore.rounds_party_views(
        sites.taus,
        rounds=rounds,
        sensitivity=sites.sensitivities,
        epsilon=sites.epsilon,
        delta=sites.delta,
        weights=sites.weights,
        design=design,
    )


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def rounds_coalition_table(
    sites: Sites, colluding: tuple[int, ...], ng: bool, design: str, rounds: int
) -> pd.DataFrame:
    """:func:`coalition_table` over all T rounds (:func:`round_views.rounds_coalition_report`)."""
    classic = sites.calibration.kind == "classic"
    exact = sites.replace(calibration="analytic").taus if classic else None
    return dpcore.rounds_coalition_report(
        sites.taus,
        colluding,
        rounds=rounds,
        sensitivity=sites.sensitivities,
        epsilon=sites.epsilon,
        delta=sites.delta,
        weights=sites.weights,
        design=design,
        noise_generator=ng,
        exact_tau_site=exact,
    )


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
@compute_slot
def rounds_collusion_table(sites: Sites, ng: bool, design: str, rounds: int) -> pd.DataFrame:
    """:func:`collusion_curve_table` over all T rounds (round_views.rounds_collusion_curve)."""
    return dpcore.rounds_collusion_curve(
        sites.taus,
        rounds=rounds,
        sensitivity=sites.sensitivities,
        epsilon=sites.epsilon,
        delta=sites.delta,
        weights=sites.weights,
        design=design,
        noise_generator=ng,
    )
