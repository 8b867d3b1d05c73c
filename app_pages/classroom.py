"""For the lecturer: a 50-minute plan, the lessons' handouts, the class's quiz summary and
the room's reset link (content: learning/plan.py, learning/handout.py, learning/quiz_tally.py).
Only with the lecturer's key (ui/lecturer.py): app.py leaves the page out of a student's
navigation, and the page stops at once for a session without the key.
"""

import pandas as pd
import streamlit as st

from learning import sections
from learning.lessons import LESSONS
from learning.plan import CLASS_MINUTES, HERE, PLAN
from learning.quiz_tally import (
    DEFAULT_EPSILON,
    DEFAULT_MINIMUM,
    DELTA,
    EPSILONS,
    REFRESH_SECONDS,
    promise,
    question_id,
    summary_rows,
)
from ui import lecturer
from ui.class_room import handout_buttons, room
from ui.state import bound

P = "cl_"  # this page's URL keys (docs/state.md)
RESET = f"{P}reset"  # ?cl_reset=<room generation>: the reset link

if not lecturer.is_lecturer():  # reached without the key (app.py leaves the page out)
    st.stop()

st.title("For the lecturer")
st.caption(
    "A plan for one class, a handout per lesson, and what the class predicted — one first "
    "answer per browser and question."
)

# --- the reset link: names the room it resets, so reopening it resets nothing ----------------
asked = st.query_params.get(RESET)
if asked is not None:
    del st.query_params[RESET]
    if asked.isdigit() and room().reset(int(asked)):
        st.success("**The room was reset:** no answers counted yet.", icon=":material/restart_alt:")
    else:
        st.info("This reset link was for an earlier room: nothing was reset.")

tally = room()
QUESTIONS = [
    (f"{number}.{step_number} {step.title}", lesson, step)
    for number, lesson in enumerate(LESSONS, 1)
    for step_number, step in enumerate(lesson.steps, 1)
    if step.question is not None
]

st.header("What the class predicted")
minimum = int(
    bound(
        st.number_input,
        "Minimum count: a question with fewer answers shows no counts (here or to the class)",
        f"{P}minimum",
        min_value=1,
        max_value=50,
        value=DEFAULT_MINIMUM,
    )
)


@st.fragment(run_every=REFRESH_SECONDS)
def quiz_summary() -> None:
    """The class's answers per question and setting, refreshed for the projector."""
    counts = tally.summary()
    rows = summary_rows(LESSONS, counts, minimum=minimum)
    total = sum(r.answers for got in counts.values() for r in got)
    st.markdown(
        f"**{total} answer(s)** counted in this room (room {tally.generation}); updated every "
        f"{REFRESH_SECONDS} seconds."
    )
    st.table(pd.DataFrame(rows).set_index("question"))


quiz_summary()
st.caption(
    "**What you see:** the exact counts per question, per setting of the step's control "
    "(the right option depends on it; ✓ marks it), once a question has the minimum number of "
    "answers. **What no one sees** — you, the class, the server's pages: who picked what. "
    "A browser is kept only as a hashed id, to count its first answer once (a reload, a "
    "second tab or a changed mind is not counted again), and forgotten at the reset. "
    "**What the class sees:** nothing, until you reveal a question; then its noisy tally."
)

st.subheader("Reveal a question's tally to the class", anchor=sections.CLASSROOM_REVEAL)
label = bound(st.selectbox, "Question", f"{P}question", options=[q[0] for q in QUESTIONS])
epsilon = bound(
    st.select_slider,
    "ε of the release",
    f"{P}epsilon",
    options=list(EPSILONS),
    value=DEFAULT_EPSILON,
)
go = st.button("Reveal to the class", icon=":material/visibility:", key=f"{P}reveal")
if go:
    _, lesson, step = next(q for q in QUESTIONS if q[0] == label)
    assert step.question is not None
    release = tally.reveal(
        question_id(lesson, step.key),
        settings=len(step.control.options),
        options=len(step.question.options),
        epsilon=float(epsilon),
        minimum=minimum,
    )
    if release.shown:
        st.success(
            f"**Revealed {label}** to the class at ε = {release.epsilon:g}, δ = {DELTA:g}: "
            f"each student's step shows its noisy tally. {promise(release)}",
            icon=":material/visibility:",
        )
    else:
        st.warning(
            f"**{label}: fewer than {minimum} answers**, so the class sees nothing for it.",
            icon=":material/visibility_off:",
        )
st.caption(
    "The class's tally is released with the Gaussian mechanism the lessons teach: one count "
    "per (setting, option), each with its own noise (sensitivity 1: one student's answer moves "
    "one count by 1), drawn once per reveal, so every student sees the same numbers. Each "
    "reveal is a new release and spends its ε again."
)

st.page_link(
    "app_pages/classroom.py",
    label="Reset the room (start counting afresh)",
    icon=":material/restart_alt:",
    query_params={RESET: str(tally.generation)},
    help="Empties the counts above and the reveals for the next class. The link resets this "
    "room once: opened again later, it does nothing.",
)
st.caption(
    "The room is this server process: behind a proxy with several processes, each counts its "
    "own learners."
)

st.header(f"A {CLASS_MINUTES}-minute class")
st.caption(
    f"{sum(slot.slack for slot in PLAN)} of the {CLASS_MINUTES} minutes are slack: pages "
    "loading when a room of phones opens them at once, and questions. Each lesson is gone "
    "through whole; each link opens its page at the settings the slot quotes."
)
for slot in PLAN:
    left, right = st.columns([1, 5], vertical_alignment="center")
    left.markdown(
        f"**{slot.minutes} min**" + (f"  \n{slot.slack} of it slack" if slot.slack else "")
    )
    with right:
        st.markdown(f"**{slot.title}.** {slot.what}")
        params = {"learn_lesson": slot.lesson} if slot.lesson else {}
        params.update(dict(slot.query))
        if slot.page == HERE:  # this page: a link to its section (a page link here does nothing)
            st.markdown(f"[Open: {slot.title.lower()}, on this page](#{params[sections.PARAM]})")
            continue
        label = f"Open: {slot.lesson}" if slot.lesson else "Open the page"
        st.page_link(slot.page, label=label, query_params=params or None)

st.header("Handouts")
st.caption(
    "Two printable pages per lesson: the **question sheet**, each step's question with its "
    "options to tick and no answer, and the **answer sheet**, each step's text, answer and why. "
    "Their links are this app's full address, so they work from a downloads folder, a mail "
    "or paper (set `CAPE_PUBLIC_URL` where students reach the app by another address). "
    "Students get the question sheet on the Lessons page, and the answer sheet there once "
    "they have answered every question of the lesson."
)
for lesson in LESSONS:
    left, right = st.columns([3, 2], vertical_alignment="center")
    left.markdown(f"{lesson.title}")
    handout_buttons(
        right.container(horizontal=True, gap="small"), lesson, key=f"{P}handout_{lesson.key}"
    )
st.page_link("app_pages/glossary.py", label="The glossary", icon=":material/menu_book:")
