"""Classroom load test: many students open the PCA page at once and move ε.

Usage::

    .venv/bin/python -m benchmarks.load                 # 30 clients × 5 changes of ε
    .venv/bin/python -m benchmarks.load --clients 5 --changes 2

Starts a fresh server on 127.0.0.1, opens ``--clients`` headless Chromium pages (Debian's
``/usr/bin/chromium`` through Playwright) on the PCA page, and lets each move the ε slider
``--changes`` times (left or right, at random, seeded per client). For every change it
measures the time until the chart shows new data. It reports errors (exceptions, error
boxes, timeouts: must be 0), p50/p95 of those times, and the server's memory before and
after. Everything is bounded: each wait has a timeout and the whole run a deadline.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from dataclasses import dataclass, field

import numpy as np

from benchmarks.server import cpu_seconds, rss_mib, streamlit_server

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]
# The chart's data and its shapes: moving ε between grid values changes only the marker.
CHART_JS = (
    "() => JSON.stringify([...document.querySelectorAll('.js-plotly-plot')]"
    ".map(p => [(p.data || []).map(t => [t.x, t.y]),"
    " ((p.layout || {}).shapes || []).map(s => s.x0)]))"
)


@dataclass
class Result:
    latencies: list[float] = field(default_factory=list)
    first_chart: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


async def _chart(page) -> str:
    return await page.evaluate(CHART_JS)


async def _wait_for_change(page, before: str, timeout: float) -> float:
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        now = await _chart(page)
        if now != before and now != "[]":
            return time.perf_counter() - start
        await asyncio.sleep(0.05)
    raise TimeoutError(f"chart unchanged after {timeout:.0f} s")


async def _idle(page, timeout: float) -> None:
    """Wait until the app reports no running script (so a key press is not coalesced)."""
    start = time.perf_counter()
    quiet = 0
    while time.perf_counter() - start < timeout and quiet < 2:
        running = await page.locator("[data-testid='stStatusWidget']").count()
        quiet = 0 if running else quiet + 1
        await asyncio.sleep(0.1)


async def client(
    browser, url: str, index: int, changes: int, timeout: float, delay: float, out: Result
):
    rng = np.random.default_rng(index)
    await asyncio.sleep(delay)  # students arrive within a few seconds, not in one instant
    context = await browser.new_context(viewport={"width": 1300, "height": 1000})
    page = await context.new_page()
    try:
        start = time.perf_counter()
        await page.goto(f"{url}/pca", timeout=timeout * 1000)
        await page.locator("[data-testid='stPlotlyChart'] .main-svg").first.wait_for(
            timeout=timeout * 1000
        )
        out.first_chart.append(time.perf_counter() - start)
        slider = page.locator("[data-testid='stSlider']").filter(has_text="Privacy ε")
        handle = slider.locator("input[type='range']").first
        for _ in range(changes):
            value = await handle.get_attribute("aria-valuetext")
            # at the ends of the scale, move inwards
            key = "ArrowLeft" if rng.random() < 0.5 else "ArrowRight"
            if value is not None and float(value) <= 0.001:
                key = "ArrowRight"
            if value is not None and float(value) >= 10:
                key = "ArrowLeft"
            await _idle(page, timeout)
            before = await _chart(page)
            await handle.focus()
            await page.keyboard.press(key)
            out.latencies.append(await _wait_for_change(page, before, timeout))
        if await page.locator("[data-testid='stException']").count():
            out.errors.append(f"client {index}: exception on the page")
        if await page.locator("[data-testid='stAlertContentError']").count():
            out.errors.append(f"client {index}: error box on the page")
    except Exception as err:  # every failure is counted, none stops the others
        out.errors.append(f"client {index}: {type(err).__name__}: {str(err)[:120]}")
    finally:
        await context.close()


def _percentiles(values: list[float]) -> tuple[float, float]:
    if not values:
        return float("nan"), float("nan")
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


async def run(
    clients: int, changes: int, timeout: float, deadline: float, ramp: float = 15.0
) -> dict:
    from playwright.async_api import async_playwright

    out = Result()
    with streamlit_server() as (url, proc):
        memory_before, cpu_before = rss_mib(proc.pid), cpu_seconds(proc.pid)
        start = time.perf_counter()
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            tasks = [
                client(browser, url, i, changes, timeout, ramp * i / max(clients, 1), out)
                for i in range(clients)
            ]
            try:
                await asyncio.wait_for(asyncio.gather(*tasks), deadline)
            except TimeoutError:
                out.errors.append(f"the whole run passed its {deadline:.0f} s deadline")
            await browser.close()
        wall = time.perf_counter() - start
        memory_after, server_cpu = rss_mib(proc.pid), cpu_seconds(proc.pid) - cpu_before
    p50, p95 = _percentiles(out.latencies)
    first50, first95 = _percentiles(out.first_chart)
    return {
        "clients": clients,
        "changes per client": changes,
        "arrivals spread over s": ramp,
        "updates measured": len(out.latencies),
        "errors": len(out.errors),
        "error details": out.errors[:10],
        "update p50 s": p50,
        "update p95 s": p95,
        "update max s": max(out.latencies, default=float("nan")),
        "first chart p50 s": first50,
        "first chart p95 s": first95,
        "wall s": wall,
        "server MiB before": memory_before,
        "server MiB after": memory_after,
        # the clients' browsers share the same two cores: how much of the machine was the
        # server's (the rest is 30 Chromium pages starting and drawing)
        "server CPU s": server_cpu,
        "machine CPU s available": 2 * wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=30)
    parser.add_argument("--changes", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=300, help="per wait, seconds")
    parser.add_argument("--deadline", type=float, default=900, help="whole run, seconds")
    parser.add_argument("--ramp", type=float, default=30, help="arrivals spread, seconds")
    args = parser.parse_args()
    report = asyncio.run(run(args.clients, args.changes, args.timeout, args.deadline, args.ramp))
    print(json.dumps(report, indent=2))
    raise SystemExit(1 if report["errors"] else 0)


if __name__ == "__main__":
    main()
