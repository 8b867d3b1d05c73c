"""Uploaded bytes bounded per browser and for the whole server (issues #26, #36).

Streamlit's ``server.maxUploadSize`` bounds one request, not a session: one tab, with its own
session's XSRF token, could PUT sixty 19 MB files under new file ids and the server kept all
of them in memory (507 → 1,576 MB) until minutes after the tab closed. :func:`install` wraps
the runtime's uploaded-file manager once (``app.py``): a file that would take the browser
past :data:`BROWSER_ENV` or the server past :data:`SERVER_ENV` megabytes is refused with
HTTP 413 and a sentence saying so (the bytes of the refused request go with it), and a
session's files are dropped :data:`FREE_AFTER_SECONDS` after its browser disconnects unless
it comes back (Streamlit's own clean-up waits for ``server.disconnectedSessionTTL``, 2 min,
and later still under load).

The browser is the heavy queue's key (:func:`serving.jobs.browser_key`: the XSRF token all of
a browser's tabs share), so twelve tabs hold what one tab may: a cap per session let one
browser fill the server's bound and another student's 50 kB CSV got 413 (issue #36). No
browser may hold more than half the server's bound, whatever the caps say
(:data:`MAX_SHARE`), so the server's bound is always shared.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

BROWSER_ENV = "CAPE_UPLOAD_BROWSER_MB"
SERVER_ENV = "CAPE_UPLOAD_SERVER_MB"
DEFAULT_BROWSER_MB = 60  # three CSVs at the 20 MB request limit
DEFAULT_SERVER_MB = 600  # ten browsers at their cap
MAX_SHARE = 0.5  # of the server's bound, the most one browser may hold
FREE_AFTER_SECONDS = 20.0  # a reconnect after a missed ping keeps its files (serving.jobs' grace)
MB = 1024 * 1024


def _megabytes(name: str, default: int) -> int:
    """A cap in MB from the environment (a positive integer), else the default."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ValueError(f"{name} must be a positive number of megabytes; got {raw!r}")
    return value


class UploadRefused(Exception):
    """A file past a cap (the upload route answers 413 with :attr:`message`)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Bounds:
    """The caps on one uploaded-file manager (``MemoryUploadedFileManager``).

    ``owner`` maps a session to the browser that holds it (:func:`session_owner`); by
    default each session is its own owner. The browser cap is at most :data:`MAX_SHARE` of
    the server's.
    """

    def __init__(
        self,
        manager: Any,
        browser_bytes: int,
        server_bytes: int,
        owner: Callable[[str], str] | None = None,
    ) -> None:
        self.manager, self.server_bytes = manager, server_bytes
        self.browser_bytes = min(browser_bytes, int(server_bytes * MAX_SHARE))
        self.owner = owner or (lambda session_id: session_id)
        self._lock = threading.Lock()  # a check and its add are one step
        self._timers: dict[str, threading.Timer] = {}

    def _held(self) -> dict[str, dict[str, int]]:
        """session → file id → bytes, as the manager holds them now."""
        storage = self.manager.file_storage
        with self.manager._lock:
            return {
                session: {fid: len(rec.data) for fid, rec in files.items()}
                for session, files in storage.items()
            }

    def check(self, session_id: str, file_id: str, size: int) -> None:
        """Raise :class:`UploadRefused` if ``size`` more bytes pass a cap (a file replaced
        under the same id counts once)."""
        held = self._held()
        owner = self.owner(session_id)
        mine = size + sum(
            b
            for session, files in held.items()
            if session == session_id or self.owner(session) == owner
            for fid, b in files.items()
            if not (session == session_id and fid == file_id)
        )
        total = sum(sum(files.values()) for files in held.values())
        total += size - held.get(session_id, {}).get(file_id, 0)
        if mine > self.browser_bytes:
            raise UploadRefused(
                f"Upload refused: this browser (all its tabs) already holds "
                f"{(mine - size) / MB:.0f} MB of uploaded files and may hold at most "
                f"{self.browser_bytes / MB:.0f} MB. Remove a file (the × next to it) or "
                "close a tab that holds one."
            )
        if total > self.server_bytes:
            raise UploadRefused(
                f"Upload refused: the server holds {(total - size) / MB:.0f} MB of uploads "
                f"and takes at most {self.server_bytes / MB:.0f} MB. Try again in a minute."
            )

    def add_file(self, original: Any, session_id: str, file: Any) -> None:
        with self._lock:
            self.check(session_id, file.file_id, len(file.data))
            original(session_id=session_id, file=file)

    def disconnected(self, session_id: str, is_active: Any) -> None:
        """The session's browser went away: free its files after the grace unless it is back."""

        def free() -> None:
            with self._lock:
                self._timers.pop(session_id, None)
            if not is_active(session_id):
                self.manager.remove_session_files(session_id)

        timer = threading.Timer(FREE_AFTER_SECONDS, free)
        timer.daemon = True
        with self._lock:
            old = self._timers.pop(session_id, None)
            self._timers[session_id] = timer
        if old is not None:
            old.cancel()
        timer.start()


_installed: Bounds | None = None
_install_lock = threading.Lock()


def _refuse(refusal: UploadRefused) -> Exception:
    """The error the upload route turns into a response: 413 with the sentence."""
    try:
        from starlette.exceptions import HTTPException
    except ImportError:  # pragma: no cover - Streamlit's server is Starlette
        return refusal
    return HTTPException(status_code=413, detail=refusal.message)


def session_owner(runtime: Any) -> Callable[[str], str]:
    """session id → the browser behind it: :func:`serving.jobs.browser_key` of the XSRF
    cookie its websocket opened with (the heavy queue's key), else the session itself."""
    from serving.jobs import browser_key

    def owner(session_id: str) -> str:
        client = runtime.get_client(session_id)
        context = getattr(client, "client_context", None)
        cookie = getattr(context, "cookies", {}).get("_streamlit_xsrf")
        return browser_key(cookie) or session_id

    return owner


def bound(manager: Any, runtime: Any = None) -> Bounds:
    """Wrap ``manager`` (an uploaded-file manager) with the caps from the environment; with
    ``runtime``, count a browser's tabs together and free a session's files after its
    browser disconnects."""
    bounds = Bounds(
        manager,
        _megabytes(BROWSER_ENV, DEFAULT_BROWSER_MB) * MB,
        _megabytes(SERVER_ENV, DEFAULT_SERVER_MB) * MB,
        owner=None if runtime is None else session_owner(runtime),
    )
    original_add = manager.add_file

    def add_file(session_id: str, file: Any) -> None:
        try:
            bounds.add_file(original_add, session_id, file)
        except UploadRefused as refusal:
            raise _refuse(refusal) from None

    manager.add_file = add_file
    if runtime is not None:
        original_disconnect = runtime.disconnect_session

        def disconnect_session(session_id: str, *args: Any, **kwargs: Any) -> None:
            original_disconnect(session_id, *args, **kwargs)
            bounds.disconnected(session_id, runtime.is_active_session)

        runtime.disconnect_session = disconnect_session
    return bounds


def install() -> None:
    """Bound the running server's uploads (once per process; app.py, every run)."""
    global _installed
    if _installed is not None:
        return
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return
    runtime = Runtime.instance()
    with _install_lock:
        if _installed is None and hasattr(runtime.uploaded_file_mgr, "file_storage"):
            _installed = bound(runtime.uploaded_file_mgr, runtime)
