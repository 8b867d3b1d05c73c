"""Presenter mode: one switch that turns any page into a projector view (1280×720).

The switch is a toggle bound to the URL key ``present`` and created by app.py (the main
script), so it is the one setting every page shares on purpose: it survives page changes and
is part of every shared link. With it on, navigation moves to the top bar, the sidebar starts
collapsed, fonts grow, and a page's key control sits beside its chart.

Pages use three calls::

    from ui import presenter
    controls, main = presenter.split()          # key controls beside the chart
    presenter.intro("Long explanation …")       # folded away while presenting
    st.plotly_chart(presenter.style(fig))       # chart sized and lettered for the room

and, where the main chart sits far down the page, ``presenter.stage()`` (a place under the
title for it while presenting) and ``presenter.folded(label)`` (context folded away while
presenting). tests/browser/test_a11y.py checks every page's main chart or question is on the first
1280×720 screen (tests/presenter_checks.py).
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
import plotly.io
import plotly.io._json as plotly_json
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from figures import theme

PARAM = "present"
FONT_SIZE = 20  # chart lettering while presenting (16 otherwise)
CHART_HEIGHT = 400  # fits under the top bar, title and one row of metrics at 720 px

# The room's large lettering only where a projector could be: on a phone (≤ 640 px) a
# presenter link reads as the normal page, or the larger fonts crush the chart.
_CSS = """
<style>
.block-container { padding-top: 3.4rem !important; padding-bottom: 1rem !important;
                   max-width: 100% !important; }
.st-key-present { position: fixed; top: 0.55rem; right: 4.5rem; z-index: 999991;
                  width: auto !important; }
@media (min-width: 641px) {
  html { font-size: 19px; }
  .block-container { padding-left: 2rem !important; padding-right: 2rem !important; }
  h1 { font-size: 1.9rem !important; padding: 0 0 0.3rem 0 !important; }  /* not flush */
  h2, h3 { font-size: 1.3rem !important; padding-top: 0 !important; }
  [data-testid="stMetricValue"] { font-size: 1.9rem !important; }
  /* one screen: a tighter vertical rhythm, and metric labels wrap instead of being cut
     ("Non-private (poo…") */
  .block-container [data-testid="stVerticalBlock"] { gap: 0.55rem !important; }
  [data-testid="stMetricLabel"], [data-testid="stMetricLabel"] * {
    white-space: normal !important; overflow: visible !important;
    text-overflow: clip !important; height: auto !important; }
}
</style>
"""


# Phones (≤ 640 px wide): the sidebar opens as a sheet over the top 42 % only, so a chart
# scrolled into view stays visible under it while a slider moves.
_PHONE_CSS = """
<style>
@media (max-width: 640px) {
  section[data-testid="stSidebar"][data-collapsed="false"] { height: 42vh !important;
    min-height: 0 !important; max-height: 42vh !important;
    border-bottom: 1px solid rgba(128, 128, 128, .4);
    box-shadow: 0 4px 12px rgba(0, 0, 0, .25); }
  [data-testid="stMetricValue"] { font-size: 1.6rem !important; }
}
</style>
"""


def is_on() -> bool:
    """Whether presenter mode is on (readable before the toggle is drawn).

    On a first load the toggle has no session value yet: the URL decides.
    """
    if PARAM in st.session_state:
        return bool(st.session_state[PARAM])
    return str(st.query_params.get(PARAM, "")).lower() == "true"


def is_phone() -> bool:
    """Whether the browser says it is a phone ("Mobi" in its User-Agent, as MDN advises).

    The server never learns the window's width; the User-Agent is what it has, so the
    charts of a presenter link opened on a phone keep their normal size and lettering.
    """
    try:
        agent = st.context.headers.get("User-Agent") or ""
    except (AttributeError, RuntimeError):  # no browser (AppTest, bare mode)
        return False
    return "Mobi" in agent


def toggle() -> bool:
    """Draw the switch (app.py only): in the sidebar, or top right while presenting."""
    on = is_on()
    box = st.container() if on else st.sidebar  # while presenting, CSS pins it in the top bar
    value = box.toggle(
        "Presenter mode",
        key=PARAM,
        bind="query-params",
        help="For a projector: large fonts, navigation on top, the key control beside "
        "the chart. Part of the URL, so a shared link opens in the same mode.",
    )
    st.html(theme.CSS + _PHONE_CSS + (_CSS if value else ""))  # every page, every run
    return bool(value)


def split(ratio: tuple[float, float] = (1, 3)) -> tuple[DeltaGenerator, DeltaGenerator]:
    """(controls, main) containers: sidebar and page normally, side by side when presenting.

    Put the one or two controls the demo turns in ``controls``; everything else stays in
    ``st.sidebar`` (collapsed, one click away, while presenting). On a phone
    (:func:`is_phone`) ``controls`` is a box on the page above the chart: the sidebar there
    is a sheet whose key control sat three screens deep (issue #40).
    """
    if not is_on():
        if is_phone():  # the sidebar is a sheet over the page there: the key controls go on it
            return st.container(border=True), st.container()
        return st.sidebar, st.container()
    left, right = st.columns(list(ratio), gap="medium")
    return left.container(border=True), right


def stage() -> DeltaGenerator | None:
    """Where a page's main chart goes while presenting: a container at this point (call it
    right under the title), so the chart is on the first screen however far down the page
    draws it normally. Not presenting: ``None``, the chart stays where the page puts it."""
    return st.container() if is_on() else None


def folded(label: str) -> DeltaGenerator:
    """A container for context a lecturer can open on demand: an expander while presenting,
    in the page's flow otherwise (``with presenter.folded("About this figure"): …``)."""
    return st.expander(label) if is_on() else st.container()


