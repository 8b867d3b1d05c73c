"""The tensor-decomposition sweep.

Component recovery along one swept axis, and one run's recovered weights.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd

from dpcore._validation import RngLike, check_rng
from dpcore.experiments.limits import WorkBudget, check_budget, check_feasible
from dpcore.experiments.sweeps.pca import TaskKey, check_completed, task_key
from dpcore.experiments.sweeps.provenance import Seed, frame_attrs, seed_of
from dpcore.experiments.sweeps.scores import OTD_METRICS
from dpcore.experiments.sweeps.spec import GridPoint, OtdSpec, RunStreams, keywords_of, resolve_rng
from dpcore.factorization.metrics import matching
from dpcore.factorization.models import MixtureModel, make_model
from dpcore.factorization.moments import SiteMoments, moment_sensitivities, site_moments
from dpcore.factorization.otd import WhitenedTensor, decompose_batch
from dpcore.factorization.registry import NoiseScales, OtdInputs, OtdMethod, SitePrivacy, streams
from dpcore.factorization.tensor import Recovery
from dpcore.mechanisms.calibration import (
    ClassicGaussianWarning,
    classic_warning_once,
    gaussian_sigmas,
)
from dpcore.parallel import counted_as, parallel_map, planned_workers, single_blas


@dataclass(frozen=True, eq=False)
class Outcome:
    """One algorithm's result in one (grid point, run).

    Attributes
    ----------
    point : GridPoint
        ε, δ, N_s and S of the grid point.
    run : int
    algorithm : str
    recovery : Recovery
        Recovered components and weights.
    private_preprocessing : bool
        False where the data's scaling or σ² came from the data (not private).
    """

    point: GridPoint
    run: int
    algorithm: str
    recovery: Recovery
    private_preprocessing: bool


@dataclass(frozen=True, eq=False)
class _Pending:
    """An algorithm's output before the batched power method.

    A whitened tensor (with the stream its power method uses) or, for a non-decomposing
    baseline, the final recovery.
    """

    point: GridPoint
    run: int
    algorithm: str
    result: WhitenedTensor | Recovery
    power_rng: np.random.Generator
    decomposes: bool
    private_preprocessing: bool


def _noise_scales(
    spec: OtdSpec, planted: MixtureModel, point: GridPoint, sigma2: float
) -> NoiseScales:
    """Per-site noise for ε₁ = split·ε on M2 and ε₂ = (1 − split)·ε on M3 (same for δ)."""
    sizes, _ = spec.sites.layout(point)
    method = spec.privacy.gaussian
    (eps1, dlt1), (eps2, dlt2) = spec.privacy.stages(point.epsilon, point.delta)
    sens2, sens3 = moment_sensitivities(
        planted.kind, sizes, dim=planted.dim, sigma2=sigma2, relation=spec.privacy.sensitivity
    )

    def stage(sens: Any, eps: float, dlt: float) -> SitePrivacy:
        bits, scale = point.secagg_bits, point.secagg_scale
        return SitePrivacy(np.asarray(sens, dtype=float), eps, dlt, method, bits, scale)

    return NoiseScales(
        tau2=gaussian_sigmas(sens2, epsilon=eps1, delta=dlt1, calibration=method),
        tau3=gaussian_sigmas(sens3, epsilon=eps2, delta=dlt2, calibration=method),
        tau2_avn=gaussian_sigmas(sens2, epsilon=eps1, delta=dlt1 + dlt2, calibration=method),
        beta=eps2 / sens3,
        privacy2=stage(sens2, eps1, dlt1),
        privacy3=stage(sens3, eps2, dlt2),
    )


@dataclass(frozen=True, eq=False)
class OtdRun:
    """A tensor sweep's outcomes and the planted model they are scored against.

    ``kept``: the rows of the tasks an earlier run kept (``completed`` of
    :func:`run_otd_sweep`), by key ``(i, run)``; they have no outcome here, and
    :func:`otd_frame` puts them in their place.
    """

    model: MixtureModel
    outcomes: list[Outcome]
    seed: Seed = None  # the rng it ran from (provenance.seed_of), for the frame's attrs
    kept: Mapping[TaskKey, Sequence[Mapping[str, Any]]] = field(default_factory=dict)


# The (grid point, run) tasks go through the three phases (draws, calibration, whitening)
# and the batched power method a block at a time: a block's tasks are finished (their rows
# kept, ``on_task``) before the next block starts. A tensor's power method does not depend
# on what else is in its batch (``tensor_power_method_batch``), so the frame is the same
# for any block size; a block this large pays the power method's per-step overhead
# (~20 µs) once for many tensors.
BLOCK_TASKS = 64
BLOCK_TASKS_PER_WORKER = 8


def block_tasks(workers: int) -> int:
    """Tasks in one block of a tensor sweep on ``workers`` workers: 8 a worker, 64 at least.

    Examples
    --------
    >>> block_tasks(2), block_tasks(100)
    (64, 800)
    """
    return max(BLOCK_TASKS, BLOCK_TASKS_PER_WORKER * workers)


def _task_rows(
    spec: OtdSpec, model: MixtureModel, outcomes: Sequence[Outcome]
) -> list[dict[str, Any]]:
    """The frame's rows of ``outcomes``: the algorithm, the axes, the run, the metrics."""
    return [
        {
            "algorithm": o.algorithm,
            **o.point.row(),
            "run": o.run,
            **{name: OTD_METRICS[name](o.recovery, model) for name in spec.metrics},
            "private_preprocessing": o.private_preprocessing,
        }
        for o in outcomes
    ]


