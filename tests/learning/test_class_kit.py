"""What a lecturer expects (issue #40 item 9): the glossary, a 50-minute plan, one handout per
lesson, an anonymous quiz tally per room and a reset link that resets that room once."""

from __future__ import annotations

import html
import os
import re
import threading
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from learning import sections
from learning.glossary import BY_KEY, GLOSSARY, PAGE_TERMS, terms_line
from learning.handout import ANSWERS, BOX, QUESTIONS, app_root, handout_html, inline
from learning.lessons import LESSONS
from learning.plan import CLASS_MINUTES, PLAN
from learning.quiz_tally import QuizTally, Setting, summary_rows

ROOT = Path(__file__).resolve().parents[2]
LECTURER_KEY = os.environ["CAPE_LECTURER_KEY"]  # tests/conftest.py


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
        assert 0 <= slot.slack < slot.minutes and slot.shows, slot.title


def test_the_plan_can_be_done_as_written():
    """Issue #49: slot 1 asked for ε = 5 where the Overview's ε stops at 0.9; slots 3 and 4
    both opened the protocol stepper; slot 5 skipped lesson 4's step 4 of 4; no slack."""
    from learning.lessons import LESSONS as lessons
    from learning.plan import PROMISE_EPSILONS, SLACK_MINUTES

    assert sum(slot.slack for slot in PLAN) >= SLACK_MINUTES >= 5
    assert all(slot.slack >= 1 for slot in PLAN if slot.lesson)  # a lesson loads on phones
    # each page or lesson opened once: nothing repeated (the stepper is lesson 2's link)
    opened = [(slot.page, slot.lesson) for slot in PLAN]
    assert len(set(opened)) == len(opened), opened
    assert not any(slot.page.endswith("protocol.py") for slot in PLAN)
    # a lesson is gone through whole, and the words name its last step
    by_name = {lesson.name: lesson for lesson in lessons}
    for slot in PLAN:
        if slot.lesson:
            total = len(by_name[slot.lesson].steps)
            assert slot.steps == tuple(range(1, total + 1)), slot.title
            assert f"steps 1–{total} of {total}" in slot.what, slot.what
    # the Overview's box: read at an ε its slider offers, the other ε only as its sentence says
    first = PLAN[0]
    overview = (ROOT / "app_pages" / "overview.py").read_text(encoding="utf-8")
    offered = re.search(r'f"\{P\}eps",\s*options=\[([^\]]*)\]', overview)
    assert offered is not None
    epsilons = [float(x) for x in offered.group(1).split(",")]
    assert PROMISE_EPSILONS[0] in epsilons and PROMISE_EPSILONS[1] > max(epsilons)
    assert dict(first.query).get("ov_eps", str(PROMISE_EPSILONS[0])) == "0.5"
    assert (
        first.shows
        == tuple(f"{np.exp(e):.3g}×" for e in PROMISE_EPSILONS)
        == (
            "1.65×",
            "148×",
        )
    )
    assert dict(first.query)[sections.PARAM] == sections.OVERVIEW_PROMISE


SETTING = Setting(0, "b: 8", ("same", "larger", "smaller"), "larger")  # the quiz's order
OTHER = Setting(3, "b: 18", ("same", "larger", "smaller"), "same")  # right differs here


