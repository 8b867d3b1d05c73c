"""Lessons: every step renders, and every predict-then-reveal question is answered both ways
with the reveal's numbers checked against dpcore, computed here independently of the app."""

from __future__ import annotations

import math
import re
import string
import urllib.parse
import warnings
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import dpcore
from dpcore import protocol_demo
from figures.theme import AXIS_LABELS, label
from learning.lessons import LESSONS
from learning.sections import PARAM as SECTION
from learning.settings import DEFAULT_SEED  # the pages' seed, which the lessons use

ROOT = Path(__file__).resolve().parents[2]
STEPS = [(lesson, i, step) for lesson in LESSONS for i, step in enumerate(lesson.steps, 1)]
IDS = [f"{lesson.key}-{step.key}" for lesson, _, step in STEPS]
DELTA = 0.01  # every lesson's δ unless the step varies it


def _sigma(sens, eps, delta, method="classic"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcore.ClassicGaussianWarning)
        return dpcore.gaussian_sigma(sens, epsilon=eps, delta=delta, calibration=method)


def _equal_design(sites, n=1000, eps=0.5):
    tau = dpcore.gaussian_sigmas(
        np.full(sites, 1.0 / n), epsilon=eps, delta=DELTA, calibration="analytic"
    )
    return dpcore.cape_design(tau)


