"""Resource guard: estimate a request's work and memory before running it, refuse past a budget.

The estimates are deliberately simple cost models, calibrated on the benchmark machine
(2 cores, ``benchmarks/``): a symmetric D×D eigendecomposition takes about 2.7 ms·(D/200)³,
the third-moment accumulation about N·D³/10¹⁰ s, and runs are spread over the workers that
run them (``workers``: a cluster's, or :func:`dpcore.parallel.default_workers`), but for
their Python-bound parts (the iterative methods' rounds, each task's overhead and scores:
the threads share one interpreter). The PCA sweep's constants are seconds of the reference
machine (calibration loop 16.6 ms), checked against the CPU they stand for by
``benchmarks/baselines_estimate.py`` (issue #50). They only need to be right within a small
factor: their job is to stop a request that would take the server down (a classroom of
thirty shares two cores), not to predict to the second.

Who applies a budget: the library and ``python -m dpcore`` compute what they are asked,
with no limit unless the caller gives one (``budget=WorkBudget.of(max_minutes=…)``,
``--max-minutes``); the class server applies :data:`CLASSROOM` to every student's request
(``serving.classroom``: the page's thread and the heavy-job queue).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from dpcore._validation import check_bool, check_int, check_real
from dpcore.factorization.registry import Algorithm, OtdMethod, PcaMethod, otd_method, pca_method
from dpcore.parallel import default_workers
from dpcore.resources import (
    DRAW_SECONDS,
    EIGH_200,
    FLOPS,
    MAX_DESIGN_SITES,
    MAX_DIM_TENSOR,
    MAX_MEMORY,
    MAX_SECONDS,
    MAX_TASKS,
    POOL_DRAW_SECONDS,
    POOL_READ_SECONDS,
    ROUND_FLOPS,
    RUN_SECONDS,
    SCORE_SECONDS,
    STEP_SECONDS,
    TASK_BYTES,
    TASK_SECONDS,
)

__all__ = [
    "CLASSROOM",
    "DRAW_SECONDS",
    "EIGH_200",
    "FLOPS",
    "HEAVY_SECONDS",
    "MAX_DESIGN_SITES",
    "MAX_DIM_TENSOR",
    "MAX_MEMORY",
    "MAX_SECONDS",
    "MAX_TASKS",
    "POOL_DRAW_SECONDS",
    "POOL_READ_SECONDS",
    "ROUND_FLOPS",
    "RUN_SECONDS",
    "SCORE_SECONDS",
    "STEP_SECONDS",
    "TASK_SECONDS",
    "WorkBudget",
    "WorkEstimate",
    "check_budget",
    "check_feasible",
    "estimate_otd",
    "estimate_pca",
    "is_heavy",
    "machine",
    "pool_seconds",
    "round_seconds",
    "work",
]

# Estimated seconds from which the app runs a request as a queued job in a child process
# (serving.jobs) instead of in the page's own thread. Read when :func:`is_heavy` is called,
# so a test may set it small. Calibrated against the pages' former rules (see is_heavy).
HEAVY_SECONDS = 1.0


# What drives a cost: the settings of its largest term, by the sweep's parameter names and
# with their values, the one to reduce first ("grid" is the number of grid points).
Drivers = tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class WorkEstimate:
    """Estimated cost of one request.

    ``seconds_by``, ``memory_by`` and ``tasks_by`` name the settings of the largest term of
    each cost (the parameter to reduce first leads), so that a refusal can say which
    parameter drove it; they take no part in comparisons.
    """

    seconds: float
    memory_bytes: float
    tasks: int
    seconds_by: Drivers = field(default=(), compare=False, repr=False)
    memory_by: Drivers = field(default=(), compare=False, repr=False)
    tasks_by: Drivers = field(default=(), compare=False, repr=False)


def _largest(terms: Sequence[tuple[float, tuple[str, ...]]], values: Mapping[str, int]) -> Drivers:
    """The settings of the largest of a cost's terms, as (parameter, value) pairs."""
    _, names = max(terms, key=lambda term: term[0])
    return tuple((name, values[name]) for name in names)


