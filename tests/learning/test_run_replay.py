"""The protocol stepper replays a real run's log (learning/run_replay.py, ui/replay.py; #37)."""

import json
import math
import re
import time
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from figures.protocol import replay_figure
from learning import run_replay
from learning.run_replay import (
    EXAMPLE,
    MAX_LINES,
    NotARunLog,
    Sent,
    parse_run_log,
    replay,
    replay_steps,
    site_count,
)
from ui.guard import plain

ROOT = Path(__file__).resolve().parents[2]


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
    assert any(m.value == f"## 10/17 · {plain(steps[9].title)}" for m in at.markdown)
    assert any(m.value == plain(steps[9].text) for m in at.markdown)
    at.button(key="logstep_next").click().run()
    assert any(m.value.startswith("## 11/17") for m in at.markdown)


# --- issue #50: a replay that costs what it weighs, and refuses anything else in one sentence

LINE = json.loads(EXAMPLE.read_text().splitlines()[4])  # site 1 → aggregator, hello
GOOD = json.dumps(LINE)
END = '{"round": "end", "kind": "release", "shape": [4], "time": 20.0}'


def _log(lines: int) -> str:
    """A log of ``lines`` lines: the example's messages over and over, then its release."""
    body = [json.loads(x) for x in EXAMPLE.read_text().splitlines()[:-1]]
    out = []
    for i in range(lines - 1):
        entry = dict(body[i % len(body)], time=round(i * 0.001, 6))
        out.append(json.dumps(entry))
    return "\n".join([*out, END]) + "\n"


def _with(**fields) -> str:
    return json.dumps({**LINE, **fields}, allow_nan=True)


DEEP = "[" * 100_000 + "]" * 100_000
# Each a log whose line 2 is not a run log's (line 1 is a good one). Before issue #50, stepping
# through them on the page: 13 raised an exception (a JSON list, null, string or number line,
# a text time, NaN bytes, an unknown sender, site 0 and site 999, a number as receiver, a
# number as shape, deep nesting twice), 17 were replayed as if they were run logs, 3 refused.
MALFORMED = {
    "a JSON list line": "[1, 2, 3]",
    "a text time": _with(time="soon"),
    "bytes as NaN": _with(bytes=float("nan")),
    "an unknown sender": _with(sender="mallory"),
    "100,000-deep nesting": DEEP,
    "deep nesting inside a field": _with(kind=None)[:-1] + ', "x": ' + DEEP + "}",
    "a null line": "null",
    "a string line": '"hello"',
    "a number line": "42",
    "bytes as text": _with(bytes="13"),
    "bytes negative": _with(bytes=-1),
    "bytes a fraction": _with(bytes=1.5),
    "bytes true": _with(bytes=True),
    "time infinite": _with(time=float("inf")),
    "time negative": _with(time=-1),
    "shape a dict": _with(shape={"a": 1}),
    "shape a number": _with(shape=4),
    "shape of text": _with(shape=["x"]),
    "a number as receiver": _with(receiver=5),
    "round null": _with(round=None),
    "round empty": _with(round=""),
    "kind a list": _with(kind=["a"]),
    "node a dict": _with(node={"id": 1}),
    "site 0": _with(sender="site 0"),
    "site 999": _with(sender="site 999"),
    "a message between two sites": _with(receiver="site 2"),
    "a 5,000-digit number": _with(bytes=None)[:-1].replace("null", "1" * 5000) + "}",
    "a lone surrogate": _with(kind=None).replace("null", '"\\ud800"'),
    "a field of 10,000 characters": _with(kind="k" * 10_000),
    "a refusal's party a dict": '{"round": "end", "kind": "refusal", "time": 1, "party": {}}',
    "a refusal's reason a list": '{"round": "end", "kind": "refusal", "time": 1, "reason": []}',
    "not JSON": "{oops",
    "no fields": "{}",
}


