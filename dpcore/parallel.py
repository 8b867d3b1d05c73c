"""Independent tasks on every core, with results that do not depend on the scheduling.

Two resources are managed here, once for the whole package:

- **Workers**: how many tasks run at once. By default the CPUs this process may use;
  ``CAPE_WORKERS`` (environment) or a ``workers=`` argument overrides it.
- **Executors**: threads of this process by default; any :class:`concurrent.futures.Executor`
  instead (a process pool, Dask's ``Client.get_executor()`` for a cluster). Other executors get
  one submission per worker, carrying the task function (and the large inputs it closes over:
  the data pool, the moments) once, with that worker's share of the items.
- **Progress**: :func:`report_progress` hands a callback the tasks done and the tasks known so
  far, as the tasks of top-level :func:`parallel_map` calls finish (the sweeps' (grid point,
  run) tasks; maps nested inside a task are part of it). A page shows the fraction done and an
  estimate of the time left from them (``ui.jobs``, from ``serving.jobs``).
- **BLAS threads**: one per worker while the core computes (:func:`one_blas_thread`). Small
  dense linear algebra (D ≤ ~800) is slower with several BLAS threads per call than with one
  thread per task, and a multi-threaded BLAS sums in an order that depends on its thread count:
  the tensor power method amplifies those last-bit differences into different local optima, so
  the same seed gave different numbers on machines with different BLAS settings. Pinning inside
  the core makes results and speed independent of ``OPENBLAS_NUM_THREADS``.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import os
import pickle
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any, TypeVar

from threadpoolctl import ThreadpoolController

from dpcore._validation import check_int

T = TypeVar("T")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])

WORKERS_ENV = "CAPE_WORKERS"


class ExecutorLost(ConnectionError):
    """The executor cancelled a map's tasks before they finished: its cluster went away.

    With Dask, the scheduler died or dropped the connection mid-run (its futures raise a bare
    ``CancelledError``). A ``ConnectionError``, so a caller that retries lost connections
    retries this too; nothing of the map is returned.
    """


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def default_workers() -> int:
    """Worker count: ``CAPE_WORKERS`` if set, else :func:`available_cpus`.

    One thread per core suits LAPACK-bound tasks with one BLAS thread each.

    Raises
    ------
    ValueError
        If ``CAPE_WORKERS`` is set to something other than a positive integer.
    """
    raw = os.environ.get(WORKERS_ENV, "").strip()
    if not raw:
        return available_cpus()
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{WORKERS_ENV} must be an integer in [1, inf]; got {raw!r}")
    return int(raw)


# Process-wide and reference-counted: threadpoolctl's limits are global to the process, so
# with two sweeps running at once (two app sessions) the first to finish must not restore the
# BLAS threads under the second.
_BLAS_GUARD = threading.Lock()
_blas_depth = 0
_blas_limiter: Any = None
# Finding the loaded BLAS/OpenMP libraries reads /proc/self/maps (2-5 ms, more than a small
# sweep takes): done once, and again only after new modules were imported (a new extension
# module may bring a new library).
_controller: tuple[int, ThreadpoolController] | None = None


def _blas_controller() -> ThreadpoolController:
    global _controller
    if _controller is None or _controller[0] != len(sys.modules):
        _controller = (len(sys.modules), ThreadpoolController())
    return _controller[1]


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Limit BLAS and OpenMP pools to one thread inside the block; restore them after.

    Nested and concurrent uses share one limit, lifted when the last block exits.
    """
    global _blas_depth, _blas_limiter
    with _BLAS_GUARD:
        if _blas_depth == 0:
            _blas_limiter = _blas_controller().limit(limits=1)
        _blas_depth += 1
    try:
        yield
    finally:
        with _BLAS_GUARD:
            _blas_depth -= 1
            if _blas_depth == 0:
                _blas_limiter.restore_original_limits()
                _blas_limiter = None


