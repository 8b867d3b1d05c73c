"""The protocol stepper on a real run's log (learning/run_replay.py): upload or the example.

The log is read once per content (:func:`ui.cached.replay.run_log`); a file that is not a run
log, or is past :data:`learning.run_replay.MAX_LINES` lines, is one sentence in an error box.
Every field of the log is shown as written (:func:`ui.guard.plain`), never as Markdown.
"""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.runtime.uploaded_file_manager import UploadedFile

from figures.protocol import replay_figure
from learning.run_replay import EXAMPLE, MAX_LINES, NotARunLog
from ui import presenter
from ui.cached.replay import content_digest, run_log
from ui.guard import plain, show_error
from ui.state import bound
from ui.stepper import clamp, step_buttons

STEP = "pr_logstep"
DIGEST = "_replay_digest"  # session state (no URL key): (file id, SHA-256) of the last upload


def _digest(upload: UploadedFile) -> str:
    """The upload's SHA-256, computed once per uploaded file (not on every rerun)."""
    file_id = getattr(upload, "file_id", None)
    known = st.session_state.get(DIGEST)
    if file_id is not None and isinstance(known, tuple) and known[0] == file_id:
        return known[1]
    digest = content_digest(upload.getvalue())
    st.session_state[DIGEST] = (file_id, digest)
    return digest


def replay_log(side: DeltaGenerator) -> None:
    """Step through the uploaded run log, or the bundled one of a real 3-site run."""
    upload = side.file_uploader(
        "A run log (run-log.jsonl)",
        type=["jsonl", "json", "txt"],
        key="pr_log",
        help="Written by `python -m federated run … --workdir DIR` to DIR/run-log.jsonl, at "
        f"most {MAX_LINES:,} lines. Without one: the log of a real 3-site run "
        "(python -m federated run --sites 3 --seed 0).",
    )
    try:
        if upload:
            replay = run_log(upload.getvalue(), _digest(upload))
        else:
            replay = run_log(EXAMPLE.read_bytes())
    except NotARunLog as err:
        show_error(err)
        return
    total = len(replay)
    clamp(STEP, total)
    if total > 1:
        back, slider, forward = st.columns([1, 6, 1], vertical_alignment="bottom")
        index = int(bound(slider.slider, "Message", STEP, min_value=1, max_value=total))
        step_buttons(back, forward, state_key=STEP, total=total, key="logstep", current=index)
    else:  # a log of one line: nothing to step through (a slider needs two ends)
        index = 1
    step = replay.step(index - 1)
    left, right = st.columns([3, 2])
    with left:
        st.plotly_chart(presenter.style(replay_figure(replay.sites, step)), key="replay_chart")
    with right:
        st.markdown(f"## {index}/{total} · {plain(step.title)}")
        st.markdown(plain(step.text))
    st.caption(
        "Each party was a separate process (Flower SuperNodes and the ServerApp); the log "
        "records every message the aggregator sent or received. "
        + ("Your uploaded log." if upload else "The example: a real run on this project's "
           "development machine.")
        + f" The stepper replays logs of at most {MAX_LINES:,} lines."
    )  # fmt: skip
