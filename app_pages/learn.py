"""Learn: short guided lessons, one generic renderer for every lesson and step.

The lesson, the step and the step's control live in the URL
(``?learn_lesson=Many+sites&learn_step=2&learn_S=6``), so every step has its own link; the
content is data (learning/lessons/content.py).
"""

import streamlit as st

from learning.lessons import LESSONS
from learning.lessons.progress import lesson_marks, mark_done, step_marks
from ui import presenter
from ui.cached import call_core
from ui.controls import fmt
from ui.explain import explain
from ui.lesson_scenes import SCENES
from ui.state import bound
from ui.stepper import clamp, step_buttons

PREFIX = "learn_"  # this page's URL keys (docs/state.md); a step's control adds its own name
LESSON, STEP = f"{PREFIX}lesson", f"{PREFIX}step"
PROGRESS = "learn_progress"  # finished steps, this session only (learning/lessons/progress.py)

BY_NAME = {lesson.name: lesson for lesson in LESSONS}

head = st.container()  # the lesson's title, drawn once the picker below has run


def restart() -> None:
    st.session_state[STEP] = 1


pick, back, picker, forward = st.columns([3, 1, 4, 1], vertical_alignment="bottom")
name = bound(pick.selectbox, "Lesson", LESSON, options=list(BY_NAME), on_change=restart)
lesson = BY_NAME[name]
count = len(lesson.steps)
clamp(STEP, count)
step_buttons(back, forward, state_key=STEP, total=count, key="lesson")
number = bound(picker.select_slider, f"Step of {count}", STEP, options=list(range(1, count + 1)))
progress_slot = st.empty()  # the picker's done marks, drawn once this run's answer is known
done: set[str] = st.session_state.setdefault(PROGRESS, set())
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
    scene = call_core(SCENES[step.scene], value)
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
            reveal = q.reveal.format(**numbers)
            if pick == numbers["answer"]:
                st.success(f"**Right.** {reveal}", icon=":material/check_circle:")
            else:
                st.warning(
                    f"**Not quite — {numbers['answer']}.** {reveal}", icon=":material/lightbulb:"
                )
with right:
    st.plotly_chart(presenter.style(scene.figure), key="lesson_chart")
    explain(step.explain.format(**numbers))
    st.page_link(
        step.explore.page,
        label=step.explore.label,
        icon=":material/explore:",
        query_params=step.explore.query(numbers),
    )
if not presenter.is_on():  # a learner's marks; the lecturer's screen keeps its room
    progress_slot.caption(
        f"**Your progress** (kept while this tab is open): {lesson_marks(LESSONS, done)}  \n"
        f"Steps of this lesson: {step_marks(lesson, done)}"
    )
