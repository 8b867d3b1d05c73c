"""The Learn section in headless Chromium: every lesson step and the protocol stepper render
without error in light and dark themes at 1280×720, also in presenter mode.

Each lesson is opened once and walked with its Next button (as a learner does), each step
shown in both themes (the page switched between them); screenshots go to
artifacts/screenshots/learn/ (one per step and theme).
"""

from __future__ import annotations

import browser_wait
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from test_browser import SHOTS, _assert_no_errors, errors_shown

from learning.lessons import LESSONS

pytestmark = [pytest.mark.browser, pytest.mark.slow]
OUT = SHOTS / "learn"
OTHER = {"light": "dark", "dark": "light"}
ONE_CHART = """() => document.querySelectorAll("[data-testid='stPlotlyChart']").length === 1"""


def _settle(page, timeout: float = 90) -> None:
    """Title and chart painted, and the script idle (tests/browser_wait.py)."""
    browser_wait.settle(page, timeout, charts=1)


def _check_and_shoot(page, name: str, settled: bool = False) -> None:
    """No error and one chart on the page (settled first unless ``settled``), and its
    screenshot ``name``.png; a failure names the screen (``name``: step and scheme)."""
    if not settled:
        _settle(page)
    errors = errors_shown(page)
    assert not errors, (name, errors)
    charts = page.locator("[data-testid='stPlotlyChart']")
    try:  # a stale chart fades after a rerun
        page.wait_for_function(ONE_CHART, timeout=30_000, polling=browser_wait.POLL_MS)
    except PlaywrightTimeout:
        pass  # the assertion names the screen
    assert charts.count() == 1, name
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUT / f"{name}.png"))


def _both_schemes(page, name: str, scheme: str) -> str:
    """Check and shoot the page in ``scheme``, then switched to the other scheme (a rerun, as
    on a page opened in it: browser_wait.switch_scheme); returns the scheme it is left in.
    One walk shows each screen in both schemes: a page load costs the browser more than the
    rerun (#35)."""
    _check_and_shoot(page, f"{name}-{scheme}")
    other = OTHER[scheme]
    browser_wait.switch_scheme(page, other)
    _check_and_shoot(page, f"{name}-{other}", settled=True)
    return other


@pytest.mark.parametrize("lesson", LESSONS, ids=[lesson.key for lesson in LESSONS])
def test_every_step_of_a_lesson_renders(server, tabs, lesson):
    scheme = "light"  # each step switches it: the walk goes on in the other one
    page = tabs(width=1280, height=720)
    page.goto(f"{server}/learn?learn_lesson={lesson.name.replace(' ', '+')}")
    for number, step in enumerate(lesson.steps, 1):
        if number > 1:
            page.get_by_role("button", name="Next").click()
        # exact: the lesson's own title (an h1) can contain a step's title ("… a fair comparison")
        page.get_by_role("heading", name=step.title, exact=True).wait_for(timeout=90_000)
        scheme = _both_schemes(page, f"{lesson.key}-{number}", scheme)
        # each step has its own link (step 1 is the default, which the URL leaves out)
        if number > 1:
            page.wait_for_url(f"**learn_step={number}*", timeout=30_000)


def test_protocol_stepper_renders_forward_and_back(server, tabs):
    scheme = "light"
    page = tabs(width=1280, height=720)
    page.goto(f"{server}/protocol?pr_S=4&pr_seed=3&pr_step=16")
    for heading, button in (("16/17", None), ("17/17", "Next"), ("16/17", "Back")):
        if button:
            page.get_by_role("button", name=button).click()
        page.get_by_text(heading).first.wait_for(timeout=90_000)
        name = f"protocol-{heading.split('/')[0]}-{button or 'open'}"
        scheme = _both_schemes(page, name, scheme)


@pytest.mark.parametrize(
    "url", ["learn?learn_lesson=Many+sites&learn_step=2", "protocol?pr_step=9"]
)
def test_presenter_mode(server, tabs, url):
    page = tabs(width=1280, height=720)
    page.goto(f"{server}/{url}&present=true")
    _check_and_shoot(page, "present-" + url.split("?")[0])


