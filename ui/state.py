"""The app's state model (docs/state.md): every setting is a keyed widget bound to the URL.

* Each page owns its controls: their keys carry the page's prefix (``pca_eps``, ``td_eps``,
  ``avg_S``), so two pages never read each other's settings.
* The URL is the truth: widgets are bound to it (``bind="query-params"``), so a copied link
  reproduces the screen; their values survive page changes (``persist_state="session"``).
* Back/Forward move through states: :data:`HISTORY_JS` turns each URL change into a history
  entry, and Streamlit re-seeds bound widgets from the URL on Back/Forward.
* A preset replaces the whole state it names: :func:`reset` sets every key of the page, the
  ones the preset does not mention to their defaults.
* A link replaces what a page remembers: :func:`enter` (app.py, before the page runs) forgets
  a page's remembered settings when the page is opened from a link that names any of them,
  so the page shows what a fresh browser shows at that link.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import streamlit as st

from ui.guard import labels_for_keys, note_out_of_range

PAGES = Path(__file__).resolve().parents[1] / "app_pages"


def page_prefixes(pages: Path = PAGES) -> dict[str, str]:
    """Each page's key prefix by its URL path (``"averaging"`` → ``"avg_"``; the default page,
    the Overview, also at ``""``), as the page declares it (``P = "avg_"``, docs/state.md)."""
    found = {}
    for source in sorted(pages.glob("*.py")):
        declared = re.search(r'^(?:P|PREFIX) = "(\w+_)"', source.read_text("utf-8"), re.M)
        if declared:
            found[source.stem] = declared.group(1)
    if "overview" in found:
        found[""] = found["overview"]
    return found


# history.js reads the prefixes to tell a stale write (another page's keys) from the page's own
HISTORY_JS = f"window.__capePrefixes = {json.dumps(page_prefixes())};\n" + (
    Path(__file__).with_name("history.js").read_text(encoding="utf-8")
)
SCHEME_JS = (Path(__file__).with_name("scheme.js")).read_text(encoding="utf-8")
# Streamlit's sidebar navigation as lists a screen reader (and axe) accepts (issue #49)
NAV_A11Y_JS = (Path(__file__).with_name("nav_a11y.js")).read_text(encoding="utf-8")
# Next / Back of a stepper from the keyboard: ArrowRight, ArrowLeft (issue #49)
KEYS_JS = (Path(__file__).with_name("keys.js")).read_text(encoding="utf-8")
# A page opened from a link inside the app starts at its top (issue #49)
PAGE_TOP_JS = (Path(__file__).with_name("page_top.js")).read_text(encoding="utf-8")


# Every bound widget's default, by key, recorded when the widget is drawn: a preset resets the
# keys it does not name to these (a key never drawn in this process has no state to reset).
_DEFAULTS: dict[str, Any] = {}


def _default(widget: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    if "value" in kwargs:
        return kwargs["value"]
    if "default" in kwargs:
        return kwargs["default"]
    if "options" in kwargs:
        return list(kwargs["options"])[kwargs.get("index", 0)]
    name = getattr(widget, "__name__", "")
    if name == "toggle":
        return False
    if name == "number_input":
        return kwargs.get("min_value")
    return ""


def bound(widget: Callable[..., Any], label: str, key: str, **kwargs: Any) -> Any:
    """``widget(label, key=key, …)`` bound to the URL key ``key`` and kept across pages."""
    _DEFAULTS[key] = _default(widget, kwargs)
    labels_for_keys(key, kwargs)  # a link may name an option by its key or its label
    note_out_of_range(widget, key, kwargs)  # a link value the widget cannot take, named
    return widget(label, key=key, bind="query-params", persist_state="session", **kwargs)


def install_history() -> None:
    """Make Back/Forward step through settings, rerun when the system's colour scheme
    changes (the charts' lettering follows the scheme of the last run), give Streamlit's
    navigation list markup a screen reader accepts (ui/nav_a11y.js) and let ArrowRight /
    ArrowLeft press a stepper's Next / Back (ui/keys.js) and open a page changed to at its
    top (ui/page_top.js); app.py calls this once per run."""
    scripts = (HISTORY_JS, SCHEME_JS, NAV_A11Y_JS, KEYS_JS, PAGE_TOP_JS)
    st.sidebar.html(f"<script>{chr(10).join(scripts)}</script>", unsafe_allow_javascript=True)


# The page the session's last run drew (session only, never in the URL).
_PAGE = "_state_page"


def prefix_of(key: str) -> str:
    """The page tag of a setting's key (``avg_S`` → ``avg_``); ``""`` for a key no page owns
    (``present``, shared by every page)."""
    head, sep, _ = key.partition("_")
    return f"{head}_" if head and sep else ""


def enter(page: str, query: Iterable[str]) -> list[str]:
    """Before ``page`` runs: if the session arrives at it from another page (or a fresh
    session opens it) with an address ``query`` that names any of its settings, forget
    everything the page remembered, so the address alone decides, as in a fresh browser.

    A setting kept across pages (``persist_state``) beats an address value equal to the
    widget's default: Streamlit drops such a value from the address and the remembered one
    comes back. So a link that carries every setting (an Overview preset) showed the earlier
    visit's numbers wherever the two differed in a default (issue #34, item 6). Arriving with
    no setting in the address (the sidebar, a plain link) keeps what the page remembered.

    Returns the keys forgotten.
    """
    state = st.session_state
    if state.get(_PAGE) == page:
        return []  # a rerun of the same page: its widgets and the URL agree already
    state[_PAGE] = page
    carried = {prefix_of(str(key)) for key in query} - {""}
    forgotten = [str(key) for key in list(state.keys()) if prefix_of(str(key)) in carried]
    for key in forgotten:
        del state[key]
    return forgotten


def reset(prefix: str, values: Mapping[str, Any] | None = None) -> None:
    """Set every key of the page (``prefix``) to its default, then ``values``.

    A preset replaces the whole state it names. Call it from a callback (``on_click``) or
    before the page's widgets are drawn.
    """
    state = st.session_state
    for key, value in _DEFAULTS.items():
        if key.startswith(prefix) and state.get(key) != value:
            state[key] = value
    for key, value in dict(values or {}).items():
        state[key] = value


def link_params(
    values: Mapping[str, Any], defaults: Mapping[str, Any] | None = None
) -> dict[str, str]:
    """Query parameters for a link that opens a page in a preset: ``defaults`` (the page's
    other keys) overridden by ``values``, written as the widgets write them (``True`` as
    ``true``). A link naming the page's settings replaces what the page remembered
    (:func:`enter`), so the same link gives the same screen whatever the visitor did before."""
    out = {}
    for key, value in {**dict(defaults or {}), **dict(values)}.items():
        out[key] = str(value).lower() if isinstance(value, bool) else f"{value}"
    return out
