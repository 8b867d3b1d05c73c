"""Scale-out on Dask: deterministic request keys, and app servers sharing one cluster."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pandas as pd
import pytest

import dpcore
from dpcore import cluster

ROOT = Path(__file__).resolve().parents[1]
REQUEST = {"epsilon": (0.1, 0.5), "dim": 20, "k": 3, "runs": 2, "seed": 4}


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
def test_an_unreachable_scheduler_means_computing_here(monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setenv(cluster.SCHEDULER_ENV, "tcp://127.0.0.1:9")  # discard port: refused
    with pytest.warns(UserWarning, match="unreachable"):
        assert cluster.run(divmod, 7, 2) == (3, 1)
    assert "tcp://127.0.0.1:9" not in cluster._RUNNERS
    assert "tcp://127.0.0.1:9" in cluster._FAILED  # remembered a while (tests/test_bounds.py)
    cluster._FAILED.clear()
