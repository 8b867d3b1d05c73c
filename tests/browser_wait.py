"""Waiting for the real app in Chromium on conditions, never on fixed sleeps.

Streamlit's root element carries the script's state (``data-test-script-state`` on
``[data-testid='stApp']``: ``running``, ``notRunning``, ...), the attribute Streamlit's own
end-to-end tests wait on. A MutationObserver installed in the page counts the runs that
started (the state leaving ``notRunning``: a short rerun goes to ``rerunRequested`` and back
without ever showing ``running``), so that after an action the wait knows whether the rerun
it asked for has begun:
``settle`` waits for a new run (briefly: an action may ask for none), then for the script to
be idle, with no element added or removed, for a short quiet spell (``st.rerun`` chains end;
a widget whose code loads lazily appears after the run has finished), then for every chart
to be painted.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from benchmarks.server import ERRORS_SHOWN

# How long an action's rerun may take to start (a slider's keyboard step is debounced by the
# frontend before it is sent); past this the action asked for no rerun.
START_MS = 3_000
QUIET_MS = 400  # idle this long, with no new run and no element added, counts as finished
# A page just opened waits a little longer: widgets whose code loads lazily (the data editor,
# the file uploader) arrive after its first run. No second run followed a fresh page's first
# in 118 fresh loads on a busy machine (four test workers on two cores), where 1 s was waited
# before; 0.6 s still covers what a fresh page adds late.
FRESH_QUIET_MS = 600
POLL_MS = 50

# Options of every browser context the tests open: reduced motion (the user setting) turns off
# Streamlit's skeleton pulse and entry animations, which Chromium composites in software frame
# by frame while a page opens and reruns. The settled page is the same (identical full-page
# screenshots); the browser spent about half the CPU opening pages (measured, #35).
CONTEXT = {"reduced_motion": "reduce"}

_INSTALL = """() => {
  if (window.__capeRuns !== undefined) return false;
  window.__capeRuns = 0;
  window.__capeSeen = 0;
  new MutationObserver(records => {
    for (const r of records)
      if (r.oldValue === 'notRunning'
          || r.target.getAttribute('data-test-script-state') === 'running') window.__capeRuns++;
  }).observe(document, {subtree: true, attributes: true, attributeOldValue: true,
                        attributeFilter: ['data-test-script-state']});
  window.__capeDom = 0;  // elements added or removed (lazily loaded widgets arrive late)
  new MutationObserver(records => { window.__capeDom += records.length; })
    .observe(document, {subtree: true, childList: true});
  return true;
}"""

_IDLE = """(quietMs) => {
  const app = document.querySelector("[data-testid='stApp']");
  const idle = app && app.getAttribute('data-test-script-state') === 'notRunning'
    && app.getAttribute('data-test-connection-state') === 'CONNECTED'
    && !document.querySelector("[data-testid='stStatusWidget']")
    && !document.querySelector("[data-testid='stSkeleton']");  // a widget's code still loading
  const now = performance.now();
  const seen = window.__capeRuns + ':' + window.__capeDom;
  if (!idle || window.__capeQuietSeen !== seen) {
    window.__capeQuietSeen = seen;
    window.__capeQuietSince = idle ? now : null;
    return false;
  }
  if (window.__capeQuietSince == null) window.__capeQuietSince = now;
  return now - window.__capeQuietSince >= quietMs;
}"""


def errors_shown(page) -> list[str]:
    """The exceptions and error boxes on the page, as their texts, but the pages' verdicts,
    told by their icon (benchmarks.server.ERRORS_SHOWN: a finding is no error)."""
    return list(page.evaluate(ERRORS_SHOWN))


def assert_no_errors(page) -> None:
    """No exception and no error box on the page but the pages' verdicts (:func:`errors_shown`)."""
    shown = errors_shown(page)
    assert not shown, shown


def stretch() -> float:
    """How much longer than on an idle machine a wait may take now: the 1-minute load average
    over the cores, at least 1. With L runnable processes sharing C cores each gets about C/L
    of one, so a page's wall-clock waits stretch by L/C (the suite runs browsers, app servers
    and federations beside each other: load 4-8 on 2 cores)."""
    return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


