"""Back / Next buttons that move a URL-bound step number (lessons and the protocol stepper)."""

from __future__ import annotations

import streamlit as st


def _move(state_key: str, delta: int, total: int) -> None:
    st.session_state[state_key] = min(
        max(int(st.session_state.get(state_key, 1)) + delta, 1), total
    )


def clamp(state_key: str, total: int) -> None:
    """Keep the step within 1 … total (a link or a smaller lesson may point beyond it)."""
    if int(st.session_state.get(state_key, 1)) > total:
        st.session_state[state_key] = total


def step_buttons(back, forward, *, state_key: str, total: int, key: str) -> None:
    """Back in ``back`` and Next in ``forward``; each moves ``state_key`` by one, within
    1 … ``total``. Draw them before the widget bound to ``state_key``."""
    back.button(
        "Back",
        icon=":material/arrow_back:",
        key=f"{key}_back",
        on_click=_move,
        args=(state_key, -1, total),
        width="stretch",
    )
    forward.button(
        "Next",
        icon=":material/arrow_forward:",
        key=f"{key}_next",
        on_click=_move,
        args=(state_key, 1, total),
        width="stretch",
        type="primary",
    )
