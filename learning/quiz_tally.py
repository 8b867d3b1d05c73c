"""The class's quiz answers, counted per person, and the class's tally released privately.

A *room* is the tally of one server process, numbered by its generation; resetting it starts
the next one. It counts **one first answer per browser and question** (the prediction; a
changed mind, a reload, a second tab are not counted again): the browser is the hashed id of
Streamlit's XSRF cookie that every tab of a browser shares (:func:`serving.jobs.browser_key`,
the id the upload cap uses), kept only as a key so that the browser is not counted twice —
never shown, and forgotten when the room is reset. Each answer is kept with the control
setting it was given at, because the right option depends on it: the lecturer's summary has
one row per setting, the options in the quiz's order and the right one marked.

**The class's tally** is released to the students with the lab's own Gaussian mechanism
(:func:`release_counts`): the histogram of a question has one cell per (setting of the
step's control, option), and adding or removing one student's answer changes exactly one cell
by 1, so its sensitivity is 1 (L1 and L2). Each cell gets independent Gaussian noise of the
σ that :func:`dpcore.mechanisms.calibration.gaussian_sigma` (analytic, Balle & Wang) gives for
Δ = 1 at the lecturer's ε and :data:`DELTA`. The cells are every setting of the control, used
or not, so which settings were used is protected too. The noise is drawn from a seed picked
at the reveal and stored with it: every student sees the same numbers. A room with fewer
answers than the lecturer's minimum releases nothing (that is the one thing the release
says exactly: whether at least that many answered).
"""

from __future__ import annotations

import functools
import math
import secrets
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from dpcore import gaussian_sigma
from learning.lessons.model import Lesson

REFRESH_SECONDS = 5  # the lecturer's summary refreshes itself this often
DELTA = 1e-5  # the release's δ: well below 1/(the size of any class)
SENSITIVITY = 1.0  # one student's answer moves one cell of the histogram by 1
EPSILONS = (0.25, 0.5, 1.0, 2.0, 4.0)  # what the lecturer may pick
DEFAULT_EPSILON = 1.0
DEFAULT_MINIMUM = 5  # below this many answers to a question, nothing is shown


@dataclass(frozen=True)
class Setting:
    """A question as it read at one setting of its step's control."""

    index: int  # the setting's place among the control's options (the release's row)
    label: str  # "bits b: 18"
    options: tuple[str, ...]  # the options as worded at this setting, in the quiz's order
    right: str  # the right option at this setting


@dataclass(frozen=True)
class SettingCount:
    """One row of the lecturer's summary: a question's answers at one setting."""

    setting: Setting
    counts: tuple[int, ...]  # per option, in the quiz's order

    @property
    def answers(self) -> int:
        return sum(self.counts)

    @property
    def right(self) -> int:
        options, right = self.setting.options, self.setting.right
        return self.counts[options.index(right)] if right in options else 0


@dataclass(frozen=True)
class Release:
    """A question's tally as revealed to the class: noisy counts per (setting, option)."""

    question: str
    epsilon: float
    delta: float
    sigma: float
    minimum: int
    seed: int
    shown: bool  # False: fewer answers than ``minimum``, nothing is released
    noisy: tuple[tuple[float, ...], ...]  # [setting index][option index]; empty if not shown


def release_counts(
    counts: Sequence[Sequence[int]], *, epsilon: float, delta: float = DELTA, seed: int
) -> tuple[float, np.ndarray]:
    """(σ, noisy counts): the histogram ``counts`` plus independent N(0, σ²) per cell, σ the
    analytic Gaussian calibration for sensitivity 1 at (ε, δ); the same seed, the same
    numbers."""
    sigma = sigma_for(epsilon, delta)
    exact = np.asarray(counts, dtype=float)
    return sigma, exact + np.random.default_rng(seed).normal(0.0, sigma, exact.shape)


def released(
    question: str,
    counts: Sequence[Sequence[int]],
    *,
    epsilon: float,
    minimum: int,
    seed: int,
    delta: float = DELTA,
) -> Release:
    """The release of one question's histogram, or an empty one under the minimum."""
    sigma, noisy = release_counts(counts, epsilon=epsilon, delta=delta, seed=seed)
    shown = int(np.sum(counts)) >= minimum
    rows = tuple(tuple(float(x) for x in row) for row in noisy) if shown else ()
    return Release(question, epsilon, delta, sigma, minimum, seed, shown, rows)


