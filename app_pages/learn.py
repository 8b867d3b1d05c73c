"""Learn: short guided lessons, one generic renderer for every lesson and step.

The lesson, the step and the step's control live in the URL
(``?learn_lesson=Many+sites&learn_step=2&learn_S=6``), so every step has its own link; the
content is data (learning/lessons/content.py).
"""

import functools

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from figures.memo import built
from learning.handout import QUESTIONS, SHEETS
from learning.lessons import LESSONS
from learning.lessons.progress import (
    decode_done,
    encode_done,
    lesson_marks,
    mark_done,
    step_marks,
    steps_done,
)
from learning.notebooks import MIME, file_name, notebook_bytes
from learning.quiz_tally import Setting
from ui import presenter
from ui.cached import call_core
from ui.class_room import (
    class_tally,
    count_answer,
    handout_buttons,
    presenter_tally,
    revealed,
)
from ui.controls import fmt
from ui.explain import explain
from ui.lesson_scenes import SCENES
from ui.state import bound
from ui.stepper import clamp, step_buttons

PREFIX = "learn_"  # this page's URL keys (docs/state.md); a step's control adds its own name
LESSON, STEP = f"{PREFIX}lesson", f"{PREFIX}step"
PROGRESS = "learn_progress"  # finished steps of this session (learning/lessons/progress.py)
COOKIE = "cape_learn_done"  # the same, in the browser: a reload keeps it, a link does not
FINISHED = "learn_finished"  # Next was pressed on the last lesson's last step

BY_NAME = {lesson.name: lesson for lesson in LESSONS}
BESIDE_TALLY = 400  # px: the figure's width while presenting beside the class's tally

head = st.container()  # the lesson's title, drawn once the picker below has run


def restart() -> None:
    st.session_state[STEP] = 1


def after_last(following: str | None) -> None:
    """Next on a lesson's last step: the next lesson's first step, or the end of the course."""
    if following is None:
        st.session_state[FINISHED] = True
        return
    st.session_state[LESSON] = following
    st.session_state[STEP] = 1


lesson_box, back, picker, forward = st.columns([3, 1, 4, 1], vertical_alignment="bottom")
name = bound(lesson_box.selectbox, "Lesson", LESSON, options=list(BY_NAME), on_change=restart)
lesson = BY_NAME[name]
count = len(lesson.steps)
names = list(BY_NAME)
following = names[names.index(name) + 1] if names.index(name) + 1 < len(names) else None
clamp(STEP, count)
step_buttons(
    back,
    forward,
    state_key=STEP,
    total=count,
    key="lesson",
    after_last=lambda: after_last(following),
)
number = bound(picker.select_slider, f"Step of {count}", STEP, options=list(range(1, count + 1)))
if st.session_state.pop(FINISHED, False):
    st.success(
        f"**You have finished every lesson of the course** ({len(LESSONS)} lessons). Pick any "
        "lesson above to go over it again, or explore the pages in the sidebar.",
        icon=":material/school:",
    )
progress_slot = st.empty()  # the picker's done marks, drawn once this run's answer is known
if PROGRESS not in st.session_state:  # a new session (a reload): the browser's marks
    st.session_state[PROGRESS] = decode_done(st.context.cookies.get(COOKIE), LESSONS)
done: set[str] = st.session_state[PROGRESS]
head.title(lesson.title)
head.caption(
    f"{lesson.summary} Read, move the control, **predict** before the app reveals the "
    "answer, then explore the same settings on the linked page."
)
step = lesson.steps[int(number) - 1]

