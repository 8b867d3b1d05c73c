"""Sweep specifications: frozen, validated once, hashable (so they are also cache keys).

A sweep is *what is swept* (:class:`SweepGrid`), *the sites* (:class:`SiteLayout`), *the
privacy* (:class:`PcaPrivacy`, :class:`OtdPrivacy`), *the runs* (:class:`Runs`) and the
problem (:class:`PcaSpec`, :class:`OtdSpec`). Every object checks its fields when it is made
(``__post_init__`` validates, it never rewrites a field), so the drivers never re-check and
nothing is estimated or computed from an unchecked value. The friendly forms (lists, ``None``
for "the default") are resolved once, by the factories :meth:`PcaSpec.build` and
:meth:`OtdSpec.build`, whose keywords are those of :func:`dpcore.pca_sweep` /
:func:`dpcore.otd_sweep` and are documented there, once. Randomness is not part of a spec:
the drivers take ``rng`` separately (SPEC 7).

A spec also carries the records of its algorithms
(:class:`dpcore.factorization.registry.Algorithm`) and
the family's stream order, taken from the registry when it is built: a spec pickled to a
worker process runs there even if its algorithm was registered at runtime in the parent.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, NamedTuple, Self, TypeVar

import numpy as np
from numpy.typing import NDArray

from dpcore._validation import (
    MAX_MAGNITUDE,
    caller_stacklevel,
    check_bool,
    check_choice,
    check_delta,
    check_epsilon,
    check_int,
    check_real,
    check_rng,
    show,
)
from dpcore.experiments.limits import WorkEstimate, estimate_otd, estimate_pca
from dpcore.experiments.sweeps.scores import OTD_METRICS, PCA_METRICS
from dpcore.factorization import registry
from dpcore.factorization.datasets import Dataset, split_sizes
from dpcore.factorization.models import MODELS
from dpcore.factorization.moments import SCALINGS, SENSITIVITIES, SIGMA2_SOURCES
from dpcore.factorization.otd import PowerOptions
from dpcore.factorization.registry import Algorithm
from dpcore.mechanisms.calibration import DEFAULT_CALIBRATION, Calibration, CalibrationLike
from dpcore.protocol.secagg import DEFAULT_BITS
from dpcore.resources import MAX_DESIGN_SITES, MAX_DIM_TENSOR

SWEEP_AXES = ("epsilon", "delta", "n_per_site", "sites")
# Settings of the secure-aggregation baseline (dpcore.protocol.secagg) that a sweep may also run
# along; a frame has their column only when one of them is the swept axis. They are spec
# parameters of the secagg record (registry.SPEC_PARAMETERS declares their defaults and checks).
SECAGG_AXES = registry.SECAGG_PARAMETERS
GRID_AXES = SWEEP_AXES + SECAGG_AXES
WEIGHTINGS = ("proportional", "equal")


def _parameter_check(name: str) -> Callable[[Any], Any]:
    """The declared check of a spec parameter that is a grid axis (it needs no D or K)."""
    parameter = registry.SPEC_PARAMETERS[name]
    return lambda value: parameter.check(value, {})


_CHECKS: dict[str, Callable[[Any], Any]] = {
    "epsilon": check_epsilon,
    "delta": check_delta,
    "n_per_site": lambda v: check_int(v, "n_per_site", low=1),
    # S×S designs need 2; one site only where every algorithm runs with it (_check_records)
    "sites": lambda v: check_int(v, "sites", low=1, high=MAX_DESIGN_SITES),
    **{name: _parameter_check(name) for name in SECAGG_AXES},
}

Value = float | int
Setting = Value | None  # a grid point's value: the secure-aggregation scale may be None


def _swept_check(axis: str) -> Callable[[Any], Any]:
    if axis == "secagg_scale":  # a swept scale is a list of numbers, never "automatic"
        return lambda v: check_real(v, "secagg_scale", low=0.0, high=MAX_MAGNITUDE, low_open=True)
    return _CHECKS[axis]


def _is_grid(value: object) -> bool:
    return isinstance(value, (list, tuple, np.ndarray))


def _scalar(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


@dataclass(frozen=True)
class GridPoint:
    """One point of a sweep's grid: every axis at one value.

    Attributes
    ----------
    epsilon, delta : float
        The privacy budget (ε, δ) every site's release meets at this point.
    n_per_site, sites : int
        N_s (average per site) and S.
    secagg_bits, secagg_scale : int and float or None
        Bit width b and scale γ of the ``secagg`` baseline (``None``: automatic γ).
    """

    epsilon: float
    delta: float
    n_per_site: int
    sites: int
    secagg_bits: int
    secagg_scale: float | None

    def value(self, axis: str) -> Setting:
        """The point's value on one axis of :data:`GRID_AXES` (the swept one, say)."""
        if axis not in GRID_AXES:
            raise ValueError(f"axis must be one of {list(GRID_AXES)}; got {axis!r}")
        value: Setting = getattr(self, axis)
        return value

    def row(self) -> dict[str, Setting]:
        """The point as a frame row's axis columns, in :data:`GRID_AXES` order."""
        return {name: getattr(self, name) for name in GRID_AXES}


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

    def __post_init__(self) -> None:
        check_choice(self.axis, "axis", GRID_AXES)
        if not isinstance(self.values, tuple):
            kind = type(self.values).__name__
            raise TypeError(f"values must be a tuple (SweepGrid.of takes lists); got {kind}")
        if not self.values:
            raise ValueError(f"{self.axis} must have at least one value to sweep; got none")
        check = _swept_check(self.axis)
        for v in self.values:
            check(v)
        for name in GRID_AXES:
            if name != self.axis:
                _CHECKS[name](getattr(self, name))
        if getattr(self, self.axis) != self.values[0]:
            raise ValueError(
                f"{self.axis} must be the first swept value {self.values[0]!r}; "
                f"got {getattr(self, self.axis)!r}"
            )

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
        >>> g.axis, g.values, g.point(1.0).sites
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
        check = _swept_check(axis)
        values = tuple(check(_scalar(v)) for v in raw)
        return cls(axis=axis, values=values, **{**fixed, axis: values[0]})

    def keywords(self) -> dict[str, Any]:
        """The axes as :meth:`of` takes them: ``of(**grid.keywords()) == grid``.

        The swept axis is a tuple, except a one-point ε grid (ε given as a number).
        """
        out: dict[str, Any] = {n: getattr(self, n) for n in GRID_AXES}
        if self.axis != "epsilon" or len(self.values) > 1:
            out[self.axis] = self.values
        return out

    def point(self, value: Setting) -> GridPoint:
        """Every axis at one grid value."""
        fixed = GridPoint(
            self.epsilon,
            self.delta,
            self.n_per_site,
            self.sites,
            self.secagg_bits,
            self.secagg_scale,
        )
        changes: dict[str, Any] = {self.axis: value}
        return replace(fixed, **changes)

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

    shares: tuple[float, ...] | None
    weighting: str

    def __post_init__(self) -> None:
        check_choice(self.weighting, "weighting", WEIGHTINGS)
        if self.shares is not None:
            if not isinstance(self.shares, tuple):
                raise TypeError(
                    "site_shares must be a tuple of numbers (SiteLayout.of takes any "
                    f"sequence); got {self.shares!r}"
                )
            for s in self.shares:
                check_real(s, "site_shares", low=0.0, low_open=True)

    @classmethod
    def of(cls, shares: Sequence[float] | None, weighting: str) -> SiteLayout:
        """The layout of ``site_shares`` given as any sequence of numbers (or ``None``)."""
        if shares is None:
            return cls(None, weighting)
        if isinstance(shares, (str, bytes)) or not _is_grid(shares):
            raise TypeError(f"site_shares must be a sequence of numbers; got {shares!r}")
        return cls(
            tuple(check_real(_scalar(s), "site_shares", low=0.0, low_open=True) for s in shares),
            weighting,
        )

    def layout(self, point: GridPoint) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Site sizes N_s and aggregator weights μ_s at one grid point."""
        sizes = split_sizes(int(point.n_per_site), int(point.sites), self.shares)
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
        check_int(self.count, "runs", low=1)

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
        Spawned into one stream per algorithm (:func:`dpcore.factorization.registry.streams`).
    draw : numpy.random.Generator
        The data draw of this run (N_s and S sweeps).
    """

    point: GridPoint
    run: int
    noise: np.random.Generator
    draw: np.random.Generator


