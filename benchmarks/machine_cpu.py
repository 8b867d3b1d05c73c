"""Run a command and report the whole machine's CPU while it ran (Linux /proc/stat).

``/usr/bin/time`` and per-process probes count only the processes a command waits for; the
browser tests' Chromium renderers are reaped by Chromium, not by pytest, and went uncounted
(about 470 CPU-seconds of the suite's 1,250, docs/performance.md). The machine's own counters
see every process, so on an otherwise idle machine they are the command's true cost::

    python -m benchmarks.machine_cpu -- bash test.sh
    python -m benchmarks.machine_cpu --every 30 -- .venv/bin/python -m pytest -n 2 tests/x.py

It prints the wall time, the CPU-seconds used by all processes, and the share of the cores
that were busy (with ``--every N``, also per N-second window while it runs), then exits with
the command's exit code.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time


def busy_and_total() -> tuple[int, int]:
    """Clock ticks the machine spent busy (not idle or waiting for I/O), and in all."""
    with open("/proc/stat", encoding="ascii") as stat:
        ticks = [int(x) for x in stat.readline().split()[1:]]
    idle = ticks[3] + ticks[4]
    return sum(ticks) - idle, sum(ticks)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=float, default=0, help="also report every N seconds")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    hz, cores = os.sysconf("SC_CLK_TCK"), os.cpu_count() or 1
    start, (busy0, total0) = time.monotonic(), busy_and_total()
    done = threading.Event()

    def windows() -> None:
        last = busy_and_total()
        while not done.wait(args.every):
            now = busy_and_total()
            share = (now[0] - last[0]) / max(1, now[1] - last[1])
            print(f"[{time.monotonic() - start:6.0f} s] {share:4.0%} busy", file=sys.stderr)
            last = now

    if args.every > 0:
        threading.Thread(target=windows, daemon=True).start()
    code = subprocess.call(command)
    done.set()
    busy1, total1 = busy_and_total()
    wall = time.monotonic() - start
    cpu = (busy1 - busy0) / hz
    share = (busy1 - busy0) / max(1, total1 - total0)
    print(
        f"machine_cpu: {wall:.0f} s wall, {cpu:.1f} CPU-s on {cores} cores "
        f"({share:.0%} busy); floor at full use {cpu / cores:.0f} s",
        file=sys.stderr,
    )
    return code


if __name__ == "__main__":
    raise SystemExit(main())
