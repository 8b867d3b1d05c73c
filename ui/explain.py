"""'What am I looking at?': a chart's one-paragraph explanation, collapsed by default."""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator


def explain(text: str, *, container: DeltaGenerator | None = None) -> None:
    """Axes, lines, bands and the one thing to notice, folded under the chart."""
    box = container if container is not None else st
    with box.expander("What am I looking at?", icon=":material/help:", expanded=False):
        st.markdown(text)


def tex(body: str) -> str:
    """A display equation as ``st.latex`` sends it (``$$ … $$`` in a Markdown element), to
    join other text in one element (:func:`paragraphs`)."""
    return f"$$\n{body}\n$$"


def paragraphs(*parts: str) -> str:
    """Paragraphs and :func:`tex` equations as one Markdown text: one ``st.markdown`` where a
    run of ``st.markdown`` / ``st.latex`` calls sent an element each (every element of a
    rerun costs the server ~0.3 ms, docs/performance.md)."""
    return "\n\n".join(parts)
