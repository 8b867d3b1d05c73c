"""Presenter mode for a class, in Chromium (issue #49): the projector shows the live tally of
the lesson's question beside its figure once the lecturer reveals it — and nothing before —
and the steppers' Next / Back answer ArrowRight / ArrowLeft (ui/keys.js), not while the focus
is in a control that uses the arrows itself.

The projector is a student's browser in presenter mode (no lecturer's key: anyone may turn
presenter mode on, so it must show nothing a student may not see); the lecturer reveals from
their own browser and the projector, never reloaded, shows the tally on its own. Its own
server (a fresh room) on a port of this module. Screenshots: artifacts/screenshots/presenter/.
"""

from __future__ import annotations

import os
import urllib.parse

import browser_wait
import presenter_checks
import pytest
from test_browser import SHOTS, _assert_no_errors

from benchmarks.server import streamlit_server
from learning.lessons import LESSONS
from learning.quiz_tally import REFRESH_SECONDS

pytestmark = [pytest.mark.browser, pytest.mark.slow]
OUT = SHOTS / "presenter"
KEY = os.environ["CAPE_LECTURER_KEY"]  # tests/conftest.py
PORT = int(os.environ.get("CAPE_PRESENTER_TEST_PORT", "8710"))
WIDTH, HEIGHT = 1280, 720  # the projector
LESSON = LESSONS[5]  # 6.1's figure has the longest axis title: beside the tally it must break
STEP, SECOND = LESSON.steps[0], LESSON.steps[1]
QUESTION = f"6.1 {STEP.title}"


@pytest.fixture(scope="module")
def room_server():
    with streamlit_server(port=PORT) as (url, _):
        yield url


def _box(page, selector: str) -> dict:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return box


def _step(page) -> str:
    """The step shown: its heading."""
    return page.locator("[data-testid='stMain'] h2").first.inner_text().strip()


def _press(page, key: str) -> None:
    page.keyboard.press(key)
    browser_wait.settle(page, 120, charts=1)


def test_the_projector_shows_the_revealed_tally_beside_the_figure_and_steps_by_keyboard(
    room_server, browser
):
    server = room_server
    desk = browser.new_context(viewport={"width": 1400, "height": 1000}, **browser_wait.CONTEXT)
    room = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}, **browser_wait.CONTEXT)
    try:
        projector = room.new_page()
        query = {"learn_lesson": LESSON.name, "present": "true"}
        projector.goto(f"{server}/learn?{urllib.parse.urlencode(query)}")
        browser_wait.settle(projector, 180, charts=1)
        _assert_no_errors(projector)
        assert _step(projector) == STEP.title
        # the projector's browser answers (one answer: the lecturer's minimum is 1 below)
        projector.locator("[data-testid='stRadio'] [role='radiogroup'] label").first.click()
        browser_wait.settle(projector, 120, charts=1)
        assert projector.get_by_text("How the class answered").count() == 0  # not revealed

        lecturer = desk.new_page()
        asked = {"lecturer": KEY, "cl_question": QUESTION, "cl_minimum": "1"}
        lecturer.goto(f"{server}/classroom?{urllib.parse.urlencode(asked)}")
        browser_wait.settle(lecturer, 120)
        assert projector.get_by_text("How the class answered").count() == 0  # still not
        lecturer.get_by_role("button", name="Reveal to the class").click()
        lecturer.get_by_text(f"Revealed {QUESTION}").wait_for(timeout=60_000)

        # the projector, untouched, shows the tally within a refresh (and the page's rerun)
        projector.get_by_text("How the class answered").wait_for(
            timeout=(3 * REFRESH_SECONDS + 30) * 1000
        )
        browser_wait.settle(projector, 120, charts=1)
        _assert_no_errors(projector)
        chart = _box(projector, ".st-key-lesson_chart")
        tally = _box(projector, "[data-testid='stTable']")
        heading = _box(projector, "[data-testid='stMain'] p:has-text('How the class answered')")
        assert tally["x"] >= chart["x"] + chart["width"] - 1, (chart, tally)  # beside it
        assert (
            heading["y"] < chart["y"] + chart["height"] and tally["y"] + tally["height"] <= HEIGHT
        )
        layout = projector.evaluate(presenter_checks.MAIN)  # the narrower figure: titles whole
        assert layout["clipped"] == [], layout["clipped"]
        table = projector.locator("[data-testid='stTable']").first
        assert "noisy count" in table.inner_text()
        assert table.locator("tbody tr").count() == len(STEP.question.options)
        OUT.mkdir(parents=True, exist_ok=True)
        projector.screenshot(path=str(OUT / "tally-beside-figure.png"))

        # Next and Back from the keyboard (the focus out of the answered radio first)
        projector.locator("h1").first.click()
        _press(projector, "ArrowRight")
        assert _step(projector) == SECOND.title and "learn_step=2" in projector.url
        assert projector.get_by_text("How the class answered").count() == 0  # not revealed
        _press(projector, "ArrowLeft")
        assert _step(projector) == STEP.title
        # in a slider the arrows move the slider, not the step
        before = projector.url
        projector.locator(f".st-key-learn_{STEP.control.key} input[type='range']").first.focus()
        _press(projector, "ArrowRight")
        assert _step(projector) == STEP.title and projector.url != before, projector.url
        assert "learn_step=2" not in projector.url
        _assert_no_errors(projector)

        # the protocol stepper, too; Back on its first step is disabled and nothing happens
        projector.goto(f"{server}/protocol?present=true")
        browser_wait.settle(projector, 180, charts=1)
        projector.locator("h1").first.click()
        _press(projector, "ArrowLeft")
        assert "pr_step=" not in projector.url
        _press(projector, "ArrowRight")
        assert "pr_step=2" in projector.url, projector.url
        projector.screenshot(path=str(OUT / "protocol-step-2.png"))
        _assert_no_errors(projector)
    finally:
        desk.close()
        room.close()
