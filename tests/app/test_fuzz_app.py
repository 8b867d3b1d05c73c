"""Fuzz every page: random widget settings, extremes included; never a traceback.

Each page is walked until every keyed widget it showed enabled has been moved at least once
(a widget not moved yet is always chosen first, so one that a setting reveals is moved on the
next step), and for at least ``FUZZ_STEPS`` steps (default 30: the suite's run; a deeper walk
is ``FUZZ_STEPS=1000 bash test.sh tests/app/test_fuzz_app.py``). A step sets one to three keyed
widgets to random valid values — a slider's ends as often as its middle, empty and full
multiselects, junk text in path fields — or presses a button, then reruns the page. Errors
must arrive as ``st.error`` (which is allowed), never as an exception. The random walk is
seeded per page, so a failure replays exactly.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import dpcore
from ui.cached import DESIGNS

ROOT = Path(__file__).resolve().parents[2]
LECTURER_KEY = os.environ["CAPE_LECTURER_KEY"]  # tests/conftest.py
PAGES = sorted(p.name for p in (ROOT / "app_pages").glob("*.py"))
# 30 steps per page in the suite (80 until #35: 615 s a run, a fifth of the suite): every
# widget is moved at least once however few the steps (the walk's first steps go to widgets
# not moved yet), the steps past that look for combinations; the ends of every slider with
# every other's ends are covered anyway (tests/app/test_slider_ends.py).
STEPS = int(os.environ.get("FUZZ_STEPS", "30"))
SKIP_BUTTONS = {"paper_run_heavy"}  # minutes of work by design; covered by the resource guard
# Presses that start real heavy work: each regenerates several panels, or runs a heavy sweep
# in a child process. They are the walk's whole cost: on the PCA page every other step took
# at most 0.2 s but two (29 s: fifteen algorithms at once; 18 s: a rounds Run), one Run press
# 170 s (this walk's first 20 steps replayed with a timer per step, load average 15; #35).
# One press each covers the gate opening and a heavy result drawn (the walk draws light
# results on nearly every step); the queue is tested in tests/serving/test_jobs.py, every slider's
# ends with the others at their defaults in tests/app/test_slider_ends.py. The rounds axis's Run
# (a sweep T times the page's) is one of them too.
CLICK_BUDGET = {"paper_run": 1, "pca_run_run": 1, "td_run_run": 1, "pca_rounds_run_run": 1}
JUNK_TEXT = ["", "   ", "/nonexistent/file.idx", "../../etc/passwd", "💥", "a" * 300, "C:\\x.csv"]


pytestmark = [pytest.mark.app, pytest.mark.slow]

# AppTest lists formatted options; these turn the app's labels back into raw values.
RAW = {dpcore.get_algorithm(name).label: name for name in dpcore.algorithm_names()}
RAW |= {"Mixture of Gaussians": "mog", "Topic model": "stm"}
RAW |= {text: key for key, text in DESIGNS.items()}


def _raw(text):
    if text in RAW:
        return RAW[text]
    if isinstance(text, str) and text.startswith("site ") and text[5:].isdigit():
        return int(text[5:])
    return text


def _pick(rng, values):
    values = list(values)
    return values[int(rng.integers(len(values)))]


def _extreme_or_random(rng, low, high, integer):
    roll = rng.random()
    if roll < 0.3:
        return low
    if roll < 0.6:
        return high
    value = rng.uniform(low, high)
    return round(value) if integer else float(value)


def _candidates(at: AppTest, clicks: dict[str, int]) -> list:
    """(kind, widget) of every keyed, enabled widget a step may move (buttons within budget)."""
    candidates = []
    for kind in (
        "slider",
        "select_slider",
        "number_input",
        "radio",
        "selectbox",
        "multiselect",
        "toggle",
        "text_input",
        "button",
    ):
        for w in getattr(at, kind):
            if getattr(w, "key", None) and not w.disabled:
                if kind == "button" and (
                    w.key in SKIP_BUTTONS or clicks.get(w.key, 0) >= CLICK_BUDGET.get(w.key, 10**9)
                ):
                    continue
                candidates.append((kind, w))
    return candidates


def _family(key: str) -> str:
    """What the walk must move at least once: each widget, except that every figure's
    "Export" button (``<figure>_export``, ui/export.py) is one: they open the same row, and
    Paper figures shows dozens of them, some only after other moves."""
    return "<figure>_export" if key.endswith("_export") else key


def _mutate(at: AppTest, rng, clicks: dict[str, int], moved: set[str]) -> str:
    """Change one keyed widget (or press a button), one whose family (:func:`_family`) is
    not in ``moved`` if any is shown; add the family to ``moved``, return what was done."""
    candidates = _candidates(at, clicks)
    fresh = [c for c in candidates if _family(c[1].key) not in moved]
    # a heavy press as soon as its button shows, before the walk has moved every slider to
    # an end: pressed after that (every size at its largest at once) one Run took minutes
    heavy = [c for c in fresh if c[1].key in CLICK_BUDGET]
    kind, w = _pick(rng, heavy or fresh or candidates)
    if kind == "button":
        clicks[w.key] = clicks.get(w.key, 0) + 1
        w.click()
        moved.add(_family(w.key))
        return f"click {w.key}"
    if kind == "slider":
        integer = isinstance(w.min, int)
        w.set_value(_extreme_or_random(rng, w.min, w.max, integer))
    elif kind == "number_input":
        low = w.min if w.min is not None else -10
        high = min(w.max if w.max is not None else 10**6, 10**6)
        w.set_value(_extreme_or_random(rng, low, high, isinstance(w.step, int)))
    elif kind == "select_slider":
        # AppTest lists the *formatted* options; give the widget a value of its own type
        options = list(w.options)
        text = _pick(rng, [options[0], options[-1], _pick(rng, options)])
        w.set_value(type(w.value)(float(text)) if isinstance(w.value, (int, float)) else text)
    elif kind in ("radio", "selectbox"):
        w.set_value(_raw(_pick(rng, w.options)))
    elif kind == "multiselect":
        options = list(w.options)
        size = _pick(rng, [0, len(options), int(rng.integers(0, len(options) + 1))])
        w.set_value([_raw(str(o)) for o in rng.permutation(options)[:size]])
    elif kind == "toggle":
        w.set_value(not w.value)
    elif kind == "text_input":
        w.set_value(_pick(rng, JUNK_TEXT))
    moved.add(_family(w.key))
    return f"{kind} {w.key} = {w.value!r}"


@pytest.mark.parametrize("name", PAGES)
def test_random_settings_never_raise(name):
    rng = np.random.default_rng(sum(map(ord, name)))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    if name == "classroom.py":  # the lecturer's page: with the key (tests/conftest.py)
        at.query_params["lecturer"] = LECTURER_KEY
    at.switch_page(f"app_pages/{name}").run()
    assert not at.exception
    history: list[str] = []
    clicks: dict[str, int] = {}
    moved: set[str] = set()
    shown = {_family(w.key) for _, w in _candidates(at, clicks)}
    step = 0
    while step < STEPS or (shown - moved and step < STEPS + 4 * len(shown)):
        done = []
        for _ in range(int(rng.integers(1, 4))):
            try:
                done.append(_mutate(at, rng, clicks, moved))
            except Exception as err:  # a widget that vanished mid-step: try another
                done.append(f"skip ({type(err).__name__})")
        history += done
        started = time.process_time()
        # A heavy press whose button showed only late (the rounds axis's Run shows once an
        # iterative algorithm is back) may meet every size at its largest: minutes of work on
        # a loaded machine, which AppTest's 120 s would call a failure.
        heavy = any(d.removeprefix("click ") in CLICK_BUDGET for d in done)
        at.run(timeout=900 if heavy else None)
        # shown on a failure (a timeout too): what each step did and its CPU time here
        print(f"step {step}: {time.process_time() - started:.1f} CPU-s, {history[-3:]}")
        assert not at.exception, (step, history[-5:], [e.value for e in at.exception])
        shown |= {_family(w.key) for _, w in _candidates(at, clicks)}
        step += 1
    assert not shown - moved, f"never moved in {step} steps: {sorted(shown - moved)}"
