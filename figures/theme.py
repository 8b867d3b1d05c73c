"""One name and one colour per algorithm on every page, read from the algorithm registry, and
the page-wide CSS that keeps text readable in both themes.

The labels, colours (Okabe–Ito colour-blind-safe palette) and descriptions live in each
algorithm's record (:mod:`dpcore.registry`); this module only shapes them for plotting.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpcore import registry
from learning.settings import AXIS_LABELS, LOG_AXES

__all__ = ["AXIS_LABELS", "CSS", "LOG_AXES", "Style", "description", "label", "style"]


@dataclass(frozen=True)
class Style:
    """How an algorithm is shown."""

    label: str
    color: str
    dash: str = "solid"


def style(algorithm: str) -> Style:
    """Label, colour and dash of a registered algorithm (ValueError if unknown)."""
    record = registry.get(algorithm)
    return Style(record.label, record.color, record.dash)


def description(algorithm: str) -> str:
    """One line on what the algorithm does, for the picker's help."""
    return registry.get(algorithm).description




def label(algorithm: str) -> str:
    """Display name of a registered algorithm (ValueError if unknown)."""
    return registry.get(algorithm).label


# Text contrast >= 4.5:1 in light and dark theme (tests/test_a11y.py). Streamlit prints a
# slider's value in the theme's red: 3.52:1 on the dark sidebar, and no red reaches 4.5:1 both
# there and under a primary button's white label. The value takes the text colour instead.
# (Captions: the light theme's text colour, .streamlit/config.toml.)
CSS = """
<style>
[data-testid="stSliderThumbValue"] { color: inherit !important; }
</style>
"""
