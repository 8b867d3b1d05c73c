"""The class's side of the lessons: the room's anonymous quiz tally, and the handouts.

The tally (:class:`learning.quiz_tally.QuizTally`) is one per server process, shared by every
session (``st.cache_resource``); a session counts its first answer to each question once per
room, and nothing about who answered is kept.
"""

from __future__ import annotations

import streamlit as st

from learning.handout import handout_html
from learning.lessons import LESSONS, Lesson
from learning.quiz_tally import QuizTally, question_id
from ui.lesson_scenes import SCENES

COUNTED = "class_counted"  # session: (room generation, question) pairs already counted


@st.cache_resource(show_spinner=False)
def room() -> QuizTally:
    """This server's room: the tally every session adds to."""
    return QuizTally()


def count_answer(lesson: Lesson, step_key: str, option: str, right: bool) -> bool:
    """Count this session's answer to a question, if it is its first in this room (the
    prediction; a changed mind after the reveal is not counted). Returns whether it counted."""
    tally = room()
    counted: set = st.session_state.setdefault(COUNTED, set())
    key = (tally.generation, question_id(lesson, step_key))
    if key in counted:
        return False
    counted.add(key)
    tally.record(key[1], option, right)
    return True


def handout(lesson: Lesson) -> str:
    """The lesson's one-page handout (HTML), with each step's numbers at its default."""
    numbers = [SCENES[s.scene](s.control.default).numbers for s in lesson.steps]
    return handout_html(lesson, numbers, number=LESSONS.index(lesson) + 1)


def handout_button(container, lesson: Lesson, *, key: str) -> None:
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
