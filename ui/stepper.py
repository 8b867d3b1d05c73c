"""Back / Next buttons that move a URL-bound step number (lessons and the protocol stepper)."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st
from streamlit.delta_generator import DeltaGenerator


def _move(
    state_key: str, delta: int, total: int, after_last: Callable[[], None] | None = None
) -> None:
    current = int(st.session_state.get(state_key, 1))
    if after_last is not None and delta > 0 and current >= total:
        after_last()  # Next on the last step: what comes after (the next lesson)
        return
    st.session_state[state_key] = min(max(current + delta, 1), total)


def clamp(state_key: str, total: int) -> None:
    """Keep the step within 1 … total (a link or a smaller lesson may point beyond it)."""
    if int(st.session_state.get(state_key, 1)) > total:
        st.session_state[state_key] = total


def step_buttons(
    back: DeltaGenerator,
    forward: DeltaGenerator,
    *,
    state_key: str,
    total: int,
    key: str,
    after_last: Callable[[], None] | None = None,
    current: int | None = None,
) -> None:
    """Back in ``back`` and Next in ``forward``; each moves ``state_key`` by one, within
    1 … ``total``; Next on step ``total`` calls ``after_last`` instead, if given (a callback:
    it may set widget state). Given the step shown (``current``: draw the buttons after the
    widget bound to ``state_key``, into containers made before it), a button with nowhere
    to go is disabled: Back on step 1, Next on step ``total`` when nothing comes after it
    (issue #49: Next stayed enabled on the replay's last message and did nothing)."""
    back.button(
        "Back",
        icon=":material/arrow_back:",
        key=f"{key}_back",
        on_click=_move,
        args=(state_key, -1, total),
        width="stretch",
        disabled=current is not None and current <= 1,
    )
    forward.button(
        "Next",
        icon=":material/arrow_forward:",
        key=f"{key}_next",
        on_click=_move,
        args=(state_key, 1, total, after_last),
        width="stretch",
        type="primary",
        disabled=current is not None and after_last is None and current >= total,
    )
