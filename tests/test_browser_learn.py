"""The Learn section in headless Chromium: every lesson step and the protocol stepper render
without error in light and dark themes at 1280×720, also in presenter mode.

Screenshots go to artifacts/screenshots/learn/ (one per step and theme).
"""

from __future__ import annotations

import pytest
from test_browser import SHOTS, _assert_no_errors, _settle, browser, server  # noqa: F401

from ui.lessons import LESSONS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

STEPS = [(lesson, i) for lesson in LESSONS for i in range(1, len(lesson.steps) + 1)]
OUT = SHOTS / "learn"


def _shoot(browser, url: str, name: str, scheme: str, charts: int = 1) -> None:  # noqa: F811
    page = browser.new_page(viewport={"width": 1280, "height": 720}, color_scheme=scheme)
    page.goto(url)
    _settle(page, charts)
    _assert_no_errors(page)
    assert page.locator("[data-testid='stPlotlyChart']").count() == charts
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUT / f"{name}-{scheme}.png"))
    page.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize(("lesson", "number"), STEPS, ids=[f"{l.key}-{n}" for l, n in STEPS])
def test_lesson_step_renders(server, browser, lesson, number, scheme):  # noqa: F811
    url = f"{server}/learn?lesson={lesson.name.replace(' ', '+')}&step={number}"
    _shoot(browser, url, f"{lesson.key}-{number}", scheme)


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("step", [1, 4, 17])
def test_protocol_step_renders(server, browser, step, scheme):  # noqa: F811
    _shoot(browser, f"{server}/protocol?S=4&seed=3&step={step}", f"protocol-{step}", scheme)


@pytest.mark.parametrize("url", ["learn?lesson=Many+sites&step=2", "protocol?step=9"])
def test_presenter_mode(server, browser, url):  # noqa: F811
    name = "present-" + url.split("?")[0]
    _shoot(browser, f"{server}/{url}&present=true", name, "light")