@single_blas
def run_otd_sweep(
    spec: OtdSpec,
    rng: RngLike,
    *,
    workers: int | None = None,
    executor: Executor | None = None,
    budget: WorkBudget | None = None,
    completed: Mapping[TaskKey, Sequence[Mapping[str, Any]]] | None = None,
    on_task: Callable[[TaskKey, list[dict[str, Any]]], None] | None = None,
) -> OtdRun:
    """Run a validated tensor sweep: one :class:`Outcome` per (grid point, run, algorithm).

    ``rng`` is spawned into the model stream (the planted model), the draw stream (the
    sites' samples) and the noise stream (one child per grid value, run and algorithm).

    The (grid point, run) tasks run a block at a time (:func:`block_tasks`), each block in
    three phases: data draws (threads), calibration (this thread, so that its warnings
    collapse into one: ``warnings.catch_warnings`` is not thread-safe), whitening (threads);
    then the tensor power method runs batched over the block's whitened tensors, in this
    process. ``workers`` and ``executor`` say where the draws and whitenings run
    (:func:`dpcore.parallel.parallel_map`); the outcomes are identical for any choice, and
    for any block size (each tensor's power method is the one it gets alone).
    ``budget``: as in :func:`dpcore.run_pca_sweep` (default None, no bound).

    A run can be kept as it goes and resumed, as :func:`dpcore.run_pca_sweep`'s:
    ``on_task(key, rows)`` receives each task's frame rows (:func:`otd_frame`) as its block
    finishes, keyed ``(i, run)``, ``i`` the grid value's position; ``completed`` maps keys
    to the rows an earlier run gave: those tasks are not run again, and the result holds
    their rows (``kept``) in place of outcomes. Every task's streams are spawned whichever
    run, so the frame is the one a run without them gives.
    """
    if not isinstance(spec, OtdSpec):
        raise TypeError(f"spec must be an OtdSpec (OtdSpec.build); got {type(spec).__name__}")
    rng = check_rng(rng)
    grid = spec.grid
    if on_task is not None and not callable(on_task):
        raise TypeError(f"on_task must be callable; got {type(on_task).__name__}")
    check_feasible(spec, what="this tensor sweep")  # no budget but this machine's memory
    if budget is not None:
        estimate = spec.estimate(workers=planned_workers(workers, executor))
        check_budget(estimate, what="this tensor sweep", budget=budget)
    keys = [task_key(i, spec.runs.count) for i in range(len(grid.values) * spec.runs.count)]
    done = check_completed(completed, keys)
    seed = seed_of(rng)  # before spawning (see run_pca_sweep)
    data_rng, draw_rng, noise_rng = rng.spawn(3)
    planted = make_model(spec.model, spec.dim, spec.k, sigma2=spec.sigma2, rng=data_rng)
    moment_opts = (
        {"scaling": spec.scaling, "sigma2_source": spec.sigma2_source}
        if spec.model == "mog"
        else {}
    )

    def draw(point: GridPoint, rng: np.random.Generator) -> SiteMoments:
        sizes, _ = spec.sites.layout(point)
        return site_moments(planted, sizes, rng=rng, **moment_opts)

    todo = [i for i, key in enumerate(keys) if key not in done]
    # The one data draw of ε and δ sweeps comes first: drawing spawns site streams from
    # draw_rng, and the per-run streams are spawned after them.
    fixed = None if grid.resamples or not todo else draw(grid.point(grid.values[0]), draw_rng)
    points = list(spec.runs.streams(grid, noise_rng, draw_rng))

    # Calibration in this thread, its ClassicGaussianWarnings collapsed into one for the
    # sweep: with one data draw every grid value's noise is known at once; with a draw per
    # task (N_s and S sweeps: ε and δ are the same at every point, and so is the warning)
    # each block's new (value, σ²) are calibrated as it comes, the first block warning.
    cache: dict[tuple[Any, float], NoiseScales] = {}  # noise depends on the grid value and σ²
    if fixed is not None:
        with classic_warning_once():
            for value in dict.fromkeys(grid.values):
                point = grid.point(value)
                key = (point.value(grid.axis), fixed.sigma2)
                cache[key] = _noise_scales(spec, planted, point, fixed.sigma2)
    warned = [fixed is not None]

    def calibrate(runs: list[RunStreams], moments: list[SiteMoments]) -> list[NoiseScales]:
        with warnings.catch_warnings():
            if warned[0]:
                warnings.simplefilter("ignore", ClassicGaussianWarning)
            with classic_warning_once():
                for r, mom in zip(runs, moments, strict=True):
                    key = (r.point.value(grid.axis), mom.sigma2)
                    if key not in cache:
                        cache[key] = _noise_scales(spec, planted, r.point, mom.sigma2)
        warned[0] = True
        return [
            cache[(r.point.value(grid.axis), m.sigma2)] for r, m in zip(runs, moments, strict=True)
        ]

    # the spec's records, not names, travel to the tasks (see run_pca_sweep)
    methods = {r.name: cast(OtdMethod, r.method("otd")) for r in spec.records}

    def whiten(task: tuple[RunStreams, SiteMoments, NoiseScales]) -> list[_Pending]:
        r, mom, noise = task
        _, weights = spec.sites.layout(r.point)
        inputs = OtdInputs(
            moments=mom,
            k=spec.k,
            weights=weights,
            noise=noise,
            faithful=spec.faithful,
            model=planted,
        )
        alg_rngs = streams(methods, r.noise)  # keyed by name (registry.stream)
        out = []
        for alg, method in methods.items():
            power_rng, alg_noise_rng = alg_rngs[alg].spawn(2)
            # a decomposing method whitens (power method below, batched); others recover
            result = method.run(inputs, alg_noise_rng if method.decomposes else alg_rngs[alg])
            out.append(
                _Pending(
                    r.point,
                    r.run,
                    alg,
                    result,
                    power_rng,
                    method.decomposes,
                    mom.private_preprocessing,
                )
            )
        return out

    outcomes: list[Outcome] = []
    size = block_tasks(planned_workers(workers, executor))
    with counted_as(len(todo)) as count:  # progress: the tasks, whitened
        for first in range(0, len(todo), size):
            block = todo[first : first + size]
            runs = [points[i] for i in block]
            if fixed is None:
                draws = parallel_map(
                    lambda r: draw(r.point, r.draw), runs, workers, executor=executor
                )
            else:
                draws = [fixed] * len(runs)
            tasks = list(zip(runs, draws, calibrate(runs, draws), strict=True))
            chunks = parallel_map(
                whiten, tasks, workers, executor=executor, on_result=lambda _, __: count(1)
            )
            outcomes_of = _power_method(spec, planted, chunks)
            for i, task_outcomes in zip(block, outcomes_of, strict=True):
                if on_task is not None:
                    on_task(keys[i], _task_rows(spec, planted, task_outcomes))
                outcomes.extend(task_outcomes)
    return OtdRun(planted, outcomes, seed, kept=done)


