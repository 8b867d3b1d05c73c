"""Input checks for the public entry points.

Each helper validates one parameter and returns the cleaned value. Messages name the
parameter, the allowed range and the value received, e.g.
``epsilon must be a float in (0, inf]; got -1.0``.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections.abc import Sequence
from numbers import Integral, Real

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpcore.resources import MAX_DESIGN_SITES

# Largest noise std (and similar scale) the core accepts: its square, products of a few such
# values and sums over thousands of sites stay finite in float64 (max ≈ 1.8e308), so no
# result becomes inf or NaN. Nothing physical comes near it (τ = 1e100 is pure noise).
MAX_MAGNITUDE = 1e100


_PACKAGE = os.path.dirname(__file__) + os.sep  # as code objects name their files
_SKIPPED = (contextlib.__file__,)  # @contextmanager's __exit__ between a with and its body


def caller_stacklevel() -> int:
    """The ``stacklevel`` at which ``warnings.warn`` names the first frame outside dpcore.

    Called by the function that warns: a warning raised deep in the core (a sweep's
    calibration, an argument's older name) then points at the user's line, however many of
    the core's own frames lie between (Python 3.12's ``skip_file_prefixes``, for 3.11).

    Examples
    --------
    >>> caller_stacklevel()  # a doctest is outside dpcore
    1
    """
    frame = sys._getframe(1)  # the function that will call warnings.warn
    level = 1
    while frame.f_back is not None and (
        frame.f_code.co_filename.startswith(_PACKAGE) or frame.f_code.co_filename in _SKIPPED
    ):
        frame = frame.f_back
        level += 1
    return level


def show(value: object, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters, for messages (an array may be long)."""
    if isinstance(value, np.generic):  # 1.5, not np.float64(1.5) (NumPy 2's repr)
        value = value.item()
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def as_float_array(value: object, name: str) -> NDArray[np.float64]:
    """``value`` as a float array; a TypeError naming ``name`` if it holds no numbers.

    Examples
    --------
    >>> as_float_array([1, 2], "tau_site")
    array([1., 2.])
    >>> as_float_array(["x"], "tau_site")
    Traceback (most recent call last):
    ...
    TypeError: tau_site must be a number or an array of real numbers; got list ['x']
    """
    if isinstance(value, (str, bytes)) or value is None:
        bad = True
    else:
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError, OverflowError):
            bad = True
        else:
            bad = False
    if bad:
        raise TypeError(
            f"{name} must be a number or an array of real numbers; "
            f"got {type(value).__name__} {show(value)}"
        )
    return arr


def as_numbers(
    value: object, name: str, what: str = "a number or one number per site"
) -> NDArray[np.float64]:
    """``value``, a number or a sequence of numbers, as a new float array (its shape kept).

    The one converter of the per-site checks (:func:`check_per_site`) and the accountants'
    noise multipliers (:func:`dpcore.analysis.accounting.check_multipliers`): a TypeError
    naming ``name`` and saying what it ``must be`` for anything that holds no numbers (a
    string, None, a bool, a dict, a set, a ragged list).

    Examples
    --------
    >>> as_numbers((1, 2.5), "epsilon")
    array([1. , 2.5])
    >>> as_numbers(True, "epsilon")
    Traceback (most recent call last):
    ...
    TypeError: epsilon must be a number or one number per site; got bool True
    """
    if value is None or isinstance(value, (str, bytes, dict, set, bool, np.bool_)):
        raise TypeError(f"{name} must be {what}; got {type(value).__name__} {show(value)}")
    try:
        return np.array(value, dtype=float)
    except (TypeError, ValueError, OverflowError) as err:
        raise TypeError(f"{name} must be {what}; got {show(value)}") from err


