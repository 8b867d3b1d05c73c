"""Every upload costs what it weighs (issue #50): a parse linear in the file, a bound stated
beside the uploader, and one sentence for a file past the bound or not of its kind."""

import math
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dpcore import MAX_DATA_DIM as MAX_DIM
from dpcore import MAX_UPLOAD_CELLS, load_csv
from learning.run_replay import MAX_LINES
from ui.guard import plain

ROOT = Path(__file__).resolve().parents[2]


def _csv(rows: int) -> bytes:
    x = np.random.default_rng(0).standard_normal((rows, 5))
    return "\n".join(",".join(f"{v:.6f}" for v in row) for row in x).encode()


def _cost(raw: bytes, runs: int) -> tuple[float, int]:
    best = math.inf
    for _ in range(runs):
        started = time.process_time()
        load_csv(raw, name="t.csv")
        best = min(best, time.process_time() - started)
    tracemalloc.start()
    try:
        load_csv(raw, name="t.csv")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return best, peak


@pytest.mark.slow
def test_a_csv_upload_is_read_in_time_and_memory_linear_in_its_size():
    """10× the rows: at most 15× the peak memory and 20× the CPU (ratios in one run)."""
    small, large = _csv(20_000), _csv(200_000)
    t_small, m_small = _cost(small, runs=5)
    t_large, m_large = _cost(large, runs=3)
    assert m_large <= 15 * m_small
    assert t_large <= 20 * t_small


def _page(path: str, params: dict) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).switch_page(path)
    at.query_params.update(params)
    return at.run()


@pytest.mark.app
def test_each_uploader_states_its_bound():
    pca = _page("app_pages/pca.py", {"pca_data": "CSV upload"})
    assert not pca.exception
    shown = pca.file_uploader(key="pca_upload").help
    assert f"{MAX_DIM:,} columns" in shown and f"{MAX_UPLOAD_CELLS:,} numbers" in shown
    assert "20 MB" in shown  # server.maxUploadSize, which Streamlit enforces itself
    protocol = _page("app_pages/protocol.py", {"pr_src": "a real run's log"})
    assert not protocol.exception
    assert f"at most {MAX_LINES:,} lines" in protocol.file_uploader(key="pr_log").help


@pytest.mark.app
def test_a_csv_past_its_bound_is_one_sentence_on_the_page():
    at = _page("app_pages/pca.py", {"pca_data": "CSV upload"})
    raw = b"1,2\n" * (MAX_UPLOAD_CELLS // 2 + 1)
    at.file_uploader(key="pca_upload").set_value(("big.csv", raw, "text/csv"))
    at.run()
    assert not at.exception and len(at.error) == 1
    assert at.error[0].value == plain(
        f"your CSV has {MAX_UPLOAD_CELLS // 2 + 1:,} rows × 2 columns; the limit is "
        f"{MAX_UPLOAD_CELLS:,} cells"
    )