def intro(markdown: str, *, terms: str | None = None) -> None:
    """A page's explanatory text: shown normally, folded into an expander while presenting;
    ``terms``: its line of glossary links (:func:`learning.glossary.terms_line`), under it."""
    # body text, not a caption: a caption's muted links fail contrast (2.96:1); one element,
    # the terms its last paragraph (each element costs the server on every rerun)
    text = f"{markdown}\n\n{terms}" if terms else markdown
    if is_on():
        st.expander("About this page").markdown(text)
    else:
        st.markdown(text)


# Lines and labels drawn black or dark grey vanish on the dark theme's background: lighter
# greys there (the light theme and every export keep the originals).
ON_DARK = {"#000000": "#E6E6E6", "#333333": "#DDDDDD", "#444444": "#CCCCCC", "#666666": "#B0B0B0"}


def is_dark() -> bool:
    """Whether the browser shows the dark theme (Streamlit infers it from the background)."""
    try:
        return st.context.theme.type == "dark"
    except (AttributeError, RuntimeError):
        return False


def _lighten(holder: dict | None, prop: str) -> None:
    """``holder[prop]``, a colour, lightened when it is black or dark grey (:data:`ON_DARK`)."""
    if holder is None:
        return
    color = holder.get(prop)
    if isinstance(color, str) and ON_DARK.get(color.upper()):
        holder[prop] = ON_DARK[color.upper()]


def for_dark(spec: dict) -> dict:
    """A figure's dict (``fig.to_dict()``) with its black / dark-grey lines, markers and
    labels lightened, in place."""
    for trace in spec.get("data", []):
        _lighten(trace.get("line"), "color")
        _lighten(trace.get("marker"), "color")
    layout = spec.get("layout", {})
    for shape in layout.get("shapes", []):
        _lighten(shape.get("line"), "color")
    for note in layout.get("annotations", []):
        _lighten(note.get("font"), "color")
    return spec


def _lettering(spec: dict, dark: bool) -> dict:
    """A figure's dict with its lettering in the theme's chart text colour
    (:data:`figures.theme.CHART_TEXT`: ≥ 4.5:1 on the page), in place. Colours a figure
    sets itself are kept."""
    color = theme.CHART_TEXT["dark" if dark else "light"]
    layout = spec.setdefault("layout", {})
    layout.setdefault("font", {}).setdefault("color", color)
    legend = layout.setdefault("legend", {})
    legend.setdefault("font", {}).setdefault("color", color)
    legend.setdefault("title", {}).setdefault("font", {}).setdefault("color", color)
    for name in ("xaxis", "yaxis"):
        layout.setdefault(name, {})
    for name, axis in layout.items():
        if isinstance(axis, dict) and (name.startswith("xaxis") or name.startswith("yaxis")):
            axis.setdefault("tickfont", {}).setdefault("color", color)
            axis.setdefault("title", {}).setdefault("font", {}).setdefault("color", color)
    for note in layout.get("annotations", []):
        note.setdefault("font", {}).setdefault("color", color)
    return spec


