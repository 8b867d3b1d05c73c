"""The benchmark's quick mode as a test: the fast path and the reference agree.

Not a timing assertion — only that both implementations give the same mean captured energy
per (algorithm, ε) within Monte Carlo error (tolerance derivation in benchmarks.agreement).
"""

import numpy as np

from benchmarks.__main__ import QUICK, _pool, agreement, ours, reference


def test_quick_benchmark_fast_and_reference_agree():
    data = _pool(QUICK, seed=0)
    check = agreement(ours(QUICK, data, 0), reference(QUICK, data, 1))
    assert len(check) == len(QUICK.algorithms) * len(QUICK.epsilons)
    assert check["ok"].all(), check[~check["ok"]]


def test_agreement_detects_a_different_answer():
    data = _pool(QUICK, seed=0)
    a = ours(QUICK, data, 0)
    b = a.copy()
    b["captured_energy_ratio"] = b["captured_energy_ratio"] * np.where(
        b["algorithm"] == "cape", 0.8, 1.0
    )  # CAPE 20% worse: must be caught
    flagged = ~agreement(a, b).loc["cape", "ok"]
    assert flagged.any()  # caught at least where CAPE is accurate (large ε)
    assert flagged.loc[5.0]
