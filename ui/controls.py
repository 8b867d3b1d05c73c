"""Shared controls. Every widget has a stable key, prefixed by its page, and lives in the URL
(docs/state.md; :func:`ui.state.bound`)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

import dpcore
from dpcore import PAPER_EPSILONS as PAPER_EPS
from figures.theme import AXIS_LABELS, description, label
from learning.settings import DEFAULT_SEED
from ui import presenter
from ui.state import bound

EPSILONS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
DELTAS = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.05, 0.1)
SWEEP_GRIDS: dict[str, tuple] = {
    "epsilon": PAPER_EPS,  # the paper's ε grid (Sec. 6)
    "delta": (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1),
    "n_per_site": (100, 200, 500, 1000, 2000, 5000),
    "sites": (2, 3, 5, 10, 20, 50),
}


# Samples in the synthetic PCA pool: S·N_s can be at most this (the core's own default).
SYNTHETIC_POOL: int = dpcore.PcaSpec.build(epsilon=1.0).pool_size


def sweep_values(axis: str, current: float, grids: dict[str, tuple] = SWEEP_GRIDS) -> tuple:
    """The standard grid of an axis with the current slider value added (sorted)."""
    return tuple(sorted(set(grids[axis]) | {current}))


def fmt(x: float) -> str:
    """Readable number: 0.001, 1e-06, 10."""
    return f"{x:g}"


_bound = bound


def epsilon_slider(container: DeltaGenerator, *, prefix: str, default: float = 0.5) -> float:
    """ε on a log-spaced slider 0.001–10."""
    return _bound(
        container.select_slider,
        "Privacy ε",
        f"{prefix}eps",
        options=EPSILONS,
        value=default,
        format_func=fmt,
        help="Smaller ε = stronger privacy = more noise (noise std ∝ 1/ε).",
    )


def delta_slider(container: DeltaGenerator, *, prefix: str, default: float = 0.01) -> float:
    """δ on a log-spaced slider 1e-6–0.1."""
    return _bound(
        container.select_slider,
        "Privacy δ",
        f"{prefix}delta",
        options=DELTAS,
        value=default,
        format_func=fmt,
        help="Smaller δ = stronger privacy = more noise (std ∝ sqrt(2 ln(1.25/δ))).",
    )


# The pages' default calibration is the core's one (dpcore.DEFAULT_CALIBRATION: analytic, a
# proof at every ε), so a page and a call of the core with the same sites give one σ (issue
# #51). The paper's classic one stays on the radio; the pages that reproduce the paper ask for
# it (Paper figures: dpcore.PAPER_CALIBRATION). With the exact σ, the default sites of the
# Privacy explorer and the Attack audit (5 × N = 1000, ε = 0.5, δ = 1e-3) show the paper's
# design breaking the aggregator's joint view (ε 0.678 > 0.5), which classic's slack hid: the
# pages say so (docs/privacy.md).
def calibration_radio(
    container: DeltaGenerator, *, prefix: str, default: str = dpcore.DEFAULT_CALIBRATION.kind
) -> str:
    """Classic (the paper's) or analytic Gaussian calibration (``default`` first shown)."""
    options = list(dpcore.CALIBRATIONS)
    return _bound(
        container.radio,
        "Noise calibration",
        f"{prefix}calib",
        options=options,
        index=options.index(default),
        horizontal=True,
        help="classic: the paper's σ = Δ√(2 ln(1.25/δ))/ε, a proof only for ε < 1. "
        "analytic: the exact Gaussian mechanism (Balle & Wang 2018) — valid "
        "for every ε; less noise than classic up to ε ≈ 7 (δ = 1e-2) … 9 (δ = 1e-8) and "
        "more beyond, where classic is not private (ε = 10, δ = 1e-3: 0.406 vs 0.378).",
    )


def calibration_controls(container: DeltaGenerator, *, prefix: str) -> tuple[str, str]:
    """Calibration method and neighbouring relation."""
    method = calibration_radio(container, prefix=prefix)
    relation = _bound(
        container.radio,
        "Neighbouring datasets",
        f"{prefix}nbr",
        options=list(dpcore.NEIGHBOURING),
        index=dpcore.NEIGHBOURING.index(dpcore.DEFAULT_CALIBRATION.neighbouring),
        horizontal=True,
        help="add-remove (the paper): one person added or removed, Δ = 1/N_s. "
        "replace: one person's data changed, Δ = √2/N_s — 41% more noise.",
    )
    return method, relation


def seed_controls(container: DeltaGenerator, *, prefix: str, default: int = DEFAULT_SEED) -> int:
    """Seed input plus a button that bumps it (a new noise draw)."""

    key = f"{prefix}seed"

    def bump() -> None:
        st.session_state[key] = int(st.session_state.get(key, default)) + 1

    seed = _bound(
        container.number_input,
        "Seed",
        key,
        min_value=0,
        max_value=2**31 - 1,
        value=default,
        step=1,
        help="Every random draw derives from it: the same seed gives the same figure.",
    )
    container.button(
        "New noise draw",
        icon=":material/casino:",
        on_click=bump,
        key=f"{key}_bump",
        help="Re-run every algorithm with fresh random noise (seed + 1).",
    )
    return int(seed)


def sweep_axis_control(container: DeltaGenerator, *, prefix: str, default: str = "epsilon") -> str:
    """Which parameter the plot sweeps; the sliders fix the others."""
    return (
        _bound(
            container.segmented_control,
            "Sweep along",
            f"{prefix}axis",
            options=list(SWEEP_GRIDS),
            default=default,
            format_func=lambda a: AXIS_LABELS[a].split(" ")[-1],
            help="The x-axis of the plot. The other parameters stay at their slider values.",
        )
        or default
    )


def algorithm_picker(container: DeltaGenerator, family: str, *, prefix: str) -> list[str]:
    """Which algorithms to show: every registered one of the sweep ``family`` ("pca", "otd"),
    the featured ones selected by default."""
    options = dpcore.algorithm_names(family)
    return _bound(
        container.multiselect,
        "Algorithms",
        f"{prefix}algs",
        options=list(options),
        default=list(dpcore.featured_algorithms(family)),
        format_func=label,
        help="; ".join(f"{label(a)}: {description(a)}" for a in options),
    )


def run_gate(request: Hashable, heavy: bool, key: str) -> bool:
    """True when results for ``request`` (a page's spec and seed) may be shown now.

    Light requests run at once. Heavy ones wait for an explicit Run press; once run, the
    same request shows again without a press (the result is cached).
    """
    done: set = st.session_state.setdefault(f"{key}_done", set())
    if not heavy or request in done:  # equal specs are equal keys (frozen dataclasses)
        return True
    if st.button(
        "Run",
        icon=":material/play_arrow:",
        key=f"{key}_run",
        type="primary",
        help="These settings take several seconds; results are cached once computed.",
    ):
        done.add(request)
        return True
    st.info(
        "These settings are heavy (several seconds). Press **Run** to compute.",
        icon=":material/hourglass_top:",
    )
    return False


@dataclass(frozen=True)
class SitesPrivacy:
    """The four axes a sweep can run along, at their slider values."""

    sites: int
    n_per_site: int
    epsilon: float
    delta: float


def sites_and_privacy(
    container: DeltaGenerator,
    *,
    sites: Sequence[int],
    sites_default: int,
    n_values: Sequence[int],
    n_default: int,
    prefix: str,
    pool: int | None = None,
) -> SitesPrivacy:
    """S, N_s, ε and δ: the four axes a sweep can run along, at their slider values.

    ``pool``: samples the data set holds. No slider position is an error: when S·N_s would
    exceed the pool, N_s is clamped to pool // S and a note under the sliders says so.
    """
    if presenter.is_on():  # the box beside the chart follows the page's h1: no h3 there
        container.markdown("**Sites and privacy**")  # (axe: headings in order, test_a11y)
    else:
        container.subheader("Sites and privacy")
    s = _bound(
        container.select_slider,
        "Sites S",
        f"{prefix}sites",
        options=list(sites),
        value=sites_default,
        help="More sites: conventional noise variance grows S-fold over CAPE's.",
    )
    n = _bound(
        container.select_slider,
        "Samples per site N_s",
        f"{prefix}ns",
        options=list(n_values),
        value=n_default,
        help="Noise std per site ∝ 1/N_s: more samples, less noise.",
    )
    if pool is not None and s * n > pool:
        s = min(s, pool)
        n = pool // s
        container.caption(
            f":material/info: The data set holds {pool:,} samples, so S·N_s cannot exceed it: "
            f"N_s is **{n:,}** per site here (S = {s})."
        )
    return SitesPrivacy(
        sites=s,
        n_per_site=n,
        epsilon=epsilon_slider(container, prefix=prefix),
        delta=delta_slider(container, prefix=prefix),
    )


def bounded_k(container: DeltaGenerator, *, prefix: str, dim: int, default: int, paper: str) -> int:
    """Components K, at most D: lowering D below K moves K down with a note (never an error)."""
    key = f"{prefix}k"
    if int(st.session_state.get(key, default)) > dim:
        st.session_state[key] = dim
        container.caption(f":material/info: K lowered to D = {dim} (K ≤ D).")
    return int(
        bound(
            container.number_input,
            "Components K",
            key,
            min_value=1,
            max_value=dim,
            value=min(default, dim),
            help=f"Size of the subspace to find (K ≤ D). The paper uses {paper}.",
        )
    )


def runs_slider(container: DeltaGenerator, *, prefix: str, default: int = 5) -> int:
    """Repetitions per grid point."""
    return int(
        _bound(
            container.slider,
            "Runs per point",
            f"{prefix}runs",
            min_value=1,
            max_value=20,
            value=default,
            help="Independent noise draws per grid point; the band shows ±1 std.",
        )
    )
