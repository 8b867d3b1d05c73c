"""The class's side of the lessons: the room's anonymous quiz tally, and the handouts.

The tally (:class:`learning.quiz_tally.QuizTally`) is one per server process, shared by every
session (``st.cache_resource``); a browser counts its first answer to each question once per
room (its hashed id is kept only to count it once, until the room is reset).
"""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from learning.handout import handout_html
from learning.lessons import LESSONS, Lesson
from learning.quiz_tally import QuizTally, Setting, promise, question_id
from serving.jobs import owner_id
from ui.box import Box
from ui.lesson_scenes import SCENES


@st.cache_resource(show_spinner=False, max_entries=1)  # one room per server process
def room() -> QuizTally:
    """This server's room: the tally every session adds to."""
    return QuizTally()


def browser_id() -> str:
    """Who answers: this browser (the hashed XSRF token all its tabs share, as the upload cap
    and the job queue key it: :func:`serving.jobs.owner_id`), else this session."""
    return owner_id()


def count_answer(lesson: Lesson, step_key: str, setting: Setting, option: str) -> bool:
    """Count this browser's answer to a question at ``setting``, if it is its first in this
    room (the prediction; a changed mind, a reload or a second tab is not counted again).
    Returns whether it counted."""
    return room().record(question_id(lesson, step_key), browser_id(), setting, option)


def class_tally(
    container: Box, lesson: Lesson, step_key: str, index: int, options: list[str]
) -> None:
    """The class's answers to the question at this setting, once the lecturer revealed them:
    the noisy counts of the release and what it promises; nothing before."""
    release = room().release(question_id(lesson, step_key))
    if release is None:
        return
    with container.container(border=True):
        st.markdown(
            f"**How the class answered** (revealed by the lecturer, ε = {release.epsilon:g})"
        )
        if not release.shown:
            st.caption(f"Fewer than {release.minimum} answers: nothing is shown.")
            return
        row = release.noisy[index]
        st.table(
            {"option": options, "noisy count": [f"{max(0, round(x))}" for x in row]},
        )
        st.caption(
            promise(release) + " Rounded and floored at 0 after the noise, which "
            "changes no promise. The lecturer sees the exact counts; no one — the lecturer, "
            "the class or this page — sees who picked what."
        )


def handout(lesson: Lesson) -> str:
    """The lesson's one-page handout (HTML), with each step's numbers at its default."""
    numbers = [SCENES[s.scene](s.control.default).numbers for s in lesson.steps]
    return handout_html(lesson, numbers, number=LESSONS.index(lesson) + 1)


def handout_button(container: DeltaGenerator, lesson: Lesson, *, key: str) -> None:
    """A download of the lesson's handout; built when clicked (lesson 5's runs sweeps)."""
    container.download_button(
        "Handout",
        data=lambda: handout(lesson),
        file_name=f"cape_lesson_{LESSONS.index(lesson) + 1}_{lesson.key}.html",
        mime="text/html",
        icon=":material/print:",
        key=key,
        help="The lesson's steps, questions, answers and links at their default settings: "
        "open it and print (one page).",
        on_click="ignore",
    )