left, right = st.columns([2, 3], gap="medium")
control = step.control
with left:
    st.markdown(f"## {step.title}")
    # filled once the control's numbers are known; folded while presenting (the lecturer
    # tells it), so the control and the question are on the first screen
    text_slot = presenter.folded("The step's text").empty()
    key = PREFIX + control.key
    if control.kind == "segmented":
        value = (
            bound(
                st.segmented_control,
                control.label,
                key,
                options=control.options,
                default=control.default,
                help=control.help,
            )
            or control.default
        )
    else:
        value = bound(
            st.select_slider,
            control.label,
            key,
            options=control.options,
            value=control.default,
            help=control.help,
            format_func=fmt,
        )
    # the scene (its figure and numbers) built once per (scene, value) and shared: a cached
    # move rebuilt and validated the Plotly figure, ~58 % of the page (issue #36 item 4)
    scene = call_core(built, SCENES[step.scene], value, key=(step.scene, value))
    numbers = scene.numbers
    text_slot.markdown(step.text.format(**numbers))
    if step.question is not None:
        q = step.question
        options = [o.format(**numbers) for o in q.options]
        pick = st.radio(
            q.prompt.format(**numbers), options, index=None, key=f"q_{lesson.key}_{step.key}"
        )
        if pick is not None:
            mark_done(done, lesson, step)
            index = list(control.options).index(value)
            setting = Setting(
                index,
                f"{control.label}: {value if isinstance(value, str) else fmt(value)}",
                tuple(options),
                numbers["answer"],
            )
            count_answer(lesson, step.key, setting, pick)  # once per browser
            reveal = q.reveal.format(**numbers)
            if pick == numbers["answer"]:
                st.success(f"**Right.** {reveal}", icon=":material/check_circle:")
            else:
                st.warning(
                    f"**Not quite — {numbers['answer']}.** {reveal}", icon=":material/lightbulb:"
                )
        if not presenter.is_on():  # while presenting: beside the figure, live (below)
            class_tally(st, lesson, step.key, list(control.options).index(value), options)
with right:
    # while presenting, a revealed question's tally sits beside the figure and a reveal made
    # meanwhile shows there on its own (ui/class_room.py, presenter_tally)
    figure_box: DeltaGenerator = right
    tally_box: DeltaGenerator | None = None
    if presenter.is_on() and step.question is not None:
        release = revealed(lesson, step.key)
        if release is not None:
            figure_box, tally_box = st.columns([3, 2], gap="small")
        presenter_tally(
            tally_box,
            lesson,
            step.key,
            list(control.options).index(value),
            [o.format(**numbers) for o in step.question.options],
            release,
        )
    # beside the tally the figure is about 400 px wide at 1280 px: its axis title breaks to fit
    width = BESIDE_TALLY if tally_box is not None else None
    figure_box.plotly_chart(presenter.style(scene.figure, width=width), key="lesson_chart")
    explain(step.explain.format(**numbers))
    st.page_link(
        step.explore.page,
        label=step.explore.label.format(**numbers),
        icon=":material/explore:",
        query_params=step.explore.query(numbers),
    )
    if not presenter.is_on():  # a learner's take-away; the projector keeps the figure's room
        st.download_button(
            "Notebook (.ipynb)",
            data=functools.partial(notebook_bytes, lesson.key, int(number), value),
            file_name=file_name(lesson.key, int(number)),
            mime=MIME,
            icon=":material/code:",
            key=f"notebook_{lesson.key}_{step.key}",
            help="A Jupyter notebook whose cells re-create this figure and print its numbers "
            "with dpcore, at this step's settings and seed: the same numbers as here.",
            on_click="ignore",
        )
    if int(number) == count:
        st.caption(
            f"Last step of this lesson: **Next** opens lesson {names.index(following) + 1}, "
            f"*{following}*."
            if following is not None
            else "Last step of the last lesson: **Next** ends the course."
        )
if not presenter.is_on():  # a learner's marks; the lecturer's screen keeps its room
    with progress_slot.container():
        marks, kit = st.columns([4, 1], vertical_alignment="center")
        marks.caption(
            f"**Your progress** (kept in this browser until it closes, never in a link): "
            f"{lesson_marks(LESSONS, done)}  \n"
            f"Steps of this lesson: {step_marks(lesson, done)}"
        )
        # the answer sheet once the learner has made every prediction of the lesson
        finished = steps_done(lesson, done) == len(lesson.steps)
        handout_buttons(
            kit, lesson, key=f"handout_{lesson.key}", sheets=SHEETS if finished else (QUESTIONS,)
        )
if done:  # a session cookie: the browser keeps it over a reload and forgets it on closing
    st.sidebar.html(
        f"<script>document.cookie = '{COOKIE}={encode_done(done)}; path=/; SameSite=Lax';</script>",
        unsafe_allow_javascript=True,
    )
