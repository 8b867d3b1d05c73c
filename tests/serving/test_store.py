"""The disk store of heavy results that several app processes share (serving/store.py), and
the heavy lane using it (serving/jobs.py): atomic, bounded, private, and a result computed in
one process is the answer in another."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from serving import worker
from serving.jobs import Lane, request_key
from serving.store import STORE_ENV, STORE_MB_ENV, DiskStore, code_stamp, store_from_env

ROOT = Path(__file__).resolve().parents[2]
KEY = "ab" * 32  # a request key is a sha256 hex digest


def _key(i: int) -> str:
    return f"{i:064x}"


def test_a_value_written_by_one_store_is_read_by_another_on_the_same_directory(tmp_path):
    first, second = DiskStore(tmp_path, 2**20), DiskStore(tmp_path, 2**20)
    assert second.get(KEY) is None
    assert first.put(KEY, {"frame": [1.5, 2.5], "status": "ok"})
    assert second.get(KEY) == {"frame": [1.5, 2.5], "status": "ok"}
    assert (tmp_path.stat().st_mode & 0o777) == 0o700  # pickles: nobody else may write here


def test_the_store_stays_within_its_bound_removing_the_least_recently_used(tmp_path):
    store = DiskStore(tmp_path, 10_000)
    blob = b"x" * 3_000  # pickled: a little over 3,000 bytes, so three fit and four do not
    for i in range(3):
        assert store.put(_key(i), blob)
        os.utime(tmp_path / f"{_key(i)}.pkl", (1_000 + i, 1_000 + i))  # distinct ages
    assert store.get(_key(0)) == blob  # read: now the most recently used
    assert store.put(_key(3), blob)
    assert store.size() <= 10_000
    # the least recently used (key 1: written second, never read) went first
    assert store.get(_key(1)) is None
    assert all(store.get(_key(i)) == blob for i in (0, 2, 3))


def test_a_value_larger_than_the_bound_is_not_stored(tmp_path):
    store = DiskStore(tmp_path, 1_000)
    assert not store.put(KEY, b"x" * 2_000)
    assert store.get(KEY) is None and store.size() == 0


def test_a_write_that_fails_leaves_neither_a_half_file_nor_a_temporary(tmp_path, monkeypatch):
    store = DiskStore(tmp_path, 2**20)

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        store.put(KEY, [1, 2, 3])
    assert list(tmp_path.iterdir()) == []


def test_an_unreadable_file_is_a_miss_and_is_removed(tmp_path):
    store = DiskStore(tmp_path, 2**20)
    (tmp_path / f"{KEY}.pkl").write_bytes(b"not a pickle")
    assert store.get(KEY) is None
    assert not (tmp_path / f"{KEY}.pkl").exists()


@pytest.mark.parametrize("key", ["../etc/passwd", "", "AB" * 32, "g" * 64, "a" * 200])
def test_a_key_is_a_lowercase_digest_never_a_path(tmp_path, key):
    with pytest.raises(ValueError, match="key"):
        DiskStore(tmp_path, 2**20).get(key)


def test_the_environment_names_the_store_under_a_subdirectory_of_the_code(tmp_path, monkeypatch):
    monkeypatch.delenv(STORE_ENV, raising=False)
    assert store_from_env() is None
    monkeypatch.setenv(STORE_ENV, str(tmp_path))
    monkeypatch.setenv(STORE_MB_ENV, "3")
    store = store_from_env()
    assert store is not None
    assert store.directory == tmp_path / code_stamp() and store.max_bytes == 3 * 2**20
    monkeypatch.setenv(STORE_MB_ENV, "0")
    with pytest.raises(ValueError, match=STORE_MB_ENV):
        store_from_env()


def test_a_lane_answers_from_the_store_without_running_a_job(tmp_path):
    store = DiskStore(tmp_path, 2**20)
    key = request_key(sorted, ([3, 1, 2],), {})
    store.put(key, worker.Outcome("ok", [1, 2, 3]))
    lane = Lane("t", 1, worker.Limits(2**30, seconds=60), store=store)
    assert lane.kept(key) == worker.Outcome("ok", [1, 2, 3])
    assert lane.busy() == (0, 0)
    assert Lane("t", 1, worker.Limits(2**30, seconds=60)).kept(key) is None  # no store, no answer


# Process A computes os.getpid() as a heavy job (in a child process of its own) and the lane
# stores the outcome; process B, a separate interpreter on the same directory, must answer the
# same request with that pid (A's child's, so A's result, not a recomputation) from the store,
# without a job of its own.
_PROCESS = textwrap.dedent(
    """
    import json, os, sys, time
    sys.path.insert(0, {root!r})
    from serving import worker
    from serving.jobs import Lane, request_key
    from serving.store import store_from_env

    lane = Lane("heavy", 1, worker.Limits(2**31, seconds=60), store=store_from_env())
    key = request_key(os.getpid, (), {{}})
    kept = lane.kept(key)
    if kept is None:
        outcome = lane.run_blocking(key, os.getpid, (), "student")
        deadline = time.monotonic() + 30  # the monitor writes the store when it next wakes
        while lane.store.get(key) is None and time.monotonic() < deadline:
            time.sleep(0.1)
    else:
        outcome = kept
    print(json.dumps({{"from_store": kept is not None, "value": outcome.value,
                       "me": os.getpid(), "busy": list(lane.busy())}}))
    """
)


@pytest.mark.slow
def test_a_heavy_result_computed_by_one_process_is_served_by_another(tmp_path):
    import json

    env = {**os.environ, STORE_ENV: str(tmp_path / "store")}
    script = _PROCESS.format(root=str(ROOT))

    def process() -> dict:
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    a, b = process(), process()
    assert not a["from_store"] and a["value"] != a["me"]  # A computed it, in a child
    assert b["from_store"] and b["busy"] == [0, 0]  # B ran no job
    assert b["value"] == a["value"]  # A's child's pid: A's result, not a recomputation