@dataclass(frozen=True)
class WorkBudget:
    """The most a request may cost: tasks (grid points × runs), seconds, bytes; None: no bound.

    Made by :meth:`of` from the units a person gives (minutes, GiB). A sweep given one
    (``budget=``) is refused before any work when its estimate, counted on the workers that
    will run it, passes a bound (:func:`check_budget`).
    """

    tasks: int | None = None
    seconds: float | None = None
    memory_bytes: float | None = None
    label: str = field(default="", compare=False)  # whose bound: said after the limit

    def __post_init__(self) -> None:
        if self.tasks is not None:
            object.__setattr__(self, "tasks", check_int(self.tasks, "tasks", low=1))
        for name in ("seconds", "memory_bytes"):
            if getattr(self, name) is not None:  # no bound is None, not inf
                value = getattr(self, name)
                value = check_real(value, name, low=0.0, low_open=True, high_open=True)
                object.__setattr__(self, name, value)
        if not isinstance(self.label, str):
            raise TypeError(f"label must be a str; got {type(self.label).__name__}")

    @classmethod
    def of(
        cls,
        *,
        max_tasks: int | None = None,
        max_minutes: float | None = None,
        max_memory_gib: float | None = None,
    ) -> WorkBudget:
        """A budget in a person's units (``--max-tasks``, ``--max-minutes``, ``--max-memory-gib``).

        Examples
        --------
        >>> WorkBudget.of(max_minutes=30).seconds
        1800.0
        """
        if max_tasks is not None:
            max_tasks = check_int(max_tasks, "max_tasks", low=1)
        minutes, gib = (
            None if v is None else check_real(v, name, low=0.0, low_open=True, high_open=True)
            for v, name in ((max_minutes, "max_minutes"), (max_memory_gib, "max_memory_gib"))
        )
        return cls(
            max_tasks,
            None if minutes is None else 60.0 * minutes,
            None if gib is None else float(2**30) * gib,
        )


# The class server's limits (a classroom of thirty shares two cores): applied by the server
# layer to every student's request (serving.classroom), not by the library or the CLI.
CLASSROOM = WorkBudget(MAX_TASKS, MAX_SECONDS, MAX_MEMORY)


def machine() -> WorkBudget:
    """What no sweep can pass on this machine: its physical memory (no bound where unknown).

    Not a policy: a sweep whose estimate needs more memory than the machine has cannot
    finish (``runs=2**62`` would spawn streams until it dies), so every sweep is checked
    against it, budget or not, with its per-worker memory counted once.
    """
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # not POSIX
        return WorkBudget(label="this machine's memory")
    return WorkBudget(memory_bytes=float(total), label="this machine's memory")


def check_feasible(spec: Estimable, *, what: str) -> None:
    """Refuse ``spec`` (a ValueError naming its driver) when it cannot fit :func:`machine`."""
    check_budget(spec.estimate(workers=1), what=what, budget=machine())


class Estimable(Protocol):
    """What :func:`work` reads: a sweep spec (:class:`dpcore.PcaSpec`, :class:`dpcore.OtdSpec`)."""

    def estimate(self, *, workers: int | None = None) -> WorkEstimate:
        """The request's estimated cost on ``workers`` workers."""
        ...


def work(spec: Estimable, *, workers: int | None = None) -> WorkEstimate:
    """The one work estimate of a sweep spec (its records' costs, its grid and runs).

    ``workers``: how many run its tasks at once (a cluster's threads); default
    :func:`dpcore.parallel.default_workers`.

    Examples
    --------
    >>> from dpcore import PcaSpec
    >>> work(PcaSpec.build(epsilon=1.0, runs=3)).tasks
    3
    """
    return spec.estimate(workers=workers)


def is_heavy(spec: Estimable) -> bool:
    """Whether the app should run ``spec`` as a queued job (in a bounded child process).

    Heavy: estimated seconds ≥ :data:`HEAVY_SECONDS` (read at call time), or a real data set.

    This one rule replaces two page rules: the PCA page's "D ≥ 200, or runs × grid > 100,
    or real data" and the tensor page's "runs × grid × (D/10)³ × max(S·N_s/10⁵, 1) > 60".
    Where the PCA pages stand (issue #50's model, seconds of the reference machine, 2
    workers; estimate / measured process CPU there, 9-point ε grid, featured algorithms):
    the PCA page's default (D = 50, 5 runs: 0.32 / 0.46) and D = 100 (0.83) stay light;
    D = 200, K = 50 with 5 runs (3.1 / 4.3) or 2 runs (1.5 / 1.8) is heavy, and so is the Baselines
    section past about a second (its default: 0.95 / 0.95; with 20 runs 2.8 / 2.7;
    ``python -m benchmarks.baselines_estimate``). The estimate counts what the old rules
    ignored: secure aggregation's draws, the power method's iterations, every round of the
    iterative methods, and the pool's draw and digest.
    """
    if not isinstance(getattr(spec, "data", "synthetic"), str):
        return True  # a real data set: loading and holding it belongs in a bounded child
    return work(spec).seconds >= HEAVY_SECONDS


