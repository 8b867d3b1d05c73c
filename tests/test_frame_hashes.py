"""Bit-identity of the experiment frames across refactors.

Each case runs a small sweep and hashes its frame (column names, dtypes and the exact bytes
of every value). The expected hashes were recorded from commit a88c999 (before the registry
and sweep-spec refactor of issue #15) with one BLAS thread, the setting the test suite runs
with (the test pins it: larger products round differently with two). They pin that a refactor
changes no number the app or ``python -m paper`` shows: a mismatch means a changed random
stream, order of operations or column. If a change is intended (a new metric, a fixed bug),
say so in the commit and record the new hashes.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_limits

import dpcore
from dpcore import paper

pytestmark = pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")

# The algorithms of a88c999, named: an algorithm added later must not change these frames.
PCA_ALL = ("nonprivate", "cape", "conv", "local", "dpdis")
OTD_ALL = ("nonprivate", "cape", "conv", "local_agn", "local_avn", "random")
PCA_SMALL = {
    "dim": 12,
    "k": 3,
    "sites": 4,
    "n_per_site": 50,
    "runs": 2,
    "pool_size": 1000,
    "algorithms": PCA_ALL,
}
OTD_SMALL = {"dim": 5, "k": 2, "sites": 3, "n_per_site": 400, "runs": 2, "algorithms": OTD_ALL}


def frame_hash(df: pd.DataFrame) -> str:
    """SHA-256 over column names, dtypes and the raw bytes of every column."""
    h = hashlib.sha256()
    h.update(repr(df.shape).encode())
    for name in df.columns:
        col = df[name]
        h.update(f"{name}:{col.dtype}".encode())
        values = col.to_numpy()
        if values.dtype == object:  # strings: their text (the bytes would be addresses)
            h.update("\x00".join(map(str, values)).encode())
        else:
            h.update(np.ascontiguousarray(values).tobytes())
    return h.hexdigest()[:16]


def _dataset():
    return dpcore.synthetic_dataset(dim=8, k=2, n_samples=800, rng=np.random.default_rng(5))


CASES = {
    "pca-epsilon-all": lambda: dpcore.pca_sweep(**PCA_SMALL, epsilon=[0.1, 1.0, math.inf], seed=3),
    "pca-n-analytic-replace-equal": lambda: dpcore.pca_sweep(
        **{**PCA_SMALL, "n_per_site": [20, 60], "algorithms": ("nonprivate", "cape", "dpdis")},
        epsilon=0.5,
        calibration="analytic",
        neighbouring="replace",
        weighting="equal",
        rank=5,
        seed=1,
    ),
    "pca-sites-faithful": lambda: dpcore.pca_sweep(
        **{**PCA_SMALL, "sites": [2, 5]}, epsilon=2.0, faithful=True, seed=2
    ),
    "pca-delta-shares": lambda: dpcore.pca_sweep(
        **PCA_SMALL, epsilon=1.0, delta=[1e-4, 0.05], site_shares=[3, 1, 1, 1], seed=4
    ),
    "pca-dataset": lambda: dpcore.pca_sweep(
        data=_dataset(),
        k=2,
        sites=3,
        n_per_site=40,
        epsilon=[0.5, 5.0],
        runs=2,
        algorithms=PCA_ALL,
        seed=0,
    ),
    "otd-mog-epsilon-all": lambda: dpcore.otd_sweep(
        **OTD_SMALL, epsilon=[0.5, 5.0, math.inf], seed=3
    ),
    "otd-stm-n-faithful": lambda: dpcore.otd_sweep(
        **{**OTD_SMALL, "n_per_site": [200, 600]},
        model="stm",
        epsilon=2.0,
        faithful=True,
        calibration="analytic",
        sensitivity="replace",
        seed=1,
    ),
    "otd-mog-sites-options": lambda: dpcore.otd_sweep(
        **{**OTD_SMALL, "sites": [2, 4], "algorithms": ("random", "cape", "local_avn")},
        epsilon=3.0,
        scaling="max-norm",
        sigma2_source="data",
        budget_split=0.3,
        restarts=2,
        max_iter=30,
        tol=1e-6,
        weighting="equal",
        seed=2,
    ),
    "otd-example": lambda: dpcore.otd_example(
        **{**OTD_SMALL, "runs": 1}, epsilon=2.0, delta=0.01, seed=5
    ),
    "dropout-pca": lambda: dpcore.dropout_pca(
        n_per_site=[100, 200, 300],
        epsilon=[0.5, 1.0, 2.0],
        delta=[0.01, 0.01, 0.01],
        weights=[1 / 6, 1 / 3, 1 / 2],
        dropped=[1],
        dim=10,
        k=2,
        runs=3,
        pool_size=1000,
        seed=7,
    ),
    "paper-2a": lambda: paper.run_panel(paper.get_panel("2a"), runs=1, seed=0),
    "paper-3a": lambda: paper.run_panel(paper.get_panel("3a"), runs=1, seed=0),
    "paper-4c-analytic": lambda: paper.run_panel(
        paper.get_panel("4c"), runs=2, seed=1, calibration="analytic"
    ),
}

# Recorded at commit a88c999 with OPENBLAS_NUM_THREADS=1 (see the module docstring). The MOG
# cases were re-recorded when the third moment became one sum per free entry i ≤ j ≤ k
# (dpcore.moments.cube_sum_free, issue #16): the same M3 up to rounding, now exactly symmetric.
HASHES = {
    "dropout-pca": "d9fc142cc0d35d6f",
    "otd-example": "4516251aa284fdcb",  # MOG: M3 summed once per i ≤ j ≤ k (#16)
    "otd-mog-epsilon-all": "151270d446fe27b5",  # MOG: M3 summed once per i ≤ j ≤ k (#16)
    "otd-mog-sites-options": "5f128f0ffb66f421",  # MOG: M3 summed once per i ≤ j ≤ k (#16)
    "otd-stm-n-faithful": "cd972f450e64be21",
    "paper-2a": "32b87ff4edaf1465",
    "paper-3a": "032171316553564a",  # MOG: M3 summed once per i ≤ j ≤ k (#16)
    "paper-4c-analytic": "0c4b00add21ec1b1",
    "pca-dataset": "18a17654fed4e60f",
    "pca-delta-shares": "120102faa4fb5fef",
    "pca-epsilon-all": "700487b454354794",
    "pca-n-analytic-replace-equal": "a3ed8d460695cb05",
    "pca-sites-faithful": "59aa4084422333cd",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_frames_are_bit_identical_to_the_recorded_ones(case):
    # BLAS results depend on its thread count; the hashes are for one thread.
    with threadpool_limits(limits=1, user_api="blas"):
        assert frame_hash(CASES[case]()) == HASHES[case]