def _is_names(value: object) -> bool:
    """Whether ``value`` gives one name at a time (each is checked as a name after).

    Not a string, not an array of more than one axis.
    """
    if isinstance(value, np.ndarray):
        return value.ndim == 1
    return isinstance(value, Iterable) and not isinstance(value, (str, bytes))


def _algorithms(algorithms: Sequence[str] | None, family: str) -> tuple[str, ...]:
    if algorithms is None:
        return registry.defaults(family)
    if not _is_names(algorithms):
        raise TypeError(f"algorithms must be a sequence of names; got {show(algorithms)}")
    names = tuple(registry.get(a, family, param="algorithms").name for a in algorithms)
    if not names:
        raise ValueError(
            f"algorithms must name at least one of {list(registry.names(family))}; got []"
        )
    return names


def _metrics(metrics: Sequence[str] | None, known: Sequence[str]) -> tuple[str, ...]:
    if metrics is None:
        return tuple(known)
    if not _is_names(metrics):
        raise TypeError(f"metrics must be a sequence of names; got {show(metrics)}")
    names = tuple(check_choice(m, "metrics", tuple(known)) for m in metrics)
    if not names:
        raise ValueError(f"metrics must name at least one of {list(known)}; got []")
    return names


def _check_names(value: object, name: str, known: Sequence[str]) -> None:
    """A resolved tuple of names (what :meth:`PcaSpec.build` stores)."""
    if not isinstance(value, tuple) or not value:
        raise TypeError(f"{name} must be a non-empty tuple of names; got {value!r}")
    for v in value:
        check_choice(v, name, tuple(known))


