"""Learn: short guided lessons, one generic renderer for every lesson and step.

The lesson and step live in the URL (``?lesson=sites&step=2``), as does the step's control,
so every step has its own link; the content is data (ui/lessons/content.py).
"""

import streamlit as st

from ui import presenter
from ui.controls import fmt
from ui.core import call_core
from ui.explain import explain
from ui.lessons import LESSONS
from ui.lessons.scenes import SCENES

BY_NAME = {lesson.name: lesson for lesson in LESSONS}

st.title("Learn")
presenter.intro(
    "Five short lessons on distributed differential privacy, one idea per step: read a few "
    "sentences, move the control, **predict** before the app reveals the answer, then open "
    "the page where you can explore the same settings freely."
)


def restart() -> None:
    st.session_state["step"] = 1


name = st.radio(
    "Lesson",
    list(BY_NAME),
    key="lesson",
    bind="query-params",
    horizontal=True,
    on_change=restart,
)
lesson = BY_NAME[name]
st.caption(f"**{lesson.title}** — {lesson.summary}")
count = len(lesson.steps)
if int(st.session_state.get("step", 1)) > count:
    st.session_state["step"] = count


def move(delta: int) -> None:
    st.session_state["step"] = min(max(int(st.session_state.get("step", 1)) + delta, 1), count)


back, picker, forward = st.columns([1, 6, 1], vertical_alignment="bottom")
back.button(
    "Back",
    icon=":material/arrow_back:",
    key="lesson_back",
    on_click=move,
    args=(-1,),
    width="stretch",
)
forward.button(
    "Next",
    icon=":material/arrow_forward:",
    key="lesson_next",
    on_click=move,
    args=(1,),
    width="stretch",
    type="primary",
)
number = picker.radio(
    "Step",
    list(range(1, count + 1)),
    captions=[s.title for s in lesson.steps],
    key="step",
    bind="query-params",
    horizontal=True,
    label_visibility="collapsed",
)
step = lesson.steps[int(number) - 1]

left, right = st.columns([2, 3], gap="medium")
control = step.control
with left:
    st.markdown(f"### {step.title}")
    text_slot = st.empty()  # filled once the control's numbers are known
    if control.kind == "segmented":
        value = (
            st.segmented_control(
                control.label,
                control.options,
                default=control.default,
                key=control.key,
                bind="query-params",
                help=control.help,
            )
            or control.default
        )
    else:
        value = st.select_slider(
            control.label,
            control.options,
            value=control.default,
            key=control.key,
            bind="query-params",
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
        query_params={k: v.format(**numbers) for k, v in step.explore.params},
    )
