"""Export of every figure: the numbers (CSV), a standalone HTML figure stamped with every
parameter and the link that reproduces it, and a "reproduce in Python" snippet.

Files are built only when a download is clicked (callables): the HTML embeds plotly.js
(~4 MB) and must not be rebuilt on every rerun of every session. The PNG comes from the
chart's own modebar, at presentation resolution (:func:`ui.presenter.chart_config`).

The row itself is drawn on demand too: under each figure one "Export" button, replaced by
the row when clicked. The row is six messages to the browser (a block, two download buttons,
a popover, its code and its parameters) that every rerun would otherwise send, and a slider
move reruns the whole page (issue #36 item 4, docs/performance.md). A download button does not
rerun the page (``on_click="ignore"``), so the row stays until the next move.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from figures.export import FigureExport, caption, reproduce_link, standalone_html
from ui.box import Box

__all__ = ["FigureExport", "caption", "export_controls", "page_link", "standalone_html"]


def page_link(page: str) -> str:
    """The URL that reproduces the current screen: the page and every URL key set now."""
    query = [(k, v) for k in st.query_params for v in st.query_params.get_all(k)]
    return reproduce_link(st.context.url, page, query)


def export_controls(
    container: Box,
    fig: go.Figure,
    data: Callable[[], pd.DataFrame],
    spec: FigureExport,
) -> None:
    """An "Export" button under a figure; clicked, the CSV and HTML downloads (built on
    click) and the Python snippet in its place."""
    key = f"{spec.stem}_export"
    # A button's click is in the session's state from the start of the run it triggers
    # (True for that run only): then the row is drawn where the button was.
    if not st.session_state.get(key):
        container.button(
            "Export",
            key=key,
            icon=":material/download:",
            help="The numbers behind the figure (CSV), a standalone interactive figure (HTML) "
            "and the Python that reproduces it.",
        )
        return
    link = page_link(spec.page)
    # One wrapping row, each button as wide as its label: fixed columns squeezed the labels
    # to "N" and "F." in Paper figures' narrow panels (a button moves down instead).
    row = container.container(horizontal=True, gap="small")
    row.download_button(
        "Numbers (CSV)",
        lambda: data().to_csv(index=False),
        f"{spec.stem}.csv",
        "text/csv",
        key=f"{spec.stem}_csv",
        icon=":material/download:",
        on_click="ignore",
        help="The numbers behind the figure, one row per point (or draw).",
    )
    row.download_button(
        "Figure (HTML)",
        lambda: standalone_html(fig, spec, link),
        f"{spec.stem}.html",
        "text/html",
        key=f"{spec.stem}_html",
        icon=":material/download:",
        on_click="ignore",
        help="A standalone interactive figure (works offline) titled with every parameter "
        "and the link that reproduces it. For a PNG, use the camera in the chart's toolbar.",
    )
    with row.popover("Reproduce in Python", icon=":material/code:"):
        st.code(spec.snippet, language="python")
        st.text(f"Parameters: {caption(spec.params)}")