def check_broadcast(**arrays: NDArray[np.float64]) -> list[NDArray[np.float64]]:
    """The arrays broadcast against each other; a ValueError naming all of them if they don't.

    Examples
    --------
    >>> [a.shape for a in check_broadcast(epsilon=np.ones(3), delta=np.ones(()))]
    [(3,), (3,)]
    """
    try:
        return list(np.broadcast_arrays(*arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{name} {np.shape(a)}" for name, a in arrays.items())
        raise ValueError(
            f"{' and '.join(arrays)} must be scalars or arrays of matching shapes; got {shapes}"
        ) from None


def check_real(
    value: object,
    name: str,
    *,
    low: float = -math.inf,
    high: float = math.inf,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return ``value`` as a float after checking it lies in the stated interval."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number; got {type(value).__name__} {show(value)}")
    x = float(value)
    below = x <= low if low_open else x < low
    above = x >= high if high_open else x > high
    if math.isnan(x) or below or above:
        lo_b = "(" if low_open else "["
        hi_b = ")" if high_open else "]"
        raise ValueError(
            f"{name} must be a float in {lo_b}{low:g}, {high:g}{hi_b}; got {show(value)}"
        )
    return x


def check_epsilon(value: object, name: str = "epsilon") -> float:
    """ε in (0, ∞]; ``inf`` means no privacy (no noise)."""
    return check_real(value, name, low=0.0, low_open=True)


def check_delta(value: object, name: str = "delta") -> float:
    """δ in (0, 1)."""
    return check_real(value, name, low=0.0, high=1.0, low_open=True, high_open=True)


def check_int(value: object, name: str, *, low: int = 1, high: int | None = None) -> int:
    """Return ``value`` as an int after checking ``low <= value <= high``."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an integer; got {type(value).__name__} {show(value)}")
    v = int(value)
    if v < low or (high is not None and v > high):
        hi = "inf" if high is None else str(high)
        raise ValueError(f"{name} must be an integer in [{low}, {hi}]; got {v}")
    return v


def check_per_site(
    value: object,
    n_sites: int | None,
    name: str,
    *,
    high: float = math.inf,
    low: float = 0.0,
    sites_of: str = "",
) -> NDArray[np.float64]:
    """One number per site, as S floats: the one per-site check of every floor.

    Parameters
    ----------
    value : float or sequence of float
        One number for every site, or one number per site.
    n_sites : int or None
        The number of sites S. ``None``: ``value`` must be a non-empty 1-D sequence, and its
        length is S.
    name : str
        The parameter's name, for messages.
    high, low : float
        Each entry must be in (0, high), or in [low, high) for a ``low`` > 0; in (0, ∞] when
        ``high`` is ∞.
    sites_of : str
        The parameter that set S, named when ``value`` has another length.

    Returns
    -------
    ndarray of float, shape (S,)
        A new array (the caller may keep or freeze it).

    Raises
    ------
    TypeError
        ``value`` holds no numbers (a string, None, a bool, a dict).
    ValueError
        Not one number per site, or an entry out of range.
    """
    arr = as_numbers(value, name)
    if n_sites is None:
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(
                f"{name} must be a 1-D sequence of one number per site; got {show(value)}"
            )
    elif arr.ndim > 1 or (arr.ndim == 1 and arr.size != n_sites):
        of = f" of {sites_of}" if sites_of else ""
        raise ValueError(
            f"{name} must be a number or one number per site{of} ({n_sites}); got {show(value)}"
        )
    else:
        arr = np.broadcast_to(arr, (n_sites,)).copy()
    bad = np.isnan(arr) | (arr < low if low > 0 else arr <= 0)
    bad |= arr >= high if math.isfinite(high) else arr > high
    if bad.any():
        lo = f"[{low:g}, " if low > 0 else "(0, "
        hi = "inf]" if math.isinf(high) else f"{high:g})"
        raise ValueError(f"every entry of {name} must be in {lo}{hi}; got {show(arr[bad][0])}")
    return arr


def check_design_sites(n_sites: int, name: str) -> int:
    """The number of sites S after checking that a CAPE design over them fits.

    ``n_sites`` is the length of the per-site array ``name``; 2 ≤ S ≤
    :data:`~dpcore.resources.MAX_DESIGN_SITES`, because a design holds S×S matrices.

    Examples
    --------
    >>> check_design_sites(3, "tau_site")
    3
    >>> check_design_sites(100_000, "tau_site")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: tau_site must have one entry per site, S in [2, 2048] (...); got S = 100000
    """
    if not 2 <= n_sites <= MAX_DESIGN_SITES:
        raise ValueError(
            f"{name} must have one entry per site, S in [2, {MAX_DESIGN_SITES}] "
            f"(a CAPE design holds S×S matrices); got S = {n_sites}"
        )
    return n_sites


def check_bool(value: object, name: str) -> bool:
    """Return ``value`` as a bool after checking it is one (``np.bool_`` too)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {type(value).__name__} {show(value)}")
    return bool(value)


def check_choice(value: object, name: str, choices: Sequence[str]) -> str:
    """Return ``value`` after checking it is one of ``choices`` (strings)."""
    if not isinstance(value, str):
        raise TypeError(
            f"{name} must be one of {list(choices)}; got {type(value).__name__} {show(value)}"
        )
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}; got {value!r}")
    return str(value)


def check_positive_array(
    value: ArrayLike, name: str, *, allow_inf: bool = False, allow_zero: bool = False
) -> NDArray[np.float64]:
    """A non-empty 1-D float array of positive (or non-negative) finite values."""
    arr = as_float_array(value, name)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence; got shape {arr.shape}")
    bad = np.isnan(arr) | (arr < 0 if allow_zero else arr <= 0)
    if not allow_inf:
        bad |= np.isinf(arr)
    if bad.any():
        rng = "[0, " if allow_zero else "(0, "
        rng += "inf]" if allow_inf else "inf)"
        raise ValueError(f"every entry of {name} must be in {rng}; got {show(arr[bad][0])}")
    return arr


def check_weights(
    value: ArrayLike | None, n_sites: int, name: str = "weights"
) -> NDArray[np.float64]:
    """Site weights μ_s ≥ 0 with Σ μ_s = 1 (to 1e-9); ``None`` gives equal weights 1/S."""
    if value is None:
        return np.full(n_sites, 1.0 / n_sites)
    w = check_positive_array(value, name, allow_zero=True)
    if w.size != n_sites:
        raise ValueError(f"{name} must have one entry per site ({n_sites}); got {w.size}")
    if not math.isclose(w.sum(), 1.0, rel_tol=0.0, abs_tol=1e-9):
        raise ValueError(f"{name} must sum to 1 (within 1e-9); got sum {show(w.sum())}")
    return w / float(w.sum())


RngLike = int | np.integer | np.random.Generator | None


def check_rng(value: object, name: str = "rng") -> np.random.Generator:
    """Turn an ``rng`` argument into a Generator (SPEC 7).

    ``None`` gives fresh entropy, a non-negative int seeds a new Generator, and a Generator
    is returned as is (so the caller's stream advances).

    Examples
    --------
    >>> bool(check_rng(3).integers(100) == check_rng(3).integers(100))
    True
    >>> g = np.random.default_rng(0)
    >>> check_rng(g) is g
    True
    """
    if isinstance(value, np.random.Generator):
        return value
    if value is None:
        return np.random.default_rng()
    if isinstance(value, Integral) and not isinstance(value, bool) and int(value) >= 0:
        return np.random.default_rng(int(value))
    if isinstance(value, Integral) and not isinstance(value, bool):
        raise ValueError(f"{name} must be a non-negative integer seed; got {int(value)}")
    raise TypeError(
        f"{name} must be None, a numpy.random.Generator or a non-negative integer seed; "
        f"got {type(value).__name__}"
    )
