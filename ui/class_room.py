"""The class's side of the lessons: the room's anonymous quiz tally, and the handouts.

The tally (:class:`learning.quiz_tally.QuizTally`) is one per server process, shared by every
session (``st.cache_resource``); a browser counts its first answer to each question once per
room (its hashed id is kept only to count it once, until the room is reset).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from figures.export import DEFAULT_BASE
from learning.handout import ANSWERS, ENV, QUESTIONS, SHEETS, app_root, handout_html
from learning.lessons import LESSONS, Lesson
from learning.quiz_tally import (
    REFRESH_SECONDS,
    QuizTally,
    Release,
    Setting,
    promise,
    question_id,
)
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
    container: Box,
    lesson: Lesson,
    step_key: str,
    index: int,
    options: list[str],
    *,
    compact: bool = False,
    release: Release | None = None,
) -> None:
    """The class's answers to the question at this setting, once the lecturer revealed them:
    the noisy counts of the release (``release``, else the room's) and what it promises;
    nothing before. ``compact``: for the projector, beside the figure
    (:func:`presenter_tally`), the promise folded."""
    release = release or room().release(question_id(lesson, step_key))
    if release is None:
        return
    with container.container(border=True):
        st.markdown(
            f"**How the class answered** (ε = {release.epsilon:g})"
            if compact
            else f"**How the class answered** (revealed by the lecturer, ε = {release.epsilon:g})"
        )
        if not release.shown:
            st.caption(f"Fewer than {release.minimum} answers: nothing is shown.")
            return
        row = release.noisy[index]
        st.table(
            {"option": options, "noisy count": [f"{max(0, round(x))}" for x in row]},
        )
        words = (
            promise(release) + " Rounded and floored at 0 after the noise, which "
            "changes no promise. The lecturer sees the exact counts; no one — the lecturer, "
            "the class or this page — sees who picked what."
        )
        if compact:
            st.caption(
                f"Each count carries Gaussian noise of σ = {release.sigma:.2f}: "
                f"(ε = {release.epsilon:g}, δ = {release.delta:g})-differentially private."
            )
            st.expander("What this promises").markdown(words)
        else:
            st.caption(words)


def _drawn(release: Release | None) -> tuple[int, float, int] | None:
    """What identifies a reveal (a new reveal draws a new seed)."""
    return None if release is None else (release.seed, release.epsilon, release.minimum)


@st.fragment(run_every=REFRESH_SECONDS)
def _watch(question: str, drawn: tuple[int, float, int] | None) -> None:
    """Rerun the page once the question's reveal is not the one it drew (the lecturer revealed
    it, again, or reset the room): checked every :data:`REFRESH_SECONDS`, drawing nothing."""
    if _drawn(room().release(question)) != drawn:
        st.rerun()


def presenter_tally(
    container: Box | None,
    lesson: Lesson,
    step_key: str,
    index: int,
    options: list[str],
    release: Release | None,
) -> None:
    """Presenter mode's live tally: the question's revealed tally ``release`` in ``container``
    (beside the lesson's figure), and the page drawn again on its own within
    :data:`REFRESH_SECONDS` of a reveal (a first one, a new one, or the room's reset) — the
    projector needs no reload. The same release and the same rule as every student's
    (:func:`class_tally`): nothing before the reveal, no counts under the minimum."""
    if container is not None and release is not None:
        class_tally(container, lesson, step_key, index, options, compact=True, release=release)
    _watch(question_id(lesson, step_key), _drawn(release))


def revealed(lesson: Lesson, step_key: str) -> Release | None:
    """The question's tally as the lecturer revealed it to the class, if they have."""
    return room().release(question_id(lesson, step_key))


PAGES = tuple(p.stem for p in (Path(__file__).resolve().parents[1] / "app_pages").glob("*.py"))


def public_root() -> str:
    """The app's address for handouts (:func:`learning.handout.app_root`): ``CAPE_PUBLIC_URL``
    if the server sets it, else the address this browser used, else run.sh's."""
    try:
        url = st.context.url
    except (AttributeError, RuntimeError):  # no browser (a bare script)
        url = None
    return app_root(url or DEFAULT_BASE, PAGES, public=os.environ.get(ENV))


def handout(lesson: Lesson, sheet: str = ANSWERS, root: str = DEFAULT_BASE) -> str:
    """The lesson's ``sheet`` (HTML), with each step's numbers at its default and its links
    under ``root``."""
    numbers = [SCENES[s.scene](s.control.default).numbers for s in lesson.steps]
    return handout_html(
        lesson, numbers, number=LESSONS.index(lesson) + 1, base_url=root, sheet=sheet
    )


SHEET_BUTTONS = {
    QUESTIONS: (
        "Question sheet",
        ":material/quiz:",
        "The lesson's questions with their options to tick, without the answers, and its "
        "links: open it and print (one page).",
    ),
    ANSWERS: (
        "Answer sheet",
        ":material/fact_check:",
        "The lesson's steps, questions, answers and why, and its links: open it and print.",
    ),
}


def handout_buttons(
    container: DeltaGenerator, lesson: Lesson, *, key: str, sheets: tuple[str, ...] = SHEETS
) -> None:
    """Downloads of the lesson's ``sheets``, built when clicked (lesson 5's runs sweeps), with
    absolute links to this app (:func:`public_root`; an unreadable ``CAPE_PUBLIC_URL`` is
    named in an error instead)."""
    try:
        root = public_root()
    except ValueError as err:
        container.error(str(err))
        return
    number = LESSONS.index(lesson) + 1
    for sheet in sheets:
        label, icon, help_text = SHEET_BUTTONS[sheet]
        container.download_button(
            label,
            data=functools.partial(handout, lesson, sheet, root),
            file_name=f"cape_lesson_{number}_{lesson.key}_{sheet}.html",
            mime="text/html",
            icon=icon,
            key=f"{key}_{sheet}",
            help=help_text,
            on_click="ignore",
        )