def _power_method(
    spec: OtdSpec, planted: MixtureModel, chunks: list[list[_Pending]]
) -> list[list[Outcome]]:
    """Each task's outcomes: the power method batched over every whitened tensor of a block."""
    tensors = [p for chunk in chunks for p in chunk if p.decomposes]
    recovered = iter(
        decompose_batch(
            [p.result for p in tensors],  # type: ignore[misc]
            spec.k,
            kind=planted.kind,
            options=spec.power,
            rngs=[p.power_rng for p in tensors],
        )
    )
    out = []
    for chunk in chunks:
        task_outcomes = []
        for p in chunk:
            rec = next(recovered) if p.decomposes else p.result
            assert isinstance(rec, Recovery)
            task_outcomes.append(Outcome(p.point, p.run, p.algorithm, rec, p.private_preprocessing))
        out.append(task_outcomes)
    return out


def otd_frame(spec: OtdSpec, result: OtdRun) -> pd.DataFrame:
    """The tidy frame of a tensor sweep: one row per outcome, one column per metric.

    The rows an earlier run kept (``result.kept``) take their tasks' places, grid value by
    grid value and run by run, as an uninterrupted run gives them.
    """
    if not isinstance(spec, OtdSpec):
        raise TypeError(f"spec must be an OtdSpec (OtdSpec.build); got {type(spec).__name__}")
    if not isinstance(result, OtdRun):
        raise TypeError(f"result must be an OtdRun (run_otd_sweep); got {type(result).__name__}")
    rows = _task_rows(spec, result.model, result.outcomes)
    if result.kept:  # the outcomes are those of the other tasks, in order, one per algorithm
        per_task = len(spec.records)
        runs = spec.runs.count
        keys = [task_key(i, runs) for i in range(len(spec.grid.values) * runs)]
        fresh = iter(rows)
        if len(rows) != per_task * sum(key not in result.kept for key in keys):
            raise ValueError(
                f"result must hold one outcome per algorithm ({per_task}) of every task it "
                f"did not keep; got {len(rows)} outcomes and {len(result.kept)} kept tasks"
            )
        rows = [
            dict(row)
            for key in keys
            for row in (
                result.kept[key] if key in result.kept else itertools.islice(fresh, per_task)
            )
        ]
    columns = ["algorithm", *spec.grid.columns, "run", *spec.metrics, "private_preprocessing"]
    frame = pd.DataFrame(rows, columns=columns)
    frame.attrs.update(frame_attrs("otd", spec.keywords(), result.seed))  # see run_pca_sweep
    return frame