def _check_records(spec: SweepSpec) -> None:
    """The records must be the family's records of the named algorithms."""
    family = spec.family
    names = spec.algorithms
    if not isinstance(names, tuple) or not names or not all(isinstance(n, str) for n in names):
        raise TypeError(f"algorithms must be a non-empty tuple of names; got {names!r}")
    records = spec.records
    if (
        not isinstance(records, tuple)
        or tuple(getattr(r, "name", None) for r in records) != spec.algorithms
        or any(not isinstance(r, Algorithm) or getattr(r, family) is None for r in records)
    ):
        raise ValueError(
            f"records must be the {family} records of {list(spec.algorithms)} "
            "(build the spec with build() or change it with replace())"
        )
    fewest = min(int(spec.grid.point(v).sites) for v in spec.grid.values)
    if fewest < 2:  # one site: the curator's and one site's algorithms only (issue #39)
        need = [r.name for r in records if getattr(getattr(r, family), "min_sites", 2) > 1]
        if need:
            one = [
                n
                for n in registry.names(family)
                if getattr(registry.get(n, family).method(family), "min_sites", 2) == 1
            ]
            raise ValueError(
                f"sites must be at least 2 for {need}; got {fewest} (with one site: {one})"
            )


@functools.cache
def _parameters(build: Callable[..., Any]) -> dict[str, Any]:
    """``build``'s keywords in signature order, with their defaults (``empty`` if none)."""
    return {n: p.default for n, p in inspect.signature(build).parameters.items()}


def _changed(spec: SweepSpec, keywords: dict[str, Any]) -> dict[str, Any]:
    """The keywords whose value differs from what ``build`` would use without them."""
    context = {"dim": spec.dim, "k": spec.k}
    derived = {
        name: parameter.derive(context)
        for name in spec._settings()
        if (parameter := registry.SPEC_PARAMETERS[name]).derive is not None
    }
    defaults = {
        **_parameters(type(spec).build),
        "algorithms": registry.defaults(spec.family),
        "metrics": spec.known_metrics,
        **derived,  # rank: min(2K, D)
    }
    out = {}
    for name, value in keywords.items():
        default = defaults.get(name, inspect.Parameter.empty)
        if default is inspect.Parameter.empty or type(value) is not type(default):
            out[name] = value
        elif value != default:
            out[name] = value
    return out


def _check_swept(grid: SweepGrid, records: tuple[Algorithm, ...], family: str) -> None:
    """A swept spec parameter (a secure-aggregation axis) must be read by an algorithm run."""
    if grid.axis not in registry.SPEC_PARAMETERS:
        return
    if not any(grid.axis in r.reads(family) for r in records):
        readers = [n for n in registry.names(family) if grid.axis in registry.get(n).reads(family)]
        raise ValueError(
            f"algorithms must include one that reads the swept {grid.axis} (of {readers}); "
            f"got {[r.name for r in records]}"
        )


# Where a build keyword lives in a spec when it is not the field of its name: an attribute of a
# field ("runs.count"); the family's own are in its keyword_paths, the grid's axes in the grid.
_SHARED_PATHS = {
    "runs": "runs.count",
    "calibration": "privacy.calibration",
    "site_shares": "sites.shares",
    "weighting": "sites.weighting",
}


def _read(spec: object, path: str) -> Any:
    """The value at ``path`` (attribute names joined by dots) of ``spec``."""
    value = spec
    for name in path.split("."):
        value = getattr(value, name)
    return value


def sweep_calibration(calibration: CalibrationLike, neighbouring: str) -> Calibration:
    """A sweep's :class:`Calibration`: ``neighbouring`` replaces its relation unless at default."""
    at_default = isinstance(neighbouring, str) and neighbouring == DEFAULT_CALIBRATION.neighbouring
    if isinstance(calibration, Calibration) and at_default:
        return calibration
    return Calibration.of(calibration, neighbouring=neighbouring)


@dataclass(frozen=True)
class PcaPrivacy:
    """Noise calibration of the PCA sweep: Gaussian kind and neighbouring relation (as text)."""

    calibration: str
    neighbouring: str

    def __post_init__(self) -> None:
        Calibration(self.calibration, self.neighbouring)  # validates both

    @property
    def gaussian(self) -> Calibration:
        """The :class:`dpcore.Calibration` these fields name."""
        return Calibration(self.calibration, self.neighbouring)


class Budget(NamedTuple):
    """One release's privacy budget (ε, δ)."""

    epsilon: float
    delta: float


# The fraction of (ε, δ) given to M2. A stage given less than 0.1% of the budget is no
# design anyone means, and nearly none (1e-308) would underflow the stage's ε to a noise
# std past MAX_MAGNITUDE, refused there under the name of epsilon, not of the split.
SPLIT_RANGE = (1e-3, 1 - 1e-3)


def check_split(value: object) -> float:
    """``budget_split`` in [0.001, 0.999] (:data:`SPLIT_RANGE`)."""
    return check_real(value, "budget_split", low=SPLIT_RANGE[0], high=SPLIT_RANGE[1])


