"""'What am I looking at?': a chart's one-paragraph explanation, collapsed by default."""

from __future__ import annotations

import streamlit as st


def explain(text: str, *, container=None) -> None:
    """Axes, lines, bands and the one thing to notice, folded under the chart."""
    box = container if container is not None else st
    with box.expander("What am I looking at?", icon=":material/help:", expanded=False):
        st.markdown(text)