def example_table(result: OtdRun) -> pd.DataFrame:
    """True and recovered mixing weights per algorithm, from a sweep's first run.

    Recovered components are matched one-to-one to the truth
    (:func:`dpcore.factorization.metrics.matching`).
    """
    model = result.model
    table: dict[str, Any] = {
        "component": np.arange(1, model.k + 1),
        "true_weight": model.weights,
    }
    for o in result.outcomes:
        if o.run == 0 and o.algorithm not in table:
            recovered = np.empty(model.k)
            recovered[matching(o.recovery.components, model.components)] = o.recovery.weights
            table[o.algorithm] = recovered
    return pd.DataFrame(table)


@keywords_of(OtdSpec.build)
def otd_spec(**keywords: Any) -> OtdSpec:
    """``OtdSpec.build(**keywords)``: see :meth:`dpcore.OtdSpec.build`."""
    return OtdSpec.build(**keywords)


@single_blas
@keywords_of(OtdSpec.build)
def otd_sweep(
    *,
    workers: int | None = None,
    executor: Executor | None = None,
    budget: WorkBudget | None = None,
    rng: int | np.random.Generator | None = 0,
    seed: int | None = None,
    **keywords: Any,
) -> pd.DataFrame:
    """Component recovery of distributed tensor decomposition along one swept axis.

    A thin front: ``OtdSpec.build(**keywords)`` (:meth:`~dpcore.OtdSpec.build` documents
    every keyword and the frame) run by :func:`run_otd_sweep` and scored by
    :func:`otd_frame`.

    Parameters
    ----------
    workers, executor
        Where the data draws and noisy moments run, as in :func:`dpcore.pca_sweep`; the
        batched power method runs in this process.
    budget : WorkBudget, optional
        As in :func:`dpcore.pca_sweep`: no bound unless given.
    rng : int, Generator or None
        Everything random derives from it (SPEC 7): same seed, same frame. Default 0.
    seed : int, optional
        Deprecated older name of ``rng`` (warns).
    **keywords
        Those of :meth:`dpcore.OtdSpec.build`.

    Returns
    -------
    pandas.DataFrame
        One row per (algorithm, grid point, run), one column per axis and metric, and
        ``private_preprocessing``; its ``attrs`` hold the spec, the seed and the code
        (:func:`dpcore.rerun` redoes it).
    """
    spec = OtdSpec.build(**keywords)
    generator = resolve_rng(rng, seed)
    result = run_otd_sweep(spec, generator, workers=workers, executor=executor, budget=budget)
    return otd_frame(spec, result)


