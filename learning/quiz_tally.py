"""The class's quiz answers, counted anonymously: what the lecturer's screen shows.

A learner's answer to a lesson question lives in their session; the tally keeps only counts
— per question, how many picked each option and how many were right — never who answered.
The session remembers which questions it has counted (:func:`ui.class_room.count_answer`),
so a learner counts once per question: their first pick, the prediction. A *room* is the
tally of one server process, numbered by its generation; resetting it starts the next one.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from learning.lessons.model import Lesson

REFRESH_SECONDS = 5  # the lecturer's summary refreshes itself this often


@dataclass(frozen=True)
class QuestionCount:
    """One question's counts: answers per option, how many were right."""

    options: dict[str, int]
    right: int

    @property
    def answers(self) -> int:
        return sum(self.options.values())


@dataclass
class QuizTally:
    """Counts of first answers per question, for one room (thread-safe)."""

    generation: int = 1
    _picked: dict[str, Counter] = field(default_factory=dict)
    _right: Counter = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, question: str, option: str, right: bool) -> None:
        """Count one answer: ``option`` picked for ``question``, right or not."""
        with self._lock:
            self._picked.setdefault(question, Counter())[option] += 1
            self._right[question] += bool(right)

    def summary(self) -> dict[str, QuestionCount]:
        """The counts so far, by question (a copy)."""
        with self._lock:
            return {q: QuestionCount(dict(c), int(self._right[q])) for q, c in self._picked.items()}

    def reset(self, generation: int) -> bool:
        """Empty the room if ``generation`` is the current one (a reset link names the room it
        resets, so opening it again later resets nothing). Returns whether it did."""
        with self._lock:
            if generation != self.generation:
                return False
            self._picked.clear()
            self._right.clear()
            self.generation += 1
            return True


def question_id(lesson: Lesson, step_key: str) -> str:
    """The tally's name of a lesson question ("noise/neighbours")."""
    return f"{lesson.key}/{step_key}"


def summary_rows(
    lessons: Sequence[Lesson], counts: Mapping[str, QuestionCount]
) -> list[dict[str, object]]:
    """One row per lesson question, in course order, for the lecturer's table: the question
    ("2.3 Yet every release stays private"), the answers counted, how many were right, and
    the count of each option picked."""
    rows: list[dict[str, object]] = []
    for number, lesson in enumerate(lessons, 1):
        for step_number, step in enumerate(lesson.steps, 1):
            if step.question is None:
                continue
            got = counts.get(question_id(lesson, step.key))
            rows.append(
                {
                    "question": f"{number}.{step_number} {step.title}",
                    "answers": got.answers if got else 0,
                    "right": f"{got.right} ({got.right / got.answers:.0%})" if got else "—",
                    "how the class answered": " · ".join(
                        f"{option}: {n}" for option, n in sorted(got.options.items())
                    )
                    if got
                    else "",
                }
            )
    return rows
