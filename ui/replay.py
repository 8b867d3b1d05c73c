"""The protocol stepper on a real run's log (learning/run_replay.py): upload or the example."""

from __future__ import annotations

import streamlit as st

from figures.protocol import replay_figure
from learning.run_replay import EXAMPLE, parse_run_log, replay_steps, site_count
from ui import presenter
from ui.state import bound
from ui.stepper import clamp, step_buttons

STEP = "pr_logstep"


def replay_log(side) -> None:
    """Step through the uploaded run log, or the bundled one of a real 3-site run."""
    upload = side.file_uploader(
        "A run log (run-log.jsonl)",
        type=["jsonl", "json", "txt"],
        key="pr_log",
        help="Written by `python -m federated run … --workdir DIR` to DIR/run-log.jsonl. "
        "Without one: the log of a real 3-site run (python -m federated run --sites 3 --seed 0).",
    )
    text = upload.getvalue().decode("utf-8", errors="replace") if upload else EXAMPLE.read_text()
    try:
        entries = parse_run_log(text)
    except ValueError as err:
        st.error(f"Not a run log: {err}")
        return
    steps = replay_steps(entries)
    total = len(steps)
    clamp(STEP, total)
    back, slider, forward = st.columns([1, 6, 1], vertical_alignment="bottom")
    index = bound(slider.slider, "Message", STEP, min_value=1, max_value=total)
    step_buttons(back, forward, state_key=STEP, total=total, key="logstep", current=int(index))
    step = steps[int(index) - 1]
    left, right = st.columns([3, 2])
    with left:
        st.plotly_chart(presenter.style(replay_figure(site_count(entries), step)),
                        key="replay_chart")  # fmt: skip
    with right:
        st.markdown(f"## {index}/{total} · {step.title}")
        st.markdown(step.text)
    st.caption(
        "Each party was a separate process (Flower SuperNodes and the ServerApp); the log "
        "records every message the aggregator sent or received. "
        + ("Your uploaded log." if upload else "The example: a real run on this project's "
           "development machine.")
    )  # fmt: skip