@dataclass(frozen=True)
class OtdPrivacy:
    """Noise calibration of the tensor sweep.

    Attributes
    ----------
    calibration : {"analytic", "classic"}
        The kind of :class:`dpcore.Calibration` (:attr:`gaussian`).
    sensitivity : {"paper", "add-remove", "replace"}
        Sensitivities of M2, M3 (:func:`dpcore.factorization.moments.moment_sensitivities`).
    budget_split : float
        Fraction in [0.001, 0.999] of ε and δ given to M2 (paper: 1/2).
    """

    calibration: str
    sensitivity: str
    budget_split: float

    def __post_init__(self) -> None:
        Calibration.of(self.calibration)  # validates the kind
        check_choice(self.sensitivity, "sensitivity", SENSITIVITIES)
        check_split(self.budget_split)

    @property
    def gaussian(self) -> Calibration:
        """The :class:`dpcore.Calibration` of both stages (M2, M3 have their own Δ)."""
        return Calibration(self.calibration)

    def stages(self, epsilon: float, delta: float) -> tuple[Budget, Budget]:
        """(ε₁, δ₁) for M2 and (ε₂, δ₂) for M3 out of a total (ε, δ).

        ε₁ = split·ε, ε₂ = (1 − split)·ε, and the same for δ; by basic composition the
        pair is (ε₁ + ε₂, δ₁ + δ₂) = (ε, δ)-DP (Imtiaz & Sarwate, Theorem 2; the paper
        splits equally, split = 1/2).

        Examples
        --------
        >>> OtdPrivacy("classic", "paper", 0.5).stages(1.0, 0.01)
        (Budget(epsilon=0.5, delta=0.005), Budget(epsilon=0.5, delta=0.005))
        """
        split = self.budget_split
        return (
            Budget(split * epsilon, split * delta),
            Budget((1 - split) * epsilon, (1 - split) * delta),
        )


@dataclass(frozen=True, kw_only=True)
class SweepSpec:
    """A PCA or a tensor sweep spec: what both share, and the one way either is built.

    The grid, the site layout, the privacy settings (the family's own record), the runs,
    D and K, ``faithful``, the algorithms and metrics by name, and the algorithms' registry
    records (each algorithm's random stream is keyed by its name,
    :func:`dpcore.factorization.registry.stream`). Keyword-only; a family's checks run
    between the shared ones (:meth:`_fields`, as ``build`` resolves them).

    Both families are built by :meth:`_build` from their ``build``'s keywords (the public
    signature, documented there); a family declares what is its own in its class
    (:meth:`_resolve`, :meth:`_check_family`, :attr:`keyword_paths`, its work estimate). The
    parameters only some algorithms read (``rank``, ``restarts``, ``secagg_bits``, …) are
    declared once, default and check, in :data:`dpcore.factorization.registry.SPEC_PARAMETERS`
    and named by the records that read them
    (:meth:`dpcore.factorization.registry.Algorithm.reads`).
    """

    family: ClassVar[str]
    privacy_kind: ClassVar[type]
    known_metrics: ClassVar[tuple[str, ...]]
    keyword_paths: ClassVar[dict[str, str]]  # the family's, as _SHARED_PATHS
    build: ClassVar[Callable[..., Any]]  # the family's factory: its keywords are the public API

    grid: SweepGrid
    sites: SiteLayout
    privacy: PcaPrivacy | OtdPrivacy
    runs: Runs
    dim: int
    k: int
    faithful: bool
    algorithms: tuple[str, ...]
    metrics: tuple[str, ...]
    records: tuple[Algorithm, ...] = field(repr=False, compare=False)

    def __post_init__(self) -> None:
        for name, kind in (
            ("grid", SweepGrid),
            ("sites", SiteLayout),
            ("privacy", self.privacy_kind),
            ("runs", Runs),
        ):
            if not isinstance(getattr(self, name), kind):
                raise TypeError(f"{name} must be a {kind.__name__}; got {getattr(self, name)!r}")
        self.sites.check_against(self.grid)
        self._check_family()
        self._fields(self.keywords())  # the family's fields, checked as build resolves them
        check_bool(self.faithful, "faithful")
        _check_names(self.metrics, "metrics", self.known_metrics)
        _check_records(self)

    @classmethod
    def _build(cls, given: Mapping[str, Any]) -> Self:
        """The spec of ``build``'s keywords as given (both families': one path).

        The shared keywords are resolved here, the family's own by :meth:`_fields`; a swept
        algorithm parameter must be read by an algorithm the spec runs.
        """
        grid = SweepGrid.of(**{axis: given[axis] for axis in GRID_AXES})
        layout = SiteLayout.of(given["site_shares"], given["weighting"])
        count = Runs(check_int(given["runs"], "runs", low=1))
        fields = cls._fields(given)
        names = _algorithms(given["algorithms"], cls.family)
        records = tuple(registry.get(n, cls.family) for n in names)
        _check_swept(grid, records, cls.family)
        return cls(
            grid=grid,
            sites=layout,
            runs=count,
            **fields,
            faithful=check_bool(given["faithful"], "faithful"),
            algorithms=names,
            metrics=_metrics(given["metrics"], cls.known_metrics),
            records=records,
        )

    @classmethod
    def _settings(cls) -> tuple[str, ...]:
        """The family's algorithm parameters kept in the spec's fields (the grid has the rest).

        Those of :func:`dpcore.factorization.registry.spec_parameters` that are no grid axis.
        """
        return tuple(n for n in registry.spec_parameters(cls.family) if n not in GRID_AXES)

    @classmethod
    def _path(cls, keyword: str) -> str:
        """Where a build keyword (not a grid axis) lives in the spec."""
        return {**_SHARED_PATHS, **cls.keyword_paths}.get(keyword, keyword)

    @classmethod
    def _fields(cls, given: Mapping[str, Any]) -> dict[str, Any]:
        """The family's fields of ``build``'s keywords, resolved and checked.

        Its own (:meth:`_resolve`) and the algorithms' parameters (:meth:`_settings`) by their
        declarations, whose checks and derived defaults read the resolved D and K.
        """
        own = cls._resolve(given)
        context = {"dim": own["dim"], "k": own["k"]}
        settings = {
            name: registry.SPEC_PARAMETERS[name].resolve(given[name], context)
            for name in cls._settings()
        }
        return {**own, **cls._pack(settings)}

    @classmethod
    def _resolve(cls, given: Mapping[str, Any]) -> dict[str, Any]:
        """The family's own fields (``privacy``, ``dim``, ``k``, …) of ``build``'s keywords."""
        raise NotImplementedError

    @classmethod
    def _pack(cls, settings: dict[str, Any]) -> dict[str, Any]:
        """The fields that hold the resolved :meth:`_settings` (by default, one each)."""
        return settings

    def _check_family(self) -> None:
        """What :meth:`_fields` cannot see in the keywords (a family's field's type, say)."""

    def _implied(self) -> tuple[str, ...]:
        """Keywords the others imply, left out of the short :meth:`keywords`."""
        return ()

    def keywords(self, *, defaults: bool = True) -> dict[str, Any]:
        """The ``build`` keywords of this spec, in its signature's order (the sweep front's).

        ``defaults=False`` leaves out the keywords at their default (a derived one at its
        derived value, ``rank`` min(2K, D); the default algorithms and metrics; ``dim`` and
        ``pool_size`` with a Dataset): the short form for a code snippet. Either way
        ``type(s).build(**kw) == s``.
        """
        grid = self.grid.keywords()
        out = {
            n: grid[n] if n in grid else _read(self, self._path(n))
            for n in _parameters(type(self).build)
        }
        if defaults:
            return out
        for name in self._implied():
            del out[name]
        return _changed(self, out)

    def replace(self, **keywords: Any) -> Self:
        """Change some ``build`` keywords: a new spec, validated again.

        The keywords left at their default stay defaults (``rank`` follows a new ``k``).
        """
        spec: Self = type(self).build(**{**self.keywords(defaults=False), **keywords})
        return spec

    def estimate(self, *, workers: int | None = None) -> WorkEstimate:
        """The sweep's cost on ``workers``, at the grid's largest setting.

        The family's work estimate (:func:`~dpcore.experiments.limits.estimate_pca`,
        :func:`~dpcore.experiments.limits.estimate_otd`) of what the spec runs.
        """
        return self._work(
            dim=self.dim,
            sites=int(self.grid.largest("sites")),
            points=len(self.grid.values),
            runs=self.runs.count,
            algorithms=self.records,
            workers=workers,
        )

    def _work(self, **shared: Any) -> WorkEstimate:
        """The family's estimate, given what every family's estimate takes (``shared``)."""
        raise NotImplementedError


