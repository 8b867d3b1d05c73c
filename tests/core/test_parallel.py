"""Workers and BLAS threads: results and speed independent of the machine's settings."""

from __future__ import annotations

import concurrent.futures
import os
import subprocess
import sys
from pathlib import Path

import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from dpcore import parallel
from dpcore.parallel import default_workers, parallel_map

ROOT = Path(__file__).resolve().parents[2]

# A tensor sweep whose numbers differed with the BLAS thread count before the core pinned
# them (local_avn's mean component error 1.0049 vs 1.0201; issue #12, item 8).
SWEEP = """
import hashlib, warnings
import pandas as pd
warnings.simplefilter("ignore")
import dpcore
df = dpcore.otd_sweep(model="mog", dim=40, k=5, sites=5, n_per_site=5000,
                      epsilon=[0.5, 1, 5], runs=3, seed=12, workers=1)
print(hashlib.sha256(pd.util.hash_pandas_object(df).values.tobytes()).hexdigest())
"""


def _blas_threads() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info()]


@pytest.mark.slow
def test_same_seed_same_numbers_whatever_the_blas_threads():
    digests = set()
    for threads in ("1", "2"):
        env = {**os.environ, "OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads}
        out = subprocess.run(
            [sys.executable, "-c", SWEEP], cwd=ROOT, env=env, capture_output=True, text=True,
            check=True, timeout=300,
        )
        digests.add(out.stdout.strip())
    assert len(digests) == 1


def test_blas_pinned_inside_and_restored_after():
    with threadpool_limits(limits=2):
        before = _blas_threads()
        seen = parallel_map(lambda _: _blas_threads(), range(3), workers=2)
        assert all(threads == [1] * len(before) for threads in seen)
        assert _blas_threads() == before


# Two app sessions are two script threads: the first to finish must not lift the limit under the
# second. Run in a fresh process whose BLAS starts with 2 threads, every block in a non-main
# thread as in the app (OpenBLAS ignores a non-main thread's change after the main thread set
# one explicitly, so the test must not set the starting value from the main thread).
CONCURRENT = """
import threading
from threadpoolctl import threadpool_info
import numpy, scipy.linalg
from dpcore import parallel
from dpcore.parallel import one_blas_thread

def threads():
    return [pool["num_threads"] for pool in threadpool_info()]

before = threads()
assert set(before) == {2}, before
first_in, first_out, observed = threading.Event(), threading.Event(), []

def long_block():
    with one_blas_thread():
        first_in.set()
        first_out.wait(10)  # the short block enters and leaves meanwhile
        observed.append(threads())

def short_block():
    first_in.wait(10)
    with one_blas_thread():
        observed.append(threads())
    first_out.set()

workers = [threading.Thread(target=f) for f in (long_block, short_block)]
for w in workers:
    w.start()
for w in workers:
    w.join(10)
assert observed == [[1] * len(before)] * 2, observed
assert threads() == before and parallel._blas_depth == 0
print("ok")
"""


@pytest.mark.slow
def test_concurrent_blocks_keep_the_limit_until_the_last_exits():
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2"}
    out = subprocess.run(
        [sys.executable, "-c", CONCURRENT], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=120,
    )
    assert out.stdout.strip() == "ok", out.stderr


def test_workers_follow_the_machine_and_the_environment(monkeypatch):
    monkeypatch.delenv("CAPE_WORKERS", raising=False)
    assert default_workers() == parallel.available_cpus() >= 1
    monkeypatch.setenv("CAPE_WORKERS", "7")
    assert default_workers() == 7
    for bad in ("0", "-2", "two", "1.5"):
        monkeypatch.setenv("CAPE_WORKERS", bad)
        with pytest.raises(ValueError, match="CAPE_WORKERS"):
            default_workers()


# --- an executor that goes away mid-map (issue #39, item 5) -------------------------------


class _Cancelling(concurrent.futures.Executor):
    """An executor whose futures are cancelled before they run (a scheduler that died)."""

    def submit(self, fn, /, *args, **kwargs):
        future = concurrent.futures.Future()
        future.cancel()
        return future


def test_a_cancelled_executor_is_one_clear_error_not_a_bare_cancelled_error():
    # before: concurrent.futures.CancelledError with no message reached the caller
    with pytest.raises(parallel.ExecutorLost) as caught:
        parallel_map(abs, [-1, -2, -3], executor=_Cancelling())
    message = str(caught.value)
    assert "cancelled the tasks before they finished" in message
    assert "_Cancelling" in message and "CancelledError" in message and "\n" not in message
    assert isinstance(caught.value, ConnectionError)  # retried like a lost connection
    assert isinstance(caught.value.__cause__, concurrent.futures.CancelledError)


LOST_PORTS = (8631, 8632, 8633)  # this helper's ports: scheduler, worker, nanny


@pytest.mark.slow
def test_a_dask_scheduler_that_dies_mid_sweep_is_named_in_one_line():
    pytest.importorskip("distributed")
    import signal
    import socket
    import threading
    import time

    from distributed import Client

    address = f"tcp://127.0.0.1:{LOST_PORTS[0]}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env, "cwd": ROOT}
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
         "--port", str(LOST_PORTS[0]), "--no-dashboard", "--no-show"], **quiet,
    )  # fmt: skip
    worker = None
    try:
        deadline = time.monotonic() + 60
        while socket.socket().connect_ex(("127.0.0.1", LOST_PORTS[0])) != 0:
            assert time.monotonic() < deadline and scheduler.poll() is None
            time.sleep(0.2)
        worker = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
             "--host", "127.0.0.1", "--worker-port", str(LOST_PORTS[1]),
             "--nanny-port", str(LOST_PORTS[2]), "--no-dashboard"], **quiet,
        )  # fmt: skip
        with Client(address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(1, timeout=60)
            killer = threading.Timer(2.0, scheduler.send_signal, (signal.SIGKILL,))
            killer.start()
            start = time.monotonic()
            with pytest.raises(parallel.ExecutorLost) as caught:
                parallel_map(time.sleep, [30.0, 30.0], executor=client.get_executor())
            killer.join()
            assert time.monotonic() - start < 60
        assert f"the Dask scheduler at {address} died" in str(caught.value)
    finally:
        for proc in (worker, scheduler):
            if proc is not None and proc.poll() is None:
                proc.kill()
            if proc is not None:
                proc.wait(timeout=30)
