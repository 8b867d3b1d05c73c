"""Figures cached as built: a builder called again with equal inputs returns the figure it
built before, so a rerun on a setting already drawn skips Plotly's property validation (most
of a cached rerun's CPU, docs/performance.md).

The key is a digest of the builder's arguments (numbers, strings, arrays, data frames, and
lists, tuples, dicts and frozen dataclasses of these — the fields that take part in their
equality), never their identity: the core's
cached results arrive as fresh copies on every rerun. Arguments of any other type skip the
cache (the builder simply runs). A cached figure is shared by every session: callers must not
change it (``ui.presenter.style`` and the exports work on copies), which is why the builders
themselves stay uncached and a page asks for the shared figure explicitly::

    fig = built(gain_figure, curve, labels=labels, current=gains, share=share)
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np
import pandas as pd

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

MAX_ENTRIES = 256  # figures of a few hundred kB at most: tens of MB in the worst case


class _Unhashable(Exception):
    """An argument the digest does not know: the call is not cached."""


def _feed(h: Any, obj: Any) -> None:
    """Feed ``obj`` into the hash ``h``: its type and its value, recursively."""
    if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes, np.generic)):
        h.update(f"{type(obj).__name__}:{obj!r};".encode())
    elif isinstance(obj, np.ndarray):
        if obj.dtype.hasobject:
            h.update(b"objarray")
            _feed(h, obj.tolist())
        else:
            h.update(f"nd{obj.dtype.str}{obj.shape};".encode())
            h.update(np.ascontiguousarray(obj).tobytes())
    elif isinstance(obj, (pd.DataFrame, pd.Series)):
        h.update(f"{type(obj).__name__}{obj.shape};".encode())
        frame = obj if isinstance(obj, pd.DataFrame) else obj.to_frame()
        _feed(h, [str(c) for c in frame.columns])
        _feed(h, [str(t) for t in frame.dtypes])
        index = frame.index
        if isinstance(index, pd.RangeIndex):
            _feed(h, (index.start, index.stop, index.step))
        else:
            h.update(pd.util.hash_pandas_object(index, index=False).to_numpy().tobytes())
        for _, column in frame.items():  # numbers as raw bytes: ~10× faster than hashing
            if isinstance(column.dtype, np.dtype) and column.dtype.kind in "biufcmM":
                h.update(np.ascontiguousarray(column.to_numpy()).tobytes())
            else:
                h.update(pd.util.hash_pandas_object(column, index=False).to_numpy().tobytes())
    elif isinstance(obj, Mapping):
        h.update(b"{")
        for key, value in obj.items():
            _feed(h, key)
            _feed(h, value)
        h.update(b"}")
    elif isinstance(obj, (list, tuple, range)):
        h.update(f"{type(obj).__name__}[".encode())
        for item in obj:
            _feed(h, item)
        h.update(b"]")
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        h.update(f"dc:{type(obj).__qualname__}(".encode())
        for f in dataclasses.fields(obj):
            if not f.compare:  # derived from the others (a spec's resolved records)
                continue
            _feed(h, f.name)
            _feed(h, getattr(obj, f.name))
        h.update(b")")
    else:
        raise _Unhashable(type(obj).__name__)


def digest(*args: Any, **kwargs: Any) -> str | None:
    """A digest of the arguments, or ``None`` when one of them has no digest."""
    h = hashlib.blake2b(digest_size=20)
    try:
        _feed(h, args)
        _feed(h, sorted(kwargs.items()))
    except _Unhashable:
        return None
    return h.hexdigest()


MISSING = object()  # what :meth:`Shelf.peek` returns for a name it does not hold


class Shelf:
    """Results by name, least recently used out, shared by every session's thread: the one
    bounded store behind built figures, remembered core results (:mod:`ui.cached.memo`) and
    Arrow tables (:mod:`ui.tables`).

    Bounded by ``max_entries`` and, where given, ``max_bytes`` (the sizes passed to
    :meth:`put`); both are read at each eviction, so a test may change them.
    """

    def __init__(self, max_entries: int = MAX_ENTRIES, max_bytes: int | None = None) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.items: OrderedDict[Any, tuple[Any, int]] = OrderedDict()
        self.bytes = 0
        self.lock = threading.Lock()

    def peek(self, name: Any) -> Any:
        """The result stored under ``name`` (now the most recently used), else :data:`MISSING`."""
        with self.lock:
            hit = self.items.get(name)
            if hit is None:
                return MISSING
            self.items.move_to_end(name)
            return hit[0]

    def put(self, name: Any, result: Any, size: int = 0) -> Any:
        """Store ``result`` (of ``size`` bytes) under ``name``; the oldest go past the bounds."""
        with self.lock:
            old = self.items.pop(name, None)
            if old is not None:
                self.bytes -= old[1]
            self.items[name] = (result, size)
            self.bytes += size
            while len(self.items) > self.max_entries or (
                self.max_bytes is not None and self.bytes > self.max_bytes
            ):
                _, (_, dropped) = self.items.popitem(last=False)
                self.bytes -= dropped
        return result

    def get(self, name: Any, build: Callable[[], Any]) -> Any:
        """The result stored under ``name``, else ``build()`` stored under it."""
        hit = self.peek(name)
        if hit is not MISSING:
            return hit
        return self.put(name, build())  # built outside the lock: two sessions may build it twice

    def entries(self) -> list[tuple[Any, Any]]:
        """(name, result) of every stored result, oldest first."""
        with self.lock:
            return [(name, result) for name, (result, _) in self.items.items()]

    def clear(self) -> None:
        """Drop every stored result."""
        with self.lock:
            self.items.clear()
            self.bytes = 0


def memo(builder: F) -> F:
    """Cache ``builder``'s figures by the digest of its arguments (least recently used out)."""
    shelf = Shelf()

    @functools.wraps(builder)
    def cached(*args: Any, **kwargs: Any) -> Any:
        key = digest(*args, **kwargs)
        if key is None:
            return builder(*args, **kwargs)
        return shelf.get(key, lambda: builder(*args, **kwargs))

    cached.cache_clear = shelf.clear  # type: ignore[attr-defined]
    return cached  # type: ignore[return-value]


_BUILT: dict[Any, Callable[..., Any]] = {}


def _where(builder: Callable[..., Any]) -> Any:
    """What names a builder across reruns: a function defined in a page script is a new object
    on every run of the page, so its code (file, name, bytecode) names it."""
    code = getattr(builder, "__code__", None)
    if code is None:
        return builder
    return (code.co_filename, builder.__qualname__, code.co_firstlineno, code.co_code)


def built(builder: Callable[..., T], *args: Any, key: Any = None, **kwargs: Any) -> T:
    """``builder(*args, **kwargs)``, the figure (or table) built before for equal arguments if
    there is one (:func:`memo`). The result is shared: do not change it. ``builder`` must read
    nothing but its arguments (a page's function is cached across its runs).

    ``key``: small values (the settings) that determine every argument, e.g. the tuples a
    cached core call was made with. Given, it names the result instead of a digest of the
    arguments: hashing a few tuples instead of whole data frames on every rerun.
    """
    where = _where(builder)
    if key is not None:
        name = digest(key)
        if name is None:
            raise TypeError(f"key must be made of numbers, strings and tuples; got {key!r}")
        return _KEYED.get((where, name), lambda: builder(*args, **kwargs))
    cached = _BUILT.get(where)
    if cached is None:
        cached = _BUILT.setdefault(where, memo(builder))
    return cached(*args, **kwargs)


_KEYED = Shelf()  # results named by their settings (built(..., key=...)), every builder
