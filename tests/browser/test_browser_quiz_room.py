"""Issue #49 in headless Chromium: a quiz that counts people, a lecturer's key, and a class
tally released with the Gaussian mechanism — five students (five browsers) and a lecturer.

Reloads, a second tab and answers at another setting count one first answer per student and
question; the lecturer's table has a row per setting with the right option marked; a student
neither sees the tally before the reveal nor resets the room (by link or by the page); the
lecturer's key can. Its own server on port 8801 (a fresh room). Screenshots go to
artifacts/screenshots/quiz_room/.
"""

from __future__ import annotations

import os
import urllib.parse

import browser_wait
import pytest
from test_browser import SHOTS, _assert_no_errors

from benchmarks.server import streamlit_server
from learning.lessons import LESSONS

pytestmark = [pytest.mark.browser, pytest.mark.slow]
OUT = SHOTS / "quiz_room"
KEY = os.environ["CAPE_LECTURER_KEY"]  # tests/conftest.py
PORT = 8801
LESSON = LESSONS[5]  # "Beyond the paper": 6.1's right option depends on the bit width
STEP = LESSON.steps[0]
QUESTION = f"6.1 {STEP.title}"
SAME, TEN, THOUSAND = 0, 1, 2  # the options' places: about the same, 10×, 1000× larger
NAV = "[data-testid='stSidebarNav'] a"


@pytest.fixture(scope="module")
def room_server():
    with streamlit_server(port=PORT) as (url, _):
        yield url


def _learn(bits: int) -> str:
    query = {"learn_lesson": LESSON.name, "learn_step": "1", f"learn_{STEP.control.key}": bits}
    return "/learn?" + urllib.parse.urlencode(query)


def _answer(page, url: str, option: int) -> None:
    page.goto(url)
    browser_wait.settle(page, 180, charts=1)
    _assert_no_errors(page)
    page.locator("[data-testid='stRadio'] [role='radiogroup'] label").nth(option).click()
    browser_wait.settle(page, 120, charts=1)


def _answers(page) -> int:
    text = page.get_by_text("counted in this room").first.inner_text()
    return int(text.split(" answer")[0].strip("* "))


def _wait_answers(page, n: int) -> None:
    page.wait_for_function(  # the summary refreshes itself every 5 s
        "(n) => [...document.querySelectorAll('p')].some(p =>"
        " p.innerText.includes('counted in this room') && parseInt(p.innerText) === n)",
        arg=n,
        timeout=30_000,
    )


def _row(page, setting: str) -> str:
    rows = page.locator("[data-testid='stTable'] tr", has_text=setting)
    return " | ".join(rows.filter(has_text=QUESTION).all_inner_texts())


def _tally(page) -> str:
    return page.locator("[data-testid='stTable']", has_text="noisy count").inner_text()


def test_five_students_count_once_each_see_the_tally_after_the_reveal_and_cannot_reset(
    room_server, browser
):
    server = room_server
    lecturer = browser.new_context(viewport={"width": 1400, "height": 1000}, **browser_wait.CONTEXT)
    students = [
        browser.new_context(viewport={"width": 1280, "height": 900}, **browser_wait.CONTEXT)
        for _ in range(5)
    ]
    try:
        desk = lecturer.new_page()
        desk.goto(f"{server}/classroom?lecturer={KEY}")
        browser_wait.settle(desk, 120)
        assert "lecturer" not in desk.url  # the key leaves the address at once
        assert desk.locator(f"{NAV}[href$='/classroom']").count() == 1
        assert _answers(desk) == 0

        pages = [s.new_page() for s in students]
        picks = [(16, SAME), (16, TEN), (18, SAME), (18, THOUSAND), (16, TEN)]
        for page, (bits, option) in zip(pages, picks, strict=True):
            _answer(page, f"{server}{_learn(bits)}", option)
        assert pages[0].get_by_text("How the class answered").count() == 0  # not revealed
        # a reload, a second tab, another setting: the same five people
        _answer(pages[0], f"{server}{_learn(16)}", THOUSAND)  # a reload, another pick
        _answer(students[1].new_page(), f"{server}{_learn(18)}", SAME)  # a second tab
        _answer(pages[2], f"{server}{_learn(16)}", TEN)  # another setting
        _wait_answers(desk, 5)
        assert _row(desk, "Bit width b: 16").endswith(
            "about the same (1×): 1 · ✓ about 10× larger: 2 · about 1000× larger: 0"
        ), _row(desk, "Bit width b: 16")
        assert _row(desk, "Bit width b: 18").endswith(
            "✓ about the same (1×): 1 · about 10× larger: 0 · about 1000× larger: 1"
        ), _row(desk, "Bit width b: 18")
        desk.locator(
            "[data-testid='stTable'] tr", has_text=QUESTION
        ).first.scroll_into_view_if_needed()
        desk.screenshot(path=str(_out("lecturer-summary.png")))

        # a student: no lecturer's page in the navigation, its reset link does nothing
        reset = desk.get_by_role("link", name="Reset the room").get_attribute("href") or ""
        assert "cl_reset=" in reset
        thief = pages[3]
        assert thief.locator(f"{NAV}[href$='/classroom']").count() == 0
        for query in (reset.split("?", 1)[1], f"lecturer=guess&{reset.split('?', 1)[1]}"):
            thief.goto(f"{server}/classroom?{query}")
            browser_wait.settle(thief, 120)
            assert thief.get_by_text("For the lecturer").count() == 0
            assert thief.get_by_text("The room was reset").count() == 0
        desk.reload()
        browser_wait.settle(desk, 120)  # the lecturer's cookie: still the lecturer's page
        assert _answers(desk) == 5

        # the reveal: same numbers to every student at the same setting, with its promise
        desk.goto(f"{server}/classroom?" + urllib.parse.urlencode({"cl_question": QUESTION}))
        browser_wait.settle(desk, 120)
        desk.get_by_role("button", name="Reveal to the class").click()
        desk.get_by_text(f"Revealed {QUESTION}").wait_for(timeout=60_000)
        seen = []
        for page in (pages[2], pages[3]):
            page.goto(f"{server}{_learn(18)}")
            browser_wait.settle(page, 180, charts=1)
            page.get_by_text("How the class answered").wait_for(timeout=30_000)
            assert page.get_by_text("differentially private").count() >= 1
            seen.append(_tally(page))
        assert seen[0] == seen[1] and "about the same (1×)" in seen[0], seen
        pages[3].locator(
            "[data-testid='stTable']", has_text="noisy count"
        ).scroll_into_view_if_needed()
        pages[3].screenshot(path=str(_out("student-tally.png")))
        desk.get_by_text(f"Revealed {QUESTION}").scroll_into_view_if_needed()
        desk.screenshot(path=str(_out("lecturer-reveal.png")))

        # the lecturer's reset works, once
        desk.goto(f"{server}/classroom")
        browser_wait.settle(desk, 120)
        desk.get_by_role("link", name="Reset the room").click()
        desk.get_by_text("The room was reset").wait_for(timeout=60_000)
        browser_wait.settle(desk, 60)
        assert _answers(desk) == 0
    finally:
        for context in (lecturer, *students):
            context.close()


def _out(name: str):
    OUT.mkdir(parents=True, exist_ok=True)
    return OUT / name
