"""The distributed-PCA sweep: captured energy of every algorithm along one swept axis."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from typing import Any, cast

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpcore._validation import RngLike, check_rng
from dpcore.experiments.limits import WorkBudget, check_budget, check_feasible
from dpcore.experiments.sweeps.provenance import frame_attrs, seed_of
from dpcore.experiments.sweeps.scores import PCA_METRICS, PcaTruth
from dpcore.experiments.sweeps.spec import GridPoint, PcaSpec, RunStreams, keywords_of, resolve_rng
from dpcore.factorization.datasets import (
    Dataset,
    draw_sites,
    second_moments,
    split_sizes,
    synthetic_dataset,
)
from dpcore.factorization.metrics import optimal_energy, top_k_eigvecs
from dpcore.factorization.registry import PcaInputs, PcaMethod, SitePrivacy, streams
from dpcore.mechanisms.calibration import (
    classic_warning_once,
    second_moment_sensitivity,
    site_noise_std,
)
from dpcore.parallel import parallel_map, planned_workers, single_blas


def _noise_std(spec: PcaSpec, point: GridPoint) -> NDArray[np.float64]:
    sizes, _ = spec.sites.layout(point)
    return site_noise_std(
        sizes,
        epsilon=point.epsilon,
        delta=point.delta,
        calibration=spec.privacy.gaussian,
    )


def _privacy(spec: PcaSpec, point: GridPoint) -> SitePrivacy:
    """Δ_s, (ε, δ) and the secure-aggregation settings of one grid point."""
    sizes, _ = spec.sites.layout(point)
    return SitePrivacy(
        sensitivity=second_moment_sensitivity(sizes, neighbouring=spec.privacy.neighbouring),
        epsilon=point.epsilon,
        delta=point.delta,
        calibration=spec.privacy.gaussian,
        bits=point.secagg_bits,
        scale=point.secagg_scale,
        neighbouring=spec.privacy.neighbouring,
    )


TaskKey = tuple[int, int]  # (grid value's position, run)


def task_key(index: int, runs: int) -> TaskKey:
    """The key ``(i, run)`` of a sweep's ``index``-th task (grid value by grid value).

    Examples
    --------
    >>> task_key(7, 3)
    (2, 1)
    """
    return divmod(index, runs)


def check_completed(
    completed: Mapping[TaskKey, Sequence[Mapping[str, Any]]] | None, keys: Sequence[TaskKey]
) -> dict[TaskKey, Sequence[Mapping[str, Any]]]:
    """``completed`` checked against a sweep's task keys: a dict, empty for None.

    Raises
    ------
    TypeError
        Unless ``completed`` is a mapping of ``(i, run)`` keys to sequences of rows.
    ValueError
        For a key that is no task of the sweep.
    """
    if completed is None:
        return {}
    if not isinstance(completed, Mapping):
        raise TypeError(f"completed must map (i, run) keys to rows; got {type(completed).__name__}")
    known = set(keys)
    out: dict[TaskKey, Sequence[Mapping[str, Any]]] = {}
    for key, rows in completed.items():
        if key not in known:
            raise ValueError(
                f"completed must hold keys (i, run) of this sweep's {len(keys)} tasks, i < "
                f"{keys[-1][0] + 1 if keys else 0} and run < {keys[-1][1] + 1 if keys else 0}; "
                f"got {key!r}"
            )
        if isinstance(rows, (str, bytes)) or not isinstance(rows, Sequence):
            raise TypeError(f"completed[{key!r}] must be a sequence of rows; got {rows!r}")
        out[key] = rows
    return out


@single_blas
def run_pca_sweep(
    spec: PcaSpec,
    rng: RngLike,
    *,
    workers: int | None = None,
    executor: Executor | None = None,
    budget: WorkBudget | None = None,
    completed: Mapping[TaskKey, Sequence[Mapping[str, Any]]] | None = None,
    on_task: Callable[[TaskKey, list[dict[str, Any]]], None] | None = None,
) -> pd.DataFrame:
    """Run a validated PCA sweep; see :func:`pca_sweep` for the frame it returns.

    ``rng`` is spawned into the data stream (synthetic pool), the draw stream (which rows
    each site holds) and the noise stream (one child per grid value, run and algorithm).
    ``workers`` and ``executor`` say where the (grid point, run) tasks run
    (:func:`dpcore.parallel.parallel_map`); the frame is identical for any choice.
    ``budget`` (:class:`dpcore.WorkBudget`; default None, no bound) refuses the sweep
    before any work when its estimate on those workers passes it. The
    algorithms run from the spec's own records, so a spec pickled to another process runs
    there with algorithms registered at runtime in this one.

    A run can be kept as it goes and resumed (``python -m dpcore sweep --resume``). Each
    (grid point, run) task is keyed ``(i, run)``, ``i`` the grid value's position in the
    grid; ``on_task(key, rows)`` receives each task's rows as they arrive (in this process,
    in the order they finish), and ``completed`` maps keys to the rows an earlier run gave:
    those tasks are not run again, their rows are taken as they are. Every task's streams
    are spawned whichever run, so the frame is the one a run without them gives.

    Examples
    --------
    >>> spec = PcaSpec.build(epsilon=[0.5, 1.0], dim=8, k=2, runs=1, pool_size=500,
    ...                      n_per_site=20, sites=3, algorithms=["cape", "conv"])
    >>> run_pca_sweep(spec, np.random.default_rng(0)).shape
    (4, 10)
    """
    if not isinstance(spec, PcaSpec):
        raise TypeError(f"spec must be a PcaSpec (PcaSpec.build); got {type(spec).__name__}")
    rng = check_rng(rng)
    grid = spec.grid
    if on_task is not None and not callable(on_task):
        raise TypeError(f"on_task must be callable; got {type(on_task).__name__}")
    check_feasible(spec, what="this PCA sweep")  # no budget but this machine's memory
    if budget is not None:
        estimate = spec.estimate(workers=planned_workers(workers, executor))
        check_budget(estimate, what="this PCA sweep", budget=budget)
    # the tasks' keys, once the sweep is known to fit: completed is checked before any work
    keys = [task_key(i, spec.runs.count) for i in range(len(grid.values) * spec.runs.count)]
    done = check_completed(completed, keys)
    seed = seed_of(rng)  # before spawning: the frame's attrs rebuild this Generator
    data_rng, draw_rng, noise_rng = rng.spawn(3)
    if isinstance(spec.data, Dataset):
        dataset = spec.data
    else:
        dataset = synthetic_dataset(dim=spec.dim, k=spec.k, n_samples=spec.pool_size, rng=data_rng)
    truth = PcaTruth(
        dataset.reference,
        top_k_eigvecs(dataset.reference, spec.k),
        optimal_energy(dataset.reference, spec.k),
    )

    # What the tasks need, and no more: an executor in another process receives them
    # pickled (the pool only when the data are drawn per run; the records, not names, so a
    # runtime-registered algorithm runs there too).
    metrics, k, rank, faithful = spec.metrics, spec.k, spec.rank, spec.faithful
    layout, axis = spec.sites, grid.axis
    methods = {r.name: cast(PcaMethod, r.method("pca")) for r in spec.records}
    pool = dataset if grid.resamples else None

    def evaluate(basis: NDArray[np.float64]) -> dict[str, float]:
        return {name: PCA_METRICS[name](basis, truth) for name in metrics}

    fixed_moments = None
    if not grid.resamples:
        sizes = split_sizes(grid.n_per_site, grid.sites, spec.sites.shares)
        fixed_moments = second_moments(draw_sites(dataset, sizes, rng=draw_rng))

    with classic_warning_once():  # calibration here, in this thread: its warnings collapse
        taus = {v: _noise_std(spec, grid.point(v)) for v in dict.fromkeys(grid.values)}
    privacy = {v: _privacy(spec, grid.point(v)) for v in dict.fromkeys(grid.values)}

    # A noiseless (non-private) basis is a deterministic function of the moments and
    # weights: with one data draw (ε and δ sweeps) it is computed once, not once per grid
    # point and run.
    fixed_noiseless: dict[str, dict[str, float]] = {}
    if fixed_moments is not None:
        first = grid.point(grid.values[0])
        _, weights = spec.sites.layout(first)
        inputs = PcaInputs(
            moments=fixed_moments,
            k=k,
            tau=taus[grid.values[0]],
            weights=weights,
            rank=rank,
            faithful=faithful,
            privacy=privacy[grid.values[0]],
        )
        for alg, method in methods.items():
            if method.noiseless:  # never draws from its stream
                fixed_noiseless[alg] = evaluate(method.run(inputs, np.random.default_rng(0)))

    def task(r: RunStreams) -> list[dict[str, Any]]:
        sizes, weights = layout.layout(r.point)
        if pool is not None:
            moments = second_moments(draw_sites(pool, sizes, rng=r.draw))
        else:
            assert fixed_moments is not None  # one draw for ε and δ sweeps
            moments = fixed_moments
        value = r.point.value(axis)
        inputs = PcaInputs(
            moments=moments,
            k=k,
            tau=taus[value],
            weights=weights,
            rank=rank,
            faithful=faithful,
            privacy=privacy[value],
        )
        alg_rngs = streams(methods, r.noise)  # keyed by name (registry.stream)
        out = []
        for alg, method in methods.items():
            if alg in fixed_noiseless:
                scores = fixed_noiseless[alg]
            else:
                scores = evaluate(method.run(inputs, alg_rngs[alg]))
            out.append({"algorithm": alg, **r.point.row(), "run": r.run, **scores})
        return out

    tasks = list(spec.runs.streams(grid, noise_rng, draw_rng))
    todo = [i for i, key in enumerate(keys) if key not in done]
    report = None
    if on_task is not None:
        hand = on_task

        def report(index: int, rows: list[dict[str, Any]]) -> None:
            hand(keys[todo[index]], rows)

    fresh = parallel_map(
        task, [tasks[i] for i in todo], workers, executor=executor, on_result=report
    )
    by_key: dict[TaskKey, Sequence[Mapping[str, Any]]] = dict(done)
    by_key.update((keys[i], rows) for i, rows in zip(todo, fresh, strict=True))
    rows = [row for key in keys for row in by_key[key]]
    frame = pd.DataFrame(rows, columns=["algorithm", *grid.columns, "run", *metrics])
    frame.attrs.update(frame_attrs("pca", spec.keywords(), seed))  # dpcore.rerun(frame) redoes it
    return frame


@single_blas
@keywords_of(PcaSpec.build)
def pca_sweep(
    *,
    workers: int | None = None,
    executor: Executor | None = None,
    budget: WorkBudget | None = None,
    rng: int | np.random.Generator | None = 0,
    seed: int | None = None,
    **keywords: Any,
) -> pd.DataFrame:
    """Captured energy of distributed PCA algorithms along one swept axis.

    A thin front: ``PcaSpec.build(**keywords)`` (:meth:`~dpcore.PcaSpec.build` documents
    every keyword and the frame) run by :func:`run_pca_sweep`.

    Parameters
    ----------
    workers, executor
        Where the (grid point, run) tasks run (:func:`dpcore.parallel.parallel_map`: threads,
        a process pool, Dask's ``Client.get_executor()``); the frame is identical for any.
    budget : WorkBudget, optional
        Refuse the sweep before any work when its estimate on those workers passes this
        (:class:`dpcore.experiments.limits.WorkBudget`); default: no bound.
    rng : int, Generator or None
        Everything random derives from it (SPEC 7): same seed, same frame. Default 0.
    seed : int, optional
        Deprecated older name of ``rng`` (warns).
    **keywords
        Those of :meth:`dpcore.PcaSpec.build`.

    Returns
    -------
    pandas.DataFrame
        One row per (algorithm, grid point, run), one column per axis and metric; its
        ``attrs`` hold the spec, the seed and the code (:func:`dpcore.rerun` redoes it).
    """
    spec = PcaSpec.build(**keywords)
    generator = resolve_rng(rng, seed)
    return run_pca_sweep(spec, generator, workers=workers, executor=executor, budget=budget)
