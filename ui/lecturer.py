"""The lecturer's key: what opens the "For the lecturer" page, its reveal and its reset.

The key is ``CAPE_LECTURER_KEY`` from the environment (``run.sh`` and
``deploy/class_server.py`` set one and print it when they start the server, the class
server the same for all its processes), else one made by this process and printed to its
stderr on first use. The lecturer opens any page with ``?lecturer=<key>`` once: the key leaves
the address at once (it is never on the projector), the session is the lecturer's, and the
browser keeps a session cookie holding a digest of the key (never the key), so a reload
stays the lecturer's. Without it, the page is not in the navigation and its links do nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import sys
import threading

import streamlit as st

ENV = "CAPE_LECTURER_KEY"
PARAM = "lecturer"  # ?lecturer=<key>
COOKIE = "cape_lecturer"
SESSION = "_cape_lecturer"  # session: this session is the lecturer's

_made: list[str] = []
_lock = threading.Lock()


def key() -> str:
    """The server's lecturer key (the environment's, else made once and printed)."""
    given = os.environ.get(ENV, "").strip()
    if given:
        return given
    with _lock:
        if not _made:
            _made.append(secrets.token_urlsafe(12))
            print(
                f"CAPE Lab lecturer's key: {_made[0]}  (open the app with ?{PARAM}={_made[0]}; "
                f"set {ENV} to choose it)",
                file=sys.stderr,
                flush=True,
            )
        return _made[0]


def _token() -> str:
    """What the cookie holds: a digest of the key, useless without it."""
    return hmac.new(key().encode(), b"cape-lecturer", hashlib.sha256).hexdigest()[:32]


def check() -> bool:
    """Whether this session is the lecturer's: by the session, the link's key (then removed
    from the address) or the browser's cookie. Call once per run, before the navigation."""
    state = st.session_state
    if state.get(SESSION):
        return True
    given = st.query_params.get(PARAM)
    if given is not None:
        del st.query_params[PARAM]
        if hmac.compare_digest(given.encode(), key().encode()):
            state[SESSION] = True
            return True
    try:
        cookie = st.context.cookies.get(COOKIE)
    except Exception:  # no request context (a bare script)
        cookie = None
    if isinstance(cookie, str) and hmac.compare_digest(cookie.encode(), _token().encode()):
        state[SESSION] = True
        return True
    return False


def is_lecturer() -> bool:
    """Whether this session showed the key (after :func:`check` ran this run)."""
    return bool(st.session_state.get(SESSION))


def remember() -> None:
    """Keep the lecturer's session over a reload: a session cookie with the key's digest."""
    st.sidebar.html(
        f"<script>document.cookie = '{COOKIE}={_token()}; path=/; SameSite=Strict';</script>",
        unsafe_allow_javascript=True,
    )