def _for_room(
    spec: dict, height: int | None, width: int | None = None, legend_top: bool = False
) -> dict:
    """A figure's dict with the room's lettering and a height that fits 720 px, in place;
    ``width``: the chart shares its row (the lesson's figure beside the class's tally), and
    its x-axis titles are broken into lines that fit it; ``legend_top``: the legend in rows
    above the panels instead of below (a chart as tall as the screen, whose legend below sat
    under the fold; at the right it took a third of the panels' width)."""
    layout = spec.setdefault("layout", {})
    layout.setdefault("font", {})["size"] = FONT_SIZE
    legend = layout.setdefault("legend", {})
    legend.setdefault("font", {})["size"] = FONT_SIZE - 2
    layout["height"] = height or CHART_HEIGHT
    if legend_top:
        legend.update(orientation="h", x=0, xanchor="left", y=1.06, yanchor="bottom")
    elif isinstance(legend.get("y"), (int, float)) and legend["y"] < 0:  # a legend below
        legend["y"] = -0.33  # clears the larger axis title
    for prefix in ("xaxis", "yaxis"):
        layout.setdefault(prefix, {})
        for name, axis in layout.items():
            if name == prefix or (name.startswith(prefix) and name[len(prefix) :].isdigit()):
                axis.setdefault("tickfont", {})["size"] = FONT_SIZE - 3
                title = axis.setdefault("title", {})
                title.setdefault("font", {})["size"] = FONT_SIZE
                if prefix == "yaxis" and isinstance(title.get("text"), str):
                    title["text"] = theme.fit_axis_title(title["text"], layout["height"], FONT_SIZE)
                if prefix == "xaxis" and width and isinstance(title.get("text"), str):
                    title["text"] = theme.fit_axis_title(title["text"], width, FONT_SIZE)
    return spec


class _Styled(dict):
    """A styled figure's dict, and its JSON once ``st.plotly_chart`` has asked for it."""

    json: str | None = None


# Plotly's own, from its module (plotly.io only re-exports it): a reload of this module wraps
# it again, never its own wrapper
_PLOTLY_TO_JSON = plotly_json.to_json


def _to_json(fig: Any, *args: Any, **kwargs: Any) -> str:
    """``plotly.io.to_json`` that serialises a styled figure (:class:`_Styled`) once.

    ``st.plotly_chart`` turns the figure it is given into its dict and calls
    ``plotly.io.to_json(dict, validate=False)`` on every rerun: for a figure built and styled
    once (``figures.memo``, :func:`style`) the same text each time, ~12 % of a cached move on
    the attack audit (its 121 kB trade-off chart) and ~8 % on Paper figures (issue #36
    item 4). The text is Plotly's own, made by Plotly's function the first time; any other
    figure or call goes to Plotly's function unchanged."""
    if type(fig) is _Styled and not args and kwargs == {"validate": False}:
        if fig.json is None:  # two sessions at once may both make it: the same text
            fig.json = _PLOTLY_TO_JSON(fig, validate=False)
        return fig.json
    return _PLOTLY_TO_JSON(fig, *args, **kwargs)


plotly.io.to_json = _to_json  # plotly.io's lazy attribute, set once: Streamlit looks it up


class _Spec(go.Figure):
    """A finished figure's dict on its way to ``st.plotly_chart``, which asks a figure for
    ``to_dict()`` and serialises that: no Plotly validation and no deep copy on a rerun, and
    the JSON made once per styled figure (:func:`_to_json`). Only for ``st.plotly_chart`` (it
    is no full figure: nothing else may read it)."""

    def __init__(self, spec: _Styled) -> None:  # no go.Figure.__init__: that validates
        object.__setattr__(self, "_spec", spec)

    def to_dict(self) -> _Styled:
        return self._spec


def style(
    fig: go.Figure,
    *,
    height: int | None = None,
    room: bool = True,
    width: int | None = None,
    legend_top: bool = False,
) -> go.Figure:
    """Fit a figure to the screen: lettering the theme's chart text colour (:func:`_lettering`),
    lighter greys on the dark theme (:func:`for_dark`) and,
    in presenter mode (not on a phone: :func:`is_phone`), large lettering at a height that
    fits 720 px. The result is for ``st.plotly_chart`` only.

    ``room=False``: the theme only (small panels keep their own size and lettering).
    ``width``: while presenting, the chart's width in px when it shares its row (its x-axis
    titles then break into lines that fit; :func:`_for_room`). ``legend_top``: while
    presenting, the legend in rows above the panels (a chart that fills the screen).
    The caller's figure (used for exports) keeps the light-theme colours. The styled dict is
    kept on the figure per (theme, room) so that a figure built once (``figures.memo``) is
    styled once. The modebar's PNG resolution is set by :func:`chart_config`.
    """
    dark, large = is_dark(), bool(room and is_on() and not is_phone())
    key = (dark, large, height if large else None, width if large else None, legend_top)
    styled = fig.__dict__.get("_cape_styled")
    if styled is None:
        styled = fig._cape_styled = {}
    spec = styled.get(key)
    if spec is None:
        spec = fig.to_dict()
        if dark:
            for_dark(spec)
        _lettering(spec, dark)
        if large:
            _for_room(spec, height, width, legend_top)
        spec = styled[key] = _Styled(spec)
    return _Spec(spec)


def chart_config(filename: str) -> dict:
    """Plotly config: the modebar's camera saves a 1920×1080-equivalent PNG (scale 2)."""
    return {
        "toImageButtonOptions": {
            "format": "png",
            "filename": filename,
            "width": 960,
            "height": 540,
            "scale": 2,
        },
        "displaylogo": False,
    }
