"""Compute slots and single flight: what lets a class share the cached core calls.

A classroom opens the same link at once. Identical requests wait for the first one and then
read its cache entry (single flight), and at most one heavy computation per core runs at a
time (compute slots): thirty sessions do not compute the same sweep thirty times over.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from dpcore import default_workers

P = ParamSpec("P")
T = TypeVar("T")

_SLOTS = threading.BoundedSemaphore(default_workers())  # CAPE_WORKERS or the CPUs
_FLIGHTS: dict[int, threading.Lock] = {}
_FLIGHTS_GUARD = threading.Lock()


def compute_slot(fn: Callable[P, T]) -> Callable[P, T]:
    """Run ``fn`` holding one of the compute slots (put it under ``st.cache_data``, so that
    cache hits never wait)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        with _SLOTS:
            return fn(*args, **kwargs)

    return wrapper


def flight(fn: Callable, args: tuple, kwargs: dict) -> threading.Lock | None:
    try:
        key = hash((fn, args, tuple(sorted(kwargs.items()))))
    except TypeError:  # unhashable arguments: no deduplication
        return None
    with _FLIGHTS_GUARD:
        if len(_FLIGHTS) > 4096:
            _FLIGHTS.clear()
        return _FLIGHTS.setdefault(key, threading.Lock())
