"""Links that never warn, in Chromium (issue #49): every lesson step's Explore link and every
handout link, opened as a learner opens it (a fresh page at 1400×1000), shows no notice about
the link and no error, and the numbers the lesson quotes on the first screen, without
scrolling (where a number sits far down its page, the link names a section and lands on it:
learning/sections.py). The links of the 50-minute plan are walked in their order, with the
same notice and error checks and the text each slot quotes on the first screen, by
tests/browser/test_browser_plan.py (they were also opened here once more each: 7 page loads).

One tab for every link (tests/conftest.py's ``tabs``); each distinct address opened once (a
handout's links are its lesson's Explore links at the steps' defaults: tests/app/test_links.py
checks that they are). The same links without a browser, with every setting checked:
tests/app/test_links.py.
"""

from __future__ import annotations

import browser_wait
import pytest
from lesson_links import Link, explore_links, handout_links
from test_browser import SHOTS
from test_lessons import _numbers, shown_at_precision

from learning.lessons import LESSONS

pytestmark = [pytest.mark.browser, pytest.mark.slow]
OUT = SHOTS / "links"
WIDTH, HEIGHT = 1400, 1000

# The text on the first screen: every text node inside the window (sidebar and main; the main
# container scrolls, the window does not), and the cells a data grid draws on its canvas, read
# from the grid's own accessible table, for each grid whose box is on the screen.
FIRST_SCREEN = """() => {
  const h = window.innerHeight, w = window.innerWidth, out = [], ROW = 35;  // a grid's row, px
  const inside = r => r.width > 0 && r.height > 0 && r.bottom > 0 && r.top < h
    && r.right > 0 && r.left < w;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.textContent.trim()) continue;
    const parent = node.parentElement;
    if (!parent || parent.closest('script, style, [aria-hidden="true"], table[role="grid"]'))
      continue;
    range.selectNodeContents(node);
    const whole = [...range.getClientRects()].some(r => inside(r) && r.bottom <= h);
    if (whole) out.push(node.textContent);
  }
  for (const grid of document.querySelectorAll("[data-testid='stDataFrame']")) {
    const box = grid.getBoundingClientRect();
    if (!inside(box)) continue;
    for (const cell of grid.querySelectorAll('table[role="grid"] td')) {  // raw values
      const row = Number(cell.parentElement.getAttribute('aria-rowindex') || 1);
      const top = box.top + (row - 1) * ROW;  // the header is row 1
      if (top >= 0 && top + ROW <= h) out.push(cell.textContent);
    }
  }
  return out.join('\\n');
}"""
NOTICES = """() => [...document.querySelectorAll("[data-testid='stAlert']")]
  .map(a => a.innerText).filter(t => t.includes('link_off') || t.includes('in the link'))"""


def _problems(page, server: str, link: Link) -> list[str]:
    page.goto(link.url(server))
    browser_wait.settle(page, 180)
    if link.section:  # where the link lands: the section's header on the screen, and still
        browser_wait.landed(page, link.section)  # (the Overview's box: as far as it scrolls)
    found = [f"notice: {n[:160]}" for n in page.evaluate(NOTICES)]
    found += [f"error: {e[:160]}" for e in browser_wait.errors_shown(page)]  # but verdicts
    screen = page.evaluate(FIRST_SCREEN)
    on_screen = _numbers(screen)
    for name, (value, spec) in link.shows.items():
        if not shown_at_precision(value, spec, on_screen):
            found.append(f"{name} = {format(value, spec or 'g')} not on the first screen")
    if not link.shows and not link.section:  # a link quoting no number (a handout's lesson
        # page): its page's title at least
        title = page.locator("h1").first.inner_text().strip()
        if title not in screen:
            found.append(f"title {title!r} not on the first screen")
    OUT.mkdir(parents=True, exist_ok=True)
    name = link.source.replace(" ", "-").replace(".", "_").replace(",", "")
    page.screenshot(path=str(OUT / f"{name}.png"))
    return [f"{link.source} (/{link.path}, section {link.section}): {p}" for p in found]


def test_every_lesson_and_handout_link_opens_without_a_notice_its_numbers_on_screen(server, tabs):
    page = tabs(width=WIDTH, height=HEIGHT)
    explore = explore_links()
    assert len(explore) == sum(len(lesson.steps) for lesson in LESSONS)
    seen = {(link.path, link.query) for link in explore}
    handouts = [h for h in handout_links() if (h.path, h.query) not in seen]
    # each address once, checked for every number any link to it quotes
    by_address: dict[tuple[str, tuple], Link] = {}
    for link in explore + handouts:
        first = by_address.setdefault((link.path, link.query), link)
        if first is not link:
            first.shows.update(link.shows)
    found = [p for link in by_address.values() for p in _problems(page, server, link)]
    assert not found, "\n".join(found)