def round_seconds(steps: int, products: int, *, dim: int, k: int) -> float:
    """Seconds of an iterative algorithm's rounds in one run (:attr:`PcaMethod.steps`).

    A run that steps at all pays :data:`RUN_SECONDS` once; each step :data:`STEP_SECONDS`
    of fixed overhead and a QR-sized 4DK² flops, each product A X its 2D²K flops, at
    :data:`ROUND_FLOPS`. A one-shot algorithm (no steps, no products) costs nothing here.

    Examples
    --------
    >>> round(round_seconds(1, 0, dim=20, k=10) / STEP_SECONDS, 3)  # overhead-bound at small D
    11.02
    >>> round_seconds(0, 0, dim=20, k=10)
    0.0
    """
    if steps == 0 and products == 0:
        return 0.0
    return (
        RUN_SECONDS
        + steps * (STEP_SECONDS + 4 * dim * k * k / ROUND_FLOPS)
        + products * 2 * dim * dim * k / ROUND_FLOPS
    )


def pool_seconds(pool: int, dim: int, *, draw: bool = True) -> float:
    """A sweep's fixed seconds for its pool of ``pool`` samples in D = ``dim``.

    Its provenance digest reads the pool once (:data:`POOL_READ_SECONDS` an element) and,
    with ``draw`` (a synthetic pool, drawn by the sweep), the draw
    (:data:`POOL_DRAW_SECONDS` an element).

    Examples
    --------
    >>> round(pool_seconds(60_000, 50), 4)  # the pages' synthetic pool at D = 50
    0.102
    """
    pool = check_int(pool, "pool", low=1)
    dim = check_int(dim, "dim", low=1)
    draw = check_bool(draw, "draw")
    return pool * dim * (POOL_READ_SECONDS + (POOL_DRAW_SECONDS if draw else 0.0))


def _eigh_seconds(dim: int) -> float:
    return max(1e-4, EIGH_200 * (dim / 200) ** 3)


def _pca(algorithm: str | Algorithm) -> PcaMethod:
    if isinstance(algorithm, Algorithm) and algorithm.pca is not None:
        return algorithm.pca
    return pca_method(algorithm, param="algorithms")


def _otd(algorithm: str | Algorithm) -> OtdMethod:
    if isinstance(algorithm, Algorithm) and algorithm.otd is not None:
        return algorithm.otd
    return otd_method(algorithm, param="algorithms")


