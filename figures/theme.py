"""One name and one colour per algorithm on every page, read from the algorithm registry, the
page-wide CSS that keeps text readable in both themes, and the icon that marks a page's
verdict (:data:`VERDICT_ICON`).

The labels, colours (Okabe–Ito colour-blind-safe palette) and descriptions live in each
algorithm's record (:mod:`dpcore.factorization.registry`); this module only shapes them for
plotting.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import dpcore
from learning.settings import AXIS_LABELS, LOG_AXES

__all__ = [
    "AXIS_LABELS",
    "BACKGROUND",
    "CHART_TEXT",
    "CSS",
    "LOG_AXES",
    "VERDICT_ICON",
    "VERDICT_SYMBOL",
    "Style",
    "contrast_ratio",
    "description",
    "fit_axis_title",
    "is_verdict_icon",
    "label",
    "style",
]


@dataclass(frozen=True)
class Style:
    """How an algorithm is shown."""

    label: str
    color: str
    dash: str = "solid"


def style(algorithm: str) -> Style:
    """Label, colour and dash of a registered algorithm (ValueError if unknown)."""
    record = dpcore.get_algorithm(algorithm)
    return Style(record.label, record.color, record.dash)


def description(algorithm: str) -> str:
    """One line on what the algorithm does, for the picker's help."""
    return dpcore.get_algorithm(algorithm).description


def label(algorithm: str) -> str:
    """Display name of a registered algorithm (ValueError if unknown)."""
    return dpcore.get_algorithm(algorithm).label


# Chart lettering (tick labels, axis titles, legends, hover-free text) per theme, and the page
# background it is drawn on (the chart's own background is transparent). Streamlit's Plotly
# theme prints tick labels in #808495: 3.72:1 on white, below WCAG AA's 4.5:1 (issue #40).
# ui.presenter.style sets these on every chart; tests/figures/test_figures.py checks the ratios.
BACKGROUND = {"light": "#FFFFFF", "dark": "#171614"}
CHART_TEXT = {"light": "#4A4E5A", "dark": "#E6EAF1"}
AA_CONTRAST = 4.5  # WCAG 2.1 AA, normal-size text


# A vertical axis title may take about this share of a chart's height (the rest: margins,
# tick labels, the x title and a legend below), at about half an em per character.
PLOT_SHARE, EM_PER_CHAR = 0.6, 0.5


def fit_axis_title(text: str, height: float, font_size: float) -> str:
    """``text`` broken into lines (Plotly's ``<br>``) that fit a vertical axis of a chart
    ``height`` px tall at ``font_size`` px: Plotly clips a longer title ("… / optimur").
    Two lines split at the space nearest the middle, more only where two do not fit.

    >>> fit_axis_title("captured energy / optimum", 240, 12)
    'captured energy<br>/ optimum'
    >>> fit_axis_title("density", 240, 12)
    'density'
    """
    room = int(PLOT_SHARE * height / (EM_PER_CHAR * font_size))
    if len(text) <= room or " " not in text:
        return text
    middle = len(text) / 2
    cut = min((i for i, c in enumerate(text) if c == " "), key=lambda i: abs(i - middle))
    lines = [text[:cut], text[cut + 1 :]]
    if max(map(len, lines)) > room:
        lines = textwrap.wrap(text, max(room, 1))
    return "<br>".join(lines)


def _luminance(color: str) -> float:
    """WCAG 2.1 relative luminance of a ``#RRGGBB`` colour."""
    text = color.lstrip("#")
    if len(text) != 6 or any(c not in "0123456789abcdefABCDEF" for c in text):
        raise ValueError(f"color must be '#RRGGBB'; got {color!r}")
    channels = [int(text[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(foreground: str, background: str) -> float:
    """WCAG 2.1 contrast ratio (L1 + 0.05) / (L2 + 0.05) of two ``#RRGGBB`` colours, in
    [1, 21], L1 the lighter one's relative luminance.

    >>> round(contrast_ratio("#000000", "#FFFFFF"), 6)
    21.0
    >>> round(contrast_ratio("#808495", "#FFFFFF"), 2)  # Streamlit's Plotly tick labels
    3.72
    """
    a, b = sorted((_luminance(foreground), _luminance(background)), reverse=True)
    return (a + 0.05) / (b + 0.05)


# Text contrast >= 4.5:1 in light and dark theme (tests/browser/test_a11y.py). Streamlit prints a
# slider's value in the theme's red: 3.52:1 on the dark sidebar, and no red reaches 4.5:1 both
# there and under a primary button's white label. The value takes the text colour instead.
# (Captions: the light theme's text colour, .streamlit/config.toml.)
CSS = """
<style>
[data-testid="stSliderThumbValue"] { color: inherit !important; }
/* pills: body text, also on a picked pill's pale primary tint (Streamlit's primary-coloured
   text there is 4.47:1 light, 3.61:1 dark); the tint and border still mark the pick */
[data-testid="stButtonGroup"] button { color: inherit !important; }
</style>
"""


# A page's verdict on the settings it shows is drawn as an error box on purpose (the Privacy
# explorer's joint view breaking the promise, the Attack audit's attack demonstrating it):
# content, not a failure, and the box says so by this icon (``st.error(text,
# icon=VERDICT_ICON)``). Every client that counts error boxes (the AppTest and browser tests,
# the load clients) tells a verdict by it, never by the verdict's words: a reworded verdict
# breaks no check, and an error box without the icon still counts as one.
VERDICT_ICON = ":material/gavel:"
# In the browser the icon is a Material Symbols ligature: a span inside the box,
# ``[data-testid='stAlertDynamicIcon']``, whose text is the symbol's name.
VERDICT_SYMBOL = VERDICT_ICON.removeprefix(":material/").removesuffix(":")


def is_verdict_icon(icon: str | None) -> bool:
    """Whether an error box drawn with ``icon`` (as ``st.error`` was given it; AppTest's
    element and the alert's protobuf carry it so) is a page's verdict.

    >>> is_verdict_icon(":material/gavel:"), is_verdict_icon(":material/error:")
    (True, False)
    >>> is_verdict_icon("")  # an error box without an icon: a failure
    False
    """
    return icon == VERDICT_ICON
