"""Scale-out on Dask: deterministic request keys, and app servers sharing one cluster."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpcore
from dpcore import cluster

ROOT = Path(__file__).resolve().parents[2]
REQUEST = {"epsilon": (0.1, 0.5), "dim": 20, "k": 3, "runs": 2, "seed": 4}


@pytest.mark.slow
def test_request_key_is_the_same_in_every_process_and_names_the_request():
    key = cluster.request_key(dpcore.pca_sweep, **REQUEST)
    code = (
        "import dpcore; from dpcore import cluster; "
        f"print(cluster.request_key(dpcore.pca_sweep, **{REQUEST!r}))"
    )
    other = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert other == key
    # keyword order does not matter; any changed value, or another function, does
    assert cluster.request_key(dpcore.pca_sweep, **dict(reversed(REQUEST.items()))) == key
    assert cluster.request_key(dpcore.pca_sweep, **REQUEST | {"seed": 5}) != key
    assert cluster.request_key(dpcore.otd_sweep, **REQUEST) != key


def test_without_a_scheduler_the_call_runs_here(monkeypatch):
    monkeypatch.delenv(cluster.SCHEDULER_ENV, raising=False)
    assert cluster.run(divmod, 7, 2) == (3, 1)


@pytest.mark.slow
def test_two_servers_compute_an_identical_request_once(tmp_path, dask_cluster, monkeypatch):
    def marked(value: int, folder: str) -> int:
        time.sleep(1.0)  # long enough for the second server to ask while it runs
        (Path(folder) / uuid.uuid4().hex).touch()
        return 2 * value

    servers = [cluster.SharedRunner(dask_cluster), cluster.SharedRunner(dask_cluster)]
    try:
        results: list[int] = []
        asks = [
            threading.Thread(target=lambda s=s: results.append(s.run(marked, 21, str(tmp_path))))
            for s in servers
        ]
        for ask in asks:
            ask.start()
        for ask in asks:
            ask.join(60)
        assert results == [42, 42]
        assert len(list(tmp_path.iterdir())) == 1  # computed once for both
        assert servers[1].run(marked, 21, str(tmp_path)) == 42  # later: a kept result
        assert len(list(tmp_path.iterdir())) == 1
        assert servers[1].run(marked, 5, str(tmp_path)) == 10  # another request computes
        assert len(list(tmp_path.iterdir())) == 2
        # the app's hook: a real sweep on the scheduler the environment names, as computed here
        monkeypatch.setenv(cluster.SCHEDULER_ENV, dask_cluster)
        remote = cluster.run(dpcore.pca_sweep, **REQUEST)
        monkeypatch.delenv(cluster.SCHEDULER_ENV)
        pd.testing.assert_frame_equal(remote, cluster.run(dpcore.pca_sweep, **REQUEST))
    finally:
        for server in [*servers, *cluster._RUNNERS.values()]:
            server.close()
        cluster._RUNNERS.clear()


@pytest.mark.slow
def test_paper_cli_on_a_scheduler_writes_the_same_numbers(tmp_path, dask_cluster, capsys):
    from paper.__main__ import main

    here, there = tmp_path / "here", tmp_path / "there"
    assert main(["--figure", "4a", "--runs", "2", "--out", str(here)]) == 0
    assert (
        main(["--figure", "4a", "--runs", "2", "--out", str(there), "--scheduler", dask_cluster])
        == 0
    )
    assert (there / "fig4a.csv").read_bytes() == (here / "fig4a.csv").read_bytes()
    assert (there / "claims.csv").read_bytes() == (here / "claims.csv").read_bytes()


def test_a_scheduler_without_the_extra_names_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    with pytest.raises(ImportError, match=r"requirements-dask\.txt"):
        cluster.SharedRunner("tcp://127.0.0.1:1")


def test_local_cluster_ports_are_a_range_of_at_least_seven():
    assert cluster._port_ranges("8710:8719") == {
        "scheduler_port": 8710,
        "scheduler_kwargs": {"dashboard_address": "127.0.0.1:8711"},
        "worker_port": "8712:8714",
        "port": "8715:8719",
    }
    assert cluster._port_ranges(None)["scheduler_port"] == 0  # any free port
    for bad in ("8710", "8710:8712", "a:b", "0:100"):
        with pytest.raises(ValueError, match="at least 7 ports"):
            cluster._port_ranges(bad)


@pytest.mark.slow
def test_an_unreachable_scheduler_means_computing_here(monkeypatch, caplog):
    pytest.importorskip("distributed")
    monkeypatch.setenv(cluster.SCHEDULER_ENV, "tcp://127.0.0.1:9")  # discard port: refused
    with caplog.at_level("WARNING", logger="dpcore.cluster"):
        assert cluster.run(divmod, 7, 2) == (3, 1)
    assert "unusable" in caplog.text
    assert "tcp://127.0.0.1:9" not in cluster._RUNNERS
    assert "tcp://127.0.0.1:9" in cluster._FAILED  # remembered a while (tests/app/test_bounds.py)
    cluster._FAILED.clear()


# --- a scheduler that cannot serve: bounded, one line, computed here (issue #36) ----------

# This helper's loopback ports on the shared machine.
SILENT_PORT, EMPTY_PORT, NO_CORE_PORT, NO_CORE_WORKER, NO_CORE_NANNY = 8651, 8652, 8653, 8655, 8656
PCA = dpcore.PcaSpec.build(epsilon=(0.5, 1.0), dim=20, k=3, runs=2)


@contextlib.contextmanager
def silent_listener(port: int) -> Iterator[str]:
    """A listener that accepts every connection and never answers (a stalled scheduler)."""
    server = socket.create_server(("127.0.0.1", port), reuse_port=False)
    server.settimeout(0.2)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                held.append(server.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{port}"
    finally:
        stop.set()
        thread.join(5)
        for conn in [*held, server]:
            conn.close()


@contextlib.contextmanager
def dask_processes(port: int, *, worker_ports: tuple[int, int] | None, core: bool) -> Iterator[str]:
    """A real ``dask scheduler`` on ``port`` and, with ``worker_ports`` (worker, nanny), one
    one-thread worker; ``core=False`` runs both where ``dpcore`` cannot be imported."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if core:
        env["PYTHONPATH"] = str(ROOT)
    cwd = ROOT if core else Path(tempfile.gettempdir())
    address = f"tcp://127.0.0.1:{port}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env, "cwd": cwd}
    cli = [sys.executable, "-m"]
    started = [
        subprocess.Popen(
            [
                *cli,
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--no-dashboard",
                "--no-show",
            ],
            **quiet,
        )
    ]
    try:
        deadline = time.monotonic() + 60
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline and started[0].poll() is None, "no scheduler"
            time.sleep(0.2)
        if worker_ports is not None:
            started.append(
                subprocess.Popen(
                    [
                        *cli,
                        "distributed.cli.dask_worker",
                        address,
                        "--nthreads",
                        "1",
                        "--nworkers",
                        "1",
                        "--host",
                        "127.0.0.1",
                        "--worker-port",
                        str(worker_ports[0]),
                        "--nanny-port",
                        str(worker_ports[1]),
                        "--no-dashboard",
                    ],
                    **quiet,
                )
            )
            from distributed import Client

            with Client(address, timeout=30, set_as_default=False) as client:
                client.wait_for_workers(1, timeout=60)
        yield address
    finally:
        for proc in reversed(started):
            proc.terminate()
        for proc in started:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
