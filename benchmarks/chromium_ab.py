"""Paired A/B of Chromium launch flags: the CPU of the browser tests' page work in two
Chromiums side by side, one with ``benchmarks.server.CHROMIUM_ARGS``, one with those and the
flags given.

    python -m benchmarks.chromium_ab --js-flags=--no-opt

One warm server (``streamlit_server``); each browser opens a tab as ``tests/conftest.py``
does, then, turn about (AB, then BA), loads each of three pages, settles it and switches it to
dark (``tests/browser_wait.py``). A browser's CPU is its process tree's, read from ``/proc``
before and after each step, so a change of the machine's speed or load hits both alike (this
2-core machine's CPU has two speeds; runs one after the other differ by 20 % and more). Prints
each side's CPU-seconds (page loads, scheme switches) and B/A. Linux only.
"""

from __future__ import annotations

import os
import sys

from benchmarks.chromium_cpu import process_type
from benchmarks.server import CHROMIUM, CHROMIUM_ARGS, ROOT, streamlit_server
from benchmarks.tree_cpu import descendants, read_stat

PAGES = [("pca", 1), ("privacy", 2), ("paper_figures", 1)]  # path, Plotly charts on load
REPEATS = 2


def _browsers() -> set[int]:
    return {pid for pid in descendants(os.getpid()) if process_type(pid) == "browser"}


def tree_cpu(root: int) -> float:
    """CPU seconds so far of ``root`` and every process below it."""
    stat = read_stat(f"/proc/{root}/stat")
    own = stat[1] if stat is not None else 0.0
    return own + sum(cpu for cpu, _ in descendants(root).values())


def main(extra: list[str], repeats: int = REPEATS) -> dict[str, dict[str, float]]:
    """Run the paired comparison; return side → {"load": CPU-s, "switch": CPU-s}."""
    if not extra:
        raise ValueError("extra must name at least one Chromium flag to compare, got none")
    sys.path.insert(0, str(ROOT / "tests"))
    import browser_wait
    from playwright.sync_api import sync_playwright

    totals = {side: {"load": 0.0, "switch": 0.0} for side in "AB"}
    with streamlit_server() as (url, _), sync_playwright() as p:
        tabs = {}
        for side, args in (("A", CHROMIUM_ARGS), ("B", CHROMIUM_ARGS + extra)):
            before = _browsers()
            browser = p.chromium.launch(executable_path=CHROMIUM, args=args)
            (root,) = _browsers() - before
            context = browser.new_context(color_scheme="light", **browser_wait.CONTEXT)
            page = context.new_page()
            page.set_viewport_size({"width": 1400, "height": 1000})
            page.goto(f"{url}/pca")  # the server's caches and the tab's, warm for both
            browser_wait.settle(page, 120, 1)
            tabs[side] = (root, page)
        for repeat in range(repeats):
            for path, charts in PAGES:
                for side in "AB" if repeat % 2 == 0 else "BA":
                    root, page = tabs[side]
                    page.emulate_media(color_scheme="light")
                    start = tree_cpu(root)
                    page.goto(f"{url}/{path}")
                    browser_wait.settle(page, 120, charts)
                    loaded = tree_cpu(root)
                    browser_wait.switch_scheme(page, "dark")
                    totals[side]["load"] += loaded - start
                    totals[side]["switch"] += tree_cpu(root) - loaded
    return totals


if __name__ == "__main__":
    flags = sys.argv[1:]
    result = main(flags)
    a, b = (sum(result[side].values()) for side in "AB")
    for side, total in (("A", a), ("B", b)):
        parts = ", ".join(f"{k} {v:.1f}" for k, v in result[side].items())
        print(f"{side}: {total:.1f} CPU-s ({parts})")
    print(f"B/A {b / a:.3f}  (B adds {' '.join(flags)})")
