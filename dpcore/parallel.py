"""Independent tasks on every core, with results that do not depend on the scheduling.

Two resources are managed here, once for the whole package:

- **Workers**: how many tasks run at once. By default the CPUs this process may use;
  ``CAPE_WORKERS`` (environment) or a ``workers=`` argument overrides it.
- **Executors**: threads of this process by default; any :class:`concurrent.futures.Executor`
  instead (a process pool, Dask's ``Client.get_executor()`` for a cluster). Other executors get
  chunks of consecutive items, one per worker in flight, each of about :data:`CHUNK_SECONDS`
  of work and carrying the task function (and the large inputs it closes over: the data pool,
  the moments; a Dask worker gets them once, scattered), taken back as they finish.
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
import hashlib
import math
import os
import pickle
import sys
import threading
import time
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


def blas_libraries() -> list[dict[str, Any]]:
    """The BLAS and OpenMP libraries loaded in this process, as threadpoolctl describes them.

    Each: ``user_api`` ("blas", "openmp"), ``internal_api`` ("openblas", "mkl", …),
    ``prefix``, ``version``, ``threading_layer`` and ``architecture`` (the CPU kernels an
    OpenBLAS chose, "Haswell", "SkylakeX", …); not the file path, nor the thread count
    (one per task inside a sweep, :func:`one_blas_thread`). Sorted: the order the libraries
    were loaded in (which import came first) says nothing of the numbers.
    """
    kept = ("user_api", "internal_api", "prefix", "version", "threading_layer", "architecture")
    libraries = [{key: lib.get(key) for key in kept} for lib in _blas_controller().info()]
    return sorted(libraries, key=lambda lib: [str(lib[key]) for key in kept])


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
    reports its next stage's tasks when it starts (unless a stage announces them all at
    once, :func:`counted_as`: the tensor sweep's blocks).
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


@contextlib.contextmanager
def counted_as(total: int) -> Iterator[Callable[[int], None]]:
    """Count the block as ``total`` tasks, done as the callback it yields is told.

    For a stage whose tasks run through several maps (the tensor sweep's blocks: draws,
    whitenings, one batched power method): ``total`` is announced at once, so the counts
    say the whole run from the start, and the maps started in this thread inside the block
    are not counted again. Outside :func:`report_progress` (or inside a counted task) it
    counts nothing.

    Examples
    --------
    >>> seen = []
    >>> with report_progress(lambda done, total: seen.append((done, total))):
    ...     with counted_as(4) as done:
    ...         _ = parallel_map(abs, [-1, -2], workers=1)
    ...         done(2)
    >>> seen
    [(0, 4), (2, 4)]
    """
    count = _PROGRESS.sink is not None and not _PROGRESS.nested()
    if count:
        _PROGRESS.add(total=total)
    outer = _PROGRESS.nested()
    _PROGRESS.inside.task = True  # the maps of this thread inside: part of these tasks
    try:
        yield (lambda n: _PROGRESS.add(done=n)) if count else (lambda n: None)
    finally:
        _PROGRESS.inside.task = outer


def _counted(fn: Callable[[T], R], count: bool = True) -> Callable[[T], R]:
    """``fn`` that reports one task done when it returns (unless ``count`` is False).

    It marks its thread as inside a task, so that maps nested in it are not counted (nor
    those nested in the uncounted tasks of a map inside a counted block, :func:`counted_as`).
    """

    def task(x: T) -> R:
        outer = _PROGRESS.nested()
        _PROGRESS.inside.task = True
        try:
            out = fn(x)
        finally:
            _PROGRESS.inside.task = outer
        if count:
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


# A chunk sent to another process aims at this much of one worker's time: long enough that
# the task (and what it closes over) is sent a few times a minute per worker, short enough
# that the counts of a long sweep move every few seconds and a failing task fails its chunk
# soon (issue #51: one submission per worker reported a 14-minute sweep in three jumps).
CHUNK_SECONDS = 2.0

_PAYLOADS: dict[bytes, Any] = {}  # a worker process's last unpickled task, by its digest


def run_chunk(payload: bytes, chunk: Sequence[Any]) -> tuple[list[Any], float]:
    """Worker side of :func:`parallel_map`: unpickle the task once, run it on each item.

    Module-level, so any executor can import it by name; one BLAS thread, as in this process.
    Returns the results and the seconds they took (the parent sizes the next chunks by them).
    A worker keeps the last task it unpickled, so the chunks after the first do not unpickle
    the same payload again.
    """
    key = hashlib.sha256(payload).digest()
    fn = _PAYLOADS.get(key)
    if fn is None:
        fn = pickle.loads(payload)
        _PAYLOADS.clear()
        _PAYLOADS[key] = fn
    start = time.perf_counter()
    with one_blas_thread():
        out = [fn(x) for x in chunk]
    return out, time.perf_counter() - start


def chunk_size(done_items: int, busy_seconds: float, remaining: int, workers: int) -> int:
    """Items in the next chunk: about :data:`CHUNK_SECONDS` of work, a fair share at most.

    One item until a chunk has finished (nothing is known of the cost); then the items the
    finished ones suggest fit in :data:`CHUNK_SECONDS`, never more than the remaining items
    shared among the workers (guided scheduling: the last chunks shrink, no worker is left
    with a long tail), never fewer than one.

    Examples
    --------
    >>> chunk_size(0, 0.0, 100, 4)
    1
    >>> chunk_size(10, 1.0, 1000, 4)  # 0.1 s an item: 20 items make 2 s
    20
    >>> chunk_size(10, 0.001, 40, 4)  # cheap items: a fair share of what is left
    10
    """
    if done_items == 0 or remaining <= 0:
        return 1
    per_item = busy_seconds / done_items
    fits = int(CHUNK_SECONDS / per_item) if per_item > 0 else remaining
    return max(1, min(fits, math.ceil(remaining / workers)))


def _chunked(
    fn: Callable[[T], R],
    items: list[T],
    workers: int,
    executor: Executor,
    *,
    count: bool = False,
    on_result: Callable[[int, R], None] | None = None,
) -> list[R]:
    """Chunks of consecutive items, ``workers`` of them in flight, each carrying the task.

    The chunks are sized as they are sent (:func:`chunk_size`: about :data:`CHUNK_SECONDS`
    of a worker's time each), and taken back as they finish, in any order: each finished
    chunk is counted (progress) and handed to ``on_result`` at once, and a chunk that raised
    fails the map when it finishes, cancelling the chunks not yet started. cloudpickle
    serialises closures (by value) and the functions of importable modules (by reference);
    the executor's own pickling then carries only bytes and the items. A Dask executor gets
    the payload once per worker (scattered), a chunk carries a reference to it.
    """
    import cloudpickle  # only for executors outside this process

    payload: Any = cloudpickle.dumps(fn)
    client = getattr(executor, "_client", None)  # a Dask ClientExecutor's client
    if client is not None:  # each worker gets the payload once, outside the task graph
        payload = client.scatter(payload, broadcast=True)
    out: list[Any] = [None] * len(items)
    running: dict[concurrent.futures.Future[Any], int] = {}  # a chunk's first item
    sent = done_items = 0
    busy = 0.0

    def send() -> None:
        nonlocal sent
        size = chunk_size(done_items, busy, len(items) - sent, workers)
        chunk = items[sent : sent + size]
        running[executor.submit(run_chunk, payload, chunk)] = sent
        sent += len(chunk)

    try:
        while sent < len(items) and len(running) < workers:
            send()
        while running:
            # a future cancelled by its executor (Future.cancel: a Dask scheduler that died)
            # wakes no waiter: it is found done when the wait times out
            concurrent.futures.wait(
                running, timeout=1.0, return_when=concurrent.futures.FIRST_COMPLETED
            )
            for future in [f for f in running if f.done()]:
                first = running.pop(future)
                try:
                    results, seconds = future.result()
                except concurrent.futures.CancelledError as err:
                    raise ExecutorLost(_lost(executor, err)) from err
                out[first : first + len(results)] = results
                done_items += len(results)
                busy += seconds
                if on_result is not None:
                    for offset, result in enumerate(results):
                        on_result(first + offset, result)
                if count:  # tasks run elsewhere: counted a chunk at a time
                    _PROGRESS.add(done=len(results))
                if sent < len(items):
                    send()
    except BaseException:
        for rest in running:
            rest.cancel()
        raise
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


def _reporting(fn: Callable[[T], R], on_result: Callable[[int, R], None]) -> Callable[[Any], R]:
    """``fn`` on an ``(index, item)`` pair that hands ``on_result`` its result (in turn)."""
    lock = threading.Lock()

    def task(pair: tuple[int, T]) -> R:
        index, x = pair
        out = fn(x)
        with lock:
            on_result(index, out)
        return out

    return task


def parallel_map(
    fn: Callable[[T], R],
    items: Iterable[T],
    workers: int | None = None,
    *,
    executor: Executor | None = None,
    on_result: Callable[[int, R], None] | None = None,
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
        ``executor`` other than a thread pool: the chunks in flight at once (default
        :func:`executor_workers`).
    executor : concurrent.futures.Executor, optional
        Where to run. A :class:`~concurrent.futures.ThreadPoolExecutor` gets one task per
        item; any other (a :class:`~concurrent.futures.ProcessPoolExecutor`, Dask's
        ``Client.get_executor()``) gets chunks of consecutive items, each carrying ``fn``,
        of about :data:`CHUNK_SECONDS` of work (:func:`chunk_size`), taken back as they
        finish: progress moves and a failure surfaces a chunk at a time.
    on_result : callable, optional
        ``on_result(index, result)``, called in this process as each item's result arrives
        (one at a time, in the order they finish; with another process's executor, a chunk
        at a time): what a caller keeps of a map that may not finish (a partial output).

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
    if on_result is not None and not callable(on_result):
        raise TypeError(f"on_result must be callable; got {type(on_result).__name__}")
    items = list(items)
    count = _PROGRESS.sink is not None and not _PROGRESS.nested()  # a sweep's own tasks
    if count:
        _PROGRESS.add(total=len(items))
    with one_blas_thread():
        if executor is not None and not isinstance(executor, ThreadPoolExecutor) and items:
            chunks = min(len(items), workers or executor_workers(executor))
            return _chunked(fn, items, chunks, executor, count=count, on_result=on_result)
        task: Callable[[Any], R] = fn
        if _PROGRESS.sink is not None:  # counted or not, maps nested in a task are not
            task = _counted(task, count)
        pairs: list[Any] = items
        if on_result is not None:
            task, pairs = _reporting(task, on_result), list(enumerate(items))
        if isinstance(executor, ThreadPoolExecutor):
            return list(executor.map(task, pairs))
        workers = workers or default_workers()
        if workers == 1 or len(items) <= 1:
            return [task(x) for x in pairs]
        with ThreadPoolExecutor(max_workers=min(workers, len(items))) as pool:
            return list(pool.map(task, pairs))
