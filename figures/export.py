"""Export of every figure: the numbers (CSV), a standalone HTML figure stamped with every
parameter and the link that reproduces it, and a "reproduce in Python" snippet.

Files are built only when a download is clicked (callables): the HTML embeds plotly.js
(~4 MB) and must not be rebuilt on every rerun of every session. The PNG comes from the
chart's own modebar, at presentation resolution (:func:`ui.presenter.chart_config`).
This is the pure half; the download buttons are in :mod:`ui.export`.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import plotly.graph_objects as go

from dpcore import __version__, source_commit

DEFAULT_BASE = "http://localhost:8501"  # `bash run.sh`; used when the browser's URL is unknown


@dataclass(frozen=True)
class FigureExport:
    """What a figure's exports say about it.

    Attributes
    ----------
    stem : str
        File name without extension (also the widget keys' stem).
    title : str
    page : str
        The page's URL path (``"pca"``); the link adds the current URL keys.
    params : mapping
        Every parameter behind the numbers, shown under the figure.
    snippet : str
        Python code whose result holds the same numbers (:mod:`learning.snippets`).
    """

    stem: str
    title: str
    page: str
    params: Mapping[str, Any] = field(default_factory=dict)
    snippet: str = ""


def reproduce_link(url: str | None, page: str, query: list[tuple[str, str]]) -> str:
    """The link to ``page`` with ``query``, from the browser's current ``url``.

    ``url`` is Streamlit's ``st.context.url``: the app's address *with the current page's
    path* (``http://host:8501/pca``, or the app's root on the default page). The page's path
    is taken off before ``page`` is added, so the link never doubles it (``/pca/pca`` opened
    a blank page); anything before it (a ``server.baseUrlPath``) is kept.
    """
    root = (url or DEFAULT_BASE).rstrip("/")
    if root.endswith(f"/{page}"):
        root = root[: -len(page) - 1]
    return f"{root}/{page}" + (f"?{urlencode(query)}" if query else "")


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_fmt(v) for v in value) + ")"
    return str(value)


def caption(params: Mapping[str, Any]) -> str:
    """'name = value' for every parameter, joined by '; '."""
    return "; ".join(f"{k} = {_fmt(v)}" for k, v in params.items())


def standalone_html(fig: go.Figure, spec: FigureExport, link: str) -> str:
    """A self-contained page: title, the figure (plotly.js embedded, works offline), a caption
    with every parameter, the link that reproduces it, and the Python snippet."""
    out = go.Figure(fig)
    out.update_layout(
        title={"text": html.escape(spec.title), "x": 0, "xanchor": "left"},
        template="plotly_white",
        height=600,
        margin={"l": 90, "r": 40, "t": 120, "b": 90},
        font={"size": 15},
    )
    out.update_xaxes(automargin=True)
    out.update_yaxes(automargin=True)
    body = out.to_html(include_plotlyjs=True, full_html=False, config={"displaylogo": False})
    link_html = html.escape(link, quote=True)
    return (
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'>"
        f"<title>{html.escape(spec.title)}</title>"
        "<style>body{font-family:system-ui,sans-serif;max-width:1150px;margin:1.5em auto;"
        "padding:0 1em;color:#222}pre{background:#f4f4f4;padding:1em;overflow-x:auto}"
        ".params{font-size:1.05em;line-height:1.5}</style></head><body>\n"
        f"<h1>{html.escape(spec.title)}</h1>\n{body}\n"
        f"<p class='params'><b>Parameters:</b> {html.escape(caption(spec.params))}</p>\n"
        f"<p><b>Reproduce in CAPE Lab:</b> <a href='{link_html}'>{link_html}</a></p>\n"
        "<h2>Reproduce in Python</h2>\n"
        f"<pre><code>{html.escape(spec.snippet)}</code></pre>\n"
        "<p>Made with CAPE Lab (Imtiaz &amp; Sarwate, Distributed Differentially-Private "
        "Algorithms for Matrix and Tensor Factorization).</p>\n"
        f"<p class='code'><b>Code:</b> {html.escape(code_stamp())}</p></body></html>\n"
    )


def code_stamp() -> str:
    """"dpcore <version>, commit <sha>": the code that computed the numbers (dpcore.version)."""
    return f"dpcore {__version__}, commit {source_commit()}"
