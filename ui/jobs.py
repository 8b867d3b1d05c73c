"""The heavy-job queue's widgets: a place in the queue, progress and an estimate, a Cancel
button, and the result or its message (the queue itself: :mod:`serving.jobs`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import streamlit as st

from dpcore import MAX_SECONDS
from serving import worker
from serving.jobs import HEAVY, MESSAGES, Lane, owner_id, progress_text, request_key
from ui.guard import show_error


def deliver(outcome: worker.Outcome) -> Any:
    """The value of a finished job, or its message on the page (and the page stops)."""
    if outcome.status == "ok":
        return outcome.value
    if outcome.status == "refused":
        show_error(outcome.message)
    elif outcome.status == "cancelled":
        st.info("Cancelled.", icon=":material/cancel:")
    else:
        show_error(MESSAGES[outcome.status])
    st.stop()


def run_heavy(
    fn: Callable,
    *args: Any,
    gate: str,
    lane: Lane = HEAVY,
    follow_up: bool = False,
    then_follow_up: bool = False,
    **kwargs: Any,
) -> Any:
    """``fn(*args, **kwargs)`` as this session's heavy job: its place in the queue, then the
    fraction of the sweep's tasks done and an estimate of the time left
    (:func:`progress_text`), a Cancel button under them; the result once done.

    ``gate`` is the key of the :func:`ui.controls.run_gate` that let the request through:
    a cancel closes that gate again, so the page waits for another Run press.
    ``follow_up`` and ``then_follow_up``: :meth:`serving.jobs.Lane.submit`.
    """
    key = request_key(fn, args, kwargs)
    owner = owner_id()
    kept = lane.kept(key)
    if kept is not None:
        if follow_up:  # answered without a job: the slot held for it goes to the queue
            lane.release_hold(owner)
        return deliver(kept)
    cancel_box = st.empty()
    cancel = cancel_box.button(  # one per request: a page may run several jobs in turn
        "Cancel", key=f"{gate}_cancel_{key[:12]}", icon=":material/stop_circle:"
    )
    if cancel:
        lane.cancel(owner)
        st.session_state.pop(f"{gate}_done", None)
        cancel_box.empty()
        deliver(worker.Outcome("cancelled"))
    ticket, replaced = lane.submit(
        key, fn, args, kwargs, owner, follow_up=follow_up, then_follow_up=then_follow_up
    )
    if replaced:
        st.toast("Your earlier heavy job was stopped: one at a time per student.")
    status = st.empty()
    started = time.monotonic()
    while (outcome := lane.wait(ticket, 0.5)) is None:
        place, length = lane.position(ticket)
        elapsed = time.monotonic() - started
        if place:
            status.info(
                f"Queued: position {place} of {length} for the heavy-job slot "
                f"({elapsed:.0f} s). Other students' heavy jobs run one at a time so that "
                "the page stays quick for everyone.",
                icon=":material/hourglass_top:",
            )
        else:  # the sweep's (grid point, run) tasks, counted in the child (dpcore.parallel)
            fraction, text = progress_text(*lane.progress(ticket))
            with status.container():
                st.progress(fraction, text=f"Running: {text}")
                st.caption(
                    f"Stopped after {1.5 * MAX_SECONDS / 60:.0f} minutes. Cancel stops it; "
                    "leaving the page does too."
                )
    status.empty()
    cancel_box.empty()
    return deliver(outcome)
