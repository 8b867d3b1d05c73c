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
from dpcore import parallel
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


@pytest.mark.slow
def test_a_dask_cluster_reports_and_hands_over_a_chunk_at_a_time(dask_cluster):
    # issue #51: on Dask the counts came in one jump per worker; now a chunk at a time
    import time

    seen: list[int] = []
    got: dict[int, float] = {}
    with dask_executor(dask_cluster) as executor:
        with parallel.report_progress(lambda done, total: seen.append(done)):
            out = parallel_map(
                time.sleep, [0.02] * 60, executor=executor, on_result=got.__setitem__
            )
    assert out == [None] * 60 and sorted(got) == list(range(60))
    assert seen[0] == 0 and seen[1] == 1 and seen[-1] == 60  # the first chunk: one task
    assert len(set(seen)) > executor_workers_of(dask_cluster) + 1


def executor_workers_of(address: str) -> int:
    """The worker threads of the cluster at ``address``."""
    with dask_executor(address) as executor:
        return executor_workers(executor)


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
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as err:  # a pool's future holds what the task raised
            future.set_exception(err)
        return future


def test_large_input_travels_once_per_chunk_and_the_chunks_are_few():
    big = np.arange(200_000, dtype=float)  # 1.6 MB, closed over by the task

    def task(i: int) -> float:
        return float(big[i] * 2)

    executor = RecordingExecutor(workers=3)
    out = parallel_map(task, range(1000), executor=executor)
    assert out == [2.0 * i for i in range(1000)]  # input order, chunks taken as they finish
    # cheap items: one each first (nothing is known of their cost), then a fair share of
    # what is left (guided: 997/3, then 664/3, ...), so about workers · log(items) chunks
    assert 3 < len(executor.sizes) <= 3 * (1 + int(np.log2(1000)))
    assert all(big.nbytes < size < 1.1 * big.nbytes for size in executor.sizes)


def test_chunks_never_exceed_items_and_are_sized_by_their_cost():
    executor = RecordingExecutor(workers=4)
    assert parallel_map(lambda x: -x, [5, 6], executor=executor) == [-5, -6]
    assert len(executor.sizes) == 2
    executor = RecordingExecutor(workers=4)
    assert parallel_map(lambda x: -x, range(7), workers=2, executor=executor) == [
        -x for x in range(7)
    ]
    assert parallel_map(lambda x: x, [], executor=executor) == []
    # CHUNK_SECONDS of work per chunk, a fair share of what is left at most, one at least
    assert parallel.chunk_size(0, 0.0, 6000, 3) == 1
    assert parallel.chunk_size(3, 3 * 0.277, 5997, 3) == int(parallel.CHUNK_SECONDS / 0.277)
    assert parallel.chunk_size(3, 3 * 100.0, 5997, 3) == 1
    assert parallel.chunk_size(100, 1e-6, 10, 3) == 4  # ceil(10 / 3)


def test_progress_moves_a_chunk_at_a_time_not_a_worker_share_at_a_time():
    # issue #51: one submission per worker reported a 6,000-task sweep in 3 jumps, the first
    # after 2,000 tasks; chunks report as each finishes, the first after one task
    seen: list[tuple[int, int]] = []
    executor = RecordingExecutor(workers=3)
    with parallel.report_progress(lambda done, total: seen.append((done, total))):
        parallel_map(lambda x: x, range(6000), executor=executor)
    counts = [done for done, _ in seen]
    assert seen[0] == (0, 6000) and counts[-1] == 6000
    assert counts[1] == 1  # the first chunk of one item
    assert len(set(counts)) > 3 + 1
    assert counts == sorted(counts)


_RAN: list[int] = []


def _fails_on_zero(i: int) -> int:
    """A task (pickled by reference: _RAN is this module's) that fails on item 0."""
    _RAN.append(i)
    if i == 0:
        raise ValueError("item 0 fails")
    return i


def test_a_failing_task_fails_its_chunk_before_the_rest_is_sent():
    # one submission per worker ran every worker's whole share before the failure surfaced
    _RAN.clear()
    executor = RecordingExecutor(workers=3)
    with pytest.raises(ValueError, match="item 0 fails"):
        parallel_map(_fails_on_zero, range(6000), executor=executor)
    assert len(executor.sizes) == 3 and len(_RAN) == 3  # the first chunks, one item each


def test_results_are_handed_over_as_they_arrive_on_any_executor():
    for executor in (RecordingExecutor(workers=3), ThreadPoolExecutor(2), None):
        got: dict[int, int] = {}
        out = parallel_map(
            lambda x: x * x, range(20), 2, executor=executor, on_result=got.__setitem__
        )
        assert got == dict(enumerate(out)) and out == [x * x for x in range(20)]


def test_executor_must_be_an_executor():
    with pytest.raises(TypeError, match="executor must be a"):
        parallel_map(abs, [1], executor="dask")  # type: ignore[arg-type]