def estimate_pca(
    *,
    dim: int,
    sites: int,
    n_max: int,
    pool: int,
    points: int,
    runs: int,
    algorithms: Sequence[str | Algorithm],
    k: int | None = None,
    faithful: bool = True,
    workers: int | None = None,
    draw_pool: bool = True,
) -> WorkEstimate:
    """Cost of :func:`dpcore.pca_sweep`: eigendecompositions per run, data draws, the pool.

    Each algorithm's eigendecompositions, extra random draws and round steps per run come
    from its registry record (``algorithms``: names or the records themselves). An iterative
    algorithm's T rounds cost :func:`round_seconds` of its ``steps`` (K: ``k``, default D, and
    ``faithful``, default True: upper bounds). The eigendecompositions and draws spread over
    ``workers`` (default :func:`dpcore.parallel.default_workers`); the rounds, each task's
    overhead (:data:`TASK_SECONDS`) and each noisy basis's scores (:data:`SCORE_SECONDS`) do
    not: they are Python-bound, and the sweep's threads share one interpreter (measured: the
    PCA page's Baselines sweep takes as long on two workers as on one, issue #50). The pool
    costs :func:`pool_seconds` once (``draw_pool``: the sweep draws it, synthetic data).
    """
    workers = workers or default_workers()
    methods = [_pca(a) for a in algorithms]
    per_run = sum(m.eighs(sites) for m in methods)
    draws = sum(m.draws(sites, dim) for m in methods)
    rounds = sum(round_seconds(*m.steps(sites, faithful), dim=dim, k=k or dim) for m in methods)
    scored = sum(not m.noiseless for m in methods)  # a noiseless basis is scored once
    tasks = points * runs
    values = {"dim": dim, "sites": sites, "n_per_site": n_max, "pool_size": pool}
    values |= {"grid": points, "runs": runs}
    time_terms = [  # the terms of ``seconds`` below
        (tasks * per_run * _eigh_seconds(dim) / workers, ("dim", "runs", "grid")),
        (tasks * draws * DRAW_SECONDS / workers, ("sites", "dim", "runs", "grid")),
        (tasks * sites * n_max * dim**2 / FLOPS, ("n_per_site", "sites", "dim", "runs", "grid")),
        (tasks * rounds, ("sites", "dim", "runs", "grid")),
        (tasks * (TASK_SECONDS + scored * SCORE_SECONDS), ("runs", "grid")),
        (pool_seconds(pool, dim, draw=draw_pool), ("pool_size", "dim")),
    ]
    memory_terms = [
        (8.0 * pool * dim, ("pool_size", "dim")),
        (8.0 * workers * (sites + 4) * dim**2, ("dim", "sites")),
        (8.0 * 3 * sites * n_max * dim, ("n_per_site", "sites", "dim")),
        (float(TASK_BYTES) * tasks, ("runs", "grid")),
    ]
    seconds = tasks * (per_run * _eigh_seconds(dim) + draws * DRAW_SECONDS) / workers
    seconds += tasks * sites * n_max * dim**2 / FLOPS  # second moments, when resampled
    seconds += tasks * (rounds + TASK_SECONDS + scored * SCORE_SECONDS)
    seconds += pool_seconds(pool, dim, draw=draw_pool)
    return WorkEstimate(
        seconds,
        8.0 * (pool * dim + workers * (sites + 4) * dim**2 + 3 * sites * n_max * dim)
        + float(TASK_BYTES) * tasks,
        tasks,
        _largest(time_terms, values),
        _largest(memory_terms, values),
        (("runs", runs), ("grid", points)),
    )


