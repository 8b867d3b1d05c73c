"""A fixed CPU calibration loop: the machine's speed at the work a Streamlit rerun does.

Server CPU per move (``benchmarks.capacity --per-page``, ``tests/app/test_cpu_per_move.py``) is in
milliseconds of *this* machine; the same code costs about 1.9× more on the 2-core machine of
2026-11-27 than on the one of 2026-11-26 where the 30 ms goal and its 90 ms guard were last
met (privacy 104 against 55 ms, trust models 95 against 50 ms, the same commit 5c17779;
docs/performance.md). The loop below does what a rerun's Python does — build records, JSON
them, hash them, sort them — and its CPU time, measured beside the pages, turns a page's
milliseconds into milliseconds of the reference machine: ms × REFERENCE_MS / loop ms.

``python -m benchmarks.calibration`` prints the loop's median CPU ms on this machine.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import time

# The loop's median CPU ms on the reference machine: measured here (2026-11-27, quiet,
# `python -m benchmarks.calibration`: 31.5 ms) divided by the page-cost ratio 1.9 above.
REFERENCE_MS = 16.6


def workload() -> int:
    """One pass of rerun-like Python work (about 30 ms on a 2026 x86-64 core)."""
    rows = [{"x": i, "y": i * 0.5, "label": f"row {i}", "ok": i % 3 == 0} for i in range(6000)]
    text = json.dumps(rows)
    back = json.loads(text)
    digest = hashlib.blake2b(text.encode()).digest()
    ordered = sorted(back, key=lambda r: (-r["y"], r["label"]))
    return len(ordered) + digest[0]


def loop_ms(repeats: int = 7) -> float:
    """Median process CPU ms of :func:`workload` over ``repeats`` passes."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        workload()
        times.append(1000 * (time.process_time() - start))
    return statistics.median(times)


def speed_factor(repeats: int = 7) -> float:
    """REFERENCE_MS / this machine's loop ms: multiply this machine's ms by it."""
    return REFERENCE_MS / loop_ms(repeats)


if __name__ == "__main__":
    print(f"calibration loop: {loop_ms(15):.1f} CPU ms (reference machine: {REFERENCE_MS} ms)")