@pytest.mark.parametrize("name", MALFORMED)
def test_a_malformed_log_is_one_sentence_naming_its_line(name):
    with pytest.raises(NotARunLog) as caught:
        replay(GOOD + "\n" + MALFORMED[name] + "\n" + END)
    sentence = str(caught.value)
    assert sentence.startswith("Not a run log: line 2") and sentence.endswith(".")
    assert "\n" not in sentence and len(sentence) < 300


def test_nothing_or_blank_lines_is_not_a_run_log():
    for text in ("", "\n\n  \n"):
        with pytest.raises(NotARunLog, match=r"^Not a run log: the run log has no entries\.$"):
            replay(text)


def test_a_log_past_the_bound_is_refused_before_it_is_read():
    """100,000 lines: one sentence stating the bound, in less CPU than reading the log would
    take (the lines are counted, not parsed)."""
    text = (GOOD + "\n") * 100_000
    started = time.process_time()
    with pytest.raises(NotARunLog) as caught:
        replay(text)
    refused = time.process_time() - started
    assert str(caught.value) == (
        f"This log has 100,000 lines; the stepper replays logs of at most {MAX_LINES:,} lines "
        "(a real run writes about 90 per release at 20 sites)."
    )
    started = time.process_time()
    replay((GOOD + "\n") * 10_000)
    assert refused < time.process_time() - started  # a tenth of the lines, parsed, costs more


def test_the_bound_itself_is_read_and_one_more_line_is_not(monkeypatch):
    monkeypatch.setattr(run_replay, "MAX_LINES", 1_000)  # read at each call: a cheaper bound
    assert len(replay((GOOD + "\n") * 1_000)) == 1_000
    assert len(replay((GOOD + "\n") * 999 + GOOD)) == 1_000  # no newline after the last line
    with pytest.raises(NotARunLog, match=r"^This log has 1,001 lines; .* at most 1,000 lines"):
        replay((GOOD + "\n") * 1_001)
    with pytest.raises(NotARunLog, match=r"^This log has 1,001 lines"):
        replay("\n" * 1_001)  # blank lines count: the bound is on what is uploaded


