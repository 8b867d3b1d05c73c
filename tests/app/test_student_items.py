"""Smaller things a student notices (issue #49): the glossary's δ and the lessons' δ agree and
are true, the steppers' Next stops on the last step, the ledger names a site only when one
spent more, and the rounds command printed on the page runs as printed (that one is in
tests/pages/test_baselines_page.py, beside the page's other command checks). Also: the scripts
app.py installs survive Streamlit's sanitizer (the navigation's roles, ui/nav_a11y.js)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from learning.run_replay import EXAMPLE, parse_run_log, replay_steps

ROOT = Path(__file__).resolve().parents[2]


def _protocol(**params: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page("app_pages/protocol.py")
    at.query_params.update(params)
    return at.run()


@pytest.mark.app
def test_the_replays_next_is_disabled_on_its_last_message_and_back_on_its_first():
    total = len(replay_steps(parse_run_log(EXAMPLE.read_text())))
    log = {"pr_src": "a real run's log"}
    at = _protocol(**log, pr_logstep=str(total))
    assert not at.exception
    assert at.button(key="logstep_next").disabled and not at.button(key="logstep_back").disabled
    at.button(key="logstep_back").click().run()  # one back: Next works again
    assert any(m.value.startswith(f"## {total - 1}/{total}") for m in at.markdown)
    assert not at.button(key="logstep_next").disabled
    at = _protocol(**log)  # the first message
    assert at.button(key="logstep_back").disabled and not at.button(key="logstep_next").disabled


@pytest.mark.app
def test_the_simulated_steppers_next_is_disabled_on_its_last_step():
    total = int(_protocol().slider(key="pr_step").max)
    at = _protocol(pr_step=str(total))
    assert at.slider(key="pr_step").value == total
    assert at.button(key="step_next").disabled and not at.button(key="step_back").disabled
    at = _protocol(pr_step="2")
    assert not at.button(key="step_next").disabled and not at.button(key="step_back").disabled


def test_the_ledger_names_a_site_only_when_it_spent_more_than_the_others():
    import dpcore
    from figures.composition import ledger_text

    def said(budgets, multipliers):  # 3 releases of each site's noise multiplier z_s
        ledger = dpcore.PrivacyLedger(budget=budgets, delta=[1e-5] * len(budgets))
        summary = ledger.add(multipliers, count=3).summary()
        return summary, ledger_text(summary, releases=3, accountant="exact")

    summary, equal = said([4.0] * 5, [3.0] * 5)  # issue #49: "Site 2 has spent the largest …"
    first = summary.iloc[0]
    assert "Site " not in equal and "Sites " not in equal, equal
    assert (
        f"Every site has spent the same share of its budget: ε = {first.spent:.3g} of 4 "
        f"({first.fraction:.0%}) each." in equal
    ), equal
    summary, shares = said([2.0, 4.0], [3.0, 3.0])  # the same ε spent, different shares
    assert "Site 1 has spent the largest share" in shares, shares
    summary, one = said([4.0, 4.0, 4.0], [3.0, 2.0, 3.0])  # site 2's smaller noise spends more
    assert f"Site 2 has spent the largest share of its budget: ε = {summary.spent[1]:.3g}" in one
    summary, two = said([4.0, 4.0, 4.0], [2.0, 3.0, 2.0])
    assert (
        f"Sites 1, 3 have spent the largest share of their budgets ({summary.fraction[0]:.0%})."
        in two
    ), two


@pytest.mark.app
def test_the_ledger_of_equal_sites_on_the_page_names_no_site():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page("app_pages/composition.py").run()
    at.button(key="rr_release").click().run()
    assert not at.exception
    text = next(m.value for m in at.markdown if "release(s) recorded" in m.value)
    assert "Every site has spent the same share" in text and "Site " not in text, text


def test_the_glossary_and_lesson_one_say_the_same_true_thing_about_delta():
    """Issue #49: the glossary said δ "well below 1/N" while the lessons use δ = 1/N. Both now
    say what a real release needs and what the lessons use, and what they say is true."""
    from learning.glossary import BY_KEY
    from learning.lessons import LESSONS
    from learning.settings import LESSON_DELTA, N_MEAN
    from ui.lesson_scenes import SCENES

    step = next(s for s in LESSONS[0].steps if s.key == "delta")
    text = step.text.format(**SCENES[step.scene](step.control.default).numbers)
    glossary = BY_KEY["delta"].words
    for said in (glossary, text):
        assert "well below 1/N" in said  # what a real release needs
        assert f"δ = {LESSON_DELTA:g}" in said and "exactly 1/N" in said  # what lessons use
        assert f"mean of {N_MEAN} values" in said
    assert LESSON_DELTA == 1 / N_MEAN  # exactly 1/N: true
    assert step.control.default == LESSON_DELTA
    # "for the sites of 1,000–5,000 in lessons 2–4 it is above 1/N_s": every table they link
    for lesson in LESSONS[1:4]:
        for s in lesson.steps:
            numbers = SCENES[s.scene](s.control.default).numbers
            tables = [v for k, v in s.explore.query(numbers) if k.endswith("_sites")]
            for table in tables:
                for row in table.split(";"):
                    n, _, delta, _ = (float(x) for x in row.split(","))
                    assert delta == LESSON_DELTA and delta > 1 / n, (lesson.key, s.key, row)
                    assert 1000 <= n <= 5000, (lesson.key, s.key, row)


def test_the_installed_scripts_survive_streamlits_sanitizer():
    """app.py installs ui/history.js, ui/scheme.js, ui/nav_a11y.js, ui/keys.js and
    ui/page_top.js as one st.html script. Streamlit sanitizes it with DOMPurify, whose
    SAFE_FOR_XML check removes a script element whose text holds "<" followed by a letter or
    "/" (as "<ul>" in a comment): the whole script, Back/Forward's history and the
    navigation's roles with it, silently (found while writing nav_a11y.js, issue #49)."""
    import re

    from ui.state import HISTORY_JS, KEYS_JS, NAV_A11Y_JS, PAGE_TOP_JS, SCHEME_JS

    scripts = (("history", HISTORY_JS), ("scheme", SCHEME_JS), ("nav", NAV_A11Y_JS))
    for name, text in (*scripts, ("keys", KEYS_JS), ("top", PAGE_TOP_JS)):
        assert not re.search(r"<[/\w]", text), (name, re.search(r".{30}<[/\w].{30}", text))
