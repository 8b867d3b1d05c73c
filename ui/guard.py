"""What stands between a hostile link or file and the page: plain-text errors, sane URL values.

Streamlit renders every message body as Markdown, so a message that quotes user input (a URL
value, a file name) could carry a link or a remote image into an error box. Messages go
through :func:`plain` first; values Streamlit itself cannot parse are dropped from the URL
before any widget reads them (:func:`drop_unreadable_query_params`), and readable values a
widget cannot take, which Streamlit replaces by the default, are named beside the widget
(:func:`note_out_of_range`).
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Callable
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

# Every ASCII punctuation character may be backslash-escaped in CommonMark; escaping all of
# them leaves no link, image, emphasis, directive (:red[…]), LaTeX ($) or autolink (http:,
# www.) syntax, and the text reads exactly as written.
_ESCAPES = str.maketrans({c: "\\" + c for c in string.punctuation})
MAX_SHOWN = 600  # characters of a message: a long URL value cannot flood the page
# GitHub-flavoured autolinks (https://…, www.…, a@b.c) are found in the text *after* escapes
# are resolved, so escaping cannot stop them: a zero-width space after "://", "www" and "@"
# breaks each pattern without changing what the reader sees.
_AUTOLINK = re.compile(r"://|@|www", re.IGNORECASE)
ZERO_WIDTH_SPACE = "\u200b"


def plain(text: object) -> str:
    """``text`` as Markdown that renders literally: every ASCII punctuation character escaped,
    autolinks broken by a zero-width space."""
    shown = str(text)
    if len(shown) > MAX_SHOWN:
        shown = shown[:MAX_SHOWN] + " …"
    shown = _AUTOLINK.sub(lambda m: m.group(0) + ZERO_WIDTH_SPACE, shown)
    return shown.translate(_ESCAPES)


def show_error(message: object) -> None:
    """An error box whose text is shown as written, never interpreted as Markdown."""
    st.error(plain(message), icon=":material/error:")


# Streamlit's number widgets turn a URL value into a number with int(float(text)): "1e400"
# becomes inf and raises OverflowError inside Streamlit, before our code sees it.
LARGEST_URL_NUMBER = 1e15


def _unreadable(value: str) -> bool:
    try:
        number = float(value)
    except ValueError:
        return False  # not a number: the widget rejects it itself
    return not math.isfinite(number) or abs(number) > LARGEST_URL_NUMBER


def drop_unreadable_query_params() -> list[str]:
    """Remove URL values that are numbers no widget can hold (inf, NaN, 1e400); return their
    keys. The widgets then start from their defaults."""
    params = st.query_params
    dropped = [key for key in list(params) if any(_unreadable(v) for v in params.get_all(key))]
    if not dropped:
        return dropped
    for key in dropped:
        del params[key]
    # Widgets seed themselves from the URL as it was at page load, kept apart from
    # st.query_params (Streamlit ≥ 1.55): forget the dropped values there too.
    from streamlit.runtime.state import get_session_state

    with get_session_state().query_params() as state:
        initial = getattr(state, "_initial_query_params", None)
        if isinstance(initial, dict):
            for key in dropped:
                initial.pop(key, None)
    return dropped


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def option_label(text: str, kwargs: dict[str, Any]) -> str | None:
    """The one rule for an options widget's URL value (docs/state.md, rule 1): it names an
    option by its label, as the widget shows it and writes it (``same as the others``), or by
    its key, as a lesson or a preset writes it (``matched``). Returns that option's label, or
    None when ``text`` names no option. A label wins over a key that reads the same."""
    fmt = kwargs.get("format_func") or str
    options = list(kwargs.get("options", ()))
    labels = [str(fmt(option)) for option in options]
    if text in labels:
        return text
    for option, shown in zip(options, labels, strict=True):
        if str(option) == text:
            return shown
    return None


def labels_for_keys(key: str, kwargs: dict[str, Any]) -> bool:
    """Before a URL-bound options widget is first drawn in this session: rewrite each link
    value that names an option by its key to that option's label, in the address and in the
    values widgets seed themselves from, so the widget takes it (Streamlit reads labels only
    and silently drops anything else). Returns whether anything was rewritten."""
    if "options" not in kwargs or key in st.session_state:
        return False
    params = st.query_params
    values = params.get_all(key)
    shown = [option_label(value, kwargs) or value for value in values]
    if shown == values:
        return False
    params[key] = shown if len(shown) > 1 else shown[0]
    from streamlit.runtime.state import get_session_state

    with get_session_state().query_params() as state:
        initial = getattr(state, "_initial_query_params", None)
        if isinstance(initial, dict) and key in initial:
            initial[key] = list(shown)
    return True


def _allowed(kwargs: dict[str, Any]) -> tuple[Callable[[str], bool], str] | None:
    """A test of one URL value against a widget's options or its min/max, and the allowed
    values in words; None for a widget without either (text, toggles)."""
    if "options" in kwargs:  # an option's label or its key (option_label)
        fmt = kwargs.get("format_func") or str
        shown = [str(fmt(option)) for option in kwargs["options"]]
        return (lambda text: option_label(text, kwargs) is not None), ", ".join(shown)
    low, high = _number(kwargs.get("min_value")), _number(kwargs.get("max_value"))
    if low is None and high is None:
        return None

    def inside(text: str) -> bool:
        try:
            x = float(text)
        except ValueError:
            return True  # not a number: the widget rejects it (dates, times are not ours)
        return not math.isfinite(x) or (
            (low is None or x >= low) and (high is None or x <= high)
        )  # inf and NaN: drop_unreadable_query_params' notice

    words = [
        str(int(v)) if isinstance(kwargs[k], int) else f"{v:g}"
        for k, v in (("min_value", low), ("max_value", high))
        if v is not None
    ]
    if len(words) == 2:
        return inside, " to ".join(words)
    return inside, ("at least " if high is None else "at most ") + words[0]


def note_out_of_range(widget: Callable[..., Any], key: str, kwargs: dict[str, Any]) -> None:
    """Before a URL-bound widget is first drawn in this session (so a link seeds it): a link
    value outside its options or its min/max, which Streamlit silently replaces by the
    default, is named with the allowed values beside the widget — the notice unreadable
    numbers get (app.py)."""
    if key in st.session_state:
        return
    values = st.query_params.get_all(key)
    check = _allowed(kwargs) if values else None
    if check is None:
        return
    inside, allowed = check
    bad = [value for value in values if not inside(value)]
    if bad:
        box = getattr(widget, "__self__", None)
        box = box if isinstance(box, DeltaGenerator) else st
        box.warning(
            plain(
                f"Ignored an out-of-range value in the link: {key}={bad[0][:40]} "
                f"(allowed: {allowed[:200]}); the default is used."
            ),
            icon=":material/link_off:",
        )
