"""Lesson progress: which steps a learner has finished, and the marks the picker shows.

A step is done once its question has been answered (the reveal was read). Progress belongs
to the learner, not to the screen: a link reproduces a screen (docs/state.md) and must not
hand one learner's marks to another. So it lives in the session and in a browser cookie
(:func:`encode_done`, :func:`decode_done`), which a reload of the page keeps.
"""

from __future__ import annotations

from collections.abc import Iterable, MutableSet

from learning.lessons.model import Lesson, Step

DONE = "✓"
# A cookie value holds only letters, digits and a few marks: "lesson:step" ids joined by ".".
_IN_COOKIE, _BETWEEN = ":", "."


def step_id(lesson: Lesson, step: Step) -> str:
    """The key of one step in the progress set."""
    return f"{lesson.key}/{step.key}"


def mark_done(done: MutableSet[str], lesson: Lesson, step: Step) -> None:
    """Record that the learner finished ``step``."""
    done.add(step_id(lesson, step))


def steps_done(lesson: Lesson, done: Iterable[str]) -> int:
    """How many of the lesson's steps are finished."""
    finished = set(done)
    return sum(step_id(lesson, s) in finished for s in lesson.steps)


def lesson_marks(lessons: Iterable[Lesson], done: Iterable[str]) -> str:
    """One line for the picker: ✓ before a finished lesson, k/n after one under way."""
    finished = set(done)
    parts = []
    for lesson in lessons:
        k, n = steps_done(lesson, finished), len(lesson.steps)
        parts.append(f"{DONE} {lesson.name}" if k == n else f"{lesson.name} {k}/{n}")
    return " · ".join(parts)


def step_marks(lesson: Lesson, done: Iterable[str]) -> str:
    """The lesson's steps, ✓ on each finished one: "✓ 1 · ✓ 2 · 3"."""
    finished = set(done)
    return " · ".join(
        f"{DONE} {i}" if step_id(lesson, s) in finished else f"{i}"
        for i, s in enumerate(lesson.steps, 1)
    )


def encode_done(done: Iterable[str]) -> str:
    """The finished steps as a cookie value ("noise:neighbours.sites:conventional")."""
    return _BETWEEN.join(sorted(d.replace("/", _IN_COOKIE) for d in done))


def decode_done(text: str | None, lessons: Iterable[Lesson]) -> set[str]:
    """The finished steps a cookie value names; anything that is not a step is dropped."""
    known = {step_id(lesson, s) for lesson in lessons for s in lesson.steps}
    named = {part.replace(_IN_COOKIE, "/") for part in (text or "").split(_BETWEEN)}
    return named & known
