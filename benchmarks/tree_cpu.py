"""Wall time and CPU seconds of a command's whole process tree (servers, Chromium, job
processes included), by polling ``/proc`` while it runs.

    python -m benchmarks.tree_cpu bash -c "python -m pytest tests/app/test_load.py -q"

Prints, on standard error, the wall seconds and the CPU seconds summed over every descendant
seen, and the largest by process name. A descendant's CPU counts up to the last poll before it
exits (every 0.3 s), so short-lived children may be undercounted; the command itself is not a
descendant, hence ``bash -c`` when it is the process to count. Linux only.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable

POLL_SECONDS = 0.3
# pid → (CPU seconds so far, process name), as :func:`descendants` finds them
Tree = dict[int, tuple[float, str]]
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def read_stat(path: str) -> tuple[int, float, str] | None:
    """(parent pid, CPU seconds so far, name) from a ``/proc/…/stat`` file, or None if the
    process or thread is gone."""
    try:
        with open(path) as handle:
            stat = handle.read()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICK  # utime + stime
    return int(fields[1]), cpu, stat[stat.index("(") + 1 : stat.rindex(")")]


def descendants(root: int) -> Tree:
    """Every descendant of ``root``: pid → (CPU seconds so far, process name)."""
    children: dict[int, list[tuple[int, float, str]]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or (stat := read_stat(f"/proc/{entry}/stat")) is None:
            continue
        parent, cpu, name = stat
        children.setdefault(parent, []).append((int(entry), cpu, name))
    found: dict[int, tuple[float, str]] = {}
    todo = [root]
    while todo:
        for pid, cpu, name in children.get(todo.pop(), []):
            found[pid] = (cpu, name)
            todo.append(pid)
    return found


def tree_seconds(root: int) -> float:
    """CPU seconds of ``root`` and every descendant alive now."""
    own = read_stat(f"/proc/{root}/stat")
    return (own[1] if own else 0.0) + sum(cpu for cpu, _ in descendants(root).values())


def watch(command: list[str], visit: Callable[[Tree], None]) -> tuple[int, float]:
    """Run ``command`` and, every POLL_SECONDS until it exits, call ``visit`` with its
    :func:`descendants`; return its exit status and wall seconds."""
    if not command:
        raise ValueError("command must name a program to run, got nothing")
    start = time.time()
    proc = subprocess.Popen(command)
    while proc.poll() is None:
        visit(descendants(proc.pid))
        time.sleep(POLL_SECONDS)
    return proc.returncode, time.time() - start


def main(command: list[str]) -> int:
    """Run ``command``, print its wall and tree CPU seconds; return its exit status."""
    seen: Tree = {}

    def visit(found: Tree) -> None:
        for pid, (cpu, name) in found.items():
            seen[pid] = (max(cpu, seen.get(pid, (0.0, name))[0]), name)

    status, wall = watch(command, visit)
    by_name: dict[str, float] = {}
    for cpu, name in seen.values():
        by_name[name] = by_name.get(name, 0.0) + cpu
    top = dict(sorted(by_name.items(), key=lambda kv: -kv[1])[:6])
    print(
        f"wall {wall:.1f} s, tree CPU {sum(by_name.values()):.1f} s:",
        {name: round(cpu, 1) for name, cpu in top.items()},
        file=sys.stderr,
    )
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
