"""Smaller things a student notices (issue #49): the glossary's δ and the lessons' δ agree and
are true, the steppers' Next stops on the last step, the ledger names a site only when one
spent more, and the rounds command printed on the page runs as printed."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from learning.run_replay import EXAMPLE, parse_run_log, replay_steps

ROOT = Path(__file__).resolve().parents[1]


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
