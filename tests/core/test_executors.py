"""Any executor, the same frame: threads, processes and a Dask cluster (issue #16)."""

from __future__ import annotations

import multiprocessing
import pickle
import warnings
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

import dpcore
from dpcore.cluster import dask_executor
from dpcore.experiments import paper, sweeps
from dpcore.parallel import executor_workers, parallel_map

# Small sweeps covering every path that ships work: a fixed data draw (ε), a fresh draw per
# run (N_s), the tensor sweep (draws, then noisy moments), dropouts and a paper panel.
PCA = {"dim": 30, "k": 5, "sites": 4, "n_per_site": 100, "runs": 3, "seed": 3, "pool_size": 3000}
OTD = {"model": "mog", "dim": 6, "k": 3, "sites": 3, "runs": 3, "seed": 2}
DROPOUT = {
    "n_per_site": [100, 200, 300],
    "epsilon": [1.0] * 3,
    "delta": [0.01] * 3,
    "weights": [1 / 3] * 3,
    "dropped": [1],
    "dim": 10,
    "k": 3,
    "runs": 4,
}


def _frames(executor: Executor | None) -> list[pd.DataFrame]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcore.ClassicGaussianWarning)
        return [
            dpcore.pca_sweep(**PCA | {"epsilon": [0.1, 1.0]}, executor=executor),
            dpcore.pca_sweep(**PCA | {"epsilon": 0.5, "n_per_site": [50, 150]}, executor=executor),
            dpcore.otd_sweep(
                **OTD | {"epsilon": [0.5, 5.0], "n_per_site": 2000}, executor=executor
            ),
            dpcore.otd_sweep(
                **OTD | {"epsilon": 1.0, "n_per_site": [500, 1500]}, executor=executor
            ),
            sweeps.dropout_pca(**DROPOUT, executor=executor),
            paper.run_panel(paper.get_panel("3a"), runs=2, executor=executor),
        ]


@pytest.fixture(scope="module")
def on_threads() -> list[pd.DataFrame]:
    return _frames(None)


def _assert_identical(got: list[pd.DataFrame], want: list[pd.DataFrame]) -> None:
    for a, b in zip(got, want, strict=True):
        pd.testing.assert_frame_equal(a, b, check_exact=True)


@pytest.mark.slow
def test_thread_pool_gives_the_same_frames(on_threads):
    with ThreadPoolExecutor(max_workers=3) as pool:
        _assert_identical(_frames(pool), on_threads)


@pytest.mark.slow
def test_process_pool_gives_the_same_frames(on_threads):
    # spawn: a fresh interpreter per worker, as on macOS/Windows and in a threaded server
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        _assert_identical(_frames(pool), on_threads)


@pytest.mark.slow
def test_dask_local_cluster_gives_the_same_frames(on_threads, dask_cluster):
    with dask_executor(dask_cluster) as executor:
        assert executor_workers(executor) == 2
        _assert_identical(_frames(executor), on_threads)


class RecordingExecutor(Executor):
    """Runs submissions at once, in this thread, after a pickling round trip (as a process
    pool would), and records their sizes."""

    def __init__(self, workers: int) -> None:
        self._max_workers = workers
        self.sizes: list[int] = []

    def submit(self, fn, /, *args, **kwargs):
        blob = pickle.dumps((fn, args, kwargs))
        self.sizes.append(len(blob))
        fn, args, kwargs = pickle.loads(blob)
        future: Future = Future()
        future.set_result(fn(*args, **kwargs))
        return future


def test_large_input_is_sent_once_per_worker_not_per_task():
    big = np.arange(200_000, dtype=float)  # 1.6 MB, closed over by the task

    def task(i: int) -> float:
        return float(big[i] * 2)

    executor = RecordingExecutor(workers=3)
    out = parallel_map(task, range(10), executor=executor)
    assert out == [2.0 * i for i in range(10)]  # input order, after strided chunks
    assert len(executor.sizes) == 3  # one submission per worker, not one per item
    assert all(big.nbytes < size < 1.1 * big.nbytes for size in executor.sizes)


def test_chunks_follow_workers_and_never_exceed_items():
    executor = RecordingExecutor(workers=4)
    assert parallel_map(lambda x: -x, [5, 6], executor=executor) == [-5, -6]
    assert len(executor.sizes) == 2
    executor = RecordingExecutor(workers=4)
    assert parallel_map(lambda x: -x, range(7), workers=2, executor=executor) == [
        -x for x in range(7)
    ]
    assert len(executor.sizes) == 2
    assert parallel_map(lambda x: x, [], executor=executor) == []


def test_executor_must_be_an_executor():
    with pytest.raises(TypeError, match="executor must be a"):
        parallel_map(abs, [1], executor="dask")  # type: ignore[arg-type]