def test_the_tally_counts_one_first_answer_per_browser_and_question_per_setting():
    tally = QuizTally()
    assert tally.record("q", "browser-1", SETTING, "smaller")
    assert not tally.record("q", "browser-1", OTHER, "same")  # a reload at another setting
    assert tally.record("q", "browser-2", OTHER, "same")
    assert tally.record("q", "browser-3", SETTING, "larger")
    assert tally.record("r", "browser-1", SETTING, "same")  # another question counts
    rows = tally.summary()["q"]
    assert [r.setting.label for r in rows] == ["b: 8", "b: 18"]  # the control's order
    assert rows[0].counts == (0, 1, 1) and rows[0].right == 1  # options in the quiz's order
    assert rows[1].counts == (1, 0, 0) and rows[1].right == 1
    assert tally.histogram("q", 4, 3) == [[0, 1, 1], [0, 0, 0], [0, 0, 0], [1, 0, 0]]
    with pytest.raises(ValueError):
        tally.record("q", "browser-9", SETTING, "not an option")
    assert not tally.reset(tally.generation + 1)  # another room's link: nothing happens
    room = tally.generation
    tally.reveal("q", settings=4, options=3, epsilon=1.0, minimum=1)
    assert tally.reset(room) and tally.summary() == {} and tally.generation == room + 1
    assert tally.release("q") is None and not tally.reset(room)  # the same link, again


