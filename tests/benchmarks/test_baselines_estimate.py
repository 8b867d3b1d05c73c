"""The PCA page's Baselines estimate is within 1.5× of the CPU the sweep takes (issue #50).

The issue measured 0.69 s estimated against 1.89 CPU-s (2.7× low) and the sweep ran in the
page's thread. ``benchmarks.baselines_estimate --small`` times the page's rounds sweep at two
small settings (process CPU, median of 3 after a warm-up run) beside the calibration loop,
and turns the CPU into seconds of the reference machine, the units of the estimate's
constants (CPU × 16.6 / loop ms). A ratio, measured in one run on one machine: its speed
cancels; what is left is the model's error and the noise of sharing the machine.

Fails before this change: the former model (150 µs a step, its rounds spread over the
workers, no pool or per-task costs) gave 0.15 s for the 1-run setting that takes 0.4 s.
"""

from __future__ import annotations

import os

import pytest

import dpcore
from benchmarks import baselines_estimate

pytestmark = pytest.mark.slow

BOUND = 1.5  # the issue's: estimate within 1.5× of the measured CPU, either way


def _need_a_spare_core(when: str) -> None:
    load = os.getloadavg()[0]
    if load >= (os.cpu_count() or 1):
        pytest.skip(f"load average {load:.1f} on {os.cpu_count()} cores {when}: no core to spare")


def test_the_estimate_is_within_one_and_a_half_times_the_cpu_it_takes():
    # A CPU-time ratio is measured on a machine with a core to spare. Decided when the test
    # runs, not when it is collected: CI collected at load ~1 and ran this test at load ~7
    # beside the browser tests, where the calibration loop itself stretched to 29-31 ms
    # (10-12 idle) and the ratio read 2.1-2.2 (and 1.57 in an earlier run). Under load
    # `python -m benchmarks.baselines_estimate` measures it.
    _need_a_spare_core("before")
    readings = baselines_estimate.run(baselines_estimate.SMALL)
    report = baselines_estimate.table(readings)
    _need_a_spare_core("while measuring")  # the load may rise during the 10-20 s it takes
    for reading in readings:
        assert 1 / BOUND <= reading.ratio <= BOUND, report


def test_the_benchmark_is_the_pages_request():
    # the section's request at the page's defaults (ui.specs.rounds_spec), so the ratio
    # bounds what the page decides with
    from learning.settings import PcaControls
    from ui.specs import rounds_spec

    page = PcaControls(
        dim=50,
        k=10,
        sites=10,
        n_per_site=1000,
        epsilon=0.5,  # the sliders' defaults (ui/controls.py)
        delta=0.01,
        runs=5,
        seed=0,
        algorithms=tuple(dpcore.featured_algorithms("pca")),
        calibration=dpcore.PcaSpec.build(epsilon=1.0).privacy.calibration,
        neighbouring=dpcore.PcaSpec.build(epsilon=1.0).privacy.neighbouring,
    )
    assert rounds_spec(page) == baselines_estimate.spec_of()
