"""Presenter mode on a 1280×720 projector (issue #22): every page shows its main chart (or a
lesson's question) whole on the first screen, and no metric label is cut.

The checks of one page already opened in presenter mode; tests/browser/test_a11y.py runs them on
every page in both colour schemes, in the same test as that page's accessibility check (the app's
navigation must list exactly the pages tested there, so a new page is checked the day it is
added). A page's main chart is its first chart taller than 200 px (Paper figures draws a
60 px legend strip above its panels), or its first image (the Overview's network picture); a
lesson's question is its radio (key ``q_…``). Screenshots:
artifacts/screenshots/presenter-all-*.png.

The same loads carry the lecturer's projector checks of PCA and CAPE averaging (issue #13,
formerly a second load of each in tests/browser/test_lecturer.py): the page's main control (ε,
S) sits beside the chart, above the fold, and the sidebar is collapsed.
"""

from __future__ import annotations

from pathlib import Path

SHOTS = Path(__file__).resolve().parents[1] / "artifacts" / "screenshots"
WIDTH, HEIGHT = 1280, 720

MAIN = """() => {
  const box = e => { const b = e.getBoundingClientRect();
                     return {top: b.top, bottom: b.bottom, height: b.height}; };
  const main = document.querySelector('section.main, [data-testid="stMain"]') || document;
  const charts = [...main.querySelectorAll('[data-testid="stPlotlyChart"]')].map(box)
    .filter(b => b.height > 200);
  const images = [...main.querySelectorAll('[data-testid="stImage"] img')].map(box);
  const question = [...main.querySelectorAll('[class*="st-key-q_"] [data-testid="stRadio"]')]
    .map(box);
  const cut = [...main.querySelectorAll('[data-testid="stMetricLabel"] *')]
    .filter(e => e.children.length === 0 && e.scrollWidth > e.clientWidth + 1)
    .map(e => e.innerText);
  // an axis title longer than its chart is clipped by the chart's svg ("… / optimur")
  const clipped = [...main.querySelectorAll('.g-xtitle text, .g-ytitle text')].filter(t => {
    const svg = t.closest('svg').getBoundingClientRect(), b = t.getBoundingClientRect();
    return b.top < svg.top - 1 || b.bottom > svg.bottom + 1 || b.left < svg.left - 1
      || b.right > svg.right + 1; }).map(t => t.textContent);
  return {chart: charts[0] || images[0] || null, question: question[0] || null, cut: cut,
          clipped: clipped};
}"""


# Pages whose main control must sit beside the chart, above the fold (issue #13)
BESIDE = {"/pca": ".st-key-pca_eps", "/averaging": ".st-key-avg_S"}


def control_beside_the_chart(page, path: str) -> list[str]:
    """What is wrong with ``path``'s layout for a lecturer: its control (BESIDE) not left of its
    first chart or below the fold, PCA's chart not whole, or the sidebar open."""
    chart = page.locator("[data-testid='stPlotlyChart']").first.bounding_box()
    control = page.locator(BESIDE[path]).first.bounding_box()
    if not (chart and control):
        return [f"{path}: no chart ({chart}) or no control ({control})"]
    problems = []
    if control["x"] + control["width"] > chart["x"]:
        problems.append(f"{path}: control {control} not beside the chart {chart}")
    if control["y"] + control["height"] > HEIGHT:
        problems.append(f"{path}: control {control} below the fold")
    if path == "/pca" and chart["y"] + chart["height"] > HEIGHT + 5:
        problems.append(f"{path}: the chart {chart} is not whole on screen")
    sidebar = page.locator("[data-testid='stSidebar']").first.bounding_box()
    closed = page.locator("[data-testid='stSidebar'][aria-expanded='false']").count() == 1
    if not (sidebar["x"] < 0 or closed):
        problems.append(f"{path}: the sidebar is open at {sidebar}")
    return problems


# Pages of text, no chart (issue #40 item 9): the element the room looks at instead.
TEXT_PAGES = {"/glossary": "h2", "/classroom": "[data-testid='stTable']"}
FIRST = """(s) => { const e = document.querySelector(s); if (!e) return null;
  const b = e.getBoundingClientRect();
  return {top: b.top, bottom: Math.min(b.bottom, b.top + 1)}; }"""  # its top on the screen


def first_screen_problems(page, path: str, scheme: str) -> list[str]:
    """What is wrong with ``path`` (``/``, ``/pca``, …) opened in presenter mode at
    WIDTH×HEIGHT and settled: its main chart, image, question or text not whole on the first
    screen, a metric label or an axis title cut, a lecturer's control not beside its chart
    (BESIDE). Saves a screenshot (artifacts/screenshots/presenter-all-*.png)."""
    name = path.strip("/") or "overview"
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"presenter-all-{name}-{scheme}.png"))
    found = page.evaluate(MAIN)
    shown = found["question"] or found["chart"]  # a lesson: its question first
    if path in TEXT_PAGES:  # no chart: its main element instead
        shown = page.evaluate(FIRST, TEXT_PAGES[path])
    problems = []
    if shown is None:
        problems.append(f"{path}: no chart, image or question")
    elif shown["top"] < 0 or shown["bottom"] > HEIGHT:
        problems.append(f"{path}: main chart or question at {shown} (screen: {HEIGHT} px)")
    if found["chart"] and found["chart"]["bottom"] > HEIGHT:
        problems.append(f"{path}: the chart ends at {found['chart']['bottom']:.0f} px")
    if found["cut"]:
        problems.append(f"{path}: metric labels cut: {found['cut']}")
    if found["clipped"]:
        problems.append(f"{path}: axis titles clipped by their chart: {found['clipped']}")
    if path in BESIDE:
        problems += control_beside_the_chart(page, path)
    return problems
