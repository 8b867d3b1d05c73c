"""What a lesson is made of: records of steps, no Streamlit and no numbers here.

A step is a few sentences, one live figure (a *scene*), one control, optionally a
predict-then-reveal question, and a link to the page where the learner explores the same
settings. Text, reveal and link parameters are ``str.format`` templates filled with the
scene's numbers (all computed by dpcore, see :mod:`ui.lesson_scenes`).
"""

from __future__ import annotations

from dataclasses import dataclass

from learning.sections import PARAM as SECTION


@dataclass(frozen=True)
class Control:
    """The one control of a step; its URL parameter is ``learn_`` + ``key`` (shared by the steps
    that reuse it)."""

    key: str
    label: str
    options: tuple[float | str, ...]
    default: float | str  # one of options
    help: str
    kind: str = "select_slider"  # or "segmented"


@dataclass(frozen=True)
class Question:
    """Predict, then reveal: the scene's ``answer`` (computed) is one of ``options``."""

    prompt: str
    options: tuple[str, ...]
    reveal: str  # why, with the computed numbers
    # The option the step's text asserts at the control's default: the test checks that the
    # computed answer agrees, so the prose and the quiz cannot disagree (None: no claim).
    claim: str | None = None


@dataclass(frozen=True)
class Explore:
    """Where to go on: an app page and its URL parameters (templates; a key given twice is a
    list, as a multiselect's URL holds it). The link names every setting the step's numbers
    depend on, so the page opens with them whatever the visitor did there before."""

    page: str
    label: str
    params: tuple[tuple[str, str], ...] = ()
    # Names of the scene's numbers the linked page shows again (tests/learning/test_lessons.py opens
    # the link and finds each one there, at the precision the lesson quotes it).
    shows: tuple[str, ...] = ()
    # The section of the page the step is about (learning/sections.py): the link lands on it.
    section: str | None = None

    def query(self, numbers: dict) -> list[tuple[str, str]]:
        """The link's query parameters filled with the scene's numbers. A template that is
        one bare name of a list or tuple of strings gives one parameter per item (none for
        an empty one): a multiselect's value."""
        out: list[tuple[str, str]] = []
        for key, template in self.params:
            name = template[1:-1] if template.startswith("{") and template.endswith("}") else ""
            value = numbers.get(name)
            if isinstance(value, (list, tuple)):
                out.extend((key, str(v)) for v in value)
            else:
                out.append((key, template.format(**numbers)))
        if self.section is not None:
            out.append((SECTION, self.section))
        return out


@dataclass(frozen=True)
class Step:
    """One step of a lesson."""

    key: str
    title: str
    text: str
    scene: str  # name in ui.lesson_scenes.SCENES
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