def test_the_tally_loses_no_answer_under_concurrent_sessions():
    tally = QuizTally()

    def answer(n: int) -> None:
        for i in range(500):
            tally.record("q", f"browser-{n}-{i}", SETTING, "larger")
            tally.record("q", f"browser-{n}-{i}", SETTING, "same")  # a second tab: not counted

    threads = [threading.Thread(target=answer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    (row,) = tally.summary()["q"]
    assert row.answers == row.right == 8 * 500


def test_summary_rows_are_per_setting_with_the_right_option_marked_and_a_minimum():
    tally = QuizTally()
    first = LESSONS[0]
    qid = f"{first.key}/{first.steps[0].key}"
    tally.record(qid, "b1", SETTING, "larger")
    tally.record(qid, "b2", OTHER, "larger")
    rows = summary_rows(LESSONS, tally.summary())
    questions = [s for lesson in LESSONS for s in lesson.steps if s.question is not None]
    assert len(rows) == len(questions) + 1  # the first question has two settings
    assert rows[0]["question"] == rows[1]["question"] == f"1.1 {first.steps[0].title}"
    assert rows[0]["setting"] == "b: 8" and rows[0]["right"] == "1 (100%)"
    assert rows[0]["how the class answered"] == "same: 0 · ✓ larger: 1 · smaller: 0"
    assert rows[1]["how the class answered"] == "✓ same: 0 · larger: 1 · smaller: 0"
    assert all(r["answers"] == 0 for r in rows[2:])
    hidden = summary_rows(LESSONS, tally.summary(), minimum=3)  # a room of two: no counts
    assert hidden[0]["answers"] == "fewer than 3" and hidden[0]["how the class answered"] == ""


def test_the_released_tally_has_the_noise_its_epsilon_states_and_small_rooms_show_nothing():
    """Issue #49: the class's tally is the Gaussian mechanism at the lecturer's ε (Δ = 1 under
    add/remove of one answer): over 2,000 seeded releases the noise's std is within 3 standard
    errors (σ/sqrt(2(n−1))) of the calibrated σ; a seed gives the same numbers; a room under
    the minimum releases nothing."""
    from dpcore import gaussian_sigma
    from learning.quiz_tally import DELTA, released

    counts = [[3, 1, 0], [0, 2, 4]]
    for epsilon in (0.5, 2.0):
        sigma = gaussian_sigma(1.0, epsilon=epsilon, delta=DELTA, calibration="analytic")
        n = 2000
        noise = np.array(
            [
                np.array(released("q", counts, epsilon=epsilon, minimum=5, seed=s).noisy)
                - np.array(counts)
                for s in range(n)
            ]
        )[:, 0, 0]
        assert abs(noise.std(ddof=1) - sigma) < 3 * sigma / np.sqrt(2 * (n - 1)), epsilon
        assert abs(noise.mean()) < 3 * sigma / np.sqrt(n)
    one = released("q", counts, epsilon=1.0, minimum=5, seed=7)
    assert one == released("q", counts, epsilon=1.0, minimum=5, seed=7)  # the same to all
    assert one.shown and one.sigma == gaussian_sigma(1.0, epsilon=1.0, delta=DELTA,
                                                     calibration="analytic")  # fmt: skip
    small = released("q", [[1, 2, 0], [0, 0, 1]], epsilon=1.0, minimum=5, seed=7)  # 4 answers
    assert not small.shown and small.noisy == ()
    tally = QuizTally()
    for i, option in enumerate(("same", "larger", "same", "smaller")):
        tally.record("q", f"b{i}", SETTING, option)
    assert not tally.reveal("q", settings=4, options=3, epsilon=4.0, minimum=5).shown
    tally.record("q", "b4", OTHER, "same")
    assert tally.reveal("q", settings=4, options=3, epsilon=4.0, minimum=5).shown


ROOT_URL = "http://127.0.0.1:8710"  # an app's address, as a browser used it


def _sheets(lesson) -> tuple[list[dict], str, str]:
    from ui.lesson_scenes import SCENES

    numbers = [SCENES[s.scene](s.control.default).numbers for s in lesson.steps]
    number = LESSONS.index(lesson) + 1
    questions, answers = (
        handout_html(lesson, numbers, number=number, base_url=ROOT_URL, sheet=sheet)
        for sheet in (QUESTIONS, ANSWERS)
    )
    return numbers, questions, answers


def _text(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def _steps(page: str) -> list[str]:
    """The page's markup per step (after each step heading)."""
    return page.split("<h2>")[1:]


@pytest.mark.parametrize("lesson", LESSONS[:4], ids=[lesson.key for lesson in LESSONS[:4]])
def test_the_answer_sheet_holds_every_step_its_answer_and_link_with_the_lessons_numbers(lesson):
    numbers, _, page = _sheets(lesson)
    text = _text(page)
    for step, values in zip(lesson.steps, numbers, strict=True):
        assert f"· {step.title}" in text
        assert f"Answer: {values['answer']}." in text
        # the step's text as the lesson shows it (Markdown emphasis dropped)
        assert step.text.format(**values).replace("**", "").split("\n\n")[0] in text
        assert html.escape(step.explore.label.format(**values)) in page
    assert page.count("<h2>") == len(lesson.steps) and "@media print" in page
    with pytest.raises(ValueError, match="one dict per step"):
        handout_html(lesson, numbers[:-1], number=1, base_url=ROOT_URL)


@pytest.mark.parametrize("lesson", LESSONS[:4], ids=[lesson.key for lesson in LESSONS[:4]])
def test_the_question_sheet_asks_every_question_without_its_answer(lesson):
    """Issue #49: every handout printed the answer under its question. The question sheet has
    each question with its options to tick, each option once, and neither the answer, nor the
    reveal's why, nor the step's text (which states the answer: ``Question.claim``)."""
    numbers, page, _ = _sheets(lesson)
    assert "Answer" not in _text(page).replace("answer sheet", "")
    for step, values, part in zip(lesson.steps, numbers, _steps(page), strict=True):
        q = step.question
        assert q is not None
        options = [o.format(**values) for o in q.options]
        ticks = [f"<li>{BOX} {html.escape(o)}</li>" for o in options]
        assert re.findall(r"<li>.*?</li>", part) == ticks, step.key  # each once, in order
        rest = _text(re.sub(r"<li>.*?</li>", "", part))
        assert values["answer"] not in rest, (step.key, rest)  # only as an option to tick
        reveal = _text(inline(q.reveal.format(**values)))
        assert reveal[:40] not in rest, step.key
        assert _text(inline(step.text.format(**values)))[:60] not in rest, step.key
    assert page.count(f"{BOX} ") == sum(len(s.question.options) for s in lesson.steps)


def test_every_handout_link_is_absolute_under_the_apps_address_and_names_its_lesson():
    """A handout saved to disk, mailed or printed keeps working: every link starts with the
    app's address, and the lesson's own address is printed as the link's text."""
    for lesson in LESSONS[:4]:
        _, questions, answers = _sheets(lesson)
        for page in (questions, answers):
            hrefs = [html.unescape(h) for h in re.findall(r"href='([^']*)'", page)]
            assert len(hrefs) == len(lesson.steps) + 1
            assert all(h.startswith(f"{ROOT_URL}/") for h in hrefs), hrefs
            home = f"{ROOT_URL}/learn?learn_lesson={lesson.name.replace(' ', '+')}"
            assert hrefs[0] == home and f">{html.escape(home)}</a>" in page
    with pytest.raises(ValueError, match="base_url must be an absolute"):
        handout_html(LESSONS[0], _sheets(LESSONS[0])[0], number=1, base_url="averaging")
    with pytest.raises(ValueError, match="sheet must be one of"):
        handout_html(LESSONS[0], _sheets(LESSONS[0])[0], number=1, base_url=ROOT_URL, sheet="x")


@pytest.mark.parametrize(
    ("url", "public", "root"),
    [
        ("http://127.0.0.1:8501/learn", None, "http://127.0.0.1:8501"),  # the page's path off
        ("http://127.0.0.1:8501/", None, "http://127.0.0.1:8501"),  # the Overview
        ("https://host.org/cape/classroom", None, "https://host.org/cape"),  # base path kept
        ("https://host.org/cape", None, "https://host.org/cape"),  # not a page: kept
        ("http://10.0.0.5:8501/learn", "https://lab.example.org/", "https://lab.example.org"),
        ("http://10.0.0.5:8501/learn", "  ", "http://10.0.0.5:8501"),  # empty: not set
    ],
)
def test_the_apps_address_is_the_public_one_else_the_browsers_without_the_page(url, public, root):
    assert app_root(url, ("learn", "classroom", "overview"), public=public) == root


def test_an_unreadable_public_address_is_named():
    with pytest.raises(ValueError, match="CAPE_PUBLIC_URL must be an absolute http"):
        app_root("http://127.0.0.1:8501/learn", ("learn",), public="lab.example.org")


def test_the_servers_public_address_wins_over_the_browsers(monkeypatch):
    from ui.class_room import public_root

    monkeypatch.delenv("CAPE_PUBLIC_URL", raising=False)
    assert public_root() == "http://localhost:8501"  # no browser here: run.sh's address
    monkeypatch.setenv("CAPE_PUBLIC_URL", "https://lab.example.org/cape/")
    assert public_root() == "https://lab.example.org/cape"


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
@pytest.mark.slow
def test_a_learner_counts_once_per_question_and_sees_the_tally_only_after_the_reveal():
    from ui.class_room import room

    lesson, step = LESSONS[0], LESSONS[0].steps[0]
    qid = f"{lesson.key}/{step.key}"
    room().reset(room().generation)
    at = _page("learn.py", learn_lesson=lesson.name)
    radio = at.radio(key=f"q_{lesson.key}_{step.key}")
    radio.set_value(radio.options[0]).run()
    at.radio(key=f"q_{lesson.key}_{step.key}").set_value(radio.options[1]).run()  # changed mind
    (row,) = room().summary()[qid]
    assert row.answers == 1 and row.counts[0] == 1  # the first pick only
    assert row.setting.options == tuple(radio.options)  # the quiz's order
    assert not any("How the class answered" in m.value for m in at.markdown)  # not revealed

    lecturer = _page("classroom.py", lecturer=LECTURER_KEY)
    lecturer.number_input(key="cl_minimum").set_value(1).run()
    lecturer.button(key="cl_reveal").click().run()
    assert not lecturer.exception and any("Revealed 1.1" in s.value for s in lecturer.success)
    release = room().release(qid)
    assert release is not None and release.shown and release.epsilon == 1.0
    at.radio(key=f"q_{lesson.key}_{step.key}").set_value(radio.options[0]).run()
    assert any("How the class answered" in m.value for m in at.markdown)
    assert any("σ = " in c.value for c in at.caption)


def _offered(at: AppTest) -> set[str]:
    """The scripts the session's navigation offers."""
    return {Path(p["script_path"]).name for p in at._registered_pages.values()}


@pytest.mark.app
@pytest.mark.slow
def test_the_lecturers_page_reveal_and_reset_need_the_key():
    """Issue #49 item 2: without the key the page is not in the navigation, opening it opens
    the overview, and its reset link resets nothing; with it, all three work."""
    from ui.class_room import room

    student = _page("classroom.py")
    assert [t.value for t in student.title] != ["For the lecturer"]
    assert "classroom.py" not in _offered(student) and "learn.py" in _offered(student)
    generation = room().generation
    link = _page("classroom.py", cl_reset=str(generation))  # the reset link, without the key
    assert room().generation == generation and not link.success
    wrong = _page("classroom.py", lecturer="not-the-key", cl_reset=str(generation))
    assert room().generation == generation and not wrong.success
    assert "lecturer" not in wrong.query_params  # a key given never stays in the address

    lecturer = _page("classroom.py", lecturer=LECTURER_KEY)
    assert [t.value for t in lecturer.title] == ["For the lecturer"]
    assert "classroom.py" in _offered(lecturer) and "lecturer" not in lecturer.query_params
    link = next(p for p in lecturer.get("page_link") if "Reset the room" in p.proto.label)
    assert link.proto.query_string == f"cl_reset={generation}"
    reset = _page("classroom.py", lecturer=LECTURER_KEY, cl_reset=str(generation))
    assert any("The room was reset" in s.value for s in reset.success)
    assert room().summary() == {} and room().generation == generation + 1
    again = _page("classroom.py", lecturer=LECTURER_KEY, cl_reset=str(generation))
    assert any("earlier room" in i.value for i in again.info)
    assert room().generation == generation + 1


def test_without_a_key_in_the_environment_the_process_makes_one_and_prints_it_once(
    monkeypatch, capsys
):
    from ui import lecturer

    monkeypatch.delenv(lecturer.ENV, raising=False)
    monkeypatch.setattr(lecturer, "_made", [])
    key = lecturer.key()
    assert len(key) >= 16 and lecturer.key() == key  # one per process
    err = capsys.readouterr().err
    assert err.count(key) == 2 and f"?lecturer={key}" in err  # printed once, with its link
    monkeypatch.setenv(lecturer.ENV, "chosen")
    assert lecturer.key() == "chosen"


def _downloads(at: AppTest) -> list[str]:
    """The handouts offered (a lesson step's notebook is tests/learning/test_notebooks.py's)."""
    return [d.proto.label for d in at.get("download_button") if "handout_" in d.proto.id]


@pytest.mark.app
@pytest.mark.slow
def test_a_learner_gets_the_answer_sheet_once_every_prediction_of_the_lesson_is_made():
    """The Lessons page offers the question sheet; the answer sheet only once the learner has
    answered every question of the lesson (it would give the predictions away); the lecturer's
    page offers both for every lesson."""
    lesson = LESSONS[0]
    at = _page("learn.py", learn_lesson=lesson.name)
    assert _downloads(at) == ["Question sheet"]
    for number, step in enumerate(lesson.steps, 1):
        if number > 1:
            at.button(key="lesson_next").click().run()
        radio = at.radio(key=f"q_{lesson.key}_{step.key}")
        radio.set_value(radio.options[0]).run()
        expected = ["Question sheet", "Answer sheet"] if number == len(lesson.steps) else None
        assert _downloads(at) == (expected or ["Question sheet"]), number
    lecturer = _page("classroom.py", lecturer=LECTURER_KEY)
    assert _downloads(lecturer) == ["Question sheet", "Answer sheet"] * len(LESSONS)
