"""Sweep specifications: frozen, validated once, hashable (so they are also cache keys).

A sweep is *what is swept* (:class:`SweepGrid`), *the sites* (:class:`SiteLayout`), *the
privacy* (:class:`PcaPrivacy`, :class:`OtdPrivacy`), *the runs* (:class:`Runs`) and the
problem (:class:`PcaSpec`, :class:`OtdSpec`). Every field is checked when the object is
made, so the drivers never re-check and nothing is estimated or computed from an unchecked
value. Randomness is not part of a spec: the drivers take ``rng`` separately (SPEC 7).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcore import registry
from dpcore._validation import (
    MAX_MAGNITUDE,
    check_choice,
    check_delta,
    check_epsilon,
    check_int,
    check_real,
    check_rng,
)
from dpcore.calibration import CALIBRATIONS, NEIGHBOURING
from dpcore.datasets import Dataset, split_sizes
from dpcore.limits import MAX_DIM_TENSOR
from dpcore.models import MODELS
from dpcore.moments import SCALINGS, SENSITIVITIES, SIGMA2_SOURCES
from dpcore.otd import PowerOptions
from dpcore.secagg import DEFAULT_BITS
from dpcore.sweeps.scores import OTD_METRICS, PCA_METRICS

SWEEP_AXES = ("epsilon", "delta", "n_per_site", "sites")
# Settings of the secure-aggregation baseline (dpcore.secagg) that a sweep may also run along;
# a frame has their column only when one of them is the swept axis.
SECAGG_AXES = ("secagg_bits", "secagg_scale")
GRID_AXES = SWEEP_AXES + SECAGG_AXES
WEIGHTINGS = ("proportional", "equal")


def _check_scale(value: Any) -> float | None:
    if value is None:
        return None  # automatic: rounding costs at most 1% of the sensitivity
    return check_real(value, "secagg_scale", low=0.0, high=MAX_MAGNITUDE, low_open=True)


_CHECKS: dict[str, Callable[[Any], Any]] = {
    "epsilon": check_epsilon,
    "delta": check_delta,
    "n_per_site": lambda v: check_int(v, "n_per_site", low=1),
    "sites": lambda v: check_int(v, "sites", low=2),
    "secagg_bits": lambda v: check_int(v, "secagg_bits", low=2, high=64),
    "secagg_scale": _check_scale,
}

Value = float | int
Setting = Value | None  # a grid point's value: the secure-aggregation scale may be None


def _is_grid(value: object) -> bool:
    return isinstance(value, (list, tuple, np.ndarray))


def _scalar(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


@dataclass(frozen=True)
class SweepGrid:
    """What is swept: one axis among ε, δ, N_s, S and the secure-aggregation settings.

    Attributes
    ----------
    axis : str
        The swept axis (one of :data:`GRID_AXES`).
    values : tuple
        Validated values along it, in the order given.
    epsilon, delta, n_per_site, sites : float or int
        The fixed value of each axis (for the swept one: its first value).
    secagg_bits, secagg_scale : int and float or None
        Bit width b and scale γ of the ``secagg`` baseline (:func:`dpcore.secagg_design`;
        ``None``: the automatic γ); they change no other algorithm.
    """

    axis: str
    values: tuple[Setting, ...]
    epsilon: float
    delta: float
    n_per_site: int
    sites: int
    secagg_bits: int = DEFAULT_BITS
    secagg_scale: float | None = None

    @classmethod
    def of(
        cls,
        *,
        epsilon: Any,
        delta: Any,
        n_per_site: Any,
        sites: Any,
        secagg_bits: Any = DEFAULT_BITS,
        secagg_scale: Any = None,
    ) -> SweepGrid:
        """Find the one swept axis (the one given as a list/tuple/array) and validate all.

        With no list, the grid is the one point ε.

        Examples
        --------
        >>> g = SweepGrid.of(epsilon=[0.1, 1.0], delta=0.01, n_per_site=100, sites=3)
        >>> g.axis, g.values, g.point(1.0)["sites"]
        ('epsilon', (0.1, 1.0), 3)
        """
        axes = {
            "epsilon": epsilon,
            "delta": delta,
            "n_per_site": n_per_site,
            "sites": sites,
            "secagg_bits": secagg_bits,
            "secagg_scale": secagg_scale,
        }
        swept = [name for name in GRID_AXES if _is_grid(axes[name])]
        if len(swept) > 1:
            raise ValueError(
                f"at most one of {list(GRID_AXES)} may be a list; got lists for {swept}"
            )
        axis = swept[0] if swept else "epsilon"
        fixed = {n: _CHECKS[n](axes[n]) for n in GRID_AXES if n != axis}
        raw = axes[axis] if swept else [axes[axis]]
        if len(raw) == 0:
            raise ValueError(f"{axis} must have at least one value to sweep; got an empty list")
        check = _CHECKS[axis]
        if axis == "secagg_scale":  # a swept scale is a list of numbers, never "automatic"

            def check(v: Any) -> Any:
                return check_real(v, "secagg_scale", low=0.0, high=MAX_MAGNITUDE, low_open=True)

        values = tuple(check(_scalar(v)) for v in raw)
        return cls(axis=axis, values=values, **{**fixed, axis: values[0]})

    def point(self, value: Setting) -> dict[str, Any]:
        """Every axis at one grid value."""
        fixed = {n: getattr(self, n) for n in GRID_AXES}
        return {**fixed, self.axis: value}

    def largest(self, name: str) -> Any:
        """The largest value the sweep uses for one (numeric) axis."""
        return max(self.values) if name == self.axis else getattr(self, name)  # type: ignore[type-var]

    @property
    def resamples(self) -> bool:
        """Whether the data are drawn afresh per run (N_s and S sweeps) or once (ε, δ, b, γ)."""
        return self.axis in ("n_per_site", "sites")

    @property
    def columns(self) -> tuple[str, ...]:
        """The frame's axis columns: ε, δ, N_s, S and a swept secure-aggregation setting."""
        return SWEEP_AXES + ((self.axis,) if self.axis in SECAGG_AXES else ())


