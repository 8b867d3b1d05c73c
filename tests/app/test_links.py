"""Links that never warn (issue #49): every lesson step's Explore link, every handout link and
every link of the 50-minute plan opens its page with no notice about the link, no exception
and no error, and every setting the link names arrives in the page's controls.

Lessons write an option's key (``tm_sacal=matched``, ``prv_design=cape``) where the widget
shows a label; the URL guard named each such value "out of range" until it accepted keys and
labels alike (``ui.guard.option_label``). Each link is opened as a fresh session at its page
(AppTest), as a learner clicking it in a new tab would. The same links in Chromium, with the
lesson's numbers on the first screen: tests/browser/test_browser_links.py.
"""

from __future__ import annotations

import os
import urllib.parse
from pathlib import Path

import pytest
from lesson_links import Link, explore_links, handout_links
from streamlit.testing.v1 import AppTest
from test_lessons import _arrived

from figures.theme import is_verdict_icon
from learning.lessons import LESSONS
from learning.plan import HERE, PLAN

ROOT = Path(__file__).resolve().parents[2]
LECTURER_KEY = os.environ["CAPE_LECTURER_KEY"]  # tests/conftest.py
pytestmark = [pytest.mark.app, pytest.mark.slow]
LINK_OFF = ":material/link_off:"  # the guard's notices (ui/guard.py, app.py)


def open_link(link: Link) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.switch_page(link.script)
    at.query_params.update({k: v if len(v) > 1 else v[0] for k, v in link.params().items()})
    if link.section:
        at.query_params["section"] = link.section
    return at.run()


def problems(link: Link) -> list[str]:
    """What is wrong with the page ``link`` opens: a notice, an exception, an error box that is
    not the page's verdict, a setting the controls did not take."""
    at = open_link(link)
    found = [f"exception: {e.value[:200]}" for e in at.exception]
    found += [
        f"notice: {w.value[:160]}"
        for w in at.warning
        if w.icon == LINK_OFF or "in the link" in w.value
    ]
    found += [f"error: {e.value[:160]}" for e in at.error if not is_verdict_icon(e.icon)]
    for key, texts in link.params().items():
        if key not in at.session_state:
            found.append(f"{key}: no control took it")
        elif not _arrived(at.session_state[key], texts):
            found.append(f"{key}: the control holds {at.session_state[key]!r}, the link {texts}")
    return [f"{link.source} ({link.path}): {p}" for p in found]


def test_every_explore_and_handout_link_opens_its_page_without_a_notice():
    """Each distinct address once: a handout's links are its lesson's Explore links at the
    steps' defaults (checked here), so opening the Explore links opens them too, and its
    lesson's own address (``learn?learn_lesson=…``), opened here as well."""
    explore, handouts = explore_links(), handout_links()
    assert len(explore) == sum(len(lesson.steps) for lesson in LESSONS)
    by_address = {(link.path, link.query): link for link in explore}
    lessons = {(h.path, h.query): h for h in handouts if h.path == "learn"}
    assert {(h.path, h.query) for h in handouts} <= set(by_address) | set(lessons), (
        "a handout link that is neither a lesson's Explore link nor a lesson's address"
    )
    assert sorted(dict(h.query)["learn_lesson"] for h in lessons.values()) == sorted(
        lesson.name for lesson in LESSONS
    )
    by_address.update(lessons)
    found = [p for link in by_address.values() for p in problems(link)]
    assert not found, "\n".join(found)


def plan_links() -> list[Link]:
    """The plan's links as the lecturer's page draws them ("Open …"), in its order."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["lecturer"] = LECTURER_KEY  # the lecturer's page (tests/conftest.py)
    at.switch_page("app_pages/classroom.py")
    at.run()
    links = [
        Link(f"plan slot {i}", p.proto.page, tuple(urllib.parse.parse_qsl(p.proto.query_string)))
        for i, p in enumerate(
            (p for p in at.get("page_link") if p.proto.label.startswith("Open")), 1
        )
    ]
    # a slot on the lecturer's page itself links to its section by an anchor, not a page link
    assert len(links) == sum(slot.page != HERE for slot in PLAN), [x.source for x in links]
    return links


def test_every_plan_link_opens_its_page_without_a_notice():
    found = [p for link in plan_links() for p in problems(link)]
    assert not found, "\n".join(found)


def test_a_link_may_name_an_option_by_its_key_or_its_label():
    """The rule itself, on options that are not the default (a default is dropped from the
    address whatever it says): a key and a label give the same control value, with no
    notice; a value that is neither is named once, and the default is used."""
    for value in ("ddg", "KLS accountant (a proof)"):
        at = open_link(Link("key or label", "trust_models", (("tm_sacal", value),)))
        assert at.session_state["tm_sacal"] == "ddg", value
        assert not [w for w in at.warning if w.icon == LINK_OFF], value
    for query in ((("prv_colluders", "2"), ("prv_colluders", "site 3")),):
        at = open_link(Link("keys and labels", "privacy", query))
        assert at.session_state["prv_colluders"] == [2, 3]
        assert not [w for w in at.warning if w.icon == LINK_OFF]
    at = open_link(Link("neither", "trust_models", (("tm_sacal", "nonsense"),)))
    assert at.session_state["tm_sacal"] == "matched"
    notices = [w.value for w in at.warning if w.icon == LINK_OFF]
    assert len(notices) == 1 and "tm\\_sacal\\=nonsense" in notices[0], notices