def _cost(text: str, runs: int) -> tuple[float, int]:
    """(least CPU seconds of ``runs`` replays of ``text`` and a step, tracemalloc's peak)."""
    best = math.inf
    for _ in range(runs):
        started = time.process_time()
        replay(text).step(0)
        best = min(best, time.process_time() - started)
    tracemalloc.start()
    try:
        kept = replay(text)
        kept.step(len(kept) - 1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return best, peak


@pytest.mark.slow
def test_replay_time_and_memory_grow_linearly_with_the_log():
    """1,000 and 10,000 lines (the 100,000 of the issue are past the bound: refused above).
    Before issue #50 each step copied every earlier message: 10× the lines took 30× the CPU
    and 66× the memory (6 MB → 399 MB)."""
    small, large = _log(1_000), _log(10_000)
    t_small, m_small = _cost(small, runs=5)
    t_large, m_large = _cost(large, runs=3)
    print(f"1,000 lines: {t_small:.3f} CPU-s, {m_small / 2**20:.1f} MB; "
          f"10,000: {t_large:.3f} CPU-s, {m_large / 2**20:.1f} MB")  # fmt: skip
    assert m_large <= 15 * m_small
    assert m_large <= 4 * len(large)  # what it weighs: a few times the text, not its square
    assert t_large <= 20 * t_small


def test_each_step_keeps_a_view_not_a_copy():
    r = replay(_log(2_000))
    steps = [r.step(i) for i in (0, 999, 1_999)]
    assert [len(s.sent) for s in steps] == [0, 999, 1_999]
    assert all(isinstance(s.sent, Sent) for s in steps)
    assert steps[2].sent[999] == steps[1].message and steps[2].sent[998] == steps[1].sent[-1]
    assert steps[2].message is None  # the release
    assert steps[1].sent == steps[2].sent[:999] == tuple(steps[2].sent)[:999]
    # the picture draws each (sender, receiver) pair once: the aggregator both ways with the
    # noise generator and 3 sites, 8 arrows, not 1,999
    pairs = steps[2].sent.pairs()
    assert len(pairs) == len(set(pairs)) == 8
    assert set(pairs) == {(s, r) for s, r, _ in steps[2].sent}
    figure = replay_figure(r.sites, steps[2])
    assert len(figure.layout.annotations) == len(pairs) + 1  # + the "sites" label


ODD_BUT_FINE = {
    "a round no one knew of": _with(round="finalize", kind="sealed releases and keys"),
    "a node that never replied": _with(sender="aggregator", receiver="node 99", node="99"),
    "a node id as a number": _with(node=17),
    "extra fields": _with(extra={"nested": [1, 2, {"x": None}]}),
    "a markdown image": _with(kind="![x](https://example.com/x.png) <img src=x>"),
}


@pytest.mark.parametrize("name", ODD_BUT_FINE)
def test_an_odd_but_valid_log_is_replayed_and_drawn(name):
    r = replay(GOOD + "\n" + ODD_BUT_FINE[name] + "\n" + END)
    for i in range(len(r)):
        replay_figure(r.sites, r.step(i))
    assert len(r) == 3 and r.step(2).title == "The aggregator publishes the release"


def test_a_refusal_naming_twenty_sites_is_replayed_whole():
    """federated.protocol.Refusal.of joins every party's problem: 20 sites' reasons are far
    past a field's 200 characters, and are a real run's log."""
    problems = [(f"site {s}", f"its release of shape (4,) is not finite (NaN at {s})")
                for s in range(1, 21)]  # fmt: skip
    end = {
        "round": "end",
        "kind": "refusal",
        "party": ", ".join(p for p, _ in problems),
        "reason": "; ".join(f"{p}: {r}" for p, r in problems),
        "time": 3.0,
    }
    r = replay(GOOD + "\n" + json.dumps(end))
    assert r.step(1).title == f"The aggregator refuses: {end['party']}"
    assert r.step(1).text == f"Nothing is released. {end['reason']}"


def test_a_log_of_only_its_end_is_one_step():
    r = replay(END)
    assert len(r) == 1 and r.sites == 0
    replay_figure(r.sites, r.step(0))


def _nested(inner):
    return st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    _nested,
    max_leaves=12,
)
_VALID = {
    "round": st.sampled_from(["hello", "noise", "release", "end", "finalize"]),
    "sender": st.sampled_from(["aggregator", "noise generator", "site 1", "site 3", "node 7"]),
    "receiver": st.sampled_from(["aggregator", "site 2", "node 7", "noise generator"]),
    "kind": st.sampled_from(["release", "refusal", "F_s"]),
    "shape": st.none() | st.lists(st.integers(0, 9), max_size=3),
    "bytes": st.integers(0, 10**6),
    "time": st.floats(0, 100),
    "node": st.none() | st.sampled_from(["7", "8"]),
    "party": st.sampled_from(["site 1"]),
    "reason": st.text(max_size=20),
}
_entry = st.fixed_dictionaries(
    {},
    optional={field: valid | _json for field, valid in _VALID.items()},
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(_entry | _json, min_size=1, max_size=6))
def test_any_json_in_any_field_is_a_replay_or_not_a_run_log(entries):
    """JSON values and structures in each field (or as the whole line): the replay, every
    step and its picture, or :class:`NotARunLog`; never another exception."""
    text = "\n".join(json.dumps(e, allow_nan=True) for e in entries)
    try:
        r = replay(text)
    except NotARunLog as err:
        assert str(err).startswith("Not a run log: ")
        return
    for i in range(len(r)):
        step = r.step(i)
        replay_figure(r.sites, step)
        assert len(step.sent) <= i