@dataclass(frozen=True, kw_only=True)
class PcaSpec(SweepSpec):
    """A validated distributed-PCA sweep, made by :meth:`build` (its keywords documented once).

    Every field holds its resolved value: ``dim`` and ``pool_size`` are the data set's own
    for a :class:`~dpcore.Dataset` (which hashes by identity), ``rank`` is min(2K, D) by
    default, ``algorithms`` and ``metrics`` are tuples of names, ``records`` the algorithms'
    registry records when the spec was built. Change a keyword with :meth:`replace`;
    :meth:`keywords` gives them back (``PcaSpec.build(**s.keywords()) == s``).

    Examples
    --------
    >>> s = PcaSpec.build(epsilon=[0.5, 1.0], dim=20, k=4)
    >>> s.rank, s.grid.values, s.replace(k=2).rank
    (8, (0.5, 1.0), 4)
    >>> PcaSpec.build(**s.keywords()) == s, hash(s) == hash(PcaSpec.build(**s.keywords()))
    (True, True)
    """

    family: ClassVar[str] = "pca"
    privacy_kind: ClassVar[type] = PcaPrivacy
    known_metrics: ClassVar[tuple[str, ...]] = tuple(PCA_METRICS)
    keyword_paths: ClassVar[dict[str, str]] = {"neighbouring": "privacy.neighbouring"}

    privacy: PcaPrivacy
    data: str | Dataset
    rank: int
    pool_size: int

    @classmethod
    def _resolve(cls, given: Mapping[str, Any]) -> dict[str, Any]:
        cal = sweep_calibration(given["calibration"], given["neighbouring"])
        data = given["data"]
        if isinstance(data, Dataset):  # D and the pool are the data set's own
            dim, pool_size = data.dim, data.n_samples
        else:
            check_choice(data, "data", ("synthetic",))
            dim = check_int(given["dim"], "dim", low=1)
            pool_size = check_int(given["pool_size"], "pool_size", low=2)
        k = check_int(given["k"], "k", low=1, high=dim)
        privacy = PcaPrivacy(cal.kind, cal.neighbouring)
        return {"privacy": privacy, "data": data, "dim": dim, "k": k, "pool_size": pool_size}

    def _check_family(self) -> None:
        data = self.data  # a data set's D and pool are its own (_resolve takes them from it)
        if isinstance(data, Dataset) and (self.dim, self.pool_size) != (data.dim, data.n_samples):
            raise ValueError(
                f"dim and pool_size must be the data set's ({data.dim}, {data.n_samples}); "
                f"got ({self.dim!r}, {self.pool_size!r}); use replace(data=…), which takes "
                "them from the data set"
            )

    def _implied(self) -> tuple[str, ...]:
        return ("dim", "pool_size") if isinstance(self.data, Dataset) else ()

    @classmethod
    def build(
        cls,
        *,
        data: str | Dataset = "synthetic",
        dim: int = 200,
        k: int = 50,
        sites: int | Sequence[int] = 10,
        n_per_site: int | Sequence[int] = 1000,
        epsilon: float | Sequence[float],
        delta: float | Sequence[float] = 0.01,
        runs: int = 10,
        algorithms: Sequence[str] | None = None,
        metrics: Sequence[str] | None = None,
        calibration: CalibrationLike = DEFAULT_CALIBRATION.kind,
        neighbouring: str = DEFAULT_CALIBRATION.neighbouring,
        site_shares: Sequence[float] | None = None,
        weighting: str = "proportional",
        rank: int | None = None,
        faithful: bool = False,
        pool_size: int = 60_000,
        secagg_bits: int | Sequence[int] = DEFAULT_BITS,
        secagg_scale: float | Sequence[float] | None = None,
    ) -> PcaSpec:
        """The validated spec of a distributed-PCA sweep (:func:`dpcore.pca_sweep`).

        Parameters
        ----------
        data : "synthetic" or Dataset
            The paper's synthetic set (generated from the sweep's ``rng`` with ``dim``, ``k``
            and ``pool_size``) or a prepared :class:`dpcore.Dataset`.
        dim, k : int
            D and K for synthetic data (1 ≤ K ≤ D); with a Dataset, D is its own (``dim``
            and ``pool_size`` are then ignored).
        sites, n_per_site, epsilon, delta : scalar or list
            S ≥ 2, N_s ≥ 1 (average per site), ε in (0, ∞], δ in (0, 1). Exactly one may be
            a list: the swept axis.
        runs : int
            Repetitions per grid point, ≥ 1.
        algorithms : sequence of str, optional
            Names from :func:`dpcore.factorization.registry.names` ``("pca")`` (default: all but the
            opt-in ones, :func:`dpcore.factorization.registry.defaults`). Each algorithm has its
            own random stream, so choosing others does not change its numbers.
        metrics : sequence of str, optional
            Columns from :data:`dpcore.experiments.sweeps.scores.PCA_METRICS` (default: all, in that
            order).
        calibration : Calibration or {"analytic", "classic"}
            Gaussian mechanism calibration (:class:`dpcore.Calibration`; default analytic,
            a proof at every ε; the paper's reproduction asks for "classic"). Every entry of
            the sweep, the trusted curator's and secure aggregation's included, uses it.
        neighbouring : {"add-remove", "replace"}
            Neighbouring relation for Δ (:func:`dpcore.second_moment_sensitivity`); left at
            its default, a :class:`dpcore.Calibration`'s own relation is kept.
        site_shares : sequence of float, optional
            Relative site sizes for unequal N_s (not with a swept S).
        weighting : {"proportional", "equal"}
            Aggregator weights μ_s = N_s/N (the pooled estimate) or 1/S.
        rank : int, optional
            R for DPdisPCA, K ≤ R ≤ D; default min(2K, D).
        faithful : bool
            Run capePCA and conv message by message (slow) instead of drawing their
            aggregate noise directly (same distribution, see
            :func:`dpcore.factorization.pca.cape_pca`).
        pool_size : int
            Synthetic pool size (paper: 60,000).
        secagg_bits, secagg_scale : scalar or list
            Bit width b in [2, 64] and scale γ > 0 (``None``: automatic, rounding costs ≤ 1%
            of Δ) of the ``secagg`` baseline (:func:`dpcore.secagg_design`, calibrated like
            the others with ``calibration`` at the rounded sensitivity). Either may be the
            swept list instead of the four axes above; the frame then has its column.

        Returns
        -------
        PcaSpec

        Raises
        ------
        ValueError, TypeError
            Naming the parameter, its allowed range and the value.

        Notes
        -----
        The sweep (:func:`dpcore.run_pca_sweep`) returns one row per (algorithm, grid point,
        run) with columns ``algorithm``, ``epsilon``, ``delta``, ``n_per_site``, ``sites``,
        ``run`` and one per metric (by default ``captured_energy``,
        ``captured_energy_ratio`` (of the optimum), ``subspace_distance`` and
        ``optimal_energy``). The data subsample (N = S·N_s rows without replacement,
        centred, split into contiguous blocks) is drawn once for ε and δ sweeps and afresh
        per run for N_s and S sweeps, as in the authors' experiments. ``local`` uses site 1.
        Captured energy is tr(V̂ᵀAV̂) against the data set's reference matrix (Imtiaz &
        Sarwate, Sec. 6.1).
        """
        return cls._build(locals())  # the keywords as given, down the one build path

    def _work(self, **shared: Any) -> WorkEstimate:
        """:func:`dpcore.experiments.limits.estimate_pca`, with N_s, the pool, K and ``faithful``.

        K and ``faithful`` set the iterative methods' steps; a synthetic pool is drawn by the
        sweep (``draw_pool``), a data set's is not.
        """
        n_max = int(self.grid.largest("n_per_site"))
        return estimate_pca(
            n_max=n_max,
            pool=self.pool_size,
            k=self.k,
            faithful=self.faithful,
            draw_pool=isinstance(self.data, str),
            **shared,
        )


