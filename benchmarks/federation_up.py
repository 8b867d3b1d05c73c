"""Release latency on a federation that stays up, beside the one command and in process.

Usage (from the repository root, with the ``federated`` extra installed; run it on an idle
machine, one benchmark at a time)::

    .venv/bin/python -m benchmarks.federation_up                  # S = 3, 10, 20, 10 runs each
    .venv/bin/python -m benchmarks.federation_up --sites 10 --runs 10

For each S: starts the loopback federation once (:class:`federated.launcher.Federation`, as
``python -m federated up`` does), then submits ``--runs`` capePCA analyses one after the
other (joint-view-safe design, D = 4, K = 2, seed 0, demo sites; each ``flwr run`` until the
ServerApp wrote its outcome, as ``python -m federated submit`` waits) and reports the median
and range of their wall times; beside it one run of the one command
(:func:`federated.launcher.run_once`: start, run, stop) and the in-process run of the same
release (:func:`federated.protocol.simulate`). Prints a Markdown table with the machine's
calibration loop (``benchmarks.calibration``; the reference machine reads 16.6 ms) and the
load average before each S.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.calibration import loop_ms
from federated.launcher import Federation, demo_data, run_once
from federated.protocol import simulate

PORT = 9460  # this benchmark's SuperLink port; the nodes use PORT + 1
KIND, DESIGN, K, SEED, EPS, DELTA = "pca", "joint", 2, 0, 1.0, 1e-5
LIMIT = 300.0


def measure(sites: int, runs: int, workdir: Path) -> dict:
    """One S: the running federation's per-analysis walls, the one command's, in process."""
    data = demo_data(workdir / "data", sites)
    eps, dlt = [EPS] * sites, [DELTA] * sites
    load = os.getloadavg()[0]
    calibration = loop_ms()
    walls = []
    fed = Federation(data, eps, dlt, seed=SEED, port=PORT, workdir=workdir / "up")
    with fed:
        started = time.monotonic()
        fed.start(started + LIMIT)
        up = time.monotonic() - started
        for i in range(runs):
            begin = time.monotonic()
            output, _ = fed.submit(kind=KIND, design=DESIGN, k=K, timeout=60.0, tag=f"r{i}")
            outcome = fed.wait(output, begin + LIMIT, tag=f"r{i}")
            walls.append(time.monotonic() - begin)
            if not outcome["ok"]:
                raise RuntimeError(f"run {i} was refused: {outcome}")
    begin = time.monotonic()
    once, _ = run_once(data, kind=KIND, design=DESIGN, epsilon=eps, delta=dlt, seed=SEED, k=K,
                       port=PORT, limit=LIMIT, workdir=workdir / "once")  # fmt: skip
    one_shot = time.monotonic() - begin
    if not once["ok"]:
        raise RuntimeError(f"the one command was refused: {once}")
    begin = time.perf_counter()
    simulate(data, kind=KIND, design=DESIGN, epsilon=eps, delta=dlt, seed=SEED, k=K)
    in_process = time.perf_counter() - begin
    return {
        "sites": sites,
        "up": up,
        "median": statistics.median(walls),
        "low": min(walls),
        "high": max(walls),
        "one_shot": one_shot,
        "in_process": in_process,
        "load": load,
        "calibration": calibration,
    }


def table(rows: list[dict], runs: int) -> str:
    lines = [
        f"| S | start once | release on the running federation (median of {runs}, range) "
        "| the one command (start, run, stop) | in process | calibration loop | load average |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['sites']} | {r['up']:.1f} s | {r['median']:.1f} s ({r['low']:.1f}–"
            f"{r['high']:.1f}) | {r['one_shot']:.1f} s | {1000 * r['in_process']:.1f} ms | "
            f"{r['calibration']:.1f} ms | {r['load']:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=int, nargs="+", default=[3, 10, 20])
    parser.add_argument("--runs", type=int, default=10, help="analyses per S (default 10)")
    args = parser.parse_args(argv)
    rows = []
    for sites in args.sites:
        with tempfile.TemporaryDirectory(prefix="cape-up-bench-") as tmp:
            rows.append(measure(sites, args.runs, Path(tmp)))
        print(table(rows[-1:], args.runs).splitlines()[-1], file=sys.stderr, flush=True)
    print(table(rows, args.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
