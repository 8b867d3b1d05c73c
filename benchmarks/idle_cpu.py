"""What a still browser tab costs the server: its CPU per second of wall while one headless
Chromium tab sits on a page, with the project's configuration and with Streamlit's source
watcher switched back on, measured in one run.

    .venv/bin/python -m benchmarks.idle_cpu                      # CAPE averaging, PCA
    .venv/bin/python -m benchmarks.idle_cpu --pages averaging,pca,tensor --seconds 10

For each setting a fresh server (:func:`benchmarks.server.streamlit_server`, as ``run.sh``
starts it: the repository's ``.streamlit/config.toml``), then per page: the tab opens it,
waits for its first slider and 5 s more, and the server's process tree CPU (/proc) is read
over ``--seconds`` while nothing happens; at the end the same with no tab open. The watcher
(``server.fileWatcherType``, Streamlit's default "auto") cost 0.34-0.77 of a core for as
long as a tab sat still, which is why the configuration says "none". Prints one JSON report.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from benchmarks import calibration
from benchmarks.capacity import machine
from benchmarks.capacity_chromium import idle_rate
from benchmarks.server import CHROMIUM, CHROMIUM_ARGS, streamlit_server

PAGES = ("averaging", "pca")
WATCHER_ENV = "STREAMLIT_SERVER_FILE_WATCHER_TYPE"  # overrides config.toml (Streamlit's rule)


@contextmanager
def _watcher(kind: str | None) -> Iterator[None]:
    """The source watcher as ``kind`` ("auto": Streamlit's default) for servers started in
    the block; None: as the configuration says."""
    before = os.environ.pop(WATCHER_ENV, None)
    if kind is not None:
        os.environ[WATCHER_ENV] = kind
    try:
        yield
    finally:
        os.environ.pop(WATCHER_ENV, None)
        if before is not None:
            os.environ[WATCHER_ENV] = before


def still(pages: tuple[str, ...], seconds: float) -> dict[str, float]:
    """Per page (and "no tab"): the server's CPU s/s while a tab sits still on it."""
    from playwright.sync_api import sync_playwright

    rates: dict[str, float] = {}
    with streamlit_server(timeout=120) as (base, proc), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for path in pages:
                page = browser.new_page()
                page.goto(f"{base}/{path}", timeout=120_000)
                page.locator("[data-testid='stSlider']").first.wait_for(timeout=120_000)
                page.wait_for_timeout(5000)  # its charts drawn, the script long finished
                rates[path] = idle_rate(proc.pid, seconds)
                page.close()
        finally:
            browser.close()
        rates["no tab"] = idle_rate(proc.pid, seconds)
    return rates


def compare(pages: tuple[str, ...] = PAGES, seconds: float = 5.0) -> dict[str, Any]:
    """The project's configuration against Streamlit's default watcher, in one run."""
    start_load = os.getloadavg()[0]
    with _watcher(None):
        ours = still(pages, seconds)
    with _watcher("auto"):
        default = still(pages, seconds)
    return {
        "server CPU s per s, a still tab (this project's config, watcher on)": {
            name: [round(ours[name], 3), round(default[name], 3)] for name in ours
        },
        "seconds measured": seconds,
        "calibration loop ms": round(calibration.loop_ms(15), 1),
        **machine(),
        "load average at start": round(start_load, 2),
        "load average at end": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default=",".join(PAGES), help="url paths, comma-separated")
    parser.add_argument("--seconds", type=float, default=5.0, help="wall seconds per reading")
    args = parser.parse_args()
    if not 1 <= args.seconds <= 60:
        parser.error(f"--seconds must be in [1, 60]; got {args.seconds}")
    print(json.dumps(compare(tuple(p for p in args.pages.split(",") if p), args.seconds), indent=2))


if __name__ == "__main__":
    main()
