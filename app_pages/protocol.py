"""The CAPE protocol message by message: one real draw of Algorithm 1, forward and back."""

import streamlit as st

from figures.memo import built
from figures.protocol import cancel_figure, network_figure
from learning import explanations
from learning.protocol_steps import NOT_SENT, holdings, ledger, protocol_steps
from ui import presenter
from ui.cached import call_core
from ui.controls import epsilon_slider, seed_controls
from ui.explain import explain
from ui.learn_core import protocol_run
from ui.replay import replay_log
from ui.state import bound
from ui.stepper import clamp, step_buttons

PREFIX = "pr_"  # this page's URL keys (docs/state.md)
STEP = f"{PREFIX}step"

st.title("The protocol, message by message")
side = st.sidebar
source = side.radio(
    "Step through",
    ["a simulated draw", "a real run's log"],
    key="pr_src",
    bind="query-params",
    persist_state="session",
    help="A real run: the JSON-lines log of `python -m federated run` (docs/federated.md): "
    "every message between the separate processes, with its size and time, not its values.",
)
if source == "a real run's log":
    presenter.intro(
        "A **real run**: every message the separate processes of `python -m federated run` "
        "exchanged (docs/federated.md), with its size and time; step forward and back."
    )
    replay_log(side)
    st.stop()

presenter.intro(
    "One real run of CAPE (Algorithm 1, steps 1–8; Algorithm 5) with **this draw's numbers**: "
    "step forward and back through every message; **New noise draw** reruns it."
)

side.header("The draw")
sites = (
    side.segmented_control(
        "Sites S",
        [3, 4, 5],
        default=4,
        key="pr_S",
        bind="query-params",
        persist_state="session",
        help="A small network, so every message fits on screen.",
    )
    or 4
)
kind = side.radio(
    "Each site's value: a scalar mean or a 2×2 matrix",
    ["scalar", "2x2"],
    key="pr_kind",
    bind="query-params",
    persist_state="session",
    horizontal=True,
    help="A mean of values in [0, 1], or a 2×2 second-moment matrix as in capePCA "
    "(symmetric noise: one draw per entry on and above the diagonal).",
)
epsilon = epsilon_slider(side, prefix=PREFIX)
seed = seed_controls(side, prefix=PREFIX)

demo = call_core(protocol_run, int(sites), kind, float(epsilon), int(seed))
steps = protocol_steps(demo)
total = len(steps)
clamp(STEP, total)  # fewer sites than the URL's step assumed
back, slider, forward = st.columns([1, 6, 1], vertical_alignment="bottom")
index = bound(slider.slider, "Step", STEP, min_value=1, max_value=total)
step_buttons(back, forward, state_key=STEP, total=total, key="step", current=int(index))
step = steps[int(index) - 1]

left, right = st.columns([3, 2])
with left:
    figure = (  # the figure built before for this step (figures/memo.py)
        built(network_figure, demo, step)
        if step.figure == "network"
        else built(cancel_figure, demo)
    )
    st.plotly_chart(presenter.style(figure), key="protocol_chart")
    explain(explanations.PROTOCOL)
with right:
    st.markdown(f"## {index}/{total} · {step.title}")
    st.markdown(step.text)
    st.markdown("**Who holds what**")
    st.dataframe(holdings(demo, step), hide_index=True)

st.markdown(f"**Every number of this draw known so far** ({NOT_SENT}: not drawn or sent yet)")
table = ledger(demo, step)
st.dataframe(
    table,
    hide_index=True,
    column_config={
        str(c): st.column_config.NumberColumn(format="%.4g")
        for c in table
        if c not in ("site", "entry")
    },
    placeholder=NOT_SENT,  # NaN: not known yet (shown as "None" by default)
    key="protocol_ledger",
)
st.caption(
    f"Seed {seed}: the site values and all noise derive from it, so this link shows the same "
    "draw to everyone. Std per site τ_s from the analytic Gaussian mechanism with "
    "sensitivity 1/N_s, N_s = 50, δ = 0.01; eq. (2) splits it as τ_e² = τ_f² = (1 − 1/S)τ_s², "
    "τ_g² = τ_s²/S."
)
