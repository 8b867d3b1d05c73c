"""Paper figures' first load in a real browser (issue #13): seconds from navigation until
every chart of the figure is painted, on a fresh server and on a warm one.

Usage::

    .venv/bin/python -m benchmarks.first_load            # figures 2–5, 3 rounds
    .venv/bin/python -m benchmarks.first_load --rounds 1

"Fresh": each figure is the first request to a newly started server (imports, the shipped
results read once per server). "Warm": the same server, a new browser context per load.
Figure 2 draws 9 panels (3 synthetic, 6 bundled stand-ins for MNIST and Covertype) and the
legend; Figures 3–5 draw 8 panels and the legend.
"""

from __future__ import annotations

import argparse
import statistics
import time

from benchmarks.server import CHROMIUM, CHROMIUM_ARGS, ERRORS_SHOWN, streamlit_server

CHARTS = {"2": 10, "3": 9, "4": 9, "5": 9}  # panels + the shared legend
PAINTED = (
    "() => [...document.querySelectorAll(\"[data-testid='stPlotlyChart']\")]"
    ".filter(e => e.querySelector('.main-svg')).length"
)


def first_paint(browser, url: str, figure: str, timeout: float = 120) -> float:
    """Seconds until every chart of ``figure`` is painted, in a new browser context."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    start = time.perf_counter()
    page.goto(f"{url}/paper_figures?fig_figure={figure}")
    while page.evaluate(PAINTED) < CHARTS[figure]:
        if time.perf_counter() - start > timeout:
            raise TimeoutError(f"figure {figure}: not every chart painted in {timeout:.0f} s")
        time.sleep(0.05)
    seconds = time.perf_counter() - start
    if page.evaluate(ERRORS_SHOWN):
        raise RuntimeError(f"figure {figure} shows an error")
    context.close()
    return seconds


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    fresh: dict[str, list[float]] = {f: [] for f in CHARTS}
    warm: dict[str, list[float]] = {f: [] for f in CHARTS}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for _ in range(args.rounds):
            for figure in CHARTS:
                with streamlit_server() as (url, _):
                    fresh[figure].append(first_paint(browser, url, figure))
        with streamlit_server() as (url, _):
            for _ in range(args.rounds):
                for figure in CHARTS:
                    warm[figure].append(first_paint(browser, url, figure))
        browser.close()
    print("| figure | charts | fresh server s (median, max) | warm server s (median, max) |")
    print("| --- | ---: | ---: | ---: |")
    for figure in CHARTS:
        f, w = fresh[figure], warm[figure]
        print(
            f"| {figure} | {CHARTS[figure]} | {statistics.median(f):.2f}, {max(f):.2f} "
            f"| {statistics.median(w):.2f}, {max(w):.2f} |"
        )


if __name__ == "__main__":
    main()
