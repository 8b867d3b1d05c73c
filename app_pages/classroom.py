"""For the lecturer: a 50-minute plan, the lessons' handouts, the class's quiz summary and
the room's reset link (content: learning/plan.py, learning/handout.py, learning/quiz_tally.py).
"""

import pandas as pd
import streamlit as st

from learning.lessons import LESSONS
from learning.plan import CLASS_MINUTES, PLAN
from learning.quiz_tally import REFRESH_SECONDS, summary_rows
from ui.class_room import handout_button, room

P = "cl_"  # this page's URL keys (docs/state.md)
RESET = f"{P}reset"  # ?cl_reset=<room generation>: the reset link

st.title("For the lecturer")
st.caption(
    "A plan for one class, a handout per lesson, and what the class predicted — counted "
    "anonymously, one first answer per learner and question."
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


@st.fragment(run_every=REFRESH_SECONDS)
def quiz_summary() -> None:
    """The class's answers per question, refreshed for the projector."""
    counts = tally.summary()
    rows = summary_rows(LESSONS, counts)
    total = sum(c.answers for c in counts.values())
    st.markdown(
        f"**{total} answer(s)** counted in this room (room {tally.generation}); updated every "
        f"{REFRESH_SECONDS} seconds."
    )
    st.table(pd.DataFrame(rows).set_index("question"))


st.header("What the class predicted")
quiz_summary()
st.page_link(
    "app_pages/classroom.py",
    label="Reset the room (start counting afresh)",
    icon=":material/restart_alt:",
    query_params={RESET: str(tally.generation)},
    help="Empties the counts above for the next class. The link resets this room once: "
    "opened again later, it does nothing.",
)
st.caption(
    "A learner's first pick on each question is counted (the prediction; changing one's mind "
    "after the reveal is not). Nothing about who answered is kept. The room is this server "
    "process: behind a proxy with several processes, each counts its own learners."
)

st.header(f"A {CLASS_MINUTES}-minute class")
for slot in PLAN:
    left, right = st.columns([1, 5], vertical_alignment="center")
    left.markdown(f"**{slot.minutes} min**")
    with right:
        st.markdown(f"**{slot.title}.** {slot.what}")
        params = {"learn_lesson": slot.lesson} if slot.lesson else None
        label = f"Open: {slot.lesson}" if slot.lesson else "Open the page"
        st.page_link(slot.page, label=label, query_params=params)

st.header("Handouts")
st.caption("One printable page per lesson: its steps, questions, answers and links.")
for lesson in LESSONS:
    left, right = st.columns([3, 2], vertical_alignment="center")
    left.markdown(f"{lesson.title}")
    handout_button(right, lesson, key=f"{P}handout_{lesson.key}")
st.page_link("app_pages/glossary.py", label="The glossary", icon=":material/menu_book:")
