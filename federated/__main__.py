"""``python -m federated run --sites 3``: a whole CAPE run on 127.0.0.1, then stop.

Starts a SuperLink, the noise generator and one SuperNode per site (subprocesses), runs
CAPE once, prints the release and its privacy statement, and stops everything it started
(also on error, timeout or Ctrl-C). Without ``--data`` it writes unequal demo sites.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from federated.launcher import demo_data, run_once
from federated.protocol import KINDS, SCHEMES, Release, simulate
from federated.runlog import read_log


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m federated")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="one CAPE run on loopback")
    run.add_argument("--sites", type=int, default=3, help="S in [2, 20] (default 3)")
    run.add_argument("--data", nargs="+", type=Path, help="one CSV per site (default: demo)")
    run.add_argument("--kind", choices=KINDS, default="mean")
    run.add_argument("--design", choices=("joint", "cape"), default="joint")
    run.add_argument(
        "--scheme", choices=SCHEMES, default="helper", help="pairwise: no noise generator"
    )
    run.add_argument("--epsilon", type=float, default=1.0, help="every site's ε")
    run.add_argument("--delta", type=float, default=1e-5, help="every site's δ")
    run.add_argument("--k", type=int, default=2, help="PCA subspace dimension")
    run.add_argument(
        "--seed", type=int, default=-1, help="≥ 0 reproduces the in-process run (demo only)"
    )
    run.add_argument("--port", type=int, default=9091, help="SuperLink port (nodes above it)")
    run.add_argument("--timeout", type=float, default=300.0, help="whole run, seconds")
    run.add_argument("--workdir", type=Path, help="logs and results (default: a temp dir)")
    return parser


def _show(release: Release) -> str:
    np.set_printoptions(precision=6, suppress=True)
    how = f"{release.design} design, {release.scheme} noise"
    lines = [f"CAPE {release.kind} release ({how}), N_s = {release.n_samples}"]
    if release.kind == "mean":
        lines.append(f"  mean: {release.estimate}")
    elif release.eigenvalues is None:
        raise ValueError(f"a {release.kind} release must carry its eigenvalues; this one has none")
    else:
        lines.append(f"  top-{len(release.eigenvalues)} eigenvalues: {release.eigenvalues}")
        lines.append(f"  subspace (columns):\n{release.subspace}")
    lines.append(f"  aggregate noise std τ_agg = {release.tau_agg:.4g}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the command; 0 released, 2 refused, 1 failed."""
    args = _parser().parse_args(argv)
    if not 2 <= args.sites <= 20:
        print(f"--sites must be in [2, 20]; got {args.sites}", file=sys.stderr)
        return 1
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="cape-flower-"))
    data = args.data or demo_data(workdir / "data", args.sites)
    sites = len(data)
    eps, dlt = [args.epsilon] * sites, [args.delta] * sites
    started = time.monotonic()
    try:
        outcome, log = run_once(
            data,
            kind=args.kind,
            design=args.design,
            epsilon=eps,
            delta=dlt,
            seed=args.seed,
            k=args.k,
            scheme=args.scheme,
            port=args.port,
            limit=args.timeout,
            workdir=workdir,
        )
    except KeyboardInterrupt:
        print("interrupted; every process started was stopped", file=sys.stderr)
        return 1
    except (RuntimeError, TimeoutError, OSError) as err:
        print(f"FAILED: {err}", file=sys.stderr)
        return 1
    wall = time.monotonic() - started
    if not outcome["ok"]:
        print(f"REFUSED by the aggregator — {outcome['party']}: {outcome['reason']}")
        print("Nothing was released.")
        return 2
    release = Release.from_json(outcome["release"])
    print(_show(release))
    if args.seed >= 0:
        ref = simulate(
            data,
            kind=args.kind,
            design=args.design,
            epsilon=eps,
            delta=dlt,
            seed=args.seed,
            k=args.k,
            scheme=args.scheme,
        )
        diff = np.max(np.abs(release.estimate - ref.estimate)) / np.max(np.abs(ref.estimate))
        print(f"  in-process dpcore run with the same seed: max relative difference {diff:.3g}")
    print()
    print(release.statement())
    entries = read_log(log)
    phases = ", ".join(f"{k} {v:.1f} s" for k, v in outcome["phases"].items())
    print(f"\n{len(entries)} log entries in {log}; logs in {workdir}")
    print(f"{wall:.1f} s wall time ({phases})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