def test_progress_survives_a_reload_and_next_leaves_a_finished_lesson(server, tabs):
    """Issue #40 item 3: the marks were lost on reload, and Next on a lesson's last step did
    nothing. One tab: answer the last step of lesson 1, reload, press Next."""
    first, second = LESSONS[0], LESSONS[1]
    last = len(first.steps)
    page = tabs(width=1400, height=1000)
    page.goto(f"{server}/learn?learn_lesson={first.name.replace(' ', '+')}&learn_step={last}")
    _settle(page)
    progress = page.locator("[data-testid='stCaptionContainer']").filter(has_text="Your progress")
    assert f"✓ {last}" not in progress.inner_text()
    page.locator("[data-testid='stRadio'] [role='radiogroup'] label").first.click()  # answered
    _settle(page)
    assert f"✓ {last}" in progress.inner_text()
    page.reload()
    _settle(page)
    assert f"✓ {last}" in progress.inner_text()  # the browser kept the marks
    page.get_by_role("button", name="Next").click()
    page.get_by_role("heading", name=second.steps[0].title, exact=True).wait_for(timeout=90_000)
    page.wait_for_url(f"**learn_lesson={second.name.replace(' ', '+')}*", timeout=30_000)
    _settle(page)
    _assert_no_errors(page)
    assert f"✓ {first.name}" not in progress.inner_text()  # one of three steps answered
    assert f"{first.name} 1/{last}" in progress.inner_text()


def _in_view(page, selector: str) -> dict:
    """Where an element sits in the window: its top and bottom in CSS pixels."""
    return page.evaluate(
        "(s) => { const r = document.querySelector(s).getBoundingClientRect();"
        " return {top: r.top, bottom: r.bottom, height: window.innerHeight}; }",
        selector,
    )


LANDINGS = [
    (lesson, number, step)
    for lesson in LESSONS
    for number, step in enumerate(lesson.steps, 1)
    if step.explore.section is not None
]


# The landing ends once the page above the section stops growing: the heading near the top of
# the window, and still there, not moved by a pixel, after a second (a chart above it painted
# late would push it down; a fixed 2-s sleep waited for the same before).
STAYS = """(s) => { const top = document.querySelector(s).getBoundingClientRect().top;
  const now = performance.now();
  if (!(top >= 0 && top < 200) || window.__capeTop !== top) {
    window.__capeTop = top; window.__capeTopSince = now; return false; }
  return now - window.__capeTopSince >= 1000; }"""


NEXT_CHART = """(s) => { const top = document.querySelector(s).getBoundingClientRect().top;
  const charts = [...document.querySelectorAll("[data-testid='stPlotlyChart']")]
    .map(c => c.getBoundingClientRect()).filter(r => r.top >= top);
  return charts.length ? charts[0].top : null; }"""


@pytest.mark.parametrize(
    ("key", "width", "height"),
    [("calibration", 1280, 720), ("calibration", 390, 844), ("releases", 1280, 720)],
    ids=["presenter-screen", "phone", "repeated-releases"],
)
def test_an_explore_link_lands_on_the_section_it_names(server, tabs, key, width, height):
    """Issue #40 item 2: lesson 1 step 3's link opened the Privacy explorer three screens
    above the calibration chart it is about. Clicked as a learner does, the link's section
    heading is at the top of the window and the chart under it starts on the same screen."""
    lesson, number, step = next(t for t in LANDINGS if t[2].key == key)
    page = tabs(width=width, height=height)
    page.goto(f"{server}/learn?learn_lesson={lesson.name.replace(' ', '+')}&learn_step={number}")
    _settle(page)
    from ui.lesson_scenes import SCENES

    numbers = SCENES[step.scene](step.control.default).numbers
    page.get_by_role("link", name=step.explore.label.format(**numbers)).click()
    target = step.explore.page.removeprefix("app_pages/").removesuffix(".py")
    page.wait_for_url(f"**/{target}?**", timeout=60_000)
    browser_wait.settle(page, 120)
    heading = f"[id='{step.explore.section}']"
    page.locator(heading).wait_for(timeout=60_000)
    page.wait_for_function(STAYS, arg=heading, timeout=60_000, polling=100)
    where = _in_view(page, heading)
    assert 0 <= where["top"] < 200, where
    chart = page.evaluate(NEXT_CHART, heading)
    assert chart is not None and chart < where["height"], chart  # it starts on this screen
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUT / f"landing-{key}-{width}.png"))
