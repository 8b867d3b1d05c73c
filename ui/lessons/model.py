"""What a lesson is made of: records of steps, no Streamlit and no numbers here.

A step is a few sentences, one live figure (a *scene*), one control, optionally a
predict-then-reveal question, and a link to the page where the learner explores the same
settings. Text, reveal and link parameters are ``str.format`` templates filled with the
scene's numbers (all computed by dpcore, see :mod:`ui.lessons.scenes`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Control:
    """The one control of a step; its URL parameter is ``learn_`` + ``key`` (shared by the steps
    that reuse it)."""

    key: str
    label: str
    options: tuple
    default: object
    help: str
    kind: str = "select_slider"  # or "segmented"


@dataclass(frozen=True)
class Question:
    """Predict, then reveal: the scene's ``answer`` (computed) is one of ``options``."""

    prompt: str
    options: tuple[str, ...]
    reveal: str  # why, with the computed numbers


@dataclass(frozen=True)
class Explore:
    """Where to go on: an app page and its URL parameters (templates)."""

    page: str
    label: str
    params: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Step:
    """One step of a lesson."""

    key: str
    title: str
    text: str
    scene: str  # name in ui.lessons.scenes.SCENES
    control: Control
    explain: str  # "What am I looking at?" for the figure
    explore: Explore
    question: Question | None = None


@dataclass(frozen=True)
class Lesson:
    """A short guided lesson."""

    key: str
    name: str  # short, in the URL: ?lesson=Many+sites
    title: str
    summary: str
    steps: tuple[Step, ...]