def clean_cluster_state():
    for table in (cluster._RUNNERS, cluster._FAILED, cluster._CONNECTING):
        table.clear()
    yield
    for runner in list(cluster._RUNNERS.values()):
        runner.close()
    for table in (cluster._RUNNERS, cluster._FAILED, cluster._CONNECTING):
        table.clear()


def _within(seconds: float, fn, *args):
    """``fn(*args)`` in a daemon thread: its result and seconds, or a failure (not a hung
    test) if it has not returned after ``seconds``."""
    box: dict = {}

    def call() -> None:
        start = time.monotonic()
        try:
            box["value"] = fn(*args)
        except BaseException as err:  # handed to the test
            box["error"] = err
        box["took"] = time.monotonic() - start

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(seconds)
    assert "took" in box, f"no answer within {seconds} s"
    if "error" in box:
        raise box["error"]
    return box["value"], box["took"]


def _falls_back(monkeypatch, caplog, address: str, bound: float) -> str:
    """A PCA sweep with CAPE_DASK_SCHEDULER=address: computed here within ``bound`` seconds,
    the same frame as here, one log line (returned); a second call costs no wait."""
    monkeypatch.setenv(cluster.SCHEDULER_ENV, address)
    here = dpcore.run_pca_sweep(PCA, np.random.default_rng(3))
    sweep = dpcore.run_pca_sweep
    with caplog.at_level(logging.WARNING, logger="dpcore.cluster"):
        got, took = _within(bound + 30, cluster.run, sweep, PCA, np.random.default_rng(3))
        _, took_again = _within(30, cluster.run, sweep, PCA, np.random.default_rng(3))
    pd.testing.assert_frame_equal(got, here)
    lines = [r.getMessage() for r in caplog.records if r.name == "dpcore.cluster"]
    assert len(lines) == 1, lines
    assert took < bound, f"fell back after {took:.1f} s; bound {bound} s"
    assert took_again < 2.0  # remembered: no second wait (a light sweep here: ~0.1 s)
    assert address in cluster._FAILED
    return lines[0]


