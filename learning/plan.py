"""A 50-minute class with the app that can be done as written: what to open, for how long, why.

Each slot opens a page (and a lesson, where it is one) at the settings its words quote; its
minutes include ``slack`` for pages loading on a busy server and for questions, so the plan
keeps its time when a room of phones opens a page at once. No step is repeated or skipped:
the lessons' steps are named whole (``Slot.steps``), and the protocol stepper is opened once,
from lesson 2's step 2, on that step's own draw. :data:`PLAN` adds up to
:data:`CLASS_MINUTES` (tests/learning/test_class_kit.py); tests/browser/test_browser_plan.py
walks each slot's link once, in order, and finds the text its words quote (``Slot.shows``) on
the first screen.

Issue #49: slot 1 asked to read ε-in-words at ε = 0.5 and 5 where the Overview's ε stops at
0.9 (its numbers use the classic calibration, a proof only for ε < 1: lesson 1.3), slots 3
and 4 both opened the protocol stepper, slot 5 stopped at lesson 4's step 3 of 4 ("ε in an
attacker's words") and nothing was left for loading.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpcore import likelihood_factor
from learning import sections
from learning.lessons import LESSONS

CLASS_MINUTES = 50
HERE = "app_pages/classroom.py"  # the page the plan is on: a slot there links to its section
SLACK_MINUTES = 5  # at least this much of the class is slack (loading, questions)
PROMISE_EPSILONS = (0.5, 5.0)  # slot 1 reads what these promise (the Overview's box says both)


@dataclass(frozen=True)
class Slot:
    """One part of the class."""

    minutes: int  # with the slack
    slack: int  # minutes of it kept for loading and questions
    title: str
    what: str  # what the lecturer does, in one or two sentences
    page: str  # the app page to open
    lesson: str | None = None  # the lesson's name, when the page is the Lessons page
    steps: tuple[int, ...] = ()  # the lesson's steps the slot goes through (all of them)
    query: tuple[tuple[str, str], ...] = ()  # the link's other settings (a section to land on)
    shows: tuple[str, ...] = ()  # text its words quote, on the first screen its link opens


def _times(epsilon: float) -> str:
    """e^ε as the Overview says it: 1.65, 148 (:func:`dpcore.likelihood_factor`)."""
    return f"{likelihood_factor(epsilon=epsilon):.3g}"


def _lesson(name: str) -> tuple[str, tuple[int, ...]]:
    """A lesson's title and all its step numbers."""
    lesson = next(x for x in LESSONS if x.name == name)
    return lesson.title, tuple(range(1, len(lesson.steps) + 1))


def _steps(name: str) -> str:
    return f"steps 1–{len(_lesson(name)[1])} of {len(_lesson(name)[1])}"


_LOW, _HIGH = (_times(e) for e in PROMISE_EPSILONS)

PLAN: tuple[Slot, ...] = (
    Slot(
        4,
        1,
        "What ε promises one person",
        "Turn Presenter mode on (its switch, in the sidebar) and open the Overview: the link "
        f"lands on its box at ε = "
        f"{PROMISE_EPSILONS[0]:g}. Read it aloud — at most {_LOW}× as likely with Ana's record "
        f"as without — and its last sentence, what ε = {PROMISE_EPSILONS[1]:g} would allow "
        f"({_HIGH}×). (The Overview's own ε slider stops at 0.9: the box quotes ε = "
        f"{PROMISE_EPSILONS[1]:g} itself.)",
        "app_pages/overview.py",
        query=(
            ("ov_eps", f"{PROMISE_EPSILONS[0]:g}"),  # whatever the Overview showed before
            (sections.PARAM, sections.OVERVIEW_PROMISE),
        ),
        shows=(f"{_LOW}×", f"{_HIGH}×"),
    ),
    Slot(
        9,
        1,
        "Why noise, and how much",
        f"Lesson 1, {_steps('Noise')}: before each reveal the class predicts on their phones "
        "(each browser's first answer counts), then the lecturer picks the answer.",
        "app_pages/learn.py",
        "Noise",
        _lesson("Noise")[1],
        shows=(_lesson("Noise")[0],),
    ),
    Slot(
        10,
        1,
        "Many sites, and noise that cancels",
        f"Lesson 2, {_steps('Many sites')}. At step 2 open its link, the protocol stepper on "
        "the same draw (S = 4), and press Next (or →) until the E's cancel in the sum; back "
        "to the lesson for step 3.",
        "app_pages/learn.py",
        "Many sites",
        _lesson("Many sites")[1],
        shows=(_lesson("Many sites")[0],),
    ),
    Slot(
        9,
        1,
        "Who sees what",
        f"Lesson 4, {_steps('Who sees what')}: the joint view, colluders, the noise "
        "generator, and ε in an attacker's words.",
        "app_pages/learn.py",
        "Who sees what",
        _lesson("Who sees what")[1],
        shows=(_lesson("Who sees what")[0],),
    ),
    Slot(
        9,
        1,
        "Beyond the paper",
        f"Lesson 6, {_steps('Beyond the paper')}: secure aggregation's bits, repeated "
        "releases, the attack audit.",
        "app_pages/learn.py",
        "Beyond the paper",
        _lesson("Beyond the paper")[1],
        shows=(_lesson("Beyond the paper")[0],),
    ),
    Slot(
        6,
        0,
        "What the class predicted",
        "On your own screen, For the lecturer: the exact summary is for your eyes. Reveal the "
        "question most got wrong; the projector (its lesson step, in presenter mode) shows the "
        "class's noisy tally beside the figure within seconds — the mechanism of the lesson, "
        "on the class itself. Reset the room for the next class.",
        HERE,
        query=((sections.PARAM, sections.CLASSROOM_REVEAL),),
        shows=("Reveal to the class",),
    ),
    Slot(
        3,
        0,
        "Take-away",
        "Hand out the lessons' question sheets (the answer sheets after the class) and point "
        "to the glossary.",
        "app_pages/glossary.py",
        shows=("Glossary",),
    ),
)
