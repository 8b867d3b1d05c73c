"""docs/scale-out.md as written: a real `dask scheduler` and two `dask worker` processes started
with the documented commands (on 127.0.0.1), the documented CLIs pointed at them.

Checks: frames bit-identical to this machine's threads (the CLI's CSV byte for byte, a paper
panel and a tensor sweep through ``cluster.dask_executor``); a scheduler killed mid-sweep is
one line naming its address, a non-zero exit and no output file. Every process is started
in its own session and stopped by its pid; each wait is bounded.
"""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[2]
DASK = Path(sys.executable).with_name("dask")
# The documented environment of scheduler and workers: the code importable by both (here the
# checkout on PYTHONPATH, as `pip install` would make it), one BLAS thread per task.
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "CAPE_WORKERS": "1"}
SWEEP = [
    "sweep", "pca", "--epsilon", "0.1,1,10", "--runs", "3", "--dim", "20", "--k", "4",
    "--pool-size", "2000", "--n-per-site", "100", "--rng", "5",
]  # fmt: skip

NO_DASHBOARD = ["--dashboard-address", "127.0.0.1:0"]  # any free port, loopback only
pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(args: list[str], log: Path) -> subprocess.Popen:
    with log.open("wb") as out:
        return subprocess.Popen(
            args, cwd=ROOT, env=ENV, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)  # its own session: the nanny and its worker
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


@pytest.fixture
def dask_cluster(tmp_path):
    """(address, scheduler process): the documented commands, 127.0.0.1 only."""
    from distributed import Client

    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs = []
    try:
        # dask scheduler --host HOST --port PORT --dashboard-address …
        scheduler = [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", str(port)]
        procs.append(_start([*scheduler, *NO_DASHBOARD], tmp_path / "scheduler.log"))
        # CAPE_WORKERS=1 dask worker tcp://HOST:PORT --nthreads 1, two of them
        worker = [str(DASK), "worker", address, "--nthreads", "1", "--host", "127.0.0.1"]
        for i in range(2):
            procs.append(_start([*worker, *NO_DASHBOARD], tmp_path / f"worker{i}.log"))
        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=120)
        yield address, procs[0]
    finally:
        for proc in reversed(procs):
            _stop(proc)


def _cli(args: list[str], timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dpcore", *args],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_documented_cluster_gives_bit_identical_frames(dask_cluster, tmp_path):
    from dpcore import cluster, otd_sweep
    from dpcore.experiments import paper

    address, _ = dask_cluster
    on_cluster = _cli([*SWEEP, "--scheduler", address, "--out", str(tmp_path / "c.csv")])
    assert on_cluster.returncode == 0, on_cluster.stderr
    here = _cli([*SWEEP, "--out", str(tmp_path / "h.csv")])
    assert here.returncode == 0, here.stderr
    assert (tmp_path / "c.csv").read_bytes() == (tmp_path / "h.csv").read_bytes()

    tensor = {"epsilon": [0.5, 5.0], "n_per_site": 2000, "runs": 2, "restarts": 2, "rng": 1}
    with cluster.dask_executor(address) as ex:
        panel = paper.run_panel("3a", runs=2, executor=ex)
        otd = otd_sweep(**tensor, executor=ex)
    pd.testing.assert_frame_equal(panel, paper.run_panel("3a", runs=2), check_exact=True)
    pd.testing.assert_frame_equal(otd, otd_sweep(**tensor), check_exact=True)


def test_a_scheduler_killed_mid_sweep_is_one_line_and_a_non_zero_exit(dask_cluster, tmp_path):
    from distributed import Client

    address, scheduler = dask_cluster
    out = tmp_path / "long.csv"
    long = ["sweep", "pca", "--epsilon", "0.1,1,10", "--runs", "400", "--dim", "150",
            "--k", "10", "--pool-size", "20000", "--n-per-site", "1000"]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "dpcore", *long, "--scheduler", address, "--out", str(out)],
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        with Client(address, timeout=60) as client:  # kill it once the sweep's tasks arrive
            deadline = time.monotonic() + 120
            while not client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)):
                assert time.monotonic() < deadline and proc.poll() is None, "no task arrived"
                time.sleep(0.2)
        os.killpg(scheduler.pid, signal.SIGKILL)
        _, err = proc.communicate(timeout=120)
    finally:
        _stop(proc)
    assert proc.returncode == 2, err
    # a long run prints progress lines (issue #39) before it; the failure is one line
    lines = [line for line in err.strip().splitlines() if not line.startswith("progress: ")]
    assert lines == [lines[0]] and lines[0].startswith(f"error: the Dask scheduler at {address}")
    assert "stopped answering" in lines[0]
    assert not out.exists() and not out.with_suffix(".json").exists()