def _page_with_upload(text: str | bytes) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).switch_page(
        "app_pages/protocol.py"
    )
    at.query_params.update({"pr_src": "a real run's log"})
    at.run()
    data = text.encode() if isinstance(text, str) else text
    at.file_uploader(key="pr_log").set_value(("run-log.jsonl", data, "application/json"))
    return at.run()


@pytest.mark.app
@pytest.mark.parametrize(
    "name", ["a JSON list line", "bytes as NaN", "an unknown sender", "100,000-deep nesting"]
)
def test_a_malformed_upload_is_one_sentence_on_the_page(name):
    at = _page_with_upload(GOOD + "\n" + MALFORMED[name] + "\n" + END)
    assert not at.exception
    assert len(at.error) == 1
    assert at.error[0].value == plain(replay_error(GOOD + "\n" + MALFORMED[name] + "\n" + END))
    assert not at.slider  # nothing to step through


def replay_error(text: str) -> str:
    try:
        replay(text)
    except NotARunLog as err:
        return str(err)
    raise AssertionError("a run log")


@pytest.mark.app
def test_binary_and_too_long_uploads_are_one_sentence_on_the_page():
    at = _page_with_upload(bytes(range(256)) * 10)
    assert not at.exception and len(at.error) == 1
    assert at.error[0].value.startswith(plain("Not a run log: line 1 is not JSON"))
    at.file_uploader(key="pr_log").set_value(
        ("big.jsonl", ((GOOD + "\n") * 100_000).encode(), "application/json")
    )
    at.run()
    assert not at.exception and len(at.error) == 1
    assert at.error[0].value.startswith(plain("This log has 100,000 lines;"))


@pytest.mark.app
def test_log_fields_are_shown_as_written_never_as_markdown():
    """A Markdown image in a field was rendered (and fetched an outside address); every
    field is now escaped (ui.guard.plain) and the picture's text HTML-escaped."""
    text = GOOD + "\n" + ODD_BUT_FINE["a markdown image"] + "\n" + END
    at = _page_with_upload(text)
    at.query_params.update({"pr_logstep": "2"})
    at.slider(key="pr_logstep").set_value(2).run()
    assert not at.exception and not at.error
    step = replay(text).step(1)
    assert any(m.value == plain(step.text) for m in at.markdown)
    shown = " ".join(m.value for m in at.markdown)
    assert "\\!\\[x\\]\\(https" in shown and "\\<img" in shown  # escaped, so shown as written
    assert not re.search(r"(?<!\\)!\[|(?<!\\)<img", shown)  # never left as Markdown or HTML


@pytest.mark.app
def test_an_upload_is_hashed_and_read_once_however_often_the_page_reruns(monkeypatch):
    """Before issue #50 every rerun (each click of the message slider) parsed the log again;
    now its SHA-256 is taken once per uploaded file and the replay once per content."""
    import ui.cached.replay as cached
    import ui.replay as page

    calls = {"replay": 0, "digest": 0}

    def counted(name, real):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return real(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(cached, "replay", counted("replay", cached.replay))
    monkeypatch.setattr(page, "content_digest", counted("digest", page.content_digest))
    cached._replay_outcome.clear()
    text = _log(300)
    at = _page_with_upload(text)
    for step in (5, 100, 300):
        at.slider(key="pr_logstep").set_value(step).run()
        assert not at.exception and not at.error
        assert any(m.value.startswith(f"## {step}/300") for m in at.markdown)
    assert calls == {"replay": 2, "digest": 1}  # the example (before the upload), the upload


@pytest.mark.app
def test_a_one_line_log_is_shown_without_a_slider():
    """A slider needs two ends: a log of only its release is one step, shown whole (before
    issue #50 Streamlit raised on a slider from 1 to 1)."""
    at = _page_with_upload(END)
    assert not at.exception and not at.error
    assert not at.slider
    assert any(m.value.startswith("## 1/1") for m in at.markdown)
