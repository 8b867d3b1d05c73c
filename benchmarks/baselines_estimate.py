"""The PCA page's Baselines sweep: its work estimate against the CPU it really takes (issue #50).

The page runs its rounds axis (:class:`dpcore.RoundsSpec`, ``ui.specs.rounds_spec``: the
featured one-shot algorithms beside every iterative one, T ∈ {1, 2, 3, 4, 6, 8, 11, 16}) in
the page's thread when its estimate is under :data:`dpcore.HEAVY_SECONDS`, and as a bounded
job otherwise; the issue measured 0.69 s estimated against 1.89 CPU-s. For each setting this
times :func:`dpcore.run_rounds_sweep` as the page calls it (the seed, the default workers):
process CPU seconds, median of ``--repeats``, the calibration loop
(:mod:`benchmarks.calibration`, median of 7 passes) timed before and after it. The estimate's
constants are seconds of the reference machine (loop ``REFERENCE_MS`` = 16.6 ms), so the CPU
is compared in those units too: CPU × 16.6 / loop ms. The ratio estimate / that CPU is what
``tests/benchmarks/test_baselines_estimate.py`` bounds to [1/1.5, 1.5].

    .venv/bin/python -m benchmarks.baselines_estimate            # the settings below
    .venv/bin/python -m benchmarks.baselines_estimate --small    # the test's two

Prints a Markdown table and, last, the machine: cores, load average, loop ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import dpcore
from benchmarks import calibration

# The PCA page's defaults (app_pages/pca.py, ui/controls.py): D = 50, K = 10, S = 10,
# N_s = 1000, ε = 0.5, 5 runs, the featured algorithms in the picker; the Baselines section
# adds the iterative ones.
PAGE = {"dim": 50, "k": 10, "sites": 10, "n_per_site": 1000, "epsilon": 0.5, "runs": 5}
SETTINGS: dict[str, dict[str, Any]] = {
    "page default": {},
    "1 run": {"runs": 1},
    "20 runs": {"runs": 20},
    "D = 20, K = 5": {"dim": 20, "k": 5},
    "D = 100": {"dim": 100},
    "D = 200, K = 50, 2 runs": {"dim": 200, "k": 50, "runs": 2},
    "S = 2": {"sites": 2},
    "S = 50, N_s = 200": {"sites": 50, "n_per_site": 200},
}
SMALL = ("1 run", "D = 20, K = 5, 1 run")
SMALL_SETTINGS = {"D = 20, K = 5, 1 run": {"dim": 20, "k": 5, "runs": 1}}


@dataclass(frozen=True)
class Reading:
    """One setting: the estimate (seconds, on the page's workers) and what it took."""

    name: str
    estimate: float
    cpu: float  # process CPU seconds, median of the repeats, this machine
    loop_ms: float  # the calibration loop beside it (mean of before and after)

    @property
    def reference_cpu(self) -> float:
        """The CPU in seconds of the reference machine (× REFERENCE_MS / loop ms)."""
        return self.cpu * calibration.REFERENCE_MS / self.loop_ms

    @property
    def ratio(self) -> float:
        """Estimate / reference CPU: 1 is exact, the test allows [1/1.5, 1.5]."""
        return self.estimate / self.reference_cpu


def spec_of(**changes: Any) -> dpcore.RoundsSpec:
    """The page's Baselines request at its defaults with ``changes`` (ui.specs.rounds_spec)."""
    one_shot = tuple(
        a for a in dpcore.featured_algorithms("pca") if a not in dpcore.iterative_algorithms()
    )
    return dpcore.RoundsSpec.build(
        **{**PAGE, **changes}, algorithms=one_shot + dpcore.iterative_algorithms()
    )


def measure(name: str, spec: dpcore.RoundsSpec, *, repeats: int = 3, seed: int = 0) -> Reading:
    """CPU of ``dpcore.run_rounds_sweep(spec, seed)`` (median of ``repeats``, after one
    untimed warm-up run) with the calibration loop before and after."""
    dpcore.run_rounds_sweep(spec, seed)  # imports and first-call caches: not the sweep's work
    before = calibration.loop_ms()
    times = []
    for _ in range(repeats):
        start = time.process_time()
        dpcore.run_rounds_sweep(spec, seed)
        times.append(time.process_time() - start)
    after = calibration.loop_ms()
    return Reading(name, spec.estimate().seconds, statistics.median(times), (before + after) / 2)


def table(readings: Sequence[Reading]) -> str:
    """The readings as a Markdown table."""
    lines = [
        "| setting | estimate s | CPU s here | loop ms | CPU s, reference machine | ratio |",
        "|---|---|---|---|---|---|",
    ]
    for r in readings:
        lines.append(
            f"| {r.name} | {r.estimate:.2f} | {r.cpu:.2f} | {r.loop_ms:.1f} "
            f"| {r.reference_cpu:.2f} | {r.ratio:.2f} |"
        )
    return "\n".join(lines)


def run(names: Sequence[str], *, repeats: int = 3) -> list[Reading]:
    """Measure the named settings (:data:`SETTINGS` or :data:`SMALL_SETTINGS`)."""
    known = {**SETTINGS, **SMALL_SETTINGS}
    return [measure(n, spec_of(**known[n]), repeats=repeats) for n in names]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.baselines_estimate")
    parser.add_argument("--small", action="store_true", help="only the test's two settings")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per setting")
    args = parser.parse_args(argv)
    readings = run(SMALL if args.small else tuple(SETTINGS), repeats=args.repeats)
    print(table(readings))
    ratios = [r.ratio for r in readings]
    print(
        f"\nratios {min(ratios):.2f}–{max(ratios):.2f}; {os.cpu_count()} cores, "
        f"{dpcore.default_workers()} workers, load {os.getloadavg()[0]:.1f}, calibration loop "
        f"{statistics.median(r.loop_ms for r in readings):.1f} ms "
        f"(reference {calibration.REFERENCE_MS} ms)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