def single_blas(fn: F) -> F:
    """Decorator: run ``fn`` under :func:`one_blas_thread` (for the public sweeps)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with one_blas_thread():
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


ProgressSink = Callable[[int, int], None]


class _Progress:
    """The installed sink and its counts (process-wide: a job's child runs one sweep)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sink: ProgressSink | None = None
        self.done = 0
        self.total = 0
        self.inside = threading.local()  # set while a thread runs a counted task

    def nested(self) -> bool:
        return bool(getattr(self.inside, "task", False))

    def add(self, done: int = 0, total: int = 0) -> None:
        with self.lock:
            if self.sink is None:
                return
            self.done += done
            self.total += total
            self.sink(self.done, self.total)


_PROGRESS = _Progress()


@contextlib.contextmanager
def report_progress(sink: ProgressSink) -> Iterator[None]:
    """Call ``sink(done, total)`` as the tasks of top-level parallel maps start and finish.

    ``total`` counts the tasks of every map started so far, so a sweep with several stages
    (the tensor sweep's draws, then whitenings) reports its next stage's tasks when it starts.
    Maps nested inside a task are not counted separately. One sink at a time per process.

    Examples
    --------
    >>> seen = []
    >>> with report_progress(lambda done, total: seen.append((done, total))):
    ...     _ = parallel_map(abs, [-1, -2, -3], workers=1)
    >>> seen[0], seen[-1]
    ((0, 3), (3, 3))
    """
    if not callable(sink):
        raise TypeError(f"sink must be callable; got {type(sink).__name__}")
    with _PROGRESS.lock:
        if _PROGRESS.sink is not None:
            raise ValueError("sink: a progress sink is already installed in this process")
        _PROGRESS.sink, _PROGRESS.done, _PROGRESS.total = sink, 0, 0
    try:
        yield
    finally:
        with _PROGRESS.lock:
            _PROGRESS.sink = None


def _counted(fn: Callable[[T], R]) -> Callable[[T], R]:
    """``fn`` that reports one task done when it returns.

    It marks its thread as inside a task, so that maps nested in it are not counted.
    """

    def task(x: T) -> R:
        outer = _PROGRESS.nested()
        _PROGRESS.inside.task = True
        try:
            out = fn(x)
        finally:
            _PROGRESS.inside.task = outer
        _PROGRESS.add(done=1)
        return out

    return task


def executor_workers(executor: Executor) -> int:
    """How many tasks ``executor`` runs at once (its chunk count in :func:`parallel_map`).

    ``max_workers`` of the standard pools, the total worker threads of a Dask
    ``ClientExecutor``'s cluster, else :func:`default_workers`.
    """
    count = getattr(executor, "_max_workers", None)  # concurrent.futures pools
    if isinstance(count, int) and count >= 1:
        return count
    client = getattr(executor, "_client", None)  # distributed.client.ClientExecutor
    if client is not None:
        return max(1, int(sum(client.nthreads().values())))
    return default_workers()


# More local processes than any one machine can start; a Dask cluster's size comes from the
# cluster (executor_workers), not from this number.
MAX_WORKERS = 4096


def check_workers(workers: object) -> int:
    """``workers`` as an int in 1…:data:`MAX_WORKERS` (a ValueError naming it otherwise)."""
    return check_int(workers, "workers", low=1, high=MAX_WORKERS)


def planned_workers(workers: int | None, executor: Executor | None) -> int:
    """How many tasks :func:`parallel_map` will run at once for these arguments.

    ``workers`` when given; else the executor's (:func:`executor_workers`: a Dask cluster's
    threads), else :func:`default_workers`. What a work estimate divides the time by.
    """
    if workers is not None:
        return check_workers(workers)
    return executor_workers(executor) if executor is not None else default_workers()


def run_chunk(payload: bytes, chunk: Sequence[Any]) -> list[Any]:
    """Worker side of :func:`parallel_map`: unpickle the task once, run it on each item.

    Module-level, so any executor can import it by name; one BLAS thread, as in this process.
    """
    fn = pickle.loads(payload)
    with one_blas_thread():
        return [fn(x) for x in chunk]


def _chunked(
    fn: Callable[[T], R], items: list[T], chunks: int, executor: Executor, *, count: bool = False
) -> list[R]:
    """One submission per worker: the pickled task once, with a strided share of the items.

    Strided (item i goes to chunk i mod n), so a grid whose cost grows along it is spread
    evenly. cloudpickle serialises closures (by value) and the functions of importable modules
    (by reference); the executor's own pickling then carries only bytes and the items.
    """
    import cloudpickle  # only for executors outside this process

    payload: Any = cloudpickle.dumps(fn)
    client = getattr(executor, "_client", None)  # a Dask ClientExecutor's client
    if client is not None:  # each worker gets the payload once, outside the task graph
        payload = client.scatter(payload, broadcast=True)
    futures = [executor.submit(run_chunk, payload, items[i::chunks]) for i in range(chunks)]
    out: list[Any] = [None] * len(items)
    for i, future in enumerate(futures):
        try:
            out[i::chunks] = future.result()
        except concurrent.futures.CancelledError as err:
            for rest in futures:
                rest.cancel()
            raise ExecutorLost(_lost(executor, err)) from err
        if count:  # tasks run elsewhere: counted a chunk at a time
            _PROGRESS.add(done=len(out[i::chunks]))
    return out


def _lost(executor: Executor, err: BaseException) -> str:
    """One line for :class:`ExecutorLost`: which executor, what it raised, what to do."""
    client = getattr(executor, "_client", None)  # a Dask ClientExecutor's client
    address = getattr(getattr(client, "scheduler", None), "address", None)
    where = (
        f"the Dask scheduler at {address} died or dropped the connection"
        if address
        else f"{type(executor).__name__} was shut down or lost its workers"
    )
    return (
        f"the executor cancelled the tasks before they finished: {where} "
        f"({type(err).__name__}); nothing was returned. Rerun when it is back: the same rng "
        "gives the same frame"
    )


def parallel_map(
    fn: Callable[[T], R],
    items: Iterable[T],
    workers: int | None = None,
    *,
    executor: Executor | None = None,
) -> list[R]:
    """``[fn(x) for x in items]``, run on ``workers`` threads or on ``executor``, in input order.

    Threads by default: the heavy work (``numpy.linalg.eigh``, matrix products, einsum)
    releases the GIL, and nothing needs pickling. Each task must carry its own random
    stream (``rng.spawn``), so the output is identical for any number of workers and any
    executor. BLAS runs one thread per task (:func:`one_blas_thread`).

    Parameters
    ----------
    fn : callable
        The task; it must not share mutable state with other tasks. With an executor other
        than a thread pool it is serialised with cloudpickle, so it may be a closure.
    items : iterable
        Task inputs.
    workers : int, optional
        Threads, ≥ 1; default :func:`default_workers`. 1 runs in the calling thread. With an
        ``executor`` other than a thread pool: the number of submissions (default
        :func:`executor_workers`).
    executor : concurrent.futures.Executor, optional
        Where to run. A :class:`~concurrent.futures.ThreadPoolExecutor` gets one task per
        item; any other (a :class:`~concurrent.futures.ProcessPoolExecutor`, Dask's
        ``Client.get_executor()``) gets one submission per worker carrying ``fn`` once.

    Returns
    -------
    list
        ``fn(x)`` for each item, in input order.

    Raises
    ------
    ExecutorLost
        When ``executor`` cancels the tasks before they finish (a Dask scheduler that died).
    """
    if workers is not None:
        workers = check_workers(workers)
    if executor is not None and not isinstance(executor, Executor):
        raise TypeError(
            f"executor must be a concurrent.futures.Executor; got {type(executor).__name__}"
        )
    items = list(items)
    count = _PROGRESS.sink is not None and not _PROGRESS.nested()  # a sweep's own tasks
    if count:
        _PROGRESS.add(total=len(items))
        if executor is None or isinstance(executor, ThreadPoolExecutor):
            fn = _counted(fn)
    with one_blas_thread():
        if isinstance(executor, ThreadPoolExecutor):
            return list(executor.map(fn, items))
        if executor is not None and items:
            chunks = min(len(items), workers or executor_workers(executor))
            return _chunked(fn, items, chunks, executor, count=count)
        workers = workers or default_workers()
        if workers == 1 or len(items) <= 1:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(max_workers=min(workers, len(items))) as pool:
            return list(pool.map(fn, items))