@dataclass(frozen=True, kw_only=True)
class OtdSpec(SweepSpec):
    """A validated tensor-decomposition sweep, made by :meth:`build` (keywords documented once).

    Attributes beyond the groups: the planted ``model`` ("mog" or "stm") with ``dim`` ≤
    :data:`~dpcore.experiments.limits.MAX_DIM_TENSOR` and ``k`` ≤ ``dim``; MOG preprocessing
    (``sigma2``, ``scaling``, ``sigma2_source``); the tensor power method (``power``);
    ``faithful``; ``algorithms`` and ``metrics`` as tuples of names; ``records`` as in
    :class:`PcaSpec`.

    Examples
    --------
    >>> s = OtdSpec.build(epsilon=[0.5, 1.0], budget_split=0.25)
    >>> s.stages(1.0)
    (Budget(epsilon=0.25, delta=0.0025), Budget(epsilon=0.75, delta=0.0075))
    >>> OtdSpec.build(**s.keywords()) == s
    True
    """

    family: ClassVar[str] = "otd"
    privacy_kind: ClassVar[type] = OtdPrivacy
    known_metrics: ClassVar[tuple[str, ...]] = tuple(OTD_METRICS)
    keyword_paths: ClassVar[dict[str, str]] = {
        "sensitivity": "privacy.sensitivity",
        "budget_split": "privacy.budget_split",
        **{name: f"power.{name}" for name in registry.POWER_PARAMETERS},
    }

    privacy: OtdPrivacy
    model: str
    sigma2: float
    scaling: str
    sigma2_source: str
    power: PowerOptions

    @classmethod
    def _resolve(cls, given: Mapping[str, Any]) -> dict[str, Any]:
        split = check_split(given["budget_split"])
        kind = Calibration.of(given["calibration"]).kind
        dim = check_int(given["dim"], "dim", low=1, high=MAX_DIM_TENSOR)
        return {
            "privacy": OtdPrivacy(kind, given["sensitivity"], split),
            "model": check_choice(given["model"], "model", MODELS),
            "dim": dim,
            "k": check_int(given["k"], "k", low=1, high=dim),
            "sigma2": check_real(given["sigma2"], "sigma2", low=0.0, high=MAX_MAGNITUDE),
            "scaling": check_choice(given["scaling"], "scaling", SCALINGS),
            "sigma2_source": check_choice(given["sigma2_source"], "sigma2_source", SIGMA2_SOURCES),
        }

    @classmethod
    def _pack(cls, settings: dict[str, Any]) -> dict[str, Any]:
        return {"power": PowerOptions(**settings)}  # restarts, max_iter, tol

    def _check_family(self) -> None:
        if not isinstance(self.power, PowerOptions):
            raise TypeError(f"power must be a PowerOptions; got {self.power!r}")

    @classmethod
    def build(
        cls,
        *,
        model: str = "mog",
        dim: int = 10,
        k: int = 5,
        sites: int | Sequence[int] = 5,
        n_per_site: int | Sequence[int] = 20_000,
        epsilon: float | Sequence[float],
        delta: float | Sequence[float] = 0.01,
        runs: int = 10,
        algorithms: Sequence[str] | None = None,
        metrics: Sequence[str] | None = None,
        calibration: CalibrationLike = DEFAULT_CALIBRATION.kind,
        sensitivity: str = "paper",
        budget_split: float = 0.5,
        sigma2: float = 0.05,
        scaling: str = "public",
        sigma2_source: str = "model",
        restarts: int = 10,
        max_iter: int = 100,
        tol: float = 1e-8,
        site_shares: Sequence[float] | None = None,
        weighting: str = "proportional",
        faithful: bool = False,
        secagg_bits: int | Sequence[int] = DEFAULT_BITS,
        secagg_scale: float | Sequence[float] | None = None,
    ) -> OtdSpec:
        """The validated spec of a tensor-decomposition sweep (:func:`dpcore.otd_sweep`).

        Parameters
        ----------
        model : {"mog", "stm"}
            Mixture of Gaussians or single topic model, planted from the sweep's ``rng``.
        dim, k : int
            D ≤ 100 and K (1 ≤ K ≤ D).
        sites, n_per_site, epsilon, delta : scalar or list
            As in :meth:`PcaSpec.build`; ε, δ are the totals, split between M2 and M3.
        runs, site_shares, weighting, faithful, calibration
            As in :meth:`PcaSpec.build`.
        algorithms : sequence of str, optional
            Names from :func:`dpcore.factorization.registry.names` ``("otd")`` (default: all but the
            opt-in ones, :func:`dpcore.factorization.registry.defaults`).
        metrics : sequence of str, optional
            Columns from :data:`dpcore.experiments.sweeps.scores.OTD_METRICS` (default: all, in that
            order).
        sensitivity : {"paper", "add-remove", "replace"}
            Sensitivities of M2, M3 (:func:`dpcore.factorization.moments.moment_sensitivities`).
        budget_split : float
            Fraction in [0.001, 0.999] of ε and δ given to M2: ε₁ = split·ε, ε₂ = (1 − split)·ε
            (paper: 1/2; :meth:`stages`). capeAGN is (ε₁ + ε₂, δ₁ + δ₂)-DP (Theorem 2).
        sigma2, scaling, sigma2_source : MOG preprocessing
            σ² of the model; ``scaling`` "public" (clip to a public bound, private) or
            "max-norm" (paper, non-private); ``sigma2_source`` "model" or "data" (paper,
            non-private). See :func:`dpcore.factorization.moments.mog_site_moments`.
        restarts, max_iter, tol : tensor power method settings
            ``restarts=1, max_iter=1000, tol=1e-6`` is the authors' variant.
        secagg_bits, secagg_scale
            As in :meth:`PcaSpec.build`: the ``secagg`` baseline sends M2 at (ε₁, δ₁) and M3
            at (ε₂, δ₂) through one round each, with these b and γ (one may be swept).

        Returns
        -------
        OtdSpec

        Raises
        ------
        ValueError, TypeError
            Naming the parameter, its allowed range and the value.

        Notes
        -----
        The sweep's frame (:func:`dpcore.otd_sweep`) has one row per (algorithm, grid point,
        run): ``algorithm``, ``epsilon``, ``delta``, ``n_per_site``, ``sites``, ``run``, one
        column per metric (by default ``component_error`` (q_comp),
        ``component_error_matched``, ``weight_error``, ``invalid_components`` (STM columns
        with no positive entry), ``iterations``) and ``private_preprocessing``. Moments are
        computed once per data draw and reused across grid points and runs: once for ε and
        δ sweeps, afresh per run for N_s and S sweeps. ``local_*`` use site 1. AVN uses
        (ε₁, δ₁ + δ₂) for M2 and pure ε₂ for M3 (Algorithm 4).
        """
        return cls._build(locals())  # the keywords as given, down the one build path

    def stages(self, value: Setting | None = None) -> tuple[Budget, Budget]:
        """(ε₁, δ₁) for M2 and (ε₂, δ₂) for M3 at one grid value (default: the first).

        The per-stage budgets every algorithm's noise is calibrated to
        (:meth:`OtdPrivacy.stages`, Theorem 2); a page shows them beside the total.
        """
        point = self.grid.point(self.grid.values[0] if value is None else value)
        return self.privacy.stages(point.epsilon, point.delta)

    def _work(self, **shared: Any) -> WorkEstimate:
        """:func:`dpcore.experiments.limits.estimate_otd`: K, samples, draws, the power method."""
        grid = self.grid
        return estimate_otd(
            k=self.k,
            n_total=int(grid.largest("sites")) * int(grid.largest("n_per_site")),
            draws=len(grid.values) * self.runs.count if grid.resamples else 1,
            faithful=self.faithful,
            restarts=self.power.restarts,
            max_iter=self.power.max_iter,
            **shared,
        )


