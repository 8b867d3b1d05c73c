"""Lesson 6's scenes: the three pages beyond the paper (Trust models, Repeated releases, the
Attack audit), each computed by the page's own cached call for the settings its link opens.

As in :mod:`ui.lesson_scenes`, a question's correct option (``answer``) is derived from the
numbers, never written in the lesson.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

import dpcore
from figures.audit import audit_figure
from figures.composition import accountants_figure
from figures.theme import style
from learning.settings import (
    AUDIT_DELTA,
    AUDIT_SITES,
    BEYOND_SITES,
    BITS_GRID,
    DEFAULT_SEED,
    JOINT_VIEW,
    LESSON_DELTA,
    TRUST_DIM,
    TRUST_RUNS,
)
from ui.cached import (
    accountant_curve,
    audit_table,
    release_growth,
    release_multipliers,
    trust_models_pca,
)
from ui.scene_parts import Scene, chart_layout, nearest, sites_text, you_are_here

CALIBRATION = "analytic"


def beyond_args(sites: int = BEYOND_SITES, delta: float = LESSON_DELTA) -> dpcore.Sites:
    """The sites of the pages' cached calls: S equal sites of N_s = 1000 at ε = 0.5."""
    return dpcore.Sites((1000,) * sites, 0.5, delta, calibration=CALIBRATION)


# --- Trust models: secure aggregation's bit width --------------------------------------------


def _secagg(bits: int) -> dict[str, float]:
    """Secure aggregation's round at ``bits`` as the Trust models page runs it (automatic γ,
    matched calibration): mean error ÷ central noise, wrap-arounds and PCA energy."""
    pca = trust_models_pca(
        beyond_args(),
        dim=TRUST_DIM,
        bits=int(bits),
        scale=None,
        sa_cal=CALIBRATION,
        runs=TRUST_RUNS,
        seed=DEFAULT_SEED,
    )
    sa = pca[pca.scheme == "secagg"]
    return {
        "ratio": float(sa.error_ratio.mean()),
        "wraps": float(sa.wraparounds.mean()),
        "coordinates": int(sa.coordinates.iloc[0]),
        "energy": float(sa.captured_energy_ratio.mean()),
        "central": float(pca[pca.scheme == "central"].captured_energy_ratio.mean()),
    }


BITS_OPTIONS = {"about the same (1×)": 1.0, "about 10× larger": 10.0, "about 1000× larger": 1e3}


def bits_scene(bits: int) -> Scene:
    """Secure aggregation's measured error over central's noise against the bit width b."""
    rows = {b: _secagg(b) for b in BITS_GRID}
    fig = go.Figure(
        go.Scatter(
            x=list(rows),
            y=[r["ratio"] for r in rows.values()],
            mode="lines+markers",
            name="secure aggregation: error ÷ central noise",
            line={"color": style("cape").color, "width": 3},
        )
    )
    fig.add_hline(y=1.0, line={"color": "#000000", "dash": "dash"})
    fig.update_yaxes(type="log")
    you_are_here(fig, bits, f"b = {bits}", top=True)
    at = rows[bits]
    return Scene(
        chart_layout(fig, "bit width b of the integers added modulo 2^b", "error ÷ central noise"),
        {
            "bits": bits,
            **at,
            "table": sites_text([1000] * BEYOND_SITES, 0.5),
            "answer": nearest(at["ratio"], BITS_OPTIONS),
        },
    )


# --- Repeated releases: T releases of the same mean -------------------------------------------

GROWTH_WORDS = ("about 1× (the same)", "about √T×", "about T×")


def releases_scene(releases: int) -> Scene:
    """Total ε of site 1 over T releases (every accountant), and how the exact one grew."""
    sites = beyond_args()  # every site at δ = LESSON_DELTA
    z = release_multipliers(sites, design="cape", view=JOINT_VIEW)[0]  # for the words
    curve = accountant_curve(
        sites, design="cape", view=JOINT_VIEW, site=0, max_releases=int(releases)
    )
    growth = release_growth(sites, design="cape", view=JOINT_VIEW, site=0, releases=int(releases))
    ratio = growth.ratio if growth.ratio is not None else 1.0
    fig = accountants_figure(curve)
    fig.update_layout(height=380)
    one = float(curve[(curve.accountant == "exact") & (curve.releases == 1)].epsilon.iloc[0])
    basic = float(
        curve[(curve.accountant == "basic") & (curve.releases == releases)].epsilon.iloc[0]
    )
    words = dict(zip(GROWTH_WORDS, (1.0, math.sqrt(releases), float(releases)), strict=True))
    return Scene(
        fig,
        {
            "releases": releases,
            "z": z,
            "one": one,
            "total": growth.epsilon_total,
            "ratio": ratio,
            "root": math.sqrt(releases),
            "basic": basic,
            "crossover": growth.crossover,
            "table": sites_text([1000] * BEYOND_SITES, 0.5),
            "answer": nearest(ratio, words),
        },
    )


# --- Attack audit: does the attack prove the joint-view gap? ----------------------------------

PROVEN, NOT_YET = "yes: a proven break", "not yet: the bound stays below ε_s"


def audit_scene(trials: int) -> Scene:
    """The Attack audit's joint-view-gap preset at ``trials`` games per audit (site 1)."""
    audit = audit_table(
        beyond_args(AUDIT_SITES, AUDIT_DELTA),
        site=0,
        colluding=(),
        trials=int(trials),
        seed=DEFAULT_SEED,
    )
    fig = audit_figure(audit)
    fig.update_layout(height=380)
    row = audit[(audit.design == "cape") & (audit.view == "joint")].iloc[0]
    needed = row.trials_needed
    return Scene(
        fig,
        {
            "trials": trials,
            "epsilon": float(row.epsilon),
            "lower": float(row.epsilon_lower),
            "promised": float(row.promised_epsilon),
            "needed": f"{int(needed):,}" if needed is not None and np.isfinite(needed) else "—",
            "fpr": float(row.fpr),
            "fnr": float(row.fnr),
            "table": sites_text([1000] * AUDIT_SITES, 0.5, delta=AUDIT_DELTA),
            "answer": PROVEN if bool(row.attack_breaks) else NOT_YET,
        },
    )


BEYOND_SCENES = (bits_scene, releases_scene, audit_scene)
