"""Independent tasks on every core, with results that do not depend on the scheduling."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from dpcore._validation import check_int

T = TypeVar("T")
R = TypeVar("R")

MAX_WORKERS = 2  # the machines we target have 2 cores; more threads only contend


def default_workers() -> int:
    """min(2, number of CPUs): one thread per core for LAPACK-bound tasks."""
    return max(1, min(MAX_WORKERS, os.cpu_count() or 1))


def parallel_map(fn: Callable[[T], R], items: Iterable[T], workers: int | None = None) -> list[R]:
    """``[fn(x) for x in items]``, run on ``workers`` threads, in input order.

    Threads, not processes: the heavy work (``numpy.linalg.eigh``, matrix products, einsum)
    releases the GIL, and nothing needs pickling. Each task must carry its own random
    stream (``rng.spawn``), so the output is identical for any number of workers.

    Parameters
    ----------
    fn : callable
        The task; it must not share mutable state with other tasks.
    items : iterable
        Task inputs.
    workers : int, optional
        Threads, ≥ 1; default :func:`default_workers`. 1 runs in the calling thread.
    """
    workers = default_workers() if workers is None else check_int(workers, "workers", low=1)
    items = list(items)
    if workers == 1 or len(items) <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=min(workers, len(items))) as pool:
        return list(pool.map(fn, items))