def fit_to_pool(values: Sequence[int], other: int, pool: int | None) -> tuple[int, ...]:
    """The N_s (or S) values of a grid whose S·N_s rows the data pool holds.

    A sweep along N_s (or S) with S (or N_s) fixed at ``other`` draws S·N_s rows without
    replacement from a pool of ``pool`` rows; values past it cannot run. ``pool=None``
    keeps every value.

    Raises
    ------
    ValueError
        If no value fits.

    Examples
    --------
    >>> fit_to_pool((500, 1000, 5000), 10, 20_000)
    (500, 1000)
    """
    if isinstance(values, (str, bytes)) or not _is_grid(values):
        raise TypeError(f"values must be a sequence of integers; got {values!r}")
    checked = tuple(check_int(_scalar(v), "values", low=1) for v in values)
    other = check_int(other, "other", low=1)
    if pool is None:
        return checked
    pool = check_int(pool, "pool", low=1)
    fits = tuple(v for v in checked if v * other <= pool)
    if not fits:
        raise ValueError(
            f"values must hold one v with v·other ≤ pool = {pool:,}; got {list(checked)} "
            f"with other = {other:,}"
        )
    return fits


def resolve_rng(rng: object, seed: object) -> np.random.Generator:
    """SPEC 7: ``rng`` is None, an int seed or a Generator; ``seed`` is its older name.

    Raises
    ------
    ValueError
        If both are given (``rng`` other than its default 0).
    TypeError
        If the one given is neither an integer nor a Generator (nor None for ``rng``).

    Warns
    -----
    DeprecationWarning
        When ``seed`` is given.
    """
    if seed is not None:
        warnings.warn(
            "seed is deprecated; use rng (an int seed or a numpy Generator)",
            DeprecationWarning,
            stacklevel=caller_stacklevel(),  # the caller of the front, not the core
        )
        at_default = isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng == 0
        if not at_default:  # never compare an array (its truth value is ambiguous)
            raise ValueError("give rng or seed (its older name), not both")
        if isinstance(seed, np.random.Generator):
            raise TypeError(f"seed must be an integer; got {type(seed).__name__}")
        return check_rng(seed, "seed")
    return check_rng(rng)


F = TypeVar("F", bound=Callable[..., Any])


def keywords_of(build: Callable[..., Any], *, before: str = "secagg_bits") -> Callable[[F], F]:
    """Decorator: a sweep front's signature is ``build``'s keywords and the front's own.

    The front's own keywords (workers, executor, rng, seed) go before ``before``, where the
    sweeps always had them: the CLI and the contract tests read the signature (the CLI
    records keywords in signature order), and a front documents only its own.
    """

    def decorate(front: F) -> F:
        own = [
            p
            for p in inspect.signature(front).parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY
        ]
        params: list[inspect.Parameter] = []
        for p in inspect.signature(build).parameters.values():
            if p.name == before:
                params += own
            params.append(p)
        front.__signature__ = inspect.signature(front).replace(parameters=params)  # type: ignore[attr-defined]
        return front

    return decorate
