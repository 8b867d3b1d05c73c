"""The error boundary of every core call (:func:`call_core`), the classic-bound warning, and
how st.cache_data keys a spec or the sites (:data:`SPEC_HASH`)."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable
from typing import Any, ParamSpec, TypeVar

import streamlit as st
from streamlit.runtime.caching.cache_utils import CachedFunc

import dpcore
from dpcore import (
    ClassicGaussianWarning,
    OtdSpec,
    PcaSpec,
    RoundsSpec,
    Sites,
)
from serving.flight import flight
from ui.cached import memo
from ui.guard import show_error

P = ParamSpec("P")
T = TypeVar("T")


def call_core(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run a core call; a ValueError becomes one ``st.error`` and stops the page.

    Only ValueError: it is the core's answer to a bad setting. Anything else (a TypeError
    from a wrong call, say) is a bug in the app and must surface as one, in the tests too.
    Core warnings are silenced here: a cached result would not repeat them, so pages show
    the classic-bound warning from the parameters (:func:`classic_warning`).

    A ``st.cache_data`` wrapper's result is remembered per process (:mod:`ui.cached.memo`):
    a call with equal arguments returns that one object, frozen, instead of the cache's copy.
    """
    return _run(fn, args, kwargs, spinner=None)


def call_core_with_spinner(text: str, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """:func:`call_core` under ``st.spinner(text)``, the spinner only when the result is not
    remembered (:mod:`ui.cached.memo`). A spinner starts a timer thread and sends a message on
    every rerun, ~4 % of a cached move on the PCA page (issue #36 item 4), and a remembered
    result comes back before it would have shown."""
    return _run(fn, args, kwargs, spinner=text)


def _run(fn: Callable[..., T], args: tuple, kwargs: dict, spinner: str | None) -> T:
    """The one body of :func:`call_core` and :func:`call_core_with_spinner`: a remembered
    result at once; else the call (one flight per request), under the spinner if asked."""
    key = memo.key_of(fn, args, kwargs, SPEC_HASH) if isinstance(fn, CachedFunc) else None
    if key is not None:
        found = memo.get(key)
        if found is not memo.MISSING:
            return found
    lock = flight(fn, args, kwargs)
    try:
        with (
            st.spinner(spinner) if spinner else contextlib.nullcontext(),
            lock or contextlib.nullcontext(),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("ignore", ClassicGaussianWarning)
            result = fn(*args, **kwargs)
        return result if key is None else memo.remember(key, result)
    except ValueError as err:
        show_error(err)
        st.stop()


def classic_warning(calibration: str, epsilons: Iterable[float]) -> None:
    """Show the warning when the classic calibration meets ε ≥ 1 (not a proof there)."""
    if calibration == "classic" and max(epsilons) >= dpcore.CLASSIC_PROOF_LIMIT:
        st.warning(
            "Some settings use ε ≥ 1 with the **classic** Gaussian calibration, which is proven "
            "only for ε < 1 (the paper uses it up to ε = 10). Choose the *analytic* calibration "
            "for noise that is a proof of privacy at every ε.",
            icon=":material/warning:",
        )


# How st.cache_data keys a spec or the sites (dpcore.Sites): its repr, which names every field
# that decides the frame (grid, sites, privacy, runs, the data's name, D, K, …, the algorithms)
# in the same text in every session and process (floats by repr: every bit). Hashing the
# dataclass field by field would reach the registry records it carries (functions: unhashable)
# and cost more. The page's spec names its data ("synthetic"; a real data set joins only where
# the sweep runs), so its repr stays short.
SPEC_HASH: dict[str | type[Any], Callable[[Any], Any]] = {
    PcaSpec: repr,
    OtdSpec: repr,
    RoundsSpec: repr,
    Sites: repr,
}