# What a timed-out wait saw: the script's state, the charts there and painted, the errors shown
_STATE = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  const charts = [...document.querySelectorAll("[data-testid='stPlotlyChart']")];
  return {script: app && app.getAttribute('data-test-script-state'),
          connection: app && app.getAttribute('data-test-connection-state'),
          status_widget: !!document.querySelector("[data-testid='stStatusWidget']"),
          skeletons: document.querySelectorAll("[data-testid='stSkeleton']").length,
          charts: charts.length,
          painted: charts.filter(c => c.querySelector('.main-svg')).length,
          shown: charts.filter(c => c.getBoundingClientRect().height > 0).length,
          errors: [...document.querySelectorAll(
            "[data-testid='stException'], [data-testid='stAlertContentError']")]
            .map(e => e.innerText.slice(0, 300))};
}"""
SHOTS = Path(__file__).resolve().parents[1] / "artifacts" / "screenshots"


def diagnosis(page, what: str) -> str:
    """One line on what the page shows now (for a wait that timed out), and a screenshot of it
    under artifacts/screenshots/timeout-*.png."""
    try:
        state = page.evaluate(_STATE)
        SHOTS.mkdir(parents=True, exist_ok=True)
        shot = SHOTS / f"timeout-{time.strftime('%H%M%S')}-{os.getpid()}.png"
        page.screenshot(path=str(shot))
    except Exception as err:  # the page itself is gone or hung: say so
        return f"{what} at {page.url}: the page did not answer ({err})"
    load = os.getloadavg()[0]
    return f"{what} at {page.url}: {state}; load {load:.1f}; screenshot {shot}"


def settle(page, timeout: float = 120, charts: int = 0) -> None:
    """Wait until the page's script has finished (the run an action asked for included),
    ``charts`` Plotly charts at least are there, and every chart on the page is painted.
    ``timeout`` (seconds, on an idle machine) is stretched by the machine's load (at most 3×:
    :func:`stretch`); a wait that runs out fails with what the page showed
    (:func:`diagnosis`)."""
    bound = timeout * min(stretch(), 3.0)
    try:
        _settle(page, bound, charts)
    except PlaywrightTimeout as err:
        raise AssertionError(
            diagnosis(page, f"not settled within {bound:.0f} s ({charts} charts asked)")
        ) from err


def _settle(page, timeout: float, charts: int) -> None:
    page.wait_for_selector("h1", timeout=timeout * 1000)
    fresh = page.evaluate(_INSTALL)  # a new document: its first run shows as the h1 above
    if not fresh:
        try:
            page.wait_for_function(
                "() => window.__capeRuns > window.__capeSeen", timeout=START_MS, polling=POLL_MS
            )
        except PlaywrightTimeout:
            pass  # the action asked for no rerun (or it finished before the observer saw it)
    quiet = FRESH_QUIET_MS if fresh else QUIET_MS
    page.wait_for_function(_IDLE, arg=quiet, timeout=timeout * 1000, polling=POLL_MS)
    if charts:
        page.locator("[data-testid='stPlotlyChart'] .main-svg").nth(charts - 1).wait_for(
            timeout=timeout * 1000
        )
    for chart in page.locator("[data-testid='stPlotlyChart']").all():
        chart.locator(".main-svg").first.wait_for(timeout=60_000)
    page.evaluate("() => { window.__capeSeen = window.__capeRuns; }")


_PAINTED = """() => [...document.images].every(i => i.complete)
  && !document.querySelector("[data-testid='stSkeleton']")"""


def resize(page, width: int, height: int, timeout: float = 60) -> None:
    """Set the window's size on a settled page and wait until the page has taken it: no
    element added or removed for a quiet spell (a data grid redraws its rows), every image
    loaded and every chart painted.

    A tall window only for what needs it (a full-page screenshot, axe reading every element on
    screen): while a page opens and its script runs, Chromium paints and composites the whole
    window in software, again and again; at 1400×2200 that cost the GPU process about twice the
    CPU of 1400×1000 (measured, tests/browser/test_a11y.py). The width is what lays the page out, so
    open the page at its width and grow it afterwards."""
    page.set_viewport_size({"width": width, "height": height})
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    page.wait_for_function(_IDLE, arg=QUIET_MS, timeout=timeout * 1000, polling=POLL_MS)
    page.wait_for_function(_PAINTED, timeout=timeout * 1000, polling=POLL_MS)
    for chart in page.locator("[data-testid='stPlotlyChart']").all():
        chart.locator(".main-svg").first.wait_for(timeout=timeout * 1000)


# A section a link names has landed: its heading is whole on the screen and has not moved for
# 1 s. The landing (ui/sections.py) scrolls it to the top where the page below it is long
# enough, else as far as the page scrolls (the Overview's last section sits near the bottom).
_LANDED = """(s) => { const r = document.querySelector(s).getBoundingClientRect();
  const now = performance.now();
  if (!(r.top >= 0 && r.bottom <= window.innerHeight) || window.__capeLandTop !== r.top) {
    window.__capeLandTop = r.top; window.__capeLandSince = now; return false; }
  return now - window.__capeLandSince >= 1000; }"""


def landed(page, section: str, timeout: float = 60) -> None:
    """Wait until the page has landed on the section (anchor id) its address names."""
    selector = f"[id='{section}']"
    page.locator(selector).wait_for(timeout=timeout * 1000)
    page.wait_for_function(_LANDED, arg=selector, timeout=timeout * 1000, polling=POLL_MS)


# Marks the end of the next script run: the state leaving ``rerunRequested`` or ``running``
# (a short rerun goes notRunning → rerunRequested → notRunning, never showing ``running``).
_WATCH_RUN = """() => {
  window.__capeRunDone = false;
  const obs = new MutationObserver(records => {
    if (records.some(r => r.oldValue === 'running' || r.oldValue === 'rerunRequested')) {
      window.__capeRunDone = true;
      obs.disconnect();
    }
  });
  obs.observe(document.querySelector("[data-testid='stApp']"), {
    attributes: true, attributeOldValue: true, attributeFilter: ['data-test-script-state']});
}"""
_APP_BACKGROUND = """() => getComputedStyle(document.querySelector("[data-testid='stApp']"))
  .backgroundColor"""


def switch_scheme(page, scheme: str, timeout: float = 120) -> None:
    """Show a settled page in the other colour scheme (``"light"`` or ``"dark"``) as a browser
    whose system setting changes does, and wait until the run the app then asks for has
    finished and the page is painted.

    Streamlit follows ``prefers-color-scheme`` live, but the script learns the theme
    (``st.context.theme``, which the charts' lettering follows: ui/presenter.py) only from
    the next run's request: the app asks for that run itself once Streamlit has taken the new
    theme (ui/scheme.js), and after it the page is drawn as a page opened in that scheme. This
    waits for that one run. (It also pressed R: two rerun requests ~50 ms apart, and a check
    could meet the second run's faded elements: axe's contrast on the PCA page, CI-like run of
    27 Nov 2026.)"""
    before = page.evaluate(_APP_BACKGROUND)
    page.evaluate(_WATCH_RUN)
    page.emulate_media(color_scheme=scheme)
    page.wait_for_function(
        f"() => ({_APP_BACKGROUND})() !== {before!r}", timeout=timeout * 1000, polling=POLL_MS
    )
    page.wait_for_function("() => window.__capeRunDone", timeout=timeout * 1000, polling=POLL_MS)
    page.evaluate("() => { window.__capeSeen = window.__capeRuns; }")
    page.wait_for_function(_IDLE, arg=QUIET_MS, timeout=timeout * 1000, polling=POLL_MS)
    page.wait_for_function(_PAINTED, timeout=timeout * 1000, polling=POLL_MS)
    for chart in page.locator("[data-testid='stPlotlyChart']").all():
        chart.locator(".main-svg").first.wait_for(timeout=timeout * 1000)
