"""A real Chromium's server cost per cached slider move, beside the websocket client's.

    .venv/bin/python -m benchmarks.capacity_chromium                  # the five pages of #50
    .venv/bin/python -m benchmarks.capacity_chromium --pages pca,privacy --repeats 10

The capacity predictor (:mod:`deploy.capacity`) prices a class with the websocket client of
:mod:`benchmarks.capacity` (no browser). This checks that price against what a student's
browser costs the server: on one fresh server, for each page, a headless Chromium (Debian's,
:data:`benchmarks.server.CHROMIUM`) opens the page, moves ε (or the first slider) right,
left and right again with the keyboard (both settings computed), then ``--repeats`` times
between the two; then the websocket client does the same on the same page. Both figures are
CPU over the server's whole process tree (the app process and every descendant, /proc),
each move sent when the previous rerun's ``script_finished`` has arrived (never coalesced),
minus the tree's idle CPU rate (measured for 5 s with the page open and still) times the
batch's wall time. Prints one JSON report: per page both ms per move and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from typing import Any

from benchmarks import calibration
from benchmarks.capacity import Session, machine
from benchmarks.server import CHROMIUM, CHROMIUM_ARGS, ERRORS_SHOWN, streamlit_server
from benchmarks.tree_cpu import tree_seconds as tree_cpu

PAGES = ("averaging", "privacy", "tensor", "pca", "learn")  # the five readings
SETTLE = 0.1  # seconds after a rerun's script_finished, before the next move


def idle_rate(pid: int, seconds: float = 5.0) -> float:
    """The server tree's CPU seconds per second with its clients connected and still."""
    before = tree_cpu(pid)
    time.sleep(seconds)
    return (tree_cpu(pid) - before) / seconds


def chromium_page(browser: Any, base: str, pid: int, page_path: str, repeats: int) -> dict:
    """A Chromium tab's server CPU per cached move on ``page_path``: each key press, then a
    wait for the rerun's ``script_finished`` on the tab's websocket (and SETTLE s more)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    finished = [0]

    def on_frame(payload: bytes | str) -> None:
        msg = ForwardMsg()
        msg.ParseFromString(payload if isinstance(payload, bytes) else payload.encode())
        if msg.WhichOneof("type") == "script_finished":
            finished[0] += 1

    page.on("websocket", lambda ws: ws.on("framereceived", on_frame))
    try:
        page.goto(f"{base}/{page_path}", timeout=120_000)
        page.locator("[data-testid='stSlider']").first.wait_for(timeout=120_000)
        page.wait_for_timeout(3000)
        sliders = page.locator("[data-testid='stSlider']")
        eps = sliders.filter(has_text="Privacy ε")
        slider = (eps if eps.count() else sliders).first
        handle = slider.locator("[role='slider'], input[type='range']").first

        def press(i: int) -> None:
            before = finished[0]
            handle.focus()
            page.keyboard.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
            deadline = time.time() + 60
            while finished[0] == before and time.time() < deadline:
                page.wait_for_timeout(20)
            if finished[0] == before:
                raise TimeoutError(f"{page_path}: no rerun within 60 s of a key press")
            page.wait_for_timeout(1000 * SETTLE)

        for i in range(3):  # right, left, right: both settings computed, now on the second
            press(i)
        page.wait_for_timeout(1000)
        idle = idle_rate(pid)
        start, before = time.time(), tree_cpu(pid)
        for i in range(repeats):
            press(i + 1)
        busy = tree_cpu(pid) - before - idle * (time.time() - start)
        errors = len(page.evaluate(ERRORS_SHOWN))  # a page's verdict is none (privacy's)
        return {"ms": 1000 * busy / repeats, "idle ms/s": 1000 * idle, "errors": errors}
    finally:
        context.close()


async def client_page(base: str, pid: int, page_path: str, repeats: int) -> dict:
    """The websocket client's server CPU per cached move on ``page_path``, measured as
    :func:`chromium_page` measures the browser's."""
    session = Session(base, timeout=120)
    try:
        await session.connect()
        await session.rerun(page=page_path, query="")
        sliders = session.sliders() or list(session.widgets.values())
        widget = next((w for w in sliders if w.label == "Privacy ε"), sliders[0])
        home = widget.index
        other = home + 1 if home + 1 < len(widget.values) else home - 1
        for index in (other, home, other):
            await session.move(widget.label, index)
        await asyncio.sleep(1)
        idle = await asyncio.to_thread(idle_rate, pid)
        start, before = time.time(), tree_cpu(pid)
        for i in range(repeats):
            await session.move(widget.label, home if i % 2 == 0 else other)
            await asyncio.sleep(SETTLE)
        busy = tree_cpu(pid) - before - idle * (time.time() - start)
        return {
            "ms": 1000 * busy / repeats,
            "idle ms/s": 1000 * idle,
            "errors": len(session.errors),
        }
    finally:
        await session.close()


def compare(pages: tuple[str, ...] = PAGES, repeats: int = 20) -> dict[str, Any]:
    """Per page: Chromium's and the websocket client's server tree CPU per cached move."""
    from playwright.sync_api import sync_playwright

    start_load = os.getloadavg()[0]
    rows = []
    with streamlit_server(timeout=120) as (base, proc):
        with sync_playwright() as p:  # its own event loop: the client runs after it
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                real = {
                    path: chromium_page(browser, base, proc.pid, path, repeats) for path in pages
                }
            finally:
                browser.close()
        for path in pages:
            ours = asyncio.run(client_page(base, proc.pid, path, repeats))
            rows.append(
                {
                    "page": path,
                    "Chromium ms per move (server tree)": round(real[path]["ms"], 1),
                    "client ms per move (server tree)": round(ours["ms"], 1),
                    "client / Chromium": round(ours["ms"] / max(real[path]["ms"], 1e-9), 2),
                    "idle ms per s (Chromium, client)": [
                        round(real[path]["idle ms/s"], 1),
                        round(ours["idle ms/s"], 1),
                    ],
                    "errors": real[path]["errors"] + ours["errors"],
                }
            )
    ratios = [r["client / Chromium"] for r in rows]
    return {
        "pages": rows,
        "median client / Chromium": round(statistics.median(ratios), 2),
        "repeats": repeats,
        "calibration loop ms": round(calibration.loop_ms(15), 1),
        **machine(),
        "load average at start": round(start_load, 2),
        "load average at end": round(os.getloadavg()[0], 2),
        "errors": sum(r["errors"] for r in rows),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default=",".join(PAGES), help="url paths, comma-separated")
    parser.add_argument("--repeats", type=int, default=20, help="cached moves per page")
    args = parser.parse_args()
    if not 2 <= args.repeats <= 100:
        parser.error(f"--repeats must be in [2, 100]; got {args.repeats}")
    report = compare(tuple(p for p in args.pages.split(",") if p), args.repeats)
    print(json.dumps(report, indent=2))
    raise SystemExit(1 if report["errors"] else 0)


if __name__ == "__main__":
    main()