@pytest.mark.slow
def test_a_listener_that_never_answers_costs_one_bounded_connection(
    monkeypatch, caplog, clean_cluster_state
):
    # Dask's own timeout does not bound the handshake: Client() waited for good (issue #36)
    pytest.importorskip("distributed")
    with silent_listener(SILENT_PORT) as address:
        line = _falls_back(monkeypatch, caplog, address, cluster.CONNECT_SECONDS + 5)
    assert "unusable (TimeoutError" in line


@pytest.mark.slow
def test_a_scheduler_without_workers_is_not_waited_for(monkeypatch, caplog, clean_cluster_state):
    # before: the task was submitted and its result waited for without a bound
    pytest.importorskip("distributed")
    with dask_processes(EMPTY_PORT, worker_ports=None, core=True) as address:
        line = _falls_back(monkeypatch, caplog, address, cluster.CONNECT_SECONDS + 5)
    assert "it has no workers" in line


def test_a_malformed_scheduler_address_is_the_operators_line_not_the_students_error(
    monkeypatch, caplog, clean_cluster_state
):
    # before: Dask's ValueError "missing port number in address" reached every student's page
    pytest.importorskip("distributed")
    line = _falls_back(monkeypatch, caplog, "notanaddress", cluster.CONNECT_SECONDS + 5)
    assert "unusable (ValueError" in line and "notanaddress" in line


@pytest.mark.slow
def test_a_cluster_that_cannot_load_the_task_means_computing_here(
    monkeypatch, caplog, clean_cluster_state
):
    # a scheduler and worker where dpcore is not importable: before, the generic error box
    pytest.importorskip("distributed")
    with dask_processes(
        NO_CORE_PORT, worker_ports=(NO_CORE_WORKER, NO_CORE_NANNY), core=False
    ) as address:
        line = _falls_back(monkeypatch, caplog, address, 60)
    assert "failed a computation" in line and cluster.CANNOT_LOAD in line


def test_a_remote_call_is_bounded_by_its_work_estimate_with_a_floor():
    light = dpcore.PcaSpec.build(epsilon=1.0, dim=20, k=3, runs=2)
    assert cluster.remote_seconds((light,), {}) == cluster.REMOTE_FLOOR_SECONDS
    heavy = dpcore.PcaSpec.build(epsilon=tuple(np.linspace(0.1, 10, 20)), dim=400, k=5, runs=50)
    estimate = heavy.estimate().seconds
    assert estimate * cluster.REMOTE_FACTOR > cluster.REMOTE_FLOOR_SECONDS  # past the floor
    assert cluster.remote_seconds((heavy, 3), {"rng": 1}) == cluster.REMOTE_FACTOR * estimate
    assert cluster.remote_seconds((heavy,), {"again": light}) == pytest.approx(
        cluster.REMOTE_FACTOR * (estimate + light.estimate().seconds)
    )
    # nothing to estimate (a paper panel by key): the core's own ceiling on one request
    assert cluster.remote_seconds(("2a",), {"runs": 10}) == (
        cluster.REMOTE_FACTOR * cluster.UNKNOWN_WORK_SECONDS
    )


