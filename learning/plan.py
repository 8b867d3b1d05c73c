"""A suggested 50-minute class with the app: what to open, for how long, and why.

Each slot opens a page (and a lesson, where it is one); :data:`PLAN` adds up to
:data:`CLASS_MINUTES` (tests/test_class_kit.py).
"""

from __future__ import annotations

from dataclasses import dataclass

CLASS_MINUTES = 50


@dataclass(frozen=True)
class Slot:
    """One part of the class."""

    minutes: int
    title: str
    what: str  # what the lecturer does, in one or two sentences
    page: str  # the app page to open
    lesson: str | None = None  # the lesson's name, when the page is the Lessons page


PLAN: tuple[Slot, ...] = (
    Slot(
        4,
        "What ε promises one person",
        "Open the Overview in presenter mode; read the ε-in-words box aloud at ε = 0.5 and 5.",
        "app_pages/overview.py",
    ),
    Slot(
        8,
        "Why noise, and how much",
        "Lesson 1: before each reveal, the class predicts (hands up or their phones), then "
        "the lecturer answers.",
        "app_pages/learn.py",
        "Noise",
    ),
    Slot(
        8,
        "Many sites, and noise that cancels",
        "Lesson 2, then the protocol stepper for one draw: the E's cancel in the sum.",
        "app_pages/learn.py",
        "Many sites",
    ),
    Slot(
        5,
        "One draw, message by message",
        "Protocol, step by step: press Next through one round with S = 4.",
        "app_pages/protocol.py",
    ),
    Slot(
        8,
        "Who sees what",
        "Lesson 4, steps 1–3: the joint view, colluders, the noise generator.",
        "app_pages/learn.py",
        "Who sees what",
    ),
    Slot(
        8,
        "Beyond the paper",
        "Lesson 6: secure aggregation's bits, repeated releases, the attack audit.",
        "app_pages/learn.py",
        "Beyond the paper",
    ),
    Slot(
        6,
        "What the class predicted",
        "For the lecturer: the quiz summary on the projector; discuss the questions most "
        "got wrong. Reset the room for the next class.",
        "app_pages/classroom.py",
    ),
    Slot(
        3,
        "Take-away",
        "Hand out the lessons' one-page handouts; point to the glossary.",
        "app_pages/glossary.py",
    ),
)
