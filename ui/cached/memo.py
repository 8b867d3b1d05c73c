"""A per-process memo in front of the ``st.cache_data`` wrappers (issue #36, item 4).

On a rerun whose setting is already computed, ``st.cache_data`` hashes the call's arguments
and unpickles a fresh copy of the result: about a tenth of a cached slider move's server CPU
(docs/performance.md). :func:`ui.cached.call_core` asks this memo first: equal arguments of
the same cached wrapper return the one result object this process unpickled before.

That object is shared by every session of the process, so it must never change:

- :func:`freeze` makes every NumPy array in it read-only (in dicts, lists, tuples and
  dataclasses, recursively); pandas frames and series copy on write (pandas 3), so what a page
  derives from them never writes back, and no page assigns into a result
  (``tests/ui/test_memo.py`` runs the pages and checks every remembered result is unchanged);
- only calls whose arguments are plain values (None, bool, int, float, str, short bytes,
  tuples of these) or records ``st.cache_data`` keys by their ``repr`` (:data:`SPEC_HASH`)
  are remembered, keyed by type and ``repr`` exactly as the cache keys them: a float ``1.0``
  and an int ``1`` are two keys, as they are two cache entries;
- it is bounded (:data:`SHELF`: 256 results, least recently used first out, and
  :data:`MAX_BYTES` of arrays and frames) and forgotten with ``st.cache_data.clear()``.

The result is the cache's own (same arguments, same seed, same numbers): the memo only skips
the copy.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import pandas as pd

from figures.memo import MISSING, Shelf

MAX_BYTES = 128 * 2**20  # results of a few kB to a few MB: a class's settings fit
MAX_KEY_BYTES = 4096  # longer bytes (a CSV upload) are hashed by the cache, not kept here

SHELF = Shelf(max_entries=256, max_bytes=MAX_BYTES)
_LOCK = threading.Lock()  # guards the generation check and the forgetting it may cause
_STATE: dict[str, Any] = {"generation": None}


class _Unkeyable(Exception):
    """An argument the memo does not key: the call goes to ``st.cache_data`` as before."""


def _part(obj: Any, by_repr: dict) -> Hashable:
    kind = type(obj)
    if obj is None or kind in (bool, int, str):
        return (kind, obj)
    if kind is float:
        return (kind, repr(obj))  # -0.0 and 0.0, nan: as the cache tells them apart
    if kind is bytes:
        if len(obj) > MAX_KEY_BYTES:
            raise _Unkeyable
        return (kind, obj)
    if kind is tuple:
        return (kind, tuple(_part(item, by_repr) for item in obj))
    if kind in by_repr:
        return (kind, by_repr[kind](obj))
    raise _Unkeyable


def key_of(fn: Callable, args: tuple, kwargs: dict, by_repr: dict) -> Hashable | None:
    """The memo's key of ``fn(*args, **kwargs)``, or None when an argument is not keyed."""
    try:
        return (
            fn,
            tuple(_part(a, by_repr) for a in args),
            tuple((name, _part(v, by_repr)) for name, v in sorted(kwargs.items())),
        )
    except _Unkeyable:
        return None


def freeze(value: Any) -> Any:
    """``value`` with every NumPy array in it made read-only (in place; returns ``value``)."""
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif isinstance(value, dict):
        for item in value.values():
            freeze(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            freeze(item)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            freeze(getattr(value, f.name, None))
    return value


def size_of(value: Any) -> int:
    """Bytes a result holds, roughly: its arrays and frames (what can be large)."""
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, pd.DataFrame):
        return int(value.memory_usage(index=True, deep=False).sum())
    if isinstance(value, pd.Series):
        return int(value.memory_usage(index=True, deep=False))
    if isinstance(value, dict):
        return sum(size_of(v) for v in value.values()) + 64
    if isinstance(value, (list, tuple)):
        return sum(size_of(v) for v in value) + 64
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sum(size_of(getattr(value, f.name, None)) for f in dataclasses.fields(value))
    return sys.getsizeof(value)


def _generation() -> Any:
    """The registry ``st.cache_data.clear()`` replaces: a new one forgets the memo."""
    try:
        from streamlit.runtime.caching import cache_data_api

        return cache_data_api._data_caches._function_caches
    except (ImportError, AttributeError):  # pragma: no cover - another Streamlit
        return None


def _same_generation() -> bool:
    """Whether the cache is the one the memo remembers for; forget the memo if not."""
    generation = _generation()
    with _LOCK:
        if generation is _STATE["generation"]:
            return True
        SHELF.clear()
        _STATE["generation"] = generation
        return False


def get(key: Hashable) -> Any:
    """The remembered result of ``key``, or :data:`MISSING`."""
    return SHELF.peek(key) if _same_generation() else MISSING


def remember(key: Hashable, value: Any) -> Any:
    """Keep ``value`` (frozen) under ``key`` unless it alone is over a tenth of the bound."""
    size = size_of(value)
    if SHELF.max_bytes is not None and size > SHELF.max_bytes // 10:
        return value
    freeze(value)
    _same_generation()
    return SHELF.put(key, value, size)


def forget() -> None:
    """Drop every remembered result."""
    _same_generation()
    SHELF.clear()


def entries() -> list[tuple[Hashable, Any]]:
    """(key, result) of every remembered call, oldest first (for tests)."""
    return SHELF.entries()
