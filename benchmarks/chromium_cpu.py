"""Chromium's CPU seconds by process type and by thread, over a command's process tree.

    python -m benchmarks.chromium_cpu bash -c "python -m pytest tests/browser/test_a11y.py -q"

Like :mod:`benchmarks.tree_cpu` (polls ``/proc`` every 0.3 s while the command runs), but
splits the CPU of the Chromium processes by their ``--type=`` argument (``browser`` for the
one without; a utility by its ``--utility-sub-type``) and, inside those, by thread name
(``VizCompositorTh``, ``CrRendererMain``, ``CompositorTileW``...). Prints, on standard
error, the tree's CPU, Chromium's by type and the busiest threads. Linux only; a thread's
CPU counts up to the last poll before it exits.
"""

from __future__ import annotations

import os
import sys

from benchmarks.tree_cpu import Tree, read_stat, watch


def process_type(pid: int) -> str | None:
    """``browser``, ``renderer``, ``gpu-process``, ``utility:<sub-type>``... of a Chromium
    process, or None if ``pid`` is not Chromium (or is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            # a child rewrites its title: its arguments then come space-separated in one string
            argv = handle.read().decode(errors="replace").replace("\0", " ").split()
    except OSError:
        return None
    if not argv or "chromium" not in os.path.basename(argv[0]):
        return None
    args = dict(a[2:].split("=", 1) for a in argv[1:] if a.startswith("--") and "=" in a)
    kind = args.get("type", "browser")
    if kind == "utility":
        kind += ":" + args.get("utility-sub-type", "?").split(".")[0]
    return kind


def threads(pid: int) -> dict[int, tuple[float, str]]:
    """Every thread of ``pid``: tid → (CPU seconds so far, thread name)."""
    found: dict[int, tuple[float, str]] = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tids:
        if (stat := read_stat(f"/proc/{pid}/task/{tid}/stat")) is not None:
            found[int(tid)] = stat[1:]
    return found


def main(command: list[str]) -> int:
    """Run ``command``; print the tree's CPU and Chromium's by type and thread."""
    kinds: dict[int, str | None] = {}
    total: dict[int, float] = {}
    per_thread: dict[tuple[int, int], tuple[float, str]] = {}

    def visit(found: Tree) -> None:
        for pid, (cpu, _name) in found.items():
            total[pid] = max(cpu, total.get(pid, 0.0))
            if kinds.get(pid, "zygote") == "zygote":  # a forked child sets its title later
                kinds[pid] = process_type(pid)
            if kinds[pid] is not None:
                for tid, (tcpu, tname) in threads(pid).items():
                    per_thread[pid, tid] = (max(tcpu, per_thread.get((pid, tid), (0.0,))[0]), tname)

    status, wall = watch(command, visit)
    by_kind: dict[str, float] = {}
    for pid, kind in kinds.items():
        if kind is not None:
            by_kind[kind] = by_kind.get(kind, 0.0) + total[pid]
    by_thread: dict[str, float] = {}
    for (pid, _tid), (cpu, name) in per_thread.items():
        key = f"{kinds[pid]}/{name}"
        by_thread[key] = by_thread.get(key, 0.0) + cpu
    chromium = sum(by_kind.values())
    print(
        f"wall {wall:.1f} s, tree CPU {sum(total.values()):.1f} s, Chromium {chromium:.1f} s",
        file=sys.stderr,
    )
    for kind, cpu in sorted(by_kind.items(), key=lambda kv: -kv[1]):
        print(f"  {kind:32s} {cpu:7.1f} s", file=sys.stderr)
    print("  busiest threads:", file=sys.stderr)
    for key, cpu in sorted(by_thread.items(), key=lambda kv: -kv[1])[:16]:
        print(f"    {key:44s} {cpu:7.1f} s", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
