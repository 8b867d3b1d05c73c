"""One name and one colour per algorithm on every page, read from the algorithm registry.

The labels, colours (Okabe–Ito colour-blind-safe palette) and descriptions live in each
algorithm's record (:mod:`dpcore.registry`); this module only shapes them for plotting.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpcore import registry


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


AXIS_LABELS = {
    "epsilon": "privacy ε",
    "delta": "privacy δ",
    "n_per_site": "samples per site N_s",
    "sites": "number of sites S",
}
LOG_AXES = {"epsilon", "delta", "n_per_site"}


def label(algorithm: str) -> str:
    """Display name of a registered algorithm (ValueError if unknown)."""
    return registry.get(algorithm).label
