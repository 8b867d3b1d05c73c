"""Where a browser test's time goes: a pytest plugin that times the waits and actions of
tests/browser_wait.py and Playwright (wall seconds, and the CPU seconds Chromium and the app
server used during each, from the process tree as benchmarks/tree_cpu.py reads it).

    python -m pytest -p benchmarks.browser_phases tests/browser/test_a11y.py -k pca -q \\
        -p no:cacheprovider

Appends a table per run to ``artifacts/browser_phases.txt`` (or ``$BROWSER_PHASES``): per label,
the calls, wall seconds, and Chromium's and the server's CPU seconds. A call inside another
timed call counts its wall only (the CPU is counted once, by the outermost). "no run
started" counts the settles that waited out ``browser_wait.START_MS`` for a rerun nobody asked
for. Used for docs/performance.md, "The slow tests (issue #35)".
"""

from __future__ import annotations

import collections
import os
import sys
import time
from pathlib import Path

from benchmarks.tree_cpu import descendants

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(os.environ.get("BROWSER_PHASES", ROOT / "artifacts" / "browser_phases.txt"))
_TOTALS: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0])
_DEPTH = [0]


def _cpu() -> tuple[float, float]:
    """CPU seconds so far of this process's Chromium and Python (server) descendants."""
    chromium = server = 0.0
    for cpu, name in descendants(os.getpid()).values():
        if "chrom" in name:
            chromium += cpu
        elif "python" in name:
            server += cpu
    return chromium, server


def _timed(owner, name: str, label: str) -> None:
    """Replace ``owner.name`` by a wrapper that adds its calls to ``label``'s totals."""
    inner = getattr(owner, name)
    if getattr(inner, "_timed", False):
        return

    def wrapper(*args, **kwargs):
        outermost = _DEPTH[0] == 0
        _DEPTH[0] += 1
        start, cpu = time.perf_counter(), _cpu() if outermost else (0.0, 0.0)
        try:
            return inner(*args, **kwargs)
        except Exception:
            if name == "wait_for_function" and "__capeRuns >" in str(args[1:2]):
                _TOTALS["no run started"][0] += 1
                _TOTALS["no run started"][1] += time.perf_counter() - start
            raise
        finally:
            _DEPTH[0] -= 1
            totals = _TOTALS[label]
            totals[0] += 1
            totals[1] += time.perf_counter() - start
            if outermost:
                now = _cpu()
                totals[2] += now[0] - cpu[0]
                totals[3] += now[1] - cpu[1]

    wrapper._timed = True  # type: ignore[attr-defined]
    setattr(owner, name, wrapper)


def pytest_configure(config) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    import browser_wait
    from playwright.sync_api._generated import Locator, Page

    for name in ("settle", "resize", "switch_scheme"):
        _timed(browser_wait, name, f"browser_wait.{name}")
    for name in ("goto", "screenshot", "evaluate", "wait_for_function", "wait_for_url",
                 "go_back", "go_forward"):  # fmt: skip
        _timed(Page, name, f"Page.{name}")
    for name in ("click", "wait_for", "inner_text", "all"):
        _timed(Locator, name, f"Locator.{name}")


def pytest_unconfigure(config) -> None:
    if not _TOTALS:
        return
    OUT.parent.mkdir(parents=True, exist_ok=True)
    rows = sorted(_TOTALS.items(), key=lambda row: -row[1][1])
    with OUT.open("a", encoding="utf-8") as out:
        out.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(sys.argv[1:])}\n")
        out.write(f"{'label':28s} {'calls':>6s} {'wall s':>8s} {'Chromium':>9s} {'server':>7s}\n")
        for label, (calls, wall, chromium, server) in rows:
            out.write(f"{label:28s} {calls:6.0f} {wall:8.1f} {chromium:9.1f} {server:7.1f}\n")
