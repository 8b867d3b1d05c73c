"""CAPE on Flower against the in-process simulation of the same release, for S = 3, 10, 20.

Usage (from the repository root, with the ``federated`` extra installed)::

    .venv/bin/python -m benchmarks.federated                 # S = 3, 10, 20
    .venv/bin/python -m benchmarks.federated --sites 3 10

For each S: the one command's run (:func:`federated.launcher.run_once`: fork server,
SuperLink, noise generator and S site SuperNodes on 127.0.0.1, one capePCA release, joint-
view-safe design, D = 4, K = 2, seed 0, demo sites), its wall time split into start, run and
stop, the CPU time of everything it started (user + system of the reaped children), and the
payload bytes per message of each kind from its run log; beside it the in-process run of the
same release (:func:`federated.protocol.simulate`: ``dpcore.cape_average`` on the same CSVs),
its wall time and its largest difference from the distributed release (relative).

Bytes are payload bytes (arrays, keys, ciphertexts, 8 per number; :mod:`federated.runlog`),
not Flower's HTTP and protobuf framing. Prints a Markdown table (docs/federated.md holds one).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from federated.launcher import demo_data, run_once
from federated.protocol import Release, simulate
from federated.runlog import read_log

PORT = 9440  # this benchmark's SuperLink port; the nodes use PORT + 1
KIND, DESIGN, DIM, K, SEED = "pca", "joint", 4, 2, 0
LIMIT = 600.0  # seconds per run, whole: start, run, stop


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _party(name: str) -> str:
    if name.startswith("site "):
        return "site s"
    return "node" if name.startswith("node ") else name


def _per_message(entries: list[dict]) -> dict[str, int]:
    """The largest payload of one message of each kind (round, sender → receiver); within
    a kind the messages differ by a few bytes at most (a fingerprint, a number's digits)."""
    out: dict[str, int] = {}
    for e in entries:
        if e["round"] != "end":
            key = f"{e['round']} {_party(e['sender'])} → {_party(e['receiver'])}"
            out[key] = max(out.get(key, 0), int(e["bytes"]))
    return out


def measure(sites: int, workdir: Path) -> dict:
    """One distributed run and its in-process twin for ``sites`` demo sites."""
    data = demo_data(workdir / "data", sites, dim=DIM, seed=0)
    eps, dlt = [1.0] * sites, [1e-5] * sites
    cpu = _children_cpu()
    started = time.monotonic()
    outcome, log = run_once(
        data, kind=KIND, design=DESIGN, epsilon=eps, delta=dlt, seed=SEED, k=K,
        port=PORT, limit=LIMIT, workdir=workdir,
    )  # fmt: skip
    wall = time.monotonic() - started
    cpu = _children_cpu() - cpu
    if not outcome["ok"]:
        raise RuntimeError(f"S = {sites}: refused: {outcome['reason']}")
    got = Release.from_json(outcome["release"])
    t0 = time.perf_counter()
    ref = simulate(data, kind=KIND, design=DESIGN, epsilon=eps, delta=dlt, seed=SEED, k=K)
    sim = time.perf_counter() - t0
    diff = float(np.max(np.abs(got.estimate - ref.estimate)) / np.max(np.abs(ref.estimate)))
    entries = read_log(log)
    messages = [e for e in entries if e["round"] != "end"]
    return {
        "sites": sites,
        "wall": wall,
        "phases": outcome["phases"],
        "cpu": cpu,
        "messages": len(messages),
        "bytes": sum(int(e["bytes"]) for e in messages),
        "per_message": _per_message(entries),
        "sim": sim,
        "diff": diff,
    }


def table(rows: list[dict]) -> str:
    """The Markdown table of :func:`measure`'s rows."""
    lines = [
        "| S | wall (start + run + stop) | CPU of its processes | messages | payload bytes "
        "| bytes per message | in-process run | max rel. difference |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        p = r["phases"]
        per = "; ".join(f"{k}: {v:,}" for k, v in r["per_message"].items())
        lines.append(
            f"| {r['sites']} | {r['wall']:.1f} s ({p['start']:.1f} + {p['run']:.1f} + "
            f"{p['stop']:.1f}) | {r['cpu']:.1f} s | {r['messages']} | {r['bytes']:,} | {per} "
            f"| {1e3 * r['sim']:.1f} ms | {r['diff']:.2g} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.federated")
    parser.add_argument("--sites", type=int, nargs="+", default=[3, 10, 20])
    args = parser.parse_args(argv)
    rows = []
    for sites in args.sites:
        with tempfile.TemporaryDirectory(prefix=f"cape-bench-{sites}-") as tmp:
            rows.append(measure(sites, Path(tmp)))
        print(f"S = {sites}: {rows[-1]['wall']:.1f} s", file=sys.stderr, flush=True)
    print(f"load average before the last run: {os.getloadavg()}")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
