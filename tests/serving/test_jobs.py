"""Heavy work (issue #12, items 1 and 3): bounded child processes, a queue with positions, one
job per session, cancel, work stopped when its session goes away, memory returned."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

import dpcore
from serving import jobs, worker

FAST = worker.Limits(memory_bytes=3 * 2**30, seconds=60)


def _wait(predicate, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is gone for our purposes
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.slow  # two job processes start and answer: over a second alone (the fast lane's rule)
def test_a_job_returns_its_value_or_its_refusal():
    out = worker.run(dpcore.gaussian_sigma, 1.0, epsilon=0.5, delta=1e-5, limits=FAST)
    assert out.status == "ok" and out.value == pytest.approx(
        dpcore.gaussian_sigma(1.0, epsilon=0.5, delta=1e-5)
    )
    out = worker.run(dpcore.gaussian_sigma, 1.0, epsilon=-1.0, delta=1e-5, limits=FAST)
    assert out.status == "refused" and "epsilon" in out.message


@pytest.mark.slow
def test_memory_and_time_bounds_stop_the_child_not_the_server():
    out = worker.run(np.ones, (2**20, 2**12), limits=FAST)  # 32 GiB
    assert out.status == "memory"
    start = time.monotonic()
    out = worker.run(time.sleep, 60, limits=worker.Limits(3 * 2**30, seconds=1.0))
    assert out.status == "timeout" and time.monotonic() - start < 30


def test_the_column_bomb_is_refused_before_any_parse_with_little_memory():
    # Issue #12: '1,'*9_900_000 + '1\n' was parsed whole (6.2 GB, the server aborted). Now the
    # bytes' shape is checked first: a line longer than a row of MAX_DIM numbers is refused.
    import tracemalloc

    from dpcore import load_csv

    bomb = ("1," * 9_900_000 + "1\n").encode()
    tracemalloc.start()
    with pytest.raises(ValueError, match="line of 19,800,001 bytes"):
        load_csv(bomb, name="b.csv")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 2 * len(bomb)  # the structural check, not a parse (which took gigabytes)


def _lane(slots: int = 1) -> jobs.Lane:
    return jobs.Lane("test", slots=slots, limits=FAST)


def test_queue_positions_one_job_per_session_and_shared_identical_requests():
    lane = _lane()
    first, _ = lane.submit("a", time.sleep, (30,), {}, "local:alice")
    second, _ = lane.submit("b", time.sleep, (30,), {}, "local:bob")
    third, _ = lane.submit("c", time.sleep, (30,), {}, "local:carol")
    assert lane.position(first)[0] == 0  # running
    assert lane.position(second) == (1, 2) and lane.position(third) == (2, 2)
    same, _ = lane.submit("c", time.sleep, (30,), {}, "local:dave")  # identical request
    assert same is third
    # Bob asks for something else: his earlier job leaves the queue (one per session)
    fourth, replaced = lane.submit("d", time.sleep, (30,), {}, "local:bob")
    assert replaced and second.outcome.status == "cancelled"
    assert lane.position(third) == (1, 2) and lane.position(fourth) == (2, 2)
    # Carol cancels: Dave still waits for the same request, so it stays
    assert lane.cancel("local:carol") and third.outcome is None
    for owner in ("local:alice", "local:dave", "local:bob"):
        lane.cancel(owner)
    assert _wait(lambda: lane.busy() == (0, 0))


def test_cancel_kills_the_running_child_and_the_next_job_starts():
    lane = _lane()
    running, _ = lane.submit("slow", time.sleep, (60,), {}, "local:alice")
    waiting, _ = lane.submit("quick", dpcore.cape_gain, ([100, 200, 300],), {}, "local:bob")
    pid = running.job._process.pid
    assert _alive(pid)
    lane.cancel("local:alice")
    assert lane.wait(running, 10).status == "cancelled"
    assert _wait(lambda: not _alive(pid))  # the process is gone, its memory with it
    outcome = lane.wait(waiting, 30)
    assert outcome.status == "ok" and outcome.value == pytest.approx(
        dpcore.cape_gain([100, 200, 300])
    )
    assert lane.kept("quick") is outcome  # asking again is free


@pytest.fixture
def gone(monkeypatch) -> set[str]:
    """The sessions whose browser is disconnected (add a tab's id to close it)."""
    away: set[str] = set()
    monkeypatch.setattr(jobs, "_session_alive", lambda owner: owner not in away)
    return away


@pytest.mark.slow
def test_work_stops_when_its_session_goes_away(gone, monkeypatch):
    monkeypatch.setattr(jobs, "DISCONNECT_GRACE_SECONDS", 1.0)
    lane = _lane()
    ticket, _ = lane.submit("slow", time.sleep, (60,), {}, "tab-1")
    pid = ticket.job._process.pid
    gone.add("tab-1")  # the student closed the tab
    assert lane.wait(ticket, 10).status == "cancelled"
    assert _wait(lambda: not _alive(pid))


def test_the_grace_is_twenty_seconds_unless_the_environment_names_another(monkeypatch):
    monkeypatch.delenv(jobs.GRACE_ENV, raising=False)
    assert jobs.disconnect_grace() == 20.0
    monkeypatch.setenv(jobs.GRACE_ENV, "3.5")
    assert jobs.disconnect_grace() == 3.5
    for bad in ("soon", "-1", "nan"):
        monkeypatch.setenv(jobs.GRACE_ENV, bad)
        with pytest.raises(ValueError, match=rf"{jobs.GRACE_ENV} must be .*≥ 0, got '{bad}'"):
            jobs.disconnect_grace()


@pytest.mark.slow  # waits out the grace period of a missed ping (~7 s)
def test_a_brief_disconnect_keeps_the_job(gone, monkeypatch):
    # A loaded server's browser misses a ping and reconnects (same session id) seconds later:
    # the job must survive the blip; it stops only after the grace without a connection.
    monkeypatch.setattr(jobs, "DISCONNECT_GRACE_SECONDS", 3.0)
    lane = _lane()
    ticket, _ = lane.submit("blip", time.sleep, (60,), {}, "tab-1")
    gone.add("tab-1")
    assert lane.wait(ticket, 1.5) is None  # disconnected for 1.5 s < 3 s: still running
    gone.discard("tab-1")  # reconnected
    time.sleep(2.5)  # past the grace since the first miss, but connected again
    assert ticket.outcome is None and ticket.job.poll() is None
    gone.add("tab-1")  # now the tab is closed for good
    assert lane.wait(ticket, 10).status == "cancelled"


@pytest.mark.slow
def test_a_heavy_job_runs_at_low_priority_on_one_core():
    out = worker.run(os.nice, 0, limits=FAST)
    assert out.status == "ok" and out.value >= os.nice(0) + 5

    out = worker.run(os.getenv, "CAPE_WORKERS", limits=FAST)
    assert out.value == "1"
    two = worker.Limits(FAST.memory_bytes, FAST.seconds, workers=2)  # CAPE_JOB_WORKERS=2
    assert worker.run(os.getenv, "CAPE_WORKERS", limits=two).value == "2"


@pytest.mark.slow
def test_a_lone_user_gets_every_core_a_class_one(gone, monkeypatch):
    # CAPE_JOB_WORKERS unset: the lane decides when the job starts.
    from dpcore import default_workers

    assert jobs.HEAVY.limits.workers is None or os.environ.get("CAPE_JOB_WORKERS")
    monkeypatch.setattr(jobs, "_seen", {})
    lane = jobs.Lane("cores", 1, worker.Limits(FAST.memory_bytes, FAST.seconds, workers=None))

    def cores(key: str, owner: str) -> str:
        ticket, _ = lane.submit(key, os.getenv, ("CAPE_WORKERS",), {}, owner)
        return lane.wait(ticket, 60).value

    jobs._seen["lecturer"] = time.monotonic()
    assert cores("alone", "lecturer") == str(default_workers())  # only the job's own session
    jobs._seen["student"] = time.monotonic()  # a student ran the app just now
    assert cores("with a class", "lecturer") == "1"
    gone.add("student")  # the student's tab is closed: the lecturer is alone again
    assert cores("alone again", "lecturer") == str(default_workers())
    jobs._seen["student"] = time.monotonic() - jobs.ACTIVE_SECONDS - 1  # idle for 2 minutes
    gone.discard("student")
    assert cores("student idle", "lecturer") == str(default_workers())


@pytest.mark.slow
def test_server_memory_does_not_grow_with_a_heavy_job():
    # The spike lives and dies in the child: the server's resident memory stays where it was.
    from benchmarks.server import rss_mib

    before = rss_mib(os.getpid())
    out = worker.run(  # a 60,000 × 400 pool and its sweep: hundreds of MB, in the child
        dpcore.pca_sweep,
        limits=FAST,
        epsilon=[0.1, 1.0],
        dim=400,
        k=10,
        runs=1,
        algorithms=("cape",),
    )
    assert out.status == "ok" and len(out.value) == 2
    assert rss_mib(os.getpid()) - before < 50


# --- progress of long work (issue 22, item 13) ------------------------------------------------

PCA_SMALL = {"dim": 12, "k": 2, "sites": 3, "n_per_site": 100, "pool_size": 2000}


@pytest.mark.parametrize("workers", [1, 2])
def test_a_sweep_reports_each_of_its_grid_point_run_tasks(workers):
    from dpcore import report_progress

    seen: list[tuple[int, int]] = []
    with report_progress(lambda done, total: seen.append((done, total))):
        dpcore.pca_sweep(
            epsilon=(0.5, 1.0, 2.0), runs=4, workers=workers, calibration="analytic", **PCA_SMALL
        )
    tasks = 3 * 4  # one task per (grid point, run): dpcore/experiments/sweeps/pca.py
    assert seen[0] == (0, tasks) and seen[-1] == (tasks, tasks)
    dones = [d for d, _ in seen]
    assert dones == sorted(dones) and len(set(dones)) == tasks + 1  # every task, once
    # the tensor sweep's per-site maps run inside its tasks and are not counted again
    seen.clear()
    with report_progress(lambda done, total: seen.append((done, total))):
        dpcore.otd_sweep(dim=4, k=2, sites=2, n_per_site=[200, 400], epsilon=1.0, runs=2)
    assert seen[0] == (0, 4) and seen[-1] == (4, 4)  # 2 points × 2 runs, announced at once


def test_tasks_run_by_another_executor_are_counted_as_their_chunks_return():
    from concurrent.futures import ProcessPoolExecutor

    from dpcore import report_progress

    seen: list[tuple[int, int]] = []
    with ProcessPoolExecutor(2) as pool, report_progress(lambda d, t: seen.append((d, t))):
        dpcore.pca_sweep(
            epsilon=(0.5, 1.0), runs=3, calibration="analytic", executor=pool, **PCA_SMALL
        )
    # a chunk at a time (issue #51): the first of one task, then a fair share of what is left
    dones = [d for d, _ in seen]
    assert seen[0] == (0, 6) and seen[-1] == (6, 6) and dones[1] == 1
    assert dones == sorted(dones) and 3 <= len(seen) <= 1 + 6


def test_one_sink_at_a_time_and_none_after_the_block():
    from dpcore import parallel_map, report_progress

    seen: list[tuple[int, int]] = []
    with report_progress(lambda d, t: seen.append((d, t))):
        with pytest.raises(ValueError, match="sink"), report_progress(print):
            pass
    parallel_map(abs, [1, 2], workers=1)
    assert seen == []  # nothing ran inside the block; nothing reported after it
    with pytest.raises(TypeError, match="sink"), report_progress(3):  # type: ignore[arg-type]
        pass


def test_a_heavy_job_reports_its_progress_to_the_server():
    job = worker.Job(dpcore.pca_sweep, (), {"epsilon": (0.5, 1.0), "runs": 3, **PCA_SMALL}, FAST)
    assert _wait(lambda: job.poll() is not None, 60)
    assert job.outcome.status == "ok"
    assert job.progress() == (6, 6)  # read from the child's shared counts


def test_progress_text_gives_the_fraction_and_the_time_left():
    # 10 of 40 tasks in 20 s: 2 s a task, so 30 tasks left take about 60 s
    fraction, text = jobs.progress_text(10, 40, 20.0)
    assert fraction == 0.25
    assert text == "10 of 40 tasks done (25%), 20 s so far, about 60 s left."
    assert "about 3 min left" in jobs.progress_text(1, 10, 20.0)[1]  # 9 × 20 s
    assert "first task" in jobs.progress_text(0, 10, 5.0)[1]  # no rate yet: no guess
    done = jobs.progress_text(10, 10, 5.0)
    assert done == (1.0, "10 of 10 tasks done (100%), 5 s so far; finishing.")
    assert jobs.progress_text(0, 0, 2.0) == (0.0, "Starting (2 s so far).")


def test_the_app_script_runs_bare_as_a_jobs_child_runs_it():
    # A job's child (multiprocessing's forkserver) re-runs the script Streamlit ran as its
    # main module — app.py — outside Streamlit before it runs the job. When app.py read a
    # Page's url_path there (issue #49's lecturer filter) every load and job died ("the data
    # could not be loaded"), which only the browser tests saw.
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", "import runpy; runpy.run_path('app.py', run_name='__mp_main__')"],
        cwd=root, capture_output=True, text=True, timeout=120,
        env={**os.environ, "CAPE_LECTURER_KEY": "k"},
    )  # fmt: skip
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