def test_a_stalled_remote_call_times_out_and_computes_here(
    monkeypatch, caplog, clean_cluster_state
):
    # workers that take the task and never finish: waited for remote_seconds, not for good
    waited = []

    class Stalled:
        def result(self, timeout=None):
            waited.append(timeout)
            raise TimeoutError  # what Dask's Future.result raises at its timeout

    class Client:
        def submit(self, *args, **kwargs):
            return Stalled()

        def close(self, timeout=None):
            pass

    monkeypatch.setattr(cluster, "_client", lambda address, timeout=None: Client())
    monkeypatch.setenv(cluster.SCHEDULER_ENV, "tcp://127.0.0.1:9")
    with caplog.at_level(logging.WARNING, logger="dpcore.cluster"):
        assert cluster.run(dpcore.run_pca_sweep, PCA, np.random.default_rng(3)).equals(
            dpcore.run_pca_sweep(PCA, np.random.default_rng(3))
        )
    # a new runner's first call: the floor plus the workers' cold start
    assert waited == [cluster.REMOTE_FLOOR_SECONDS + cluster.WARM_UP_SECONDS]
    assert "failed a computation (TimeoutError: no result within 40 s)" in caplog.text
    assert "tcp://127.0.0.1:9" in cluster._FAILED


class _Done:
    """A Dask future that has its result; records the timeout it was waited with."""

    def __init__(self, value, waited: list) -> None:
        self.value, self.waited = value, waited

    def result(self, timeout=None):
        self.waited.append(timeout)
        return self.value


class _Cluster:
    """A healthy cluster's client: one worker, every task answered with ("remote", args)."""

    def __init__(self, waited: list) -> None:
        self.waited = waited

    def scheduler_info(self):
        return {"workers": {"tcp://127.0.0.1:1": {}}}

    def submit(self, call, fn, args, kwargs, key=None):
        return _Done(("remote", args), self.waited)

    def close(self, timeout=None):
        pass


def test_a_cold_workers_first_call_waits_for_its_start_and_later_calls_do_not(
    monkeypatch, clean_cluster_state
):
    # before: the 10-s floor alone, and a cold worker importing dpcore, numpy and scipy
    # (6–8 s at load 10) was declared failed and its work thrown away (issue #50)
    waited: list = []
    monkeypatch.setattr(cluster, "_client", lambda address, timeout=None: _Cluster(waited))
    monkeypatch.setenv(cluster.SCHEDULER_ENV, "tcp://127.0.0.1:9")
    assert cluster.run(divmod, 7, 2) == ("remote", (7, 2))
    assert cluster.run(divmod, 9, 2) == ("remote", (9, 2))
    bound = cluster.remote_seconds((7, 2), {})
    assert waited == [bound + cluster.WARM_UP_SECONDS, bound]


def test_a_scheduler_that_answers_after_the_connection_bound_is_used_from_then_on(
    monkeypatch, caplog, clean_cluster_state
):
    # before: a cold scheduler answering at 1.5 s (bound 0.3 s) was closed, remembered as
    # failed, and the app computed everything itself for the next minute (issue #50)
    waited: list = []

    def slow_client(address, timeout=None):
        assert timeout >= cluster.LATE_CONNECT_SECONDS  # Dask may take that long
        time.sleep(1.5)
        return _Cluster(waited)

    monkeypatch.setattr(cluster, "_client", slow_client)
    monkeypatch.setattr(cluster, "CONNECT_SECONDS", 0.3)
    monkeypatch.setenv(cluster.SCHEDULER_ENV, "tcp://127.0.0.1:9")
    with caplog.at_level(logging.WARNING, logger="dpcore.cluster"):
        assert cluster.run(divmod, 7, 2) == (3, 1)  # not waited for: computed here
        assert "unusable (TimeoutError" in caplog.text
        deadline = time.monotonic() + 10
        while "tcp://127.0.0.1:9" not in cluster._RUNNERS and time.monotonic() < deadline:
            time.sleep(0.05)
        assert cluster.run(divmod, 9, 2) == ("remote", (9, 2))
    assert "tcp://127.0.0.1:9" not in cluster._FAILED
    assert "answered late; using it again" in caplog.text


