"""Export buttons stay readable in Paper figures' narrow panels (issue 22, item 7).

At 1440×900 the three-panel rows of Figure 2 squeezed each figure's export buttons into
fixed columns, so "Numbers (CSV)" read "N" and "Figure (HTML)" read "F.". In headless
Chromium (tests/browser/test_browser.py's fixtures) every export button must show its whole label on
one line, at 1440×900 and in presenter mode at 1280×720; a screenshot of each goes to
artifacts/screenshots/. The row is drawn on demand (issue #36 item 4, ui/export.py): each
panel's "Export" button must be whole, and so must the row it opens, panel by panel.
"""

from __future__ import annotations

import pytest
from test_browser import SHOTS, _assert_no_errors, _settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LABELS = ("Numbers (CSV)", "Figure (HTML)", "Reproduce in Python")
# The keyed "Export" button of each panel (Streamlit marks a keyed element with st-key-KEY).
EXPORTS = """() => [...document.querySelectorAll('[class*="st-key-paper_fig"]')]
  .map(e => [...e.classList].find(c => c.startsWith('st-key-') && c.endsWith('_export')))
  .filter((c, i, all) => c && all.indexOf(c) === i)"""
# A label is cut when any box inside its button is narrower than its text (an ellipsis) or
# when it wraps onto a second line.
MEASURE = """(labels) => [...document.querySelectorAll('button')]
  .filter(b => labels.some(l => b.innerText.includes(l)))
  .map(b => {
    const p = b.querySelector('p') || b;
    const r = p.getBoundingClientRect();
    const line = parseFloat(getComputedStyle(p).lineHeight) || 24;
    // Streamlit clips a long label in its markdown box (text-overflow: ellipsis): "N", "F."
    const cut = [b, ...b.querySelectorAll('*')].some(e => e.scrollWidth > e.clientWidth + 1);
    return {text: b.innerText.trim(), cut: cut, lines: Math.round(r.height / line),
            visible: b.getBoundingClientRect().width > 0};
  })"""


@pytest.mark.parametrize(
    ("width", "height", "query"),
    [(1440, 900, ""), (1280, 720, "&present=true")],
    ids=["1440x900", "1280x720-presenter"],
)
def test_paper_figures_export_labels_are_whole(server, tabs, width, height, query):
    page = tabs(width=width, height=height)
    page.goto(f"{server}/paper_figures?fig_figure=2{query}")
    _settle(page, charts=2)
    _assert_no_errors(page)
    exports = page.evaluate(EXPORTS)
    assert len(exports) >= 3, exports  # Figure 2's three shipped panels
    closed = [b for b in page.evaluate(MEASURE, ["Export"]) if b["visible"]]
    assert len(closed) == len(exports), closed
    assert not [b for b in closed if b["cut"] or b["lines"] > 1], closed
    SHOTS.mkdir(parents=True, exist_ok=True)
    for i, name in enumerate(exports):
        page.locator(f".{name} button").first.click()
        page.locator("[data-testid='stDownloadButton']").first.wait_for(timeout=60_000)
        _settle(page, charts=2)
        _assert_no_errors(page)
        buttons = [b for b in page.evaluate(MEASURE, list(LABELS)) if b["visible"]]
        if i == 0:
            page.screenshot(path=str(SHOTS / f"paper-export-{width}x{height}.png"), full_page=True)
        assert len(buttons) == len(LABELS), (name, buttons)  # this panel's row, only it
        squeezed = [b for b in buttons if b["cut"] or b["lines"] > 1]
        assert not squeezed, (name, squeezed)