def _unequal(share=0.5):
    big = round(share * 10_000)
    sizes = np.array([big] + [(10_000 - big) // 4] * 4)
    tau = dpcore.gaussian_sigmas(1.0 / sizes, epsilon=0.5, delta=DELTA, calibration="analytic")
    return sizes, dpcore.cape_design(tau, weights=sizes / sizes.sum())


def _views(ng=False, colluders=()):
    design = _equal_design(5)
    report = dpcore.coalition_report(
        design,
        sensitivity=np.full(5, 1e-3),
        delta=DELTA,
        colluding=colluders,
        epsilon=0.5,
        noise_generator=ng,
    )
    return report[report["site"] == 1].iloc[0]


def _pca_means(df, axis, at, metric="captured_energy_ratio"):
    part = df[df[axis] == at].groupby("algorithm")[metric].agg(["mean", "std", "count"])
    return {a: (r["mean"], r["std"] / math.sqrt(r["count"])) for a, r in part.iterrows()}


# Lesson 5 runs the PCA and tensor pages' own sweeps; here they are rebuilt from dpcore with the
# same settings (the pages' ε grids: the paper's for PCA, the tensor page's own).
PCA = {
    "dim": 20,
    "k": 5,
    "runs": 5,
    "rng": DEFAULT_SEED,
    "algorithms": ("nonprivate", "cape", "conv"),
    "calibration": "analytic",
    "neighbouring": "add-remove",
    "delta": DELTA,
    "epsilon": (0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0),
}
OTD = {
    "model": "mog",
    "dim": 10,
    "k": 5,
    "runs": 16,
    "rng": DEFAULT_SEED,
    "algorithms": ("nonprivate", "cape", "conv"),
    "calibration": "analytic",
    "n_per_site": 20000,
    "sites": 5,
    "delta": DELTA,
    "epsilon": (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0),
}
TIE = 2.0  # the lessons' stated rule: a difference within two standard errors is a tie


def _verdict(diff, se, better):
    """The honest answer to "which is better": a tie only within TIE standard errors."""
    return "about the same" if abs(diff) <= TIE * se else better


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
        # the least σ that is private is the analytic one: classic is enough iff its δ is at
        # most the promise
        assert (classic >= analytic) == (real <= DELTA * (1 + 1e-9))
        return ("yes, at least enough" if real <= DELTA else "no, too little"), f"{real:.3g}"
    if step_key == "conventional":
        d = _equal_design(value)
        ratio = d.tau_conv**2 / d.tau_agg**2
        assert ratio == pytest.approx(value)  # eq. (2)
        return "S×", f"**{ratio:.3g}**"
    if step_key == "cancelling":
        demo = protocol_demo(sites=value, kind="scalar", epsilon=0.5, seed=DEFAULT_SEED)
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
        # nearer √S than S on a log scale: ratio² < S·√S
        assert math.sqrt(5) < ratio < 5**0.75
        return "about √S× larger", f"**{ratio:.3g}×**"
    if step_key == "attacker":
        row = _views()
        eps = row["epsilon_joint" if value.startswith("all") else "epsilon_release"]
        q = 0.1 * math.exp(eps) / (0.1 * math.exp(eps) + 0.9)  # the posterior at prior 10 %
        # the own release meets τ_s exactly (ε = 0.5); all releases leave less noise
        dips = eps > 0.5 * (1 + 1e-7)
        return ("yes: somewhere under it" if dips else "no: never under it"), f"**{q:.1%}**"
    if step_key == "pca":
        stats = _pca_means(dpcore.pca_sweep(**PCA, sites=10, n_per_site=1000), "epsilon", value)
        (cm, cs), (vm, vs) = stats["cape"], stats["conv"]
        winner = "capePCA" if cm > vm else "conventional"
        return _verdict(cm - vm, math.hypot(cs, vs), winner), f"**{cm:.2%}**"
    if step_key == "pca_sites":
        ends = []
        for s in (2, 50):
            df = dpcore.pca_sweep(**PCA, sites=s, n_per_site=10_000 // s)
            ends.append(_pca_means(df, "epsilon", value))
        gaps = [m["cape"][0] - m["conv"][0] for m in ends]
        se = math.sqrt(sum(m[a][1] ** 2 for m in ends for a in ("cape", "conv")))
        grows = "it grows" if gaps[1] > gaps[0] else "it shrinks"
        return _verdict(gaps[1] - gaps[0], se, grows), f"**{gaps[1]:.2%}**"
    if step_key == "tensor":
        stats = _pca_means(dpcore.otd_sweep(**OTD), "epsilon", value, "component_error")
        (cm, cs), (vm, vs) = stats["cape"], stats["conv"]
        winner = "capeAGN" if cm < vm else "conventional"
        return _verdict(cm - vm, math.hypot(cs, vs), winner), f"**{cm:.3f}**"
    if step_key == "trust":
        pca = dpcore.trust_pca(
            (1000,) * 5, epsilon=0.5, delta=DELTA, weights=(0.2,) * 5, dim=20, k=5,
            calibration="analytic", bits=value, scale=None, secagg_calibration="analytic",
            runs=10, rng=DEFAULT_SEED,
        )  # fmt: skip
        sa = pca[pca.scheme == "secagg"]
        ratio = float(sa.error_ratio.mean())
        # nearest on a log scale: the boundary between 1× and 10× is √10
        answer = "about the same (1×)" if ratio < math.sqrt(10) else "about 10× larger"
        assert ratio < math.sqrt(10 * 1000)  # never near 1000×: a wrapped sum is still decoded
        assert (answer == "about 10× larger") == (sa.wraparounds.mean() > 0)  # wrap-around
        return answer, f"**{ratio:.3g}×**"
    if step_key == "releases":
        design = _equal_design(5)
        z = dpcore.view_noise_multipliers(
            design, sensitivity=np.full(5, 1e-3), view="aggregator's joint view"
        )[0]
        one = dpcore.composed_epsilon(z, releases=1, delta=DELTA)
        total = dpcore.composed_epsilon(z, releases=value, delta=DELTA)
        ratio = total / one
        # between √T and T; √T is nearer on a log scale while ratio² < T·√T
        assert math.sqrt(value) <= ratio < value
        answer = "about √T×" if ratio**2 < value**1.5 else "about T×"
        return answer, f"**{ratio:.3g}×**"
    if step_key == "audit":
        sens = np.full(10, 1e-3)
        tau = dpcore.gaussian_sigmas(sens, epsilon=0.5, delta=1e-3, calibration="analytic")
        design = dpcore.cape_design(tau)
        # the page's streams: one per (design, view), the paper's joint view second
        stream = np.random.default_rng(DEFAULT_SEED).spawn(4)[1]
        found = dpcore.audit_protocol(
            design, sensitivity=sens, site=0, view="joint", delta=1e-3, trials=value, rng=stream
        ).audit
        assert found.epsilon == pytest.approx(0.7135, abs=1e-4)  # docs/privacy.md's gap
        # the bound recomputed from the attack's error counts (Clopper–Pearson, 95 %)
        lower = dpcore.epsilon_lower_bound(
            found.false_positives, found.negatives, found.false_negatives, found.positives,
            delta=1e-3,
        )[0]  # fmt: skip
        assert lower == pytest.approx(found.epsilon_lower, rel=1e-12) and lower < found.epsilon
        answer = "yes: a proven break" if lower > 0.5 else "not yet: the bound stays below ε_s"
        return answer, f"**{lower:.4g}**"  # the step quotes the page table's 4 digits
    raise AssertionError(f"no independent check for step {step_key!r}")


def open_step(lesson, number: int, **params) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page("app_pages/learn.py")
    at.query_params.update({"learn_lesson": lesson.name, "learn_step": str(number), **params})
    return at.run()


def test_lessons_are_data_with_everything_a_step_needs():
    from ui.lesson_scenes import SCENES

    assert len(LESSONS) >= 5
    assert len({lesson.name for lesson in LESSONS}) == len(LESSONS)
    for lesson in LESSONS:
        assert len(lesson.steps) >= 3
        for step in lesson.steps:
            assert step.scene in SCENES and step.explain and step.text
            assert (ROOT / step.explore.page).exists()
            assert step.control.default in step.control.options
            if step.question is not None:
                assert step.question.claim in step.question.options
            for name in step.explore.shows:  # a number the link must show is one it quotes
                assert _spec(step, name) is not None, (step.key, name)


# --- the numbers a lesson quotes, and where the linked page shows them ------------------------

NUMBER = re.compile(r"[-+−]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?%?")


def _spec(step, name: str) -> str | None:
    """The format spec the step quotes ``name`` with: its text first, then the explanation
    and the reveal ("{cape:.1%}" → ".1%"; a bare "{sites}" → "")."""
    sources = (step.text, step.explain, step.question.reveal if step.question else "")
    for source in sources:
        for _, field, spec, _ in string.Formatter().parse(source):
            if field == name:
                return spec or ""
    return None


def _numbers(text: str) -> list[float]:
    out = []
    for token in NUMBER.findall(str(text)):
        token = token.replace(",", "").replace("−", "-")
        out.append(float(token[:-1]) / 100 if token.endswith("%") else float(token))
    return out


def page_numbers(at: AppTest) -> list[float]:
    """Every number on an AppTest page: metrics, text, tables and data frames."""
    found: list[float] = []
    for kind in ("metric", "markdown", "caption", "success", "warning", "error", "info"):
        for element in at.get(kind):
            found += _numbers(element.value)
            found += _numbers(getattr(element, "label", ""))
    for kind in ("dataframe", "table"):
        for element in at.get(kind):
            for cell in np.ravel(element.value.to_numpy()):
                if isinstance(cell, (int, float, np.number)) and not isinstance(cell, bool):
                    found.append(float(cell))
                elif isinstance(cell, str):
                    found += _numbers(cell)
    return [x for x in found if math.isfinite(x)]


def shown_at_precision(value: float, spec: str, numbers: list[float]) -> bool:
    """Whether some number on the page reads as ``value`` at the lesson's precision."""
    spec = spec or "g"
    want = format(value, spec)
    return any(format(x, spec) == want for x in numbers)


def _arrived(value, texts: list[str]) -> bool:
    """The page's session value equals what the link said (labels for multiselects)."""
    if isinstance(value, list):
        names = []
        for v in value:
            try:
                names.append(label(v))
            except ValueError:
                names.append(f"site {v}")
        return names == texts
    return _same(value, texts[0])


def _grouped(pairs) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for key, value in pairs:
        out.setdefault(key, []).append(value)
    return out


def open_link(at: AppTest, step) -> tuple[AppTest, dict[str, list[str]]]:
    """Follow the step's Explore link: a fresh session at its page with its query string."""
    link = at.get("page_link")[0].proto
    params = _grouped(urllib.parse.parse_qsl(link.query_string))
    target = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    target.switch_page(step.explore.page)
    target.query_params.update({k: v if len(v) > 1 else v[0] for k, v in params.items()})
    return target.run(), params


def _answer_both_ways(at: AppTest, lesson, step, answer: str, number_shown: str) -> None:
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
@pytest.mark.parametrize(("lesson", "number", "step"), STEPS, ids=IDS)
def test_every_step_agrees_with_itself_and_its_link(lesson, number, step):
    """One page run per step at its default, shared by every check: it renders; the quiz's
    computed answer is what the step's text claims and what dpcore, called here, says (a tie
    only within two standard errors); it answers both ways; and its Explore link opens a page
    with every setting the lesson used and the numbers the lesson quotes."""
    from ui.lesson_scenes import SCENES

    at = open_step(lesson, number)
    assert not at.exception and not at.error
    assert at.markdown and any(step.title in m.value for m in at.markdown)
    assert len(at.get("plotly_chart")) == 1
    assert any(e.label == "What am I looking at?" for e in at.expander)
    assert len(at.get("page_link")) == 1

    value = step.control.default
    answer, number_shown = truth(step.key, value)
    assert answer == step.question.claim, (answer, step.question.claim)  # prose and quiz agree
    _answer_both_ways(at, lesson, step, answer, number_shown)

    target, params = open_link(at, step)
    numbers = SCENES[step.scene](value).numbers  # the scene the page above drew (same cache)
    assert params == _grouped(step.explore.query(numbers))  # the link carries every setting
    assert not target.exception  # (the Privacy explorer may show a verdict as an error box)
    section = params.pop(SECTION, [None])[0]  # where the link lands, not a setting
    assert section == step.explore.section
    if section is not None:  # the page has a header with that anchor
        assert section in [h.proto.anchor for h in (*target.header, *target.subheader)], section
    for key, texts in params.items():  # every setting arrived on the page
        assert key in target.session_state, key
        assert _arrived(target.session_state[key], texts), (key, target.session_state[key], texts)
    on_page = page_numbers(target)
    for name in step.explore.shows:
        spec = _spec(step, name)
        assert shown_at_precision(numbers[name], spec, on_page), (name, numbers[name], spec)


CHECKED_VALUES = {
    "calibration": [10.0],
    "trust": [32],  # enough bits: no wrap-around, about central's noise
    "audit": [20_000],  # too few games: the bound stays below the promise
    "collusion": [2, 4],
    "conventional": [7],
    "attacker": ["site 1's own release"],
}


@pytest.mark.app
@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(CHECKED_VALUES))
def test_questions_whose_answer_turns_with_the_control(key):
    lesson, number, step = next(t for t in STEPS if t[2].key == key)
    for value in CHECKED_VALUES[key]:
        shown = value if isinstance(value, str) else f"{value:g}"  # as the control's URL holds it
        at = open_step(lesson, number, **{"learn_" + step.control.key: shown})
        assert not at.exception and not at.error
        _answer_both_ways(at, lesson, step, *truth(step.key, value))
        if step.explore.shows:  # the link follows the control (colluders, S, ε)
            from ui.lesson_scenes import SCENES

            target, params = open_link(at, step)
            numbers, on_page = SCENES[step.scene](value).numbers, page_numbers(target)
            params.pop(SECTION, None)
            for key_, texts in params.items():
                assert _arrived(target.session_state[key_], texts), key_
            for name in step.explore.shows:
                assert shown_at_precision(numbers[name], _spec(step, name), on_page), name


@pytest.mark.slow
@pytest.mark.parametrize("key", ["pca", "pca_sites", "tensor"])
def test_lesson5_answers_are_honest_at_every_epsilon(key):
    """At every ε the control offers, the scene's answer is dpcore's verdict under the stated
    rule, and the reveal's separation is the one the answer rests on."""
    from ui.lesson_scenes import SCENES

    step = next(t[2] for t in STEPS if t[2].key == key)
    for value in step.control.options:
        numbers = SCENES[step.scene](value).numbers
        answer, _ = truth(key, value)
        assert numbers["answer"] == answer, (value, numbers["answer"], answer)
        assert (numbers["answer"] == "about the same") == (numbers["z"] <= TIE)
        if value == step.control.default:  # the step's claim stands beyond two standard errors
            assert answer == step.question.claim and numbers["z"] > TIE, (value, numbers["z"])


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


def _progress(at: AppTest) -> str:
    return next(c.value for c in at.caption if c.value.startswith("**Your progress**"))


@pytest.mark.app
def test_answered_steps_and_finished_lessons_get_done_marks():
    lesson = LESSONS[0]
    at = open_step(lesson, 1)
    assert f"{lesson.name} 0/{len(lesson.steps)}" in _progress(at)
    for number, step in enumerate(lesson.steps, 1):
        if number > 1:
            at.button(key="lesson_next").click().run()
        assert f"✓ {number}" not in _progress(at)
        radio = at.radio(key=f"q_{lesson.key}_{step.key}")
        radio.set_value(radio.options[0]).run()  # any answer reveals: the step is done
        assert f"✓ {number}" in _progress(at)
    assert f"✓ {lesson.name}" in _progress(at)  # the lesson is done
    at.selectbox(key="learn_lesson").set_value(LESSONS[1].name).run()
    text = _progress(at)  # kept in the session across lessons; the new one not started
    assert f"✓ {lesson.name}" in text and f"{LESSONS[1].name} 0/" in text
    assert "✓ 1" not in text.split("Steps of this lesson:")[1]
    assert not at.exception and not at.error


def test_progress_marks_count_finished_steps():
    from learning.lessons.progress import lesson_marks, mark_done, step_marks, steps_done

    done: set[str] = set()
    first, second = LESSONS[0], LESSONS[1]
    mark_done(done, first, first.steps[1])
    assert steps_done(first, done) == 1 and steps_done(second, done) == 0
    assert step_marks(first, done) == "1 · ✓ 2 · 3"
    for step in first.steps:
        mark_done(done, first, step)
    marks = lesson_marks(LESSONS, done).split(" · ")
    assert marks[0] == f"✓ {first.name}" and marks[1] == f"{second.name} 0/3"


def _same(value, text: str) -> bool:
    if str(value) in AXIS_LABELS:  # the sweep-axis control's URL holds its label ("ε", "S")
        return AXIS_LABELS[str(value)].split(" ")[-1] == text
    if isinstance(value, bool):
        return str(value).lower() == text
    if isinstance(value, (int, float)):
        return math.isclose(float(value), float(text))
    return str(value) == text


@pytest.mark.app
def test_epsilon_is_said_in_words_for_one_person_in_lesson_one_and_on_the_overview():
    """e^ε for the reader's ε and for the class's pair ε = 0.5 and ε = 5, computed."""
    low, high = f"{math.exp(0.5):.3g}×", f"{math.exp(5.0):.3g}×"  # 1.65×, 148×
    assert (low, high) == ("1.65×", "148×")
    at = open_step(LESSONS[0], 1, learn_eps="5")
    text = next(m.value for m in at.markdown if "What ε promises one person" in m.value)
    assert f"e^ε = **{high}**" in text and low in text
    home = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    assert not home.exception
    words = next(m.value for m in home.markdown if "Take Ana" in m.value)
    assert "ε = 0.5 promises" in words and f"e^ε = **{low}**" in words and high in words
    assert "What ε = 0.5 promises one person" in [h.value for h in home.subheader]
    home.select_slider(key="ov_eps").set_value(0.1).run()
    words = next(m.value for m in home.markdown if "Take Ana" in m.value)
    assert f"e^ε = **{math.exp(0.1):.3g}×**" in words
    # its heading follows the slider (issue #49: it kept "ε = 0.1" after moving it)
    assert "What ε = 0.1 promises one person" in [h.value for h in home.subheader]


@pytest.mark.app
def test_next_on_a_last_step_opens_the_next_lesson_and_the_course_ends():
    # Issue #40 item 3: Next on a lesson's last step did nothing (a class met it 4 times).
    first, second = LESSONS[0], LESSONS[1]
    at = open_step(first, len(first.steps))
    at.button(key="lesson_next").click().run()
    assert at.selectbox(key="learn_lesson").value == second.name
    assert at.select_slider(key="learn_step").value == 1
    assert any(second.steps[0].title in m.value for m in at.markdown)
    last = LESSONS[-1]
    at = open_step(last, len(last.steps))
    at.button(key="lesson_next").click().run()
    assert at.selectbox(key="learn_lesson").value == last.name  # nowhere further to go
    assert any("finished every lesson" in s.value for s in at.success)
    assert not at.exception and not at.error


@pytest.mark.app
def test_explore_link_labels_are_filled_with_the_steps_numbers():
    # Issue #40 item 3: lesson 2 step 2's link read "({protocol_sites} sites)".
    from ui.lesson_scenes import SCENES

    lesson, number, step = next(t for t in STEPS if "{" in t[2].explore.label)
    at = open_step(lesson, number)
    label = at.get("page_link")[0].proto.label
    numbers = SCENES[step.scene](step.control.default).numbers
    assert "{" not in label and label == step.explore.label.format(**numbers)


def test_progress_survives_as_a_cookie_of_known_steps_only():
    # Issue #40 item 3: progress was lost on reload. It is kept in a browser cookie (the
    # learner's, never a link's): the text round-trips, and anything unknown is dropped.
    from learning.lessons.progress import decode_done, encode_done, mark_done

    done: set[str] = set()
    for lesson in LESSONS[:2]:
        for step in lesson.steps[:2]:
            mark_done(done, lesson, step)
    text = encode_done(done)
    assert decode_done(text, LESSONS) == done
    assert decode_done(text + ".nosuch:step.noise:<script>", LESSONS) == done
    assert decode_done(None, LESSONS) == set() == decode_done("", LESSONS)


@pytest.mark.slow
@pytest.mark.parametrize("key", ["pca", "tensor"])
def test_lesson5_text_says_what_the_numbers_say_at_every_epsilon(key):
    # Issue #40 item 3: lesson 5 step 3 at ε = 0.01 said "lower error" where the answer was
    # "about the same". The step's sentence is the verdict of the same two-standard-error rule.
    from ui.lesson_scenes import SCENES, _duel

    step = next(t[2] for t in STEPS if t[2].key == key)
    seen = set()
    for value in step.control.options:
        numbers = SCENES[step.scene](value).numbers
        text = step.text.format(**numbers)
        seen.add(numbers["answer"])
        assert ("about the same" in text) == (numbers["answer"] == "about the same"), value
        assert ("CAPE's is the" in text) == (numbers["answer"] == step.question.claim), value
        assert f"{numbers['z']:.1f} standard errors" in text, value
    if key == "tensor":  # the case, a tie at ε = 0.01, and the claim
        assert step.question.claim in seen
        # The issue's tie was 8 runs' (0.9 standard errors); 16 runs under streams keyed by
        # name (issue #51) separate every ε of the control (ε = 0.01: 5.0), so the tie's
        # sentence is checked on the scene's numbers with conventional's mean moved to 1.5 of
        # its standard errors from CAPE's (z = 1.5·se_conv/√(se_cape² + se_conv²) ≤ 1.5 < 2:
        # a tie by the rule).
        numbers = SCENES[step.scene](0.01).numbers
        (cm, cs), vs = (numbers["cape"], numbers["cape_se"]), numbers["conv_se"]
        tie = _duel({"cape": (cm, cs), "conv": (cm + 1.5 * vs, vs)}, False, "capeAGN")
        assert tie["answer"] == "about the same"
        text = step.text.format(**(numbers | tie))
        assert "about the same" in text and "CAPE's is the" not in text
        assert f"{tie['z']:.1f} standard errors" in text


def test_the_collusion_step_opens_with_colluders_beyond_the_bound():
    # Issue #40 item 8: the step about colluding sites opened with none colluding.
    import dpcore

    step = next(t[2] for t in STEPS if t[2].key == "collusion")
    assert step.control.default > dpcore.collusion_bound(5)  # S = 5 equal sites


@pytest.mark.app
def test_a_step_builds_its_scene_once_per_value(monkeypatch):
    # A move back to a value already shown reuses the scene (figure and numbers) built then,
    # shared by the sessions (issue #36 item 4): rebuilding and validating its Plotly figure
    # on every rerun was ~58 % of a cached move on this page. Before: one build per run.
    from ui.lesson_scenes import SCENES

    lesson, number, step = next(s for s in STEPS if s[2].control.kind != "segmented")
    calls = []
    real = SCENES[step.scene]

    def counting(value):
        calls.append(value)
        return real(value)

    monkeypatch.setitem(SCENES, step.scene, counting)
    at = open_step(lesson, number)
    key = "learn_" + step.control.key
    home = at.select_slider(key=key).value
    other = next(o for o in step.control.options if o != home)
    for value in (other, home, other, home):
        at.select_slider(key=key).set_value(value).run()
        assert not at.exception and not at.error
    assert calls == [home, other]  # each value's scene built once, four moves after
