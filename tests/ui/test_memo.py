"""The per-process memo in front of the cached core calls (ui/cached/memo.py, issue #36 item 4).

Every session of a process gets the one remembered result object, so these tests check that
it is keyed exactly as ``st.cache_data`` keys a call, bounded, forgotten with the cache, frozen
where NumPy can freeze it, and left unchanged by every page that reads it.
"""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import dpcore
from ui.cached import SPEC_HASH, call_core, memo, party_table

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _fresh_memo():
    memo.forget()
    yield
    memo.forget()


def _key(*args, **kwargs):
    return memo.key_of(party_table, args, kwargs, SPEC_HASH)


def test_keys_tell_apart_what_the_cache_tells_apart():
    # bool, int and float compare equal in Python (True == 1 == 1.0) but are three entries
    # of st.cache_data (it hashes the type): three keys here too; -0.0 == 0.0 likewise.
    keys = {_key(True), _key(1), _key(1.0), _key(0.0), _key(-0.0), _key("1"), _key((1,))}
    assert len(keys) == 7
    sites = dpcore.Sites((100, 200), epsilon=0.5, delta=1e-3)
    same = dpcore.Sites([100, 200], epsilon=[0.5, 0.5], delta=1e-3)
    assert _key(sites, "cape") == _key(same, "cape") != _key(sites, "joint")
    assert _key(sites, design="cape") == _key(same, design="cape") != _key(sites, "cape")
    # arguments the memo does not key go to the cache as before
    for unkeyed in (np.float64(0.5), [1, 2], {"a": 1}, b"x" * (memo.MAX_KEY_BYTES + 1), object()):
        assert _key(unkeyed) is None
        assert _key((1, (unkeyed,))) is None


def test_freeze_makes_every_array_in_a_result_read_only():
    @dataclasses.dataclass(frozen=True)
    class Result:
        table: np.ndarray
        parts: tuple

    result = {"a": np.zeros(3), "r": Result(np.ones(2), (np.arange(3), [np.eye(2)]))}
    memo.freeze(result)
    arrays = [result["a"], result["r"].table, result["r"].parts[0], result["r"].parts[1][0]]
    for array in arrays:
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 5


def test_the_memo_is_bounded_least_recently_used_first(monkeypatch):
    monkeypatch.setattr(memo.SHELF, "max_entries", 3)
    for i in range(3):
        memo.remember(("k", i), i)
    assert memo.get(("k", 0)) == 0  # used: now the most recent
    memo.remember(("k", 3), 3)
    assert memo.get(("k", 1)) is memo.MISSING  # the least recently used went
    assert [k for k, _ in memo.entries()] == [("k", 2), ("k", 0), ("k", 3)]
    # and by bytes: each array 800 kB; at a bound of 2 MB the oldest go until 2.4 MB - 0.8 MB
    # fit, so three are kept; a result over a tenth of the bound is not kept
    monkeypatch.setattr(memo.SHELF, "max_entries", 100)
    monkeypatch.setattr(memo.SHELF, "max_bytes", 8_000_000)
    memo.forget()
    for i in range(4):
        memo.remember(("a", i), np.zeros(100_000))
    monkeypatch.setattr(memo.SHELF, "max_bytes", 2_000_000)
    memo.remember(("a", 4), np.zeros(10))
    assert [k for k, _ in memo.entries()] == [("a", 2), ("a", 3), ("a", 4)]
    big = np.zeros(30_000)  # 240 kB > 2 MB / 10
    assert memo.remember(("big",), big) is big and memo.get(("big",)) is memo.MISSING
    assert big.flags.writeable  # not kept, not frozen


