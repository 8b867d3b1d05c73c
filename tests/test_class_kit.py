"""What a lecturer expects (issue #40 item 9): the glossary, a 50-minute plan, one handout per
lesson, an anonymous quiz tally per room and a reset link that resets that room once."""

from __future__ import annotations

import html
import re
import threading
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from learning import sections
from learning.glossary import BY_KEY, GLOSSARY, PAGE_TERMS, terms_line
from learning.handout import handout_html, inline
from learning.lessons import LESSONS
from learning.plan import CLASS_MINUTES, PLAN
from learning.quiz_tally import QuizTally, summary_rows

ROOT = Path(__file__).resolve().parents[1]


def test_the_glossary_names_the_terms_the_issue_lists_once_each_with_a_landing_anchor():
    names = " ".join(t.name for t in GLOSSARY)
    for wanted in ("Discrete Gaussian", "KLS", "Clopper–Pearson", "PLD", "RDP", "zCDP",
                   "GDP", "Advanced composition", "Sensitivity", "δ"):  # fmt: skip
        assert wanted in names, wanted
    anchors = [t.anchor for t in GLOSSARY]
    assert len(set(anchors)) == len(anchors) and set(anchors) <= sections.ANCHORS
    assert all(t.words and t.where and t.source for t in GLOSSARY)
    for page, keys in PAGE_TERMS.items():
        assert (ROOT / "app_pages" / f"{page}.py").exists()
        line = terms_line(page)
        for key in keys:
            assert f"](glossary?section={BY_KEY[key].anchor})" in line


def test_the_plan_fills_fifty_minutes_with_pages_and_lessons_that_exist():
    assert sum(slot.minutes for slot in PLAN) == CLASS_MINUTES == 50
    names = {lesson.name for lesson in LESSONS}
    for slot in PLAN:
        assert (ROOT / slot.page).exists(), slot.page
        assert slot.lesson is None or (slot.lesson in names and slot.page.endswith("learn.py"))


def test_the_tally_counts_without_names_and_a_reset_empties_its_room_once():
    tally = QuizTally()
    for option, right in (("a", True), ("a", True), ("b", False)):
        tally.record("noise/neighbours", option, right)
    got = tally.summary()["noise/neighbours"]
    assert got.options == {"a": 2, "b": 1} and got.right == 2 and got.answers == 3
    assert set(vars(tally)) == {"generation", "_picked", "_right", "_lock"}  # no sessions kept
    assert not tally.reset(tally.generation + 1)  # another room's link: nothing happens
    assert tally.summary()["noise/neighbours"].answers == 3
    room = tally.generation
    assert tally.reset(room) and tally.summary() == {} and tally.generation == room + 1
    assert not tally.reset(room)  # the same link opened again resets nothing


def test_the_tally_loses_no_answer_under_concurrent_sessions():
    tally = QuizTally()

    def answer() -> None:
        for _ in range(500):
            tally.record("q", "x", True)

    threads = [threading.Thread(target=answer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert tally.summary()["q"].answers == tally.summary()["q"].right == 8 * 500


def test_summary_rows_list_every_question_in_course_order_with_its_counts():
    tally = QuizTally()
    first = LESSONS[0]
    tally.record(f"{first.key}/{first.steps[0].key}", "it doubles", True)
    rows = summary_rows(LESSONS, tally.summary())
    questions = [s for lesson in LESSONS for s in lesson.steps if s.question is not None]
    assert len(rows) == len(questions)
    assert rows[0]["question"] == f"1.1 {first.steps[0].title}"
    assert rows[0]["answers"] == 1 and rows[0]["right"] == "1 (100%)"
    assert rows[0]["how the class answered"] == "it doubles: 1"
    assert all(r["answers"] == 0 for r in rows[1:])


@pytest.mark.parametrize("lesson", LESSONS[:4], ids=[lesson.key for lesson in LESSONS[:4]])
def test_a_handout_holds_every_step_its_answer_and_link_with_the_lessons_numbers(lesson):
    from ui.lesson_scenes import SCENES

    numbers = [SCENES[s.scene](s.control.default).numbers for s in lesson.steps]
    page = handout_html(lesson, numbers, number=LESSONS.index(lesson) + 1)
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    for step, values in zip(lesson.steps, numbers, strict=True):
        assert f"· {step.title}" in text
        assert f"Answer: {values['answer']}." in text
        # the step's text as the lesson shows it (Markdown emphasis dropped)
        assert step.text.format(**values).replace("**", "").split("\n\n")[0] in text
        assert html.escape(step.explore.label.format(**values)) in page
    assert page.count("<h2>") == len(lesson.steps) and "@media print" in page
    with pytest.raises(ValueError, match="one dict per step"):
        handout_html(lesson, numbers[:-1], number=1)


def test_handout_markup_is_escaped():
    assert inline("<script>x</script> **a** *b*") == (
        "&lt;script&gt;x&lt;/script&gt; <strong>a</strong> <em>b</em>"
    )


def _page(name: str, **params) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page(f"app_pages/{name}")
    at.query_params.update(params)
    return at.run()


@pytest.mark.app
def test_a_learner_counts_once_per_question_and_the_reset_link_resets_the_room_once():
    from ui.class_room import room

    lesson, step = LESSONS[0], LESSONS[0].steps[0]
    qid = f"{lesson.key}/{step.key}"
    before = room().summary().get(qid)
    at = _page("learn.py", learn_lesson=lesson.name)
    radio = at.radio(key=f"q_{lesson.key}_{step.key}")
    radio.set_value(radio.options[0]).run()
    at.radio(key=f"q_{lesson.key}_{step.key}").set_value(radio.options[1]).run()  # changed mind
    after = room().summary()[qid]
    assert after.answers == (before.answers if before else 0) + 1  # the first pick only
    assert after.options[radio.options[0]] >= 1

    lecturer = _page("classroom.py")
    assert not lecturer.exception
    link = next(p for p in lecturer.get("page_link") if "Reset the room" in p.proto.label)
    generation = room().generation
    assert link.proto.query_string == f"cl_reset={generation}"
    reset = _page("classroom.py", cl_reset=str(generation))
    assert any("The room was reset" in s.value for s in reset.success)
    assert room().summary() == {} and room().generation == generation + 1
    again = _page("classroom.py", cl_reset=str(generation))  # the same link, later
    assert any("earlier room" in i.value for i in again.info)
    assert room().generation == generation + 1
