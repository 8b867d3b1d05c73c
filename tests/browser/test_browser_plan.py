"""The 50-minute plan walked as written, in Chromium (issue #49): on a 1280×720 projector the
lecturer opens the plan on the lecturer's page (presenter mode on) and clicks each slot's link
once, in the plan's order. Each opens its page with no notice about the link and no error, and
shows on its first screen the text the slot's words quote (the Overview's 1.65× and 148× at
ε = 0.5, a lesson's title, the reveal on the lecturer's page, the glossary's heading).

The shared server (tests/conftest.py). Screenshots: artifacts/screenshots/plan/.
"""

from __future__ import annotations

import os
import re

import browser_wait
import pytest
from test_browser import SHOTS
from test_browser_links import FIRST_SCREEN, NOTICES

from learning.plan import HERE, PLAN
from learning.sections import PARAM as SECTION

pytestmark = [pytest.mark.browser, pytest.mark.slow]
OUT = SHOTS / "plan"
KEY = os.environ["CAPE_LECTURER_KEY"]  # tests/conftest.py
WIDTH, HEIGHT = 1280, 720  # the projector
STARTS = re.compile(r"^Open")
OPEN = "[data-testid='stMain'] a"  # page links, and an anchor for a slot on the plan's page


def test_each_plan_slots_link_in_its_order_opens_its_page_with_what_the_slot_quotes(
    server, browser
):
    context = browser.new_context(
        viewport={"width": WIDTH, "height": HEIGHT}, **browser_wait.CONTEXT
    )
    try:
        page = context.new_page()
        page.goto(f"{server}/classroom?lecturer={KEY}")  # the key: a cookie for the walk
        browser_wait.settle(page, 120)
        assert page.locator(OPEN).filter(has_text=STARTS).count() == len(PLAN)
        found: list[str] = []
        OUT.mkdir(parents=True, exist_ok=True)
        for number, slot in enumerate(PLAN, 1):
            # back to the plan, as the lecturer goes, on the projector (presenter mode on)
            page.goto(f"{server}/classroom?present=true")
            browser_wait.settle(page, 120)
            page.locator(OPEN).filter(has_text=STARTS).nth(number - 1).click()
            browser_wait.settle(page, 240)
            section = dict(slot.query).get(SECTION)
            if section:  # the link lands on the section its words are about
                browser_wait.landed(page, section)
            where = f"slot {number} {slot.title!r} ({page.url.removeprefix(server)})"
            found += [f"{where}: notice: {n[:160]}" for n in page.evaluate(NOTICES)]
            found += [f"{where}: error: {e[:160]}" for e in browser_wait.errors_shown(page)]
            if slot.page == HERE:  # a link to a section of the page it is on: an anchor
                assert section and page.url.endswith(f"#{section}"), page.url
            screen = page.evaluate(FIRST_SCREEN)
            found += [
                f"{where}: {s!r} not on the first screen" for s in slot.shows if s not in screen
            ]
            page.screenshot(path=str(OUT / f"slot-{number}.png"))
        assert not found, "\n".join(found)
    finally:
        context.close()