def test_call_core_returns_one_frozen_result_equal_to_the_caches_and_forgets_on_clear():
    sites = dpcore.Sites((100, 200, 400), epsilon=0.5, delta=1e-3)
    first = call_core(party_table, sites, "cape")
    again = call_core(party_table, dpcore.Sites((100, 200, 400), epsilon=0.5, delta=1e-3), "cape")
    assert again is first  # the one object, not an unpickled copy
    copy = party_table(sites, "cape")  # the cache itself: a fresh copy, equal
    assert copy is not first
    pd.testing.assert_frame_equal(copy, first)
    assert call_core(party_table, sites, "joint") is not first
    st.cache_data.clear()  # the cache forgets: so does the memo (tests rely on recomputing)
    assert call_core(party_table, sites, "cape") is not first


def _fingerprint(value) -> bytes:
    return pickle.dumps(value, protocol=5)


def _changed(remembered: dict) -> list[str]:
    """Names of the remembered results whose pickle differs from the one taken when they
    were remembered."""
    return [
        str(key[0])
        for key, value in memo.entries()
        if key in remembered and _fingerprint(value) != remembered[key]
    ]


def test_the_check_catches_a_result_changed_in_place(monkeypatch):
    taken = _spy(monkeypatch)
    sites = dpcore.Sites((100, 200), epsilon=0.5, delta=1e-3)
    frame = call_core(party_table, sites, "cape")
    assert _fingerprint(call_core(party_table, sites, "cape")) == taken[next(iter(taken))]
    assert not _changed(taken)
    frame.loc[0, "epsilon_joint"] = 99.0  # what a page must never do
    assert _changed(taken)


def _spy(monkeypatch) -> dict:
    """Record each result's pickle at the moment the memo keeps it."""
    taken: dict = {}
    keep = memo.remember

    def remember(key, value):
        kept = keep(key, value)
        if memo.get(key) is kept:
            taken[key] = _fingerprint(kept)
        return kept

    monkeypatch.setattr(memo, "remember", remember)
    return taken


# Pages that read remembered results, and a widget to move so that a second setting runs too.
PAGES = {
    "overview": ("slider", "ov_S", 4),
    "protocol": None,
    "averaging": ("slider", "avg_S", 4),
    "privacy": ("slider", "prv_S", 4),
    "trust_models": ("slider", "tm_S", 4),
    "composition": ("slider", "rr_S", 4),
    "audit": ("slider", "au_S", 4),
    "pca": None,
    "tensor": None,
}


@pytest.mark.app
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PAGES))
def test_no_page_changes_a_remembered_result(monkeypatch, name):
    """Run the page, run it again (now on the remembered objects), move a slider and back:
    every result the memo holds still pickles as it did when it was kept."""
    taken = _spy(monkeypatch)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page(f"app_pages/{name}.py").run()
    assert not at.exception, at.exception
    at.run()
    move = PAGES[name]
    if move is not None:
        kind, key, value = move
        widgets = [w for w in getattr(at, kind) if w.key == key]
        assert widgets, f"no {kind} {key} on {name}"
        before = widgets[0].value
        widgets[0].set_value(value).run()
        next(w for w in getattr(at, kind) if w.key == key).set_value(before).run()
    assert not at.exception, at.exception
    assert taken, f"{name}: no cached core call went through the memo"
    assert not _changed(taken), f"{name} changed a shared result in place: {_changed(taken)}"


def test_a_spinner_only_for_a_result_not_remembered(monkeypatch):
    # Issue #36 item 4: st.spinner starts a timer thread and sends a message on every rerun
    # (~4 % of a cached move on PCA); a remembered result needs none.
    import contextlib

    from ui.cached import call_core_with_spinner, core

    spun = []

    @contextlib.contextmanager
    def spinner(text):
        spun.append(text)
        yield

    monkeypatch.setattr(core.st, "spinner", spinner)

    @st.cache_data(show_spinner=False)
    def square(x: int) -> int:
        return x * x

    assert call_core_with_spinner("first", square, 3) == 9
    assert call_core_with_spinner("again", square, 3) == 9  # remembered: no spinner
    assert call_core_with_spinner("other", square, 4) == 16
    assert spun == ["first", "other"]
