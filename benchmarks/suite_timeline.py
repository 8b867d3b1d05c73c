"""Where a test run leaves the cores idle: each test's start and end on each worker, against
the machine's own busy share (Linux /proc/stat) sampled every 2 s.

A pytest plugin, then a report::

    CAPE_TIMELINE=/tmp/tl bash test.sh -p benchmarks.suite_timeline
    python -m benchmarks.suite_timeline /tmp/tl

The plugin writes one JSON line per test start and end to ``worker-<id>.jsonl`` (each xdist
worker its own file) and the controlling process samples /proc/stat to ``cpu.log``; without
``CAPE_TIMELINE`` it does nothing. The report gives the run's span, when each worker finished,
the idle core-seconds over the span, the busy share minute by minute and the tests during
which the cores were most idle (half the machine's idle core-seconds while a test ran: two
workers share an idle moment). Issue #51's measurements (docs/performance.md, "A worker for
the tests that wait") were made with it.
"""

from __future__ import annotations

import bisect
import json
import os
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

EVERY = 2.0  # seconds between /proc/stat samples
_out: dict[str, object] = {}


def _directory() -> Path | None:
    where = os.environ.get("CAPE_TIMELINE")
    return Path(where) if where else None


def _write(event: str, nodeid: str) -> None:
    directory = _directory()
    if directory is None:
        return
    if "file" not in _out:
        directory.mkdir(parents=True, exist_ok=True)
        worker = _out.get("worker", "main")
        _out["file"] = open(directory / f"worker-{worker}.jsonl", "a", buffering=1)
    line = json.dumps({"ev": event, "t": time.time(), "id": nodeid})
    _out["file"].write(line + "\n")  # type: ignore[attr-defined]


def pytest_runtest_logstart(nodeid, location):
    if not _out.get("controller"):
        _write("start", nodeid)


def pytest_runtest_logfinish(nodeid, location):
    if not _out.get("controller"):
        _write("end", nodeid)


def pytest_configure(config):
    directory = _directory()
    if directory is None:
        return
    # Which process this is from pytest-xdist's own record (config.workerinput), not from the
    # environment: a pytest started inside a test inherits its worker's PYTEST_XDIST_WORKER.
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        _out["worker"] = workerinput["workerid"]
        return
    # the controller: with xdist its logstart hooks repeat the workers' (not written)
    _out["controller"] = bool(getattr(config.option, "numprocesses", None))
    directory.mkdir(parents=True, exist_ok=True)
    stop = threading.Event()
    _out["stop"] = stop

    def sample() -> None:
        with open(directory / "cpu.log", "a", encoding="ascii") as log:
            while not stop.is_set():
                with open("/proc/stat", encoding="ascii") as stat:
                    log.write(f"{time.time()} {stat.readline()}")
                log.flush()
                stop.wait(EVERY)

    threading.Thread(target=sample, daemon=True).start()


def pytest_unconfigure(config):
    stop = _out.get("stop")
    if stop is not None:
        stop.set()  # type: ignore[attr-defined]


def report(directory: Path, top: int = 15) -> str:
    """The report's text for a directory the plugin wrote."""
    samples = []
    previous = None
    for line in (directory / "cpu.log").read_text().splitlines():
        parts = line.split()
        t, ticks = float(parts[0]), [int(x) for x in parts[2:]]
        if previous is not None:
            delta = [a - b for a, b in zip(ticks, previous[1], strict=True)]
            total = sum(delta) or 1
            samples.append((previous[0], t, 1 - (delta[3] + delta[4]) / total))
        previous = (t, ticks)
    starts = [s[0] for s in samples]
    cores = os.cpu_count() or 1

    def busy(a: float, b: float) -> float:  # core-seconds busy between a and b
        i, total = max(0, bisect.bisect_right(starts, a) - 1), 0.0
        while i < len(samples) and samples[i][0] < b:
            lo, hi = max(a, samples[i][0]), min(b, samples[i][1])
            total += max(0.0, hi - lo) * samples[i][2] * cores
            i += 1
        return total

    tests = {}
    for path in sorted(directory.glob("worker-*.jsonl")):
        worker = path.stem.removeprefix("worker-")
        begun: dict[str, float] = {}
        for line in path.read_text().splitlines():
            event = json.loads(line)
            if event["ev"] == "start":
                begun[event["id"]] = event["t"]
            elif event["id"] in begun:
                tests[event["id"]] = (worker, begun.pop(event["id"]), event["t"])
    first = min(a for _, a, _ in tests.values())
    last = max(b for _, _, b in tests.values())
    span = last - first
    used = busy(first, last)
    lines = [
        f"span {span:.0f} s, {len(tests)} tests; busy {used:.0f} core-s, idle "
        f"{cores * span - used:.0f} core-s ({used / (cores * span):.0%} of {cores} cores busy)"
    ]
    ends = defaultdict(float)
    for worker, _, b in tests.values():
        ends[worker] = max(ends[worker], b - first)
    lines.append("workers end at: " + ", ".join(f"{w} {e:.0f} s" for w, e in sorted(ends.items())))
    minutes = defaultdict(list)
    for a, _, share in samples:
        if first <= a <= last:
            minutes[int((a - first) // 60)].append(share)
    shares = (f"{m}:{sum(v) / len(v):.2f}" for m, v in sorted(minutes.items()))
    lines.append("busy by minute: " + " ".join(shares))
    idle = sorted(
        ((cores * (b - a) - busy(a, b)) / 2, b - a, a - first, w, k)
        for k, (w, a, b) in tests.items()
    )[::-1]
    lines.append("most idle while running (idle core-s / 2, seconds, start, worker, test):")
    lines += [f"  {i:6.1f} {d:6.1f} {s:6.0f} {w} {k}" for i, d, s, w, k in idle[:top]]
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(Path(sys.argv[1])))