def estimate_otd(
    *,
    dim: int,
    k: int,
    sites: int,
    n_total: int,
    draws: int,
    points: int,
    runs: int,
    faithful: bool,
    algorithms: Sequence[str | Algorithm] | None = None,
    restarts: int = 10,
    max_iter: int = 100,
    workers: int | None = None,
) -> WorkEstimate:
    """Cost of :func:`dpcore.otd_sweep`: moments, noisy tensors, power method per run.

    The power method is counted at its iteration bound (batched over each block of a sweep's
    tasks: ~20 µs a step; a block's own fixed cost, ~30 ms, is left out: within the
    estimate's factor). Each algorithm whose registry record decomposes a tensor costs one
    noisy tensor and one power method per run; without ``algorithms``, the paper's six. The
    draws and whitenings spread over ``workers`` (default :func:`dpcore.parallel.default_workers`).
    """
    workers = workers or default_workers()
    tasks = points * runs
    methods = [] if algorithms is None else [_otd(a) for a in algorithms]
    per_run = 6 if algorithms is None else sum(m.decomposes for m in methods)
    extra = sum(m.draws(sites, dim) for m in methods)  # secure aggregation's integers
    seconds = draws * n_total * dim**3 / FLOPS / workers
    seconds += tasks * extra * DRAW_SECONDS / workers
    seconds += tasks * per_run * (dim**3 * (sites if faithful else 1) * 3e-8 + 2e-4 * k)
    seconds += k * restarts * max_iter * (2e-5 + tasks * per_run * k**3 / FLOPS)
    tensors = sites * dim**3 * (4 if faithful else 2)
    memory = 8.0 * (workers * tensors + 4096 * dim**2 * 3 + tasks * per_run * k**3)
    memory += float(TASK_BYTES) * tasks
    values = {"dim": dim, "k": k, "sites": sites, "n_per_site": n_total // max(sites, 1)}
    values |= {"grid": points, "runs": runs, "restarts": restarts, "max_iter": max_iter}
    moments = ("n_per_site", "sites", "dim") + (("runs", "grid") if draws > 1 else ())
    whitening = ("dim", "sites", "runs", "grid") if faithful else ("dim", "runs", "grid")
    time_terms = [  # the terms of ``seconds`` above, in its order
        (draws * n_total * dim**3 / FLOPS / workers, moments),
        (tasks * extra * DRAW_SECONDS / workers, ("sites", "dim", "runs", "grid")),
        (tasks * per_run * dim**3 * (sites if faithful else 1) * 3e-8, whitening),
        (tasks * per_run * 2e-4 * k, ("runs", "grid", "k")),
        (k * restarts * max_iter * 2e-5, ("max_iter", "restarts", "k")),
        (
            k * restarts * max_iter * tasks * per_run * k**3 / FLOPS,
            ("k", "max_iter", "restarts", "runs", "grid"),
        ),
    ]
    memory_terms = [
        (8.0 * workers * tensors, ("dim", "sites")),
        (8.0 * 4096 * dim**2 * 3, ("dim",)),
        (8.0 * tasks * per_run * k**3, ("k", "runs", "grid")),
        (float(TASK_BYTES) * tasks, ("runs", "grid")),
    ]
    return WorkEstimate(
        seconds,
        memory,
        tasks,
        _largest(time_terms, values),
        _largest(memory_terms, values),
        (("runs", runs), ("grid", points)),
    )


# how to reduce each driver, for the advice at the end of a refusal
_ADVICE = {
    "dim": "a smaller dim",
    "k": "a smaller k",
    "sites": "fewer sites",
    "n_per_site": "a smaller n_per_site",
    "pool_size": "a smaller pool_size",
    "grid": "a shorter grid",
    "runs": "fewer runs",
    "restarts": "fewer restarts",
    "max_iter": "a smaller max_iter",
}


def _setting(name: str, value: object) -> str:
    if name == "grid":
        return f"{value:,} grid point" + ("" if value == 1 else "s")
    return f"{name} = {value:,}"


def _refusal(drivers: Drivers, what: str, cost: str, limit: str) -> str:
    """"dim = 5,000 (with sites = 3): this sweep needs about …; the limit is …. Use …"."""
    # a single grid point is no driver worth naming (it cannot be made shorter)
    drivers = tuple((n, v) for n, v in drivers if not (n == "grid" and v == 1))
    if not drivers:  # an estimate made without its drivers
        return f"{what} {cost}; the limit is {limit}."
    lead, *rest = (_setting(n, v) for n, v in drivers)
    with_ = f" (with {', '.join(rest)})" if rest else ""
    advice = [_ADVICE[n] for n, _ in drivers]
    advice_text = advice[0] if len(advice) == 1 else f"{', '.join(advice[:-1])} or {advice[-1]}"
    return f"{lead}{with_}: {what} {cost}; the limit is {limit}. Use {advice_text}."


def _gib(memory_bytes: float) -> str:
    gib = memory_bytes / 2**30
    return f"{gib:.1f}" if gib < 1e4 else f"{gib:.3g}"


def check_budget(
    estimate: WorkEstimate, *, what: str, budget: WorkBudget = CLASSROOM
) -> WorkEstimate:
    """Raise ValueError if the estimate passes a bound of ``budget``, naming what drives it.

    ``budget`` defaults to :data:`CLASSROOM`: a caller that checks without saying against
    what checks against the class server's limits.

    Examples
    --------
    >>> est = estimate_pca(dim=5, sites=3, n_max=300, pool=10**8, points=1, runs=4,
    ...                    algorithms=["cape"])
    >>> check_budget(est, what="this sweep")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: pool_size = 100,000,000 (with dim = 5): this sweep needs about 3.7 GiB ...
    """
    if not isinstance(budget, WorkBudget):
        raise TypeError(f"budget must be a WorkBudget; got {type(budget).__name__}")
    if budget.tasks is not None and estimate.tasks > budget.tasks:
        raise ValueError(
            _refusal(
                estimate.tasks_by,
                what,
                f"asks for {estimate.tasks:,} grid points × runs",
                f"{budget.tasks:,}" + (f" ({budget.label})" if budget.label else ""),
            )
        )
    if budget.memory_bytes is not None and estimate.memory_bytes > budget.memory_bytes:
        raise ValueError(
            _refusal(
                estimate.memory_by,
                what,
                f"needs about {_gib(estimate.memory_bytes)} GiB of memory",
                f"{budget.memory_bytes / 2**30:.3g} GiB"
                + (f" ({budget.label})" if budget.label else ""),
            )
        )
    if budget.seconds is not None and estimate.seconds > budget.seconds:
        raise ValueError(
            _refusal(
                estimate.seconds_by,
                what,
                f"would take about {estimate.seconds / 60:,.0f} minutes",
                f"{budget.seconds / 60:g} minutes" + (f" ({budget.label})" if budget.label else ""),
            )
        )
    return estimate
