"""The PCA and tensor pages' controls → the core's specs: one helper per page kind.

A page gathers its widgets into a frozen controls record (:class:`~learning.settings.PcaControls`,
:class:`~learning.settings.OtdControls`) and turns it into a :class:`dpcore.PcaSpec` /
:class:`dpcore.OtdSpec` here; lesson 5 runs its own records through the same helpers, so a
lesson and the page it links to build equal specs and share one cache entry. Everything after
this point (the cached wrappers, the run gate, the heavy job, the exports, the snippet) takes
the spec. The helpers only pick the grid along the swept axis (the page's standard grid with
the slider's value added) and the page's site layout; every domain rule is the core's.
"""

from __future__ import annotations

from dpcore import OtdSpec, PcaSpec, PowerOptions, RoundsSpec, fit_to_pool, iterative_algorithms
from learning.settings import OtdControls, PcaControls
from ui.controls import SWEEP_GRIDS, SYNTHETIC_POOL, sweep_values

# The tensor page's grids (its sliders' values; the ε grid is lesson 5's too).
OTD_GRIDS: dict[str, tuple] = {
    "epsilon": (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0),
    "delta": (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1),
    "n_per_site": (2000, 5000, 10000, 20000, 50000),
    "sites": (2, 3, 5, 10, 20),
}

# The tensor page's power-method variants: Anandkumar et al. (2014)'s robust method with
# restarts, and the authors' code (one start, up to 1000 iterations).
POWER_METHODS = {
    "robust": PowerOptions(restarts=10, max_iter=100, tol=1e-8),
    "authors": PowerOptions(restarts=1, max_iter=1000, tol=1e-6),
}


def marker(controls: PcaControls | OtdControls) -> float:
    """The slider's value on the swept axis (where the chart's marker sits)."""
    return getattr(controls, controls.axis)


def pca_spec(c: PcaControls) -> PcaSpec:
    """The PCA page's sweep for these controls.

    The swept axis runs over the page's grid with the slider's value added; along N_s or S,
    only the values whose S·N_s the pool holds. ``unequal``: one site holds half the
    samples (shares S−1 : 1 : … : 1), unless S is swept (the shares fix S).
    """
    pool = SYNTHETIC_POOL if c.pool is None else c.pool
    grid = sweep_values(c.axis, marker(c), SWEEP_GRIDS)
    if c.axis == "n_per_site":
        grid = fit_to_pool(grid, c.sites, pool)
    elif c.axis == "sites":
        grid = fit_to_pool(grid, c.n_per_site, pool)
    shares = (c.sites - 1,) + (1,) * (c.sites - 1) if c.unequal and c.axis != "sites" else None
    return PcaSpec.build(
        dim=c.dim,
        k=c.k,
        sites=grid if c.axis == "sites" else c.sites,
        n_per_site=grid if c.axis == "n_per_site" else c.n_per_site,
        epsilon=grid if c.axis == "epsilon" else c.epsilon,
        delta=grid if c.axis == "delta" else c.delta,
        runs=c.runs,
        algorithms=c.algorithms,
        calibration=c.calibration,
        neighbouring=c.neighbouring,
        site_shares=shares,
        pool_size=pool,
    )


def rounds_spec(c: PcaControls) -> RoundsSpec:
    """The PCA page's rounds axis (its Baselines section) at the sliders' values.

    Every registered iterative algorithm
    (:func:`dpcore.experiments.sweeps.rounds.iterative_algorithms`)
    at each T of :data:`~dpcore.experiments.sweeps.rounds.DEFAULT_ROUND_VALUES`, beside the one-shot
    algorithms chosen in the picker, all at the one total (ε, δ) of the sliders.
    """
    one_shot = tuple(a for a in c.algorithms if a not in iterative_algorithms())
    return RoundsSpec.build(
        dim=c.dim,
        k=c.k,
        sites=c.sites,
        n_per_site=c.n_per_site,
        epsilon=c.epsilon,
        delta=c.delta,
        runs=c.runs,
        algorithms=one_shot + iterative_algorithms(),
        calibration=c.calibration,
        neighbouring=c.neighbouring,
        site_shares=(c.sites - 1,) + (1,) * (c.sites - 1) if c.unequal else None,
        pool_size=SYNTHETIC_POOL if c.pool is None else c.pool,
    )


def _otd(c: OtdControls, *, grid: tuple | None, runs: int) -> OtdSpec:
    power = POWER_METHODS[c.power]
    return OtdSpec.build(
        model=c.model,
        dim=c.dim,
        k=c.k,
        sites=grid if grid and c.axis == "sites" else c.sites,
        n_per_site=grid if grid and c.axis == "n_per_site" else c.n_per_site,
        epsilon=grid if grid and c.axis == "epsilon" else c.epsilon,
        delta=grid if grid and c.axis == "delta" else c.delta,
        runs=runs,
        algorithms=c.algorithms,
        calibration=c.calibration,
        sensitivity=c.sensitivity,
        scaling=c.scaling,
        restarts=power.restarts,
        max_iter=power.max_iter,
        tol=power.tol,
    )


def otd_spec(c: OtdControls) -> OtdSpec:
    """The tensor page's sweep for these controls (the page's grid with the slider's value)."""
    return _otd(c, grid=sweep_values(c.axis, marker(c), OTD_GRIDS), runs=c.runs)


def otd_example_spec(c: OtdControls) -> OtdSpec:
    """One run at the sliders' values: the tensor page's recovered-weights table."""
    return _otd(c, grid=None, runs=1)
