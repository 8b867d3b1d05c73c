"""Lessons: every step renders, and every predict-then-reveal question is answered both ways
with the reveal's numbers checked against dpcore, computed here independently of the app."""

from __future__ import annotations

import math
import urllib.parse
import warnings
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import dpcore
from dpcore.protocol_demo import protocol_demo
from ui.lessons import LESSONS
from ui.theme import AXIS_LABELS

ROOT = Path(__file__).resolve().parents[1]
STEPS = [(lesson, i, step) for lesson in LESSONS for i, step in enumerate(lesson.steps, 1)]
IDS = [f"{lesson.key}-{step.key}" for lesson, _, step in STEPS]
DELTA = 0.01  # every lesson's δ unless the step varies it


def _sigma(sens, eps, delta, method="classic"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcore.ClassicGaussianWarning)
        return dpcore.gaussian_sigma(sens, epsilon=eps, delta=delta, method=method)


def _equal_design(sites, n=1000, eps=0.5):
    tau = dpcore.gaussian_sigmas(
        np.full(sites, 1.0 / n), epsilon=eps, delta=DELTA, method="analytic"
    )
    return dpcore.cape_design(tau)


def _unequal(share=0.5):
    big = round(share * 10_000)
    sizes = np.array([big] + [(10_000 - big) // 4] * 4)
    tau = dpcore.gaussian_sigmas(1.0 / sizes, epsilon=0.5, delta=DELTA, method="analytic")
    return sizes, dpcore.cape_design(tau, weights=sizes / sizes.sum())


def _views(ng=False, colluders=()):
    design = _equal_design(5)
    report = dpcore.coalition_report(
        design, np.full(5, 1e-3), delta=DELTA, colluding=colluders, epsilon=0.5, noise_generator=ng
    )
    return report[report["site"] == 1].iloc[0]


def _pca_means(df, axis, at, metric="captured_energy_ratio"):
    part = df[df[axis] == at].groupby("algorithm")[metric].agg(["mean", "std", "count"])
    return {a: (r["mean"], r["std"] / math.sqrt(r["count"])) for a, r in part.iterrows()}


def _tie_or_winner(stats, higher_is_better, winner):
    (cm, cs), (vm, vs) = stats["cape"], stats["conv"]
    if abs(cm - vm) <= 2 * math.hypot(cs, vs):  # two standard errors apart at least
        return "about the same"
    return winner if (cm > vm) == higher_is_better else "conventional"


PCA = {
    "dim": 20,
    "k": 5,
    "runs": 4,
    "seed": 0,
    "algorithms": ("nonprivate", "cape", "conv"),
    "calibration": "analytic",
    "delta": DELTA,
}


def truth(step_key: str, value) -> tuple[str, str]:
    """(correct option, a number the reveal must show) from dpcore directly."""
    if step_key == "neighbours":
        ratio = _sigma(0.01, value / 2, DELTA) / _sigma(0.01, value, DELTA)
        return {2.0: "it doubles"}[round(ratio, 12)], f"**{ratio:.3g}**"
    if step_key == "delta":
        ratio = _sigma(1.0, 0.5, 1e-6) / _sigma(1.0, 0.5, 1e-2)
        assert 1.6 < ratio < 1.8
        return "about 1.7×", f"**{ratio:.3g}**"
    if step_key == "calibration":
        classic, analytic = _sigma(1.0, value, DELTA), _sigma(1.0, value, DELTA, "analytic")
        real = dpcore.gaussian_delta(classic, sensitivity=1.0, epsilon=value)
        # the least private σ is the analytic one: classic is enough iff its δ is ≤ the promise
        assert (classic >= analytic) == (real <= DELTA * (1 + 1e-9))
        return ("yes, at least enough" if real <= DELTA else "no, too little"), f"{real:.3g}"
    if step_key == "conventional":
        d = _equal_design(value)
        ratio = d.tau_conv**2 / d.tau_agg**2
        assert ratio == pytest.approx(value)  # eq. (2)
        return "S×", f"**{ratio:.3g}**"
    if step_key == "cancelling":
        demo = protocol_demo(sites=value, kind="scalar", epsilon=0.5, seed=0)
        assert abs(demo.e_sum) < 1e-15
        return "zero (to rounding)", f"**{float(demo.e_sum):.1e}**"
    if step_key == "private":
        d = _equal_design(value)
        ratio = (d.var_e[0] + d.var_g[0]) / d.tau_site[0] ** 2
        return "τ_s² (what it needs)", f"**{ratio:.3g} τ_s²**"
    if step_key == "weights":
        sizes, d = _unequal(value)
        ratio = d.tau_conv**2 / d.tau_agg**2
        return "S× = 5×", f"**{ratio:.3g}×**"
    if step_key == "gain":
        sizes, _ = _unequal(value)
        gain = dpcore.cape_gain(sizes)
        return "more than S", f"**{gain:.3g}**"
    if step_key == "fair":
        sizes, _ = _unequal(value)
        best = sizes.sum() ** 2 / np.sum(sizes.astype(float) ** 2)  # N²/ΣN_s², analytic
        return "between 1 and S", f"**{best:.3g}×**"
    if step_key == "joint":
        joint = math.sqrt((1 + 1 / value) / 2)  # docs/privacy.md, S equal sites
        return "less than τ_s", f"**{joint:.3f}·τ_s**"
    if step_key == "collusion":
        row = _views(colluders=tuple(range(1, value + 1)))
        promised, joint = row["epsilon_at_required"], row["epsilon_joint"]
        assert joint > promised  # even with no colluder, the joint view is weaker
        return "larger: weaker privacy", f"**{joint:.3g}**"
    if step_key == "generator":
        ratio = _views(ng=True)["epsilon_release"] / _views()["epsilon_at_required"]
        assert math.sqrt(5) * 0.9 < ratio < 5 / 1.5
        return "about √S× larger", f"**{ratio:.3g}×**"
    if step_key == "pca":
        df = dpcore.pca_sweep(
            **PCA, epsilon=(0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0), sites=10, n_per_site=1000
        )
        stats = _pca_means(df, "epsilon", value)
        return _tie_or_winner(stats, True, "capePCA"), f"**{stats['cape'][0]:.2%}**"
    if step_key == "pca_sites":
        gaps = []
        for s in (2, 50):
            df = dpcore.pca_sweep(**PCA, epsilon=value, sites=(s,), n_per_site=20_000 // s)
            m = _pca_means(df, "sites", s)
            gaps.append(m["cape"][0] - m["conv"][0])
        return ("it grows" if gaps[1] > gaps[0] else "it shrinks"), f"**{gaps[1]:.2%}**"
    if step_key == "tensor":
        df = dpcore.otd_sweep(
            model="mog",
            dim=10,
            k=5,
            runs=3,
            seed=0,
            algorithms=("nonprivate", "cape", "conv"),
            calibration="analytic",
            n_per_site=20000,
            sites=5,
            delta=DELTA,
            epsilon=(0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0),
        )
        stats = _pca_means(df, "epsilon", value, "component_error")
        return _tie_or_winner(stats, False, "capeAGN"), f"**{stats['cape'][0]:.3f}**"
    raise AssertionError(f"no independent check for step {step_key!r}")


def open_step(lesson, number: int, **params) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page("app_pages/learn.py")
    at.query_params.update({"learn_lesson": lesson.name, "learn_step": str(number), **params})
    return at.run()


def test_lessons_are_data_with_everything_a_step_needs():
    from ui.lessons.scenes import SCENES

    assert len(LESSONS) >= 5
    assert len({lesson.name for lesson in LESSONS}) == len(LESSONS)
    for lesson in LESSONS:
        assert len(lesson.steps) >= 3
        for step in lesson.steps:
            assert step.scene in SCENES and step.explain and step.text
            assert (ROOT / step.explore.page).exists()
            assert step.control.default in step.control.options


@pytest.mark.app
@pytest.mark.parametrize(("lesson", "number", "step"), STEPS, ids=IDS)
def test_every_step_renders_with_figure_explanation_and_link(lesson, number, step):
    at = open_step(lesson, number)
    assert not at.exception and not at.error
    assert at.markdown and any(step.title in m.value for m in at.markdown)
    assert len(at.get("plotly_chart")) == 1
    assert any(e.label == "What am I looking at?" for e in at.expander)
    links = at.get("page_link")
    assert len(links) == 1


CHECKED_VALUES = {"calibration": [0.5, 10.0], "collusion": [0, 4], "conventional": [2, 7]}


@pytest.mark.app
@pytest.mark.slow
@pytest.mark.parametrize(("lesson", "number", "step"), STEPS, ids=IDS)
def test_every_question_answered_both_ways(lesson, number, step):
    for value in CHECKED_VALUES.get(step.key, [step.control.default]):
        shown = value if isinstance(value, str) else f"{value:g}"  # as the control's URL holds it
        at = open_step(lesson, number, **{"learn_" + step.control.key: shown})
        assert not at.exception and not at.error
        answer, number_shown = truth(step.key, value)
        radio = at.radio(key=f"q_{lesson.key}_{step.key}")
        assert answer in radio.options
        radio.set_value(answer).run()
        assert len(at.success) == 1 and at.success[0].value.startswith("**Right.**")
        assert number_shown in at.success[0].value
        wrong = next(o for o in radio.options if o != answer)
        at.radio(key=f"q_{lesson.key}_{step.key}").set_value(wrong).run()
        assert not at.success
        warning = next(w.value for w in at.warning if "Not quite" in w.value)
        assert warning.startswith(f"**Not quite — {answer}.**") and number_shown in warning


@pytest.mark.app
def test_back_and_next_move_through_a_lesson_and_a_new_lesson_restarts():
    lesson = LESSONS[1]
    at = open_step(lesson, 1)
    at.button(key="lesson_next").click().run()
    assert at.select_slider(key="learn_step").value == 2
    at.button(key="lesson_back").click().run()
    at.button(key="lesson_back").click().run()  # stays at the first step
    assert at.select_slider(key="learn_step").value == 1
    at.button(key="lesson_next").click().run()
    at.selectbox(key="learn_lesson").set_value(LESSONS[2].name).run()
    assert at.select_slider(key="learn_step").value == 1
    assert not at.exception and not at.error


@pytest.mark.app
@pytest.mark.slow
@pytest.mark.parametrize(("lesson", "number", "step"), STEPS, ids=IDS)
def test_explore_link_opens_its_page_with_the_lessons_settings(lesson, number, step):
    at = open_step(lesson, number)
    link = at.get("page_link")[0].proto
    target = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    target.switch_page(step.explore.page)
    params = dict(urllib.parse.parse_qsl(link.query_string)) if link.query_string else {}
    assert set(params) == {k for k, _ in step.explore.params}
    target.query_params.update(params)
    target.run()
    assert not target.exception  # (the Privacy explorer may show a verdict as an error box)
    for key, text in params.items():  # every setting arrived on the page
        assert key in target.session_state, key
        assert _same(target.session_state[key], text), (key, target.session_state[key], text)


def _same(value, text: str) -> bool:
    if str(value) in AXIS_LABELS:  # the sweep-axis control's URL holds its label ("S")
        return AXIS_LABELS[str(value)].split(" ")[-1] == text
    if isinstance(value, bool):
        return str(value).lower() == text
    if isinstance(value, (int, float)):
        return math.isclose(float(value), float(text))
    return str(value) == text
