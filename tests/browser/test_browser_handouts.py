"""Handouts that travel, in Chromium (issue #49): every lesson's question sheet and answer sheet,
downloaded from the lecturer's page, saved to a file and opened from the disk (``file://``, as
from a downloads folder or a mail), reach the running app — every link is the app's absolute
address; each sheet's first link (its lesson's page), clicked in the file, opens that page,
with no notice about the link and no error (checked once a lesson: both sheets link it), and
its other links are the lesson steps' Explore links, the addresses
tests/browser/test_browser_links.py opens and checks (not opened twice: a page load costs the
browser 3-7 s). Printed at A4, a question sheet is one page.

The app's address is the one the browser used (no ``CAPE_PUBLIC_URL`` here; that one is unit
tested in tests/learning/test_class_kit.py). The shared server (tests/conftest.py); the numbers each
link quotes on its first screen are tests/browser/test_browser_links.py's.
Screenshots: artifacts/screenshots/handouts/.
"""

from __future__ import annotations

import html
import os
import re
import urllib.parse

import browser_wait
import pytest
from lesson_links import explore_links
from test_browser import SHOTS
from test_browser_links import NOTICES

from learning.handout import ANSWERS, QUESTIONS, SHEETS
from learning.lessons import LESSONS

pytestmark = [pytest.mark.browser, pytest.mark.slow]
OUT = SHOTS / "handouts"
KEY = os.environ["CAPE_LECTURER_KEY"]  # tests/conftest.py
HREF = re.compile(r"href='([^']*)'")


def _download(page, lesson, sheet: str, folder) -> tuple[str, str]:
    """(path on disk, text) of one sheet downloaded from the lecturer's page."""
    button = page.locator(f".st-key-cl_handout_{lesson.key}_{sheet} button").first
    with page.expect_download(timeout=240_000) as got:
        button.click()
    path = folder / got.value.suggested_filename
    got.value.save_as(path)
    return str(path), path.read_text(encoding="utf-8")


def _problems(page, where: str) -> list[str]:
    found = [f"{where}: notice: {n[:160]}" for n in page.evaluate(NOTICES)]
    found += [f"{where}: error: {e[:160]}" for e in browser_wait.errors_shown(page)]
    return found


def _address(href: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """A link's page path and its settings, as tests/lesson_links.py names an Explore link."""
    parts = urllib.parse.urlsplit(href)
    return parts.path.strip("/"), tuple(sorted(urllib.parse.parse_qsl(parts.query)))


def test_every_handout_opened_from_a_file_reaches_the_apps_pages(server, browser, tmp_path):
    context = browser.new_context(
        viewport={"width": 1400, "height": 1000}, accept_downloads=True, **browser_wait.CONTEXT
    )
    try:
        desk = context.new_page()
        desk.goto(f"{server}/classroom?lecturer={KEY}")
        browser_wait.settle(desk, 120)
        files = {}
        for lesson in LESSONS:
            for sheet in SHEETS:
                files[lesson.key, sheet] = _download(desk, lesson, sheet, tmp_path)
        assert len(files) == 2 * len(LESSONS)

        explore = {(link.path, tuple(sorted(link.query))) for link in explore_links()}
        sheet_page = context.new_page()
        app = context.new_page()
        opened: set[str] = set()
        found: list[str] = []
        pages = {}
        for (key, sheet), (path, text) in files.items():
            hrefs = [html.unescape(h) for h in HREF.findall(text)]
            assert hrefs and all(h.startswith(f"{server}/") for h in hrefs), (key, sheet, hrefs)
            assert ("Answer: " in text) == (sheet == ANSWERS), (key, sheet)
            sheet_page.goto(f"file://{path}")
            anchors = sheet_page.locator("a")
            assert anchors.count() == len(hrefs)
            if sheet == QUESTIONS:  # the one printed for the class: one page at A4
                sheet_page.emulate_media(media="print")
                pdf = sheet_page.pdf(format="A4")
                sheet_page.emulate_media(media="screen")
                pages[key] = pdf.count(b"/Type /Page") - pdf.count(b"/Type /Pages")
            # the file's first link (the lesson's own page), clicked in the file: a sheet
            # opened from the disk reaches the app; its other links are the steps' Explore
            # links, the same addresses tests/browser/test_browser_links.py opens and checks
            for href in hrefs[1:]:
                assert _address(href) in explore, (key, sheet, href)
            app.goto(f"file://{path}")
            with app.expect_navigation(url=hrefs[0], timeout=120_000):
                app.locator("a").first.click()
            if hrefs[0] in opened:  # the lesson's other sheet, the same page: reached (the
                continue  # server answered its address), its screen checked once, above
            opened.add(hrefs[0])
            browser_wait.settle(app, 240)
            title = app.locator("h1").first.inner_text().strip()
            found += _problems(app, f"{key} {sheet} link 1 ({title})")
            assert title == next(x.title for x in LESSONS if x.key == key), title
        OUT.mkdir(parents=True, exist_ok=True)
        sheet_page.goto(f"file://{files[LESSONS[1].key, QUESTIONS][0]}")
        sheet_page.screenshot(path=str(OUT / "question-sheet-2.png"), full_page=True)
        sheet_page.goto(f"file://{files[LESSONS[1].key, ANSWERS][0]}")
        sheet_page.screenshot(path=str(OUT / "answer-sheet-2.png"), full_page=True)
        print(f"question sheets' pages at A4: {pages}; lesson pages opened: {len(opened)}")
        assert not found, "\n".join(found)
        assert len(opened) == len(LESSONS), opened  # both sheets of a lesson: its page
        assert all(pages[lesson.key] == 1 for lesson in LESSONS), pages
    finally:
        context.close()
