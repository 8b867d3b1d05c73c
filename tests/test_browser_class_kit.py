"""Issue #40, items 7 and 9, in headless Chromium: the profile chart reads with a few curves,
and what a lecturer expects — a glossary, a handout per lesson, a 50-minute plan, the class's
quiz summary and a link that resets the room — is reachable and works.

Screenshots go to artifacts/screenshots/class_kit/ (a 1280×720 presenter screen and a
390×844 phone).
"""

from __future__ import annotations

import browser_wait
import pytest
from test_browser import SHOTS, _assert_no_errors

pytestmark = [pytest.mark.browser, pytest.mark.slow]
OUT = SHOTS / "class_kit"
SCREENS = {"presenter": (1280, 720), "phone": (390, 844)}


def _shot(page, name: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUT / f"{name}.png"))


def _traces(page, key: str) -> int:
    """Line traces drawn in the chart with this key (Plotly's scatter traces, markers too)."""
    return page.locator(f".st-key-{key} .scatterlayer g.trace").count()


@pytest.mark.parametrize("screen", list(SCREENS))
def test_the_profile_chart_opens_with_three_curves_and_takes_more_on_request(
    server, tabs, screen
):
    """Issue #40 item 7: the profile chart overlaid 7 curves (and the promise's star)."""
    width, height = SCREENS[screen]
    page = tabs(width=width, height=height)
    page.goto(f"{server}/composition")
    browser_wait.settle(page, 120, charts=2)
    _assert_no_errors(page)
    chart = page.locator(".st-key-rr_profiles")
    chart.scroll_into_view_if_needed()
    assert _traces(page, "rr_profiles") == 3 + 1  # promise band, two curves, the star
    _shot(page, f"profiles-{screen}")
    page.get_by_role("button", name="aggregator + colluders — paper's design").click()
    browser_wait.settle(page, 120, charts=2)
    assert _traces(page, "rr_profiles") == 4 + 1
    page.wait_for_url("**rr_curves=*", timeout=30_000)  # the pick is part of the link