@dataclass(frozen=True)
class SiteLayout:
    """How the S·N_s samples are split over the sites and weighted by the aggregator.

    Attributes
    ----------
    shares : tuple of float, optional
        Relative site sizes (S fixed); ``None`` for equal sites.
    weighting : {"proportional", "equal"}
        μ_s = N_s/N (the pooled estimate) or 1/S.
    """

    shares: Sequence[float] | None
    weighting: str

    def __post_init__(self) -> None:
        check_choice(self.weighting, "weighting", WEIGHTINGS)
        if self.shares is not None:
            if isinstance(self.shares, (str, bytes)) or not _is_grid(self.shares):
                raise TypeError(f"site_shares must be a sequence of numbers; got {self.shares!r}")
            shares = tuple(
                check_real(s, "site_shares", low=0.0, low_open=True) for s in self.shares
            )
            object.__setattr__(self, "shares", shares)

    def layout(self, point: dict[str, Any]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Site sizes N_s and aggregator weights μ_s at one grid point."""
        sizes = split_sizes(int(point["n_per_site"]), int(point["sites"]), self.shares)
        if self.weighting == "proportional":
            return sizes, sizes / sizes.sum()
        return sizes, np.full(sizes.size, 1.0 / sizes.size)

    def check_against(self, grid: SweepGrid) -> None:
        """Shares fix S: they must match it, and S cannot be swept."""
        if self.shares is None:
            return
        if grid.axis == "sites":
            raise ValueError("site_shares fixes S, so sites cannot be the swept axis")
        split_sizes(grid.n_per_site, grid.sites, self.shares)  # validates the shares


@dataclass(frozen=True)
class Runs:
    """Repetitions per grid point.

    Where they run (threads, an executor) is not part of the spec: the frame is the same
    for any choice, so it does not belong in a cache key.

    Attributes
    ----------
    count : int
        Runs per grid point, ≥ 1.
    """

    count: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "count", check_int(self.count, "runs", low=1))

    def streams(
        self, grid: SweepGrid, noise_rng: np.random.Generator, draw_rng: np.random.Generator
    ) -> Iterator[RunStreams]:
        """The streams of every grid value and run, grid value by grid value.

        Streams are spawned per grid value and then per run, so a point's numbers do not
        depend on how many other points the grid has after it.
        """
        for point_rng, point_draw_rng, value in zip(
            noise_rng.spawn(len(grid.values)),
            draw_rng.spawn(len(grid.values)),
            grid.values,
            strict=True,
        ):
            runs = zip(point_rng.spawn(self.count), point_draw_rng.spawn(self.count), strict=True)
            for run, (run_rng, run_draw_rng) in enumerate(runs):
                yield RunStreams(grid.point(value), run, run_rng, run_draw_rng)


@dataclass(frozen=True, eq=False)
class RunStreams:
    """One (grid point, run) and its random streams.

    Attributes
    ----------
    point : dict
        ε, δ, N_s and S at this grid value.
    run : int
        0-based run index.
    noise : numpy.random.Generator
        Spawned into one stream per algorithm (:func:`dpcore.registry.streams`).
    draw : numpy.random.Generator
        The data draw of this run (N_s and S sweeps).
    """

    point: dict[str, Any]
    run: int
    noise: np.random.Generator
    draw: np.random.Generator


def _algorithms(algorithms: Sequence[str] | None, family: str) -> tuple[str, ...]:
    if algorithms is None:
        return registry.defaults(family)
    if isinstance(algorithms, str):
        raise TypeError(f"algorithms must be a sequence of names; got the string {algorithms!r}")
    names = tuple(registry.get(a, family, param="algorithms").name for a in algorithms)
    if not names:
        raise ValueError(
            f"algorithms must name at least one of {list(registry.names(family))}; got []"
        )
    return names


def _metrics(metrics: Sequence[str] | None, known: Sequence[str]) -> tuple[str, ...]:
    if metrics is None:
        return tuple(known)
    if isinstance(metrics, str):
        raise TypeError(f"metrics must be a sequence of names; got the string {metrics!r}")
    names = tuple(check_choice(m, "metrics", tuple(known)) for m in metrics)
    if not names:
        raise ValueError(f"metrics must name at least one of {list(known)}; got []")
    return names


@dataclass(frozen=True)
class PcaPrivacy:
    """Noise calibration of the PCA sweep: Gaussian method and neighbouring relation."""

    calibration: str
    neighbouring: str

    def __post_init__(self) -> None:
        check_choice(self.calibration, "calibration", CALIBRATIONS)
        check_choice(self.neighbouring, "neighbouring", NEIGHBOURING)


@dataclass(frozen=True)
class OtdPrivacy:
    """Noise calibration of the tensor sweep.

    Attributes
    ----------
    calibration : {"classic", "analytic"}
    sensitivity : {"paper", "add-remove", "replace"}
        Sensitivities of M2, M3 (:func:`dpcore.moments.moment_sensitivities`).
    budget_split : float
        Fraction in (0, 1) of ε and δ given to M2 (paper: 1/2).
    """

    calibration: str
    sensitivity: str
    budget_split: float

    def __post_init__(self) -> None:
        check_choice(self.calibration, "calibration", CALIBRATIONS)
        check_choice(self.sensitivity, "sensitivity", SENSITIVITIES)
        split = check_real(
            self.budget_split, "budget_split", low=0.0, high=1.0, low_open=True, high_open=True
        )
        object.__setattr__(self, "budget_split", split)


@dataclass(frozen=True)
class PcaSpec:
    """A validated distributed-PCA sweep (:func:`dpcore.pca_sweep`'s parameters, grouped).

    ``data`` is ``"synthetic"`` (generated from ``dim``, ``k`` and ``pool_size``) or a
    :class:`~dpcore.Dataset` (hashed by identity). ``rank`` is resolved (min(2K, D) by
    default); ``algorithms`` and ``metrics`` are resolved to tuples of names.
    """

    grid: SweepGrid
    sites: SiteLayout
    privacy: PcaPrivacy
    runs: Runs
    data: str | Dataset
    dim: int
    k: int
    rank: int | None
    pool_size: int
    faithful: bool
    algorithms: Sequence[str] | None = None
    metrics: Sequence[str] | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        self.sites.check_against(self.grid)
        if isinstance(self.data, Dataset):
            set_(self, "dim", self.data.dim)
            set_(self, "pool_size", self.data.n_samples)
        else:
            check_choice(self.data, "data", ("synthetic",))
            set_(self, "dim", check_int(self.dim, "dim", low=1))
            set_(self, "pool_size", check_int(self.pool_size, "pool_size", low=2))
        set_(self, "k", check_int(self.k, "k", low=1, high=self.dim))
        rank = (
            min(2 * self.k, self.dim)
            if self.rank is None
            else check_int(self.rank, "rank", low=self.k, high=self.dim)
        )
        set_(self, "rank", rank)
        set_(self, "faithful", bool(self.faithful))
        set_(self, "algorithms", _algorithms(self.algorithms, "pca"))
        set_(self, "metrics", _metrics(self.metrics, tuple(PCA_METRICS)))


@dataclass(frozen=True)
class OtdSpec:
    """A validated tensor-decomposition sweep (:func:`dpcore.otd_sweep`'s parameters, grouped).

    Attributes beyond the groups: the planted ``model`` ("mog" or "stm") with ``dim`` ≤
    :data:`~dpcore.limits.MAX_DIM_TENSOR` and ``k`` ≤ ``dim``; MOG preprocessing
    (``sigma2``, ``scaling``, ``sigma2_source``); the tensor power method (``power``);
    ``faithful``; resolved ``algorithms`` and ``metrics``.
    """

    grid: SweepGrid
    sites: SiteLayout
    privacy: OtdPrivacy
    runs: Runs
    model: str
    dim: int
    k: int
    sigma2: float
    scaling: str
    sigma2_source: str
    power: PowerOptions
    faithful: bool
    algorithms: Sequence[str] | None = None
    metrics: Sequence[str] | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        self.sites.check_against(self.grid)
        check_int(self.power.restarts, "restarts", low=1)
        check_int(self.power.max_iter, "max_iter", low=1)
        check_real(self.power.tol, "tol", low=0.0, low_open=True)
        check_choice(self.model, "model", MODELS)
        set_(self, "dim", check_int(self.dim, "dim", low=1, high=MAX_DIM_TENSOR))
        set_(self, "k", check_int(self.k, "k", low=1, high=self.dim))
        set_(self, "sigma2", check_real(self.sigma2, "sigma2", low=0.0))
        check_choice(self.scaling, "scaling", SCALINGS)
        check_choice(self.sigma2_source, "sigma2_source", SIGMA2_SOURCES)
        set_(self, "faithful", bool(self.faithful))
        set_(self, "algorithms", _algorithms(self.algorithms, "otd"))
        set_(self, "metrics", _metrics(self.metrics, tuple(OTD_METRICS)))


def resolve_rng(rng: object, seed: object) -> np.random.Generator:
    """SPEC 7: ``rng`` is None, an int seed or a Generator; ``seed`` is its older name.

    Raises
    ------
    ValueError
        If both are given (``rng`` other than its default 0).
    TypeError
        If the one given is neither an integer nor a Generator (nor None for ``rng``).
    """
    if seed is not None:
        if isinstance(rng, np.random.Generator) or rng != 0:
            raise ValueError("give rng or seed (its older name), not both")
        if seed is None or isinstance(seed, np.random.Generator):
            raise TypeError(f"seed must be an integer; got {type(seed).__name__}")
        return check_rng(seed, "seed")
    return check_rng(rng)
