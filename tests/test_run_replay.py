"""The protocol stepper replays a real run's log (learning/run_replay.py, ui/replay.py; #37)."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from learning.run_replay import EXAMPLE, parse_run_log, replay_steps, site_count

ROOT = Path(__file__).resolve().parents[1]


def test_the_example_log_is_a_real_three_site_run_step_by_step():
    """The bundled log came from `python -m federated run --sites 3 --seed 0`: 4 hellos out
    and back, 2 noise messages, 3 releases out and back; every receiver gets its name."""
    entries = parse_run_log(EXAMPLE.read_text())
    steps = replay_steps(entries)
    assert len(steps) == len(entries) == 17 and site_count(entries) == 3
    messages = [s.message for s in steps if s.message]
    assert len(messages) == 16
    parties = {p for m in messages for p in m[:2]}
    assert parties == {"aggregator", "noise generator", "site 1", "site 2", "site 3"}
    hello_out = [m[1] for m in messages[:4]]
    assert sorted(hello_out) == ["noise generator", "site 1", "site 2", "site 3"]
    assert steps[-1].title == "The aggregator publishes the release" and not steps[-1].message
    total = sum(e["bytes"] for e in entries if e["round"] != "end")
    assert f"{total:,} payload bytes" in steps[-1].text
    # each step draws the messages before it, faintly
    assert all(len(s.sent) == min(i, 16) for i, s in enumerate(steps))


def test_a_refusal_ends_the_replay_and_bad_lines_are_named():
    log = (
        '{"round": "hello", "sender": "aggregator", "receiver": "node 5", "kind": "v", '
        '"shape": null, "bytes": 13, "time": 0.1, "node": "5"}\n'
        '{"round": "end", "kind": "refusal", "party": "site 2", "reason": "NaN", "time": 3.0}\n'
    )
    steps = replay_steps(parse_run_log(log))
    assert steps[0].message == ("aggregator", "node 5", "v")  # no reply named node 5
    assert steps[-1].title == "The aggregator refuses: site 2"
    with pytest.raises(ValueError, match="line 2 is not JSON"):
        parse_run_log(log.splitlines()[0] + "\n{oops\n")
    with pytest.raises(ValueError, match="line 1 lacks sender, receiver, bytes"):
        parse_run_log('{"round": "hello", "kind": "v", "time": 0}\n')
    with pytest.raises(ValueError, match="no entries"):
        parse_run_log("\n")


@pytest.mark.app
def test_the_page_steps_through_the_real_log():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).switch_page(
        "app_pages/protocol.py"
    )
    at.query_params.update({"pr_src": "a real run's log", "pr_logstep": "10"})
    at.run()
    assert not at.exception and not at.error
    steps = replay_steps(parse_run_log(EXAMPLE.read_text()))
    assert any(m.value == f"## 10/17 · {steps[9].title}" for m in at.markdown)
    assert any(m.value == steps[9].text for m in at.markdown)
    at.button(key="logstep_next").click().run()
    assert any(m.value.startswith("## 11/17") for m in at.markdown)