@dataclass
class QuizTally:
    """First answers per browser and question, for one room (thread-safe)."""

    generation: int = 1
    _answers: dict[str, dict[str, tuple[int, str]]] = field(default_factory=dict)
    _settings: dict[tuple[str, int], Setting] = field(default_factory=dict)
    _reveals: dict[str, Release] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, question: str, browser: str, setting: Setting, option: str) -> bool:
        """Count ``browser``'s answer ``option`` to ``question`` at ``setting``, if it is
        the browser's first to it in this room. Returns whether it counted."""
        if option not in setting.options:
            raise ValueError(f"{option!r} is not an option of {question}")
        with self._lock:
            answers = self._answers.setdefault(question, {})
            if browser in answers:
                return False
            answers[browser] = (setting.index, option)
            self._settings.setdefault((question, setting.index), setting)
            return True

    def summary(self) -> dict[str, list[SettingCount]]:
        """Per question, its answers per setting (in the control's order), options in the
        quiz's order."""
        with self._lock:
            out: dict[str, list[SettingCount]] = {}
            for question, answers in self._answers.items():
                rows = []
                for index in sorted({i for i, _ in answers.values()}):
                    setting = self._settings[question, index]
                    picked = [o for i, o in answers.values() if i == index]
                    rows.append(
                        SettingCount(setting, tuple(picked.count(o) for o in setting.options))
                    )
                out[question] = rows
            return out

    def histogram(self, question: str, settings: int, options: int) -> list[list[int]]:
        """The question's exact counts, one row per setting of the control (``settings``
        of them), one column per option."""
        cells = [[0] * options for _ in range(settings)]
        with self._lock:
            for index, option in self._answers.get(question, {}).values():
                cells[index][self._settings[question, index].options.index(option)] += 1
        return cells

    def reveal(
        self,
        question: str,
        *,
        settings: int,
        options: int,
        epsilon: float,
        minimum: int,
        seed: int | None = None,
    ) -> Release:
        """Release the question's histogram to the class (a new seed per reveal unless given;
        each reveal spends ε again)."""
        seed = secrets.randbits(63) if seed is None else seed
        counts = self.histogram(question, settings, options)
        release = released(question, counts, epsilon=epsilon, minimum=minimum, seed=seed)
        with self._lock:
            self._reveals[question] = release
        return release

    def release(self, question: str) -> Release | None:
        """The question's tally as revealed to the class, if the lecturer has revealed it."""
        with self._lock:
            return self._reveals.get(question)

    def reset(self, generation: int) -> bool:
        """Empty the room if ``generation`` is the current one (a reset link names the room it
        resets, so opening it again later resets nothing). Returns whether it did."""
        with self._lock:
            if generation != self.generation:
                return False
            self._answers.clear()
            self._settings.clear()
            self._reveals.clear()
            self.generation += 1
            return True


def question_id(lesson: Lesson, step_key: str) -> str:
    """The tally's name of a lesson question ("noise/neighbours")."""
    return f"{lesson.key}/{step_key}"


def summary_rows(
    lessons: Sequence[Lesson], counts: Mapping[str, list[SettingCount]], *, minimum: int = 0
) -> list[dict[str, object]]:
    """The lecturer's table, in course order: one row per question and setting it was answered
    at ("2.3 Yet every release stays private"), its answers, how many were right, and each
    option's count in the quiz's order, the right one marked ✓. A question with fewer than
    ``minimum`` answers in all shows one row without counts."""
    rows: list[dict[str, object]] = []
    for number, lesson in enumerate(lessons, 1):
        for step_number, step in enumerate(lesson.steps, 1):
            if step.question is None:
                continue
            title = f"{number}.{step_number} {step.title}"
            got = counts.get(question_id(lesson, step.key), [])
            total = sum(r.answers for r in got)
            if not got or total < minimum:
                answers = f"fewer than {minimum}" if got else 0
                rows.append(
                    {
                        "question": title,
                        "setting": "",
                        "answers": answers,
                        "right": "—",
                        "how the class answered": "",
                    }
                )
                continue
            for r in got:
                rows.append(
                    {
                        "question": title,
                        "setting": r.setting.label,
                        "answers": r.answers,
                        "right": f"{r.right} ({r.right / r.answers:.0%})",
                        "how the class answered": " · ".join(
                            f"{'✓ ' if o == r.setting.right else ''}{o}: {n}"
                            for o, n in zip(r.setting.options, r.counts, strict=True)
                        ),
                    }
                )
    return rows


@functools.lru_cache(maxsize=64)  # a few ε's; the analytic calibration solves for σ
def sigma_for(epsilon: float, delta: float = DELTA) -> float:
    """The release's noise std at ε (and δ): the analytic Gaussian calibration for Δ = 1."""
    return gaussian_sigma(SENSITIVITY, epsilon=epsilon, delta=delta, calibration="analytic")


def promise(release: Release) -> str:
    """What the release promises, in words, for the page."""
    return (
        f"Each count carries Gaussian noise of σ = {release.sigma:.2f}, calibrated "
        f"(the analytic Gaussian mechanism) so that the whole table is "
        f"(ε = {release.epsilon:g}, δ = {release.delta:g})-differentially private: adding or "
        "removing one student's answer changes one count by 1 (sensitivity 1), so whatever "
        f"you see was at most e^ε ≈ {math.exp(release.epsilon):.3g} times more likely (up to "
        "δ) with your answer than without it. It reveals exactly only whether at least "
        f"{release.minimum} answered."
    )