def test_waiting_on_the_cluster_holds_no_slot(monkeypatch, clean_cluster_state):
    # the slot (the app's compute_slot) is taken only to compute here
    held = []

    def slot(fn):
        def wrapper(*args, **kwargs):
            held.append(fn.__name__)
            return fn(*args, **kwargs)

        return wrapper

    class Done:
        def result(self, timeout=None):
            return "remote"

    class Client:
        def submit(self, *args, **kwargs):
            return Done()

        def close(self, timeout=None):
            pass

    monkeypatch.setattr(cluster, "_client", lambda address, timeout=None: Client())
    monkeypatch.setenv(cluster.SCHEDULER_ENV, "tcp://127.0.0.1:9")
    assert cluster.run_slotted(slot, divmod, 7, 2) == "remote" and held == []
    monkeypatch.delenv(cluster.SCHEDULER_ENV)
    assert cluster.run_slotted(slot, divmod, 7, 2) == (3, 1) and held == ["divmod"]


APP_PORT = 8654  # this helper's port for the app server of the test below


@pytest.mark.slow
@pytest.mark.parametrize("stall", ["silent listener", "no workers"])
def test_a_stalled_scheduler_leaves_the_light_pages_their_time(monkeypatch, stall):
    """Issue #36: PCA cache misses against a stalled scheduler held both compute slots without
    a bound, so the averaging page (no Dask at all) hung too. Two PCA misses go first; the
    averaging page's miss right after them must answer about as fast as before (its own
    time alone, measured first: at most 3× that plus 3 s), and both PCA pages within the
    connection bound plus a PCA miss's time here (measured after, when the failure is
    remembered: at most twice that plus 5 s, two misses sharing two cores), no error shown.
    The pages are opened once first (PCA at D = 200 waits for Run: nothing computed), so
    no time measured is a first import."""
    import asyncio

    pytest.importorskip("distributed")
    from benchmarks.capacity import Session
    from benchmarks.server import streamlit_server

    with contextlib.ExitStack() as stack:
        if stall == "silent listener":
            address = stack.enter_context(silent_listener(SILENT_PORT))
        else:
            address = stack.enter_context(dask_processes(EMPTY_PORT, worker_ports=None, core=True))
        monkeypatch.setenv(cluster.SCHEDULER_ENV, address)
        monkeypatch.setenv("CAPE_WORKERS", "2")  # two compute slots
        url, _ = stack.enter_context(streamlit_server(port=APP_PORT, timeout=90))

        async def lesson() -> tuple[float, float, list[float], float, list[str]]:
            warm = Session(url, timeout=120)  # the page's code loaded; D = 200 waits for Run
            await warm.connect()
            await warm.rerun(page="pca", query="pca_dim=200")
            await warm.close()
            pca = [Session(url, timeout=120) for _ in range(2)]
            averaging = Session(url, timeout=120)
            for session in [*pca, averaging]:
                await session.connect()
            try:
                alone = await averaging.rerun(page="averaging", query="avg_seed=11")
                misses = [
                    asyncio.create_task(s.rerun(page="pca", query=f"pca_seed={21 + i}"))
                    for i, s in enumerate(pca)
                ]
                await asyncio.sleep(0.5)  # the PCA misses are waiting on the scheduler
                beside = await asyncio.wait_for(averaging.rerun(query="avg_seed=12"), timeout=60)
                pca_times = await asyncio.wait_for(asyncio.gather(*misses), timeout=90)
                here = await pca[0].rerun(query="pca_seed=23")  # remembered: computed here
            finally:
                for session in [*pca, averaging]:
                    await session.close()
            errors = [e for s in [*pca, averaging] for e in s.errors]
            return alone, beside, pca_times, here, errors

        alone, beside, pca_times, here, errors = asyncio.run(lesson())
    assert errors == []
    assert beside < 3 * alone + 3, (alone, beside)
    # the connection's bound (CONNECT_SECONDS + 1), then both misses computed here on two
    # shared cores (2 × here), plus Dask's first import in the server (1.6-1.8 s measured
    # at load 13 on the 2-core machine) and the machine's noise: 5 s
    assert max(pca_times) < cluster.CONNECT_SECONDS + 1 + 2 * here + 5, (pca_times, here)
