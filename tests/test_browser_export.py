"""Export buttons stay readable in Paper figures' narrow panels (issue 22, item 7).

At 1440×900 the three-panel rows of Figure 2 squeezed each figure's export buttons into
fixed columns, so "Numbers (CSV)" read "N" and "Figure (HTML)" read "F.". In headless
Chromium (tests/test_browser.py's fixtures) every export button must show its whole label on
one line, at 1440×900 and in presenter mode at 1280×720; a screenshot of each goes to
artifacts/screenshots/.
"""

from __future__ import annotations

import pytest
from test_browser import SHOTS, _assert_no_errors, _settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LABELS = ("Numbers (CSV)", "Figure (HTML)", "Reproduce in Python")
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
    buttons = [b for b in page.evaluate(MEASURE, list(LABELS)) if b["visible"]]
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"paper-export-{width}x{height}.png"), full_page=True)
    assert len(buttons) >= 3 * len(LABELS), buttons  # Figure 2's three shipped panels
    squeezed = [b for b in buttons if b["cut"] or b["lines"] > 1]
    assert not squeezed, squeezed
