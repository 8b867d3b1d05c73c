"""The benchmark's quick mode as a test: the fast path and the reference agree (and the suite's
meter, benchmarks.machine_cpu, counts what a child uses).

Not a timing assertion — only that both implementations give the same means per
(algorithm, ε) within Monte Carlo error (tolerance derivation in benchmarks.agreement), for
PCA (captured energy) and for tensors (component error).
"""

import re
import sys

import numpy as np
import pytest

from benchmarks.__main__ import QUICK, agreement, check, ours, prepare

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("scenario", QUICK, ids=lambda s: s.task)
def test_quick_benchmark_fast_and_reference_agree(scenario):
    result = check(scenario, seed=0)
    assert len(result) == len(scenario.algorithms) * len(scenario.epsilons)
    assert result["ok"].all(), result[~result["ok"]]


def test_agreement_detects_a_different_answer():
    pca = QUICK[0]
    a = ours(pca, prepare(pca, 0), 0)
    b = a.copy()
    b["captured_energy_ratio"] = b["captured_energy_ratio"] * np.where(
        b["algorithm"] == "cape", 0.8, 1.0
    )  # CAPE 20% worse: must be caught
    flagged = ~agreement(a, b).loc["cape", "ok"]
    assert flagged.any()  # caught at least where CAPE is accurate (large ε)
    assert flagged.loc[5.0]


def test_agreement_detects_a_worse_tensor_decomposition():
    mog = QUICK[1]
    a = ours(mog, None, 0)
    b = a.copy()
    b["component_error"] = b["component_error"] + np.where(b["algorithm"] == "cape", 0.1, 0.0)
    assert not agreement(a, b, "component_error").loc[("cape", 10.0), "ok"]


def test_machine_cpu_counts_a_childs_cpu_and_passes_its_exit_code_on(capsys):
    from benchmarks.machine_cpu import main

    spin = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.6: pass"
    assert main(["--", sys.executable, "-c", spin]) == 0
    report = capsys.readouterr().err
    cpu = float(re.search(r"(\d+(?:\.\d+)?) CPU-s", report).group(1))
    # the machine's counters see every process: at least the child's own 0.6 s (ticks of 10 ms)
    assert cpu >= 0.5, report
    assert main(["--", sys.executable, "-c", "raise SystemExit(3)"]) == 3
