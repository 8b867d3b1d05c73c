"""Independent tasks on every core, with results that do not depend on the scheduling.

Two resources are managed here, once for the whole package:

- **Workers**: how many tasks run at once. By default the CPUs this process may use;
  ``CAPE_WORKERS`` (environment) or a ``workers=`` argument overrides it.
- **BLAS threads**: one per worker while the core computes (:func:`one_blas_thread`). Small
  dense linear algebra (D ≤ ~800) is slower with several BLAS threads per call than with one
  thread per task, and a multi-threaded BLAS sums in an order that depends on its thread count:
  the tensor power method amplifies those last-bit differences into different local optima, so
  the same seed gave different numbers on machines with different BLAS settings. Pinning inside
  the core makes results and speed independent of ``OPENBLAS_NUM_THREADS``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from threadpoolctl import threadpool_limits

from dpcore._validation import check_int

T = TypeVar("T")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])

WORKERS_ENV = "CAPE_WORKERS"


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


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Limit BLAS and OpenMP pools to one thread inside the block; restore them after.

    Nested and concurrent uses share one limit, lifted when the last block exits.
    """
    global _blas_depth, _blas_limiter
    with _BLAS_GUARD:
        if _blas_depth == 0:
            _blas_limiter = threadpool_limits(limits=1)
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


def parallel_map(fn: Callable[[T], R], items: Iterable[T], workers: int | None = None) -> list[R]:
    """``[fn(x) for x in items]``, run on ``workers`` threads, in input order.

    Threads, not processes: the heavy work (``numpy.linalg.eigh``, matrix products, einsum)
    releases the GIL, and nothing needs pickling. Each task must carry its own random
    stream (``rng.spawn``), so the output is identical for any number of workers. BLAS runs
    one thread per task (:func:`one_blas_thread`).

    Parameters
    ----------
    fn : callable
        The task; it must not share mutable state with other tasks.
    items : iterable
        Task inputs.
    workers : int, optional
        Threads, ≥ 1; default :func:`default_workers`. 1 runs in the calling thread.

    Returns
    -------
    list
        ``fn(x)`` for each item, in input order.
    """
    workers = default_workers() if workers is None else check_int(workers, "workers", low=1)
    items = list(items)
    with one_blas_thread():
        if workers == 1 or len(items) <= 1:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(max_workers=min(workers, len(items))) as pool:
            return list(pool.map(fn, items))
