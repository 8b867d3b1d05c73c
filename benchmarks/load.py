"""Classroom load test: many students open the PCA page at once and move ε, while one
uploads a hostile CSV and another presses Run on two heavy settings.

Usage::

    .venv/bin/python -m benchmarks.load                 # 30 clients × 5 changes of ε
    .venv/bin/python -m benchmarks.load --clients 5 --changes 2
    .venv/bin/python -m benchmarks.load --no-bomb --heavy 0   # light users only (as before)

Starts a fresh server on 127.0.0.1, opens ``--clients`` headless Chromium pages (Debian's
``/usr/bin/chromium`` through Playwright) on the PCA page, and lets each move the ε slider
``--changes`` times (left or right, at random, seeded per client). For every change it
measures the time until the chart shows new data. It reports errors (exceptions, error
boxes, timeouts: must be 0), p50/p95 of those times, and the server's memory before and
after. Everything is bounded: each wait has a timeout and the whole run a deadline.

The hostile students (issue #12): one uploads the column bomb (``'1,'*9_900_000 + '1\n'``,
which once aborted the server) on the PCA page and must get a refusal; another opens the two
heavy tensor links of the issue in two tabs and presses Run in each: each tab must show its
place in the queue or its running time. When the light users are done the heavy tabs close,
and their jobs must stop (no job process left after 20 s). The server must still be alive.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from dataclasses import dataclass, field

import numpy as np

from benchmarks.server import (
    CHROMIUM,
    CHROMIUM_ARGS,
    ERRORS_SHOWN,
    cpu_seconds,
    job_processes,
    rss_mib,
    streamlit_server,
)
from serving.jobs import disconnect_grace

# The chart's data and its shapes: moving ε between grid values changes only the marker.
CHART_JS = (
    "() => JSON.stringify([...document.querySelectorAll('.js-plotly-plot')]"
    ".map(p => [(p.data || []).map(t => [t.x, t.y]),"
    " ((p.layout || {}).shapes || []).map(s => s.x0)]))"
)


HEAVY_LINKS = [  # the "two Run presses freeze everyone"
    "/tensor?td_dim=50&td_sites=20&td_ns=50000&td_axis=N_s&td_runs=6&td_seed=12",
    "/tensor?td_dim=50&td_sites=20&td_ns=50000&td_axis=N_s&td_runs=6&td_seed=13",
]
BOMB = b"1," * 9_900_000 + b"1\n"  # one line of ten million columns (19.8 MB)


@dataclass
class Result:
    latencies: list[float] = field(default_factory=list)
    first_chart: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    hostile: dict = field(default_factory=dict)


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
        exceptions = await page.locator("[data-testid='stException']").count()
        if exceptions:
            out.errors.append(f"client {index}: exception on the page")
        if len(await page.evaluate(ERRORS_SHOWN)) > exceptions:  # a box that is no verdict
            out.errors.append(f"client {index}: error box on the page")
    except Exception as err:  # every failure is counted, none stops the others
        out.errors.append(f"client {index}: {type(err).__name__}: {str(err)[:120]}")
    finally:
        await context.close()


async def bomb_client(browser, url: str, path: str, timeout: float, out: Result) -> None:
    """Upload the column bomb; it must be refused with a message, quickly."""
    context = await browser.new_context(viewport={"width": 1300, "height": 1000})
    page = await context.new_page()
    try:
        await page.goto(f"{url}/pca?pca_data=CSV+upload", timeout=timeout * 1000)
        uploader = page.locator("[data-testid='stFileUploaderDropzoneInput']")
        await uploader.wait_for(state="attached", timeout=timeout * 1000)
        start = time.perf_counter()
        await uploader.set_input_files(path)
        error = page.locator("[data-testid='stAlertContentError']")
        await error.wait_for(timeout=timeout * 1000)
        out.hostile["bomb refused after s"] = round(time.perf_counter() - start, 2)
        out.hostile["bomb message"] = (await error.inner_text())[:120]
    except Exception as err:
        out.errors.append(f"bomb: {type(err).__name__}: {str(err)[:120]}")
    finally:
        await context.close()


async def heavy_client(browser, url: str, tabs: int, timeout: float, release, out: Result) -> None:
    """Two tabs on heavy tensor links, Run pressed in each; closed when ``release`` is set."""
    context = await browser.new_context(viewport={"width": 1300, "height": 1000})
    seen = []
    try:
        for link in HEAVY_LINKS[:tabs]:
            page = await context.new_page()
            await page.goto(f"{url}{link}", timeout=timeout * 1000)
            run = page.get_by_role("button", name="Run", exact=True)
            await run.wait_for(timeout=timeout * 1000)
            await run.click()
            status = page.get_by_text("Queued: position").or_(page.get_by_text("Running: "))
            await status.first.wait_for(timeout=timeout * 1000)
            seen.append((await status.first.inner_text())[:40])
        out.hostile["heavy tabs saw"] = seen
        await release.wait()
    except Exception as err:
        out.errors.append(f"heavy: {type(err).__name__}: {str(err)[:120]}")
    finally:
        await context.close()  # the sessions go away: their jobs must stop


def _percentiles(values: list[float]) -> tuple[float, float]:
    if not values:
        return float("nan"), float("nan")
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


async def _light_then_release(tasks, release) -> None:
    try:
        await asyncio.gather(*tasks)
    finally:
        release.set()


async def run(
    clients: int,
    changes: int,
    timeout: float,
    deadline: float,
    ramp: float = 15.0,
    bomb: bool = True,
    heavy: int = 2,
    port: int | None = None,
) -> dict:
    import tempfile

    from playwright.async_api import async_playwright

    out = Result()
    with tempfile.TemporaryDirectory() as tmp, streamlit_server(port=port) as (url, proc):
        bomb_path = f"{tmp}/b.csv"
        with open(bomb_path, "wb") as handle:
            handle.write(BOMB)
        memory_before, cpu_before = rss_mib(proc.pid), cpu_seconds(proc.pid)
        start = time.perf_counter()
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            release = asyncio.Event()
            light = [
                client(browser, url, i, changes, timeout, ramp * i / max(clients, 1), out)
                for i in range(clients)
            ]
            tasks = [_light_then_release(light, release)]
            if bomb:
                tasks.append(bomb_client(browser, url, bomb_path, timeout, out))
            if heavy:
                tasks.append(heavy_client(browser, url, heavy, timeout, release, out))
            try:
                await asyncio.wait_for(asyncio.gather(*tasks), deadline)
            except TimeoutError:
                out.errors.append(f"the whole run passed its {deadline:.0f} s deadline")
            await browser.close()
        wall = time.perf_counter() - start
        if heavy:  # the heavy tabs are closed: their job processes must be gone
            # the grace of the server started above (it inherits this environment)
            stop, wait = time.perf_counter(), disconnect_grace() + 20
            while job_processes(proc.pid) and time.perf_counter() - stop < wait:
                await asyncio.sleep(0.5)
            left = job_processes(proc.pid)
            out.hostile["job processes 20 s after the grace for a closed tab"] = len(left)
            if left:
                out.errors.append(f"{len(left)} job processes still running after the tabs closed")
        if proc.poll() is not None:
            out.errors.append(f"the server exited with code {proc.returncode}")
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
        **out.hostile,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=30)
    parser.add_argument("--changes", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=300, help="per wait, seconds")
    parser.add_argument("--deadline", type=float, default=900, help="whole run, seconds")
    parser.add_argument("--ramp", type=float, default=30, help="arrivals spread, seconds")
    parser.add_argument(
        "--no-bomb", dest="bomb", action="store_false", help="no student uploads the CSV bomb"
    )
    parser.add_argument(
        "--heavy", type=int, default=2, choices=[0, 1, 2], help="heavy tabs pressing Run"
    )
    parser.add_argument("--port", type=int, default=None, help="server port (default: free)")
    args = parser.parse_args()
    report = asyncio.run(
        run(
            args.clients,
            args.changes,
            args.timeout,
            args.deadline,
            args.ramp,
            bomb=args.bomb,
            heavy=args.heavy,
            port=args.port,
        )
    )
    print(json.dumps(report, indent=2))
    raise SystemExit(1 if report["errors"] else 0)


if __name__ == "__main__":
    main()