def otd_example_of(
    spec: OtdSpec, rng: RngLike, *, workers: int | None = None, budget: WorkBudget | None = None
) -> pd.DataFrame:
    """True and recovered mixing weights of one run of ``spec`` (at one run), per algorithm.

    ``spec`` should hold one grid point (scalar ε, δ, N_s, S); with more, every point's first
    run is drawn and the first point's weights are shown. ``runs`` is taken as 1.

    Returns
    -------
    pandas.DataFrame
        Columns ``component``, ``true_weight`` and one column of recovered weights per
        algorithm, under the one-to-one matching of :func:`dpcore.factorization.metrics.matching`.
    """
    if not isinstance(spec, OtdSpec):
        raise TypeError(f"spec must be an OtdSpec (OtdSpec.build); got {type(spec).__name__}")
    if spec.runs.count != 1:
        spec = spec.replace(runs=1)
    return example_table(run_otd_sweep(spec, rng, workers=workers, budget=budget))


@single_blas
def otd_example(
    *,
    rng: int | np.random.Generator | None = 0,
    seed: int | None = None,
    workers: int | None = None,
    budget: WorkBudget | None = None,
    **params: Any,
) -> pd.DataFrame:
    """True and recovered mixing weights of one run, per algorithm (matched components).

    A thin front: ``otd_example_of(OtdSpec.build(**params), rng)``.

    Parameters
    ----------
    rng, seed, workers, budget
        As in :func:`otd_sweep`.
    **params
        The keywords of :meth:`dpcore.OtdSpec.build`, with scalar ε, δ, N_s and S; ``runs``
        is 1.

    Returns
    -------
    pandas.DataFrame
        Columns ``component``, ``true_weight`` and one column of recovered weights per
        algorithm, under the one-to-one matching of :func:`dpcore.factorization.metrics.matching`.
    """
    spec = OtdSpec.build(**{**params, "runs": 1})
    return otd_example_of(spec, resolve_rng(rng, seed), workers=workers, budget=budget)
