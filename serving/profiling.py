"""Profile the app's reruns inside the real server: with ``CAPE_PROFILE_DIR`` set, each run
of a page script is profiled (cProfile) and written to that directory as
``<time>-<page>.prof``. Off (no cost but one environment lookup) when it is not set.
``python -m benchmarks.capacity --profile`` uses it (docs/performance.md)."""

from __future__ import annotations

import contextlib
import cProfile
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PROFILE_ENV = "CAPE_PROFILE_DIR"


@contextlib.contextmanager
def rerun(page: Any = None) -> Iterator[None]:
    """Profile the block (one script run of ``page``, an ``st.Page``) when
    ``CAPE_PROFILE_DIR`` is set; touches nothing otherwise (a bare-mode import of app.py)."""
    directory = os.environ.get(PROFILE_ENV)
    if not directory:
        yield
        return
    try:
        title = str(page.title)
    except Exception:  # no page, or one outside a server
        title = "page"
    profile = cProfile.Profile()
    profile.enable()
    try:
        yield
    finally:
        profile.disable()
        name = "".join(c if c.isalnum() else "_" for c in title)[:40]
        profile.dump_stats(Path(directory) / f"{time.time_ns()}-{name}.prof")
