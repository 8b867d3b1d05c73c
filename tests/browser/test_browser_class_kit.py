"""Issue #40, items 7 and 9, in headless Chromium: the profile chart reads with a few curves,
and what a lecturer expects — a glossary, a handout per lesson, a 50-minute plan, the class's
quiz summary and a link that resets the room — is reachable and works (the lecturer's page
with the lecturer's key, tests/conftest.py).

Screenshots go to artifacts/screenshots/class_kit/ (a 1280×720 presenter screen and a
390×844 phone).
"""

from __future__ import annotations

import os

import browser_wait
import pytest
from test_browser import SHOTS, _assert_no_errors

from learning.lessons import LESSONS

pytestmark = [pytest.mark.browser, pytest.mark.slow]
OUT = SHOTS / "class_kit"
LECTURER_KEY = os.environ["CAPE_LECTURER_KEY"]  # tests/conftest.py
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


def test_a_pages_glossary_link_lands_on_its_term(server, tabs):
    """The Trust models page names KLS: its glossary link opens the glossary at KLS, on each
    screen. The link is read once: the server writes the same Markdown for any window (it
    never learns the width), so only the landing depends on the screen."""
    from learning.glossary import BY_KEY

    page = tabs(width=SCREENS["presenter"][0], height=SCREENS["presenter"][1])
    page.goto(f"{server}/trust_models")
    browser_wait.settle(page, 180, charts=1)
    term = BY_KEY["kls"]
    glossary_links = "[data-testid='stMain'] a[href^='glossary?section=']"
    link = page.locator(glossary_links, has_text=term.name).first
    href = link.get_attribute("href")
    assert href == f"glossary?section={term.anchor}", href
    for screen, (width, height) in SCREENS.items():
        page = tabs(width=width, height=height)
        page.goto(f"{server}/{href}")  # (Streamlit opens Markdown links in a new tab)
        browser_wait.settle(page, 60)
        _assert_no_errors(page)
        page.wait_for_function(
            "(s) => { const r = document.getElementById(s).getBoundingClientRect();"
            " return r.top >= 0 && r.top < 200; }",
            arg=term.anchor,
            timeout=60_000,
        )
        assert "Kairouz" in page.locator("[data-testid='stMain']").inner_text(), screen
        _shot(page, f"glossary-{screen}")


def test_a_lessons_question_sheet_downloads_as_one_printable_page(server, tabs):
    from learning.handout import BOX

    lesson = LESSONS[1]
    page = tabs(width=1280, height=720)
    page.goto(f"{server}/learn?learn_lesson={lesson.name.replace(' ', '+')}")
    browser_wait.settle(page, 120, charts=1)
    assert page.get_by_role("button", name="Answer sheet").count() == 0  # nothing answered
    with page.expect_download(timeout=120_000) as got:
        page.get_by_role("button", name="Question sheet").click()
    text = open(got.value.path(), encoding="utf-8").read()
    assert got.value.suggested_filename == f"cape_lesson_2_{lesson.key}_questions.html"
    for step in lesson.steps:
        assert step.title in text
    assert "Answer: " not in text and "@media print" in text
    assert text.count(BOX) == sum(len(s.question.options) for s in lesson.steps)
    assert f"href='{server}/learn?learn_lesson=" in text  # absolute: the browser's address
    printed = page.context.new_page()  # as printed: one page at A4
    printed.set_content(text)
    printed.emulate_media(media="print")
    pdf = printed.pdf(format="A4")
    printed.close()
    assert pdf.count(b"/Type /Page") - pdf.count(b"/Type /Pages") == 1


# The quiz's counting, the lecturer's key, the reveal and the reset:
# tests/browser/test_browser_quiz_room.py
# (issue #49: five students and a lecturer, each its own browser).


@pytest.mark.parametrize("screen", list(SCREENS))
def test_the_fifty_minute_plan_opens_its_lessons(server, tabs, screen):
    width, height = SCREENS[screen]
    page = tabs(width=width, height=height)
    page.goto(f"{server}/classroom?lecturer={LECTURER_KEY}")
    browser_wait.settle(page, 60)
    page.get_by_role("heading", name="A 50-minute class").scroll_into_view_if_needed()
    _shot(page, f"plan-{screen}")
    page.get_by_role("link", name="Open: Who sees what").click()
    page.wait_for_url("**/learn?learn_lesson=Who*", timeout=60_000)
    browser_wait.settle(page, 120, charts=1)
    _assert_no_errors(page)
    assert page.locator("h1").first.inner_text().startswith("4 ·")
