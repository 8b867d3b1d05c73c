"""``python -m federated run --sites 3``: a whole CAPE run on 127.0.0.1, then stop;
``python -m federated keys`` and ``manifest``: a party's identity key and the federation's
manifest (:mod:`federated.identity`).

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

from federated import identity, security
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
    keys = sub.add_parser("keys", help="make a party's long-term identity key (once)")
    keys.add_argument("--out", type=Path, required=True, help="the private key file to write")
    pin = sub.add_parser("manifest", help="write the federation manifest every party pins")
    pin.add_argument("--noise", type=Path, required=True, help="the noise generator's .pub")
    pin.add_argument("--sites", type=Path, nargs="+", required=True, help="each site's .pub")
    pin.add_argument("--n", type=int, nargs="+", required=True, help="each site's N_s")
    pin.add_argument("--epsilon", type=float, nargs="+", required=True, help="each site's ε_s")
    pin.add_argument("--delta", type=float, nargs="+", required=True, help="each site's δ_s")
    pin.add_argument("--designs", nargs="+", default=["joint"], choices=("joint", "cape"))
    pin.add_argument("--schemes", nargs="+", default=["helper"], choices=SCHEMES)
    pin.add_argument("--out", type=Path, required=True, help="the manifest file to write")
    sec = sub.add_parser("secure", help="TLS, SuperNode keys, SuperExec secrets for Flower")
    sec.add_argument("--out", type=Path, required=True, help="a new directory to write")
    sec.add_argument("--host", nargs="+", default=[], help="the SuperLink's hostnames / IPs")
    sec.add_argument("--sites", type=int, default=3, help="SuperNodes: 1 noise generator + S")
    sec.add_argument("--days", type=int, default=365, help="certificate validity")
    sec.add_argument("--port", type=int, default=9091, help="the SuperLink's, in the recipe")
    return parser


def _keys(out: Path) -> int:
    """``python -m federated keys``: a fresh identity, its fingerprint to compare out of band."""
    try:
        public = identity.new_identity(out)
    except (FileExistsError, OSError) as err:
        print(f"keys: cannot write {out}: {err}", file=sys.stderr)
        return 2
    print(f"identity key {out} (keep it private), public key {out}.pub")
    print(f"fingerprint {identity.fingerprint(public)}")
    return 0


def _manifest(args: argparse.Namespace) -> int:
    """``python -m federated manifest``: the manifest from every party's public key."""
    count = len(args.sites)
    if not (len(args.n) == len(args.epsilon) == len(args.delta) == count):
        print(f"manifest: --n, --epsilon and --delta need one value per site ({count})",
              file=sys.stderr)  # fmt: skip
        return 2
    try:
        noise = identity.read_public(args.noise)
        sites = [
            {"site": s + 1, "identity": identity.read_public(path).hex(), "n": n,
             "epsilon": eps, "delta": dlt}
            for s, (path, n, eps, dlt) in enumerate(
                zip(args.sites, args.n, args.epsilon, args.delta, strict=True)
            )
        ]  # fmt: skip
        manifest = identity.Manifest.from_json(
            {"version": identity.MANIFEST_VERSION, "noise generator": noise.hex(),
             "sites": sites, "designs": args.designs, "schemes": args.schemes},
            "manifest",
        )  # fmt: skip
        manifest.write(args.out)
    except (OSError, ValueError) as err:
        print(f"manifest: {err}", file=sys.stderr)
        return 2
    print(f"manifest {args.out}, digest {manifest.digest()}")
    print(f"  noise generator: {identity.fingerprint(manifest.noise)}")
    for site in manifest.sites:
        print(f"  site {site.site}: {identity.fingerprint(site.identity)}, N_s = {site.n}, "
              f"ε_s = {site.epsilon:g}, δ_s = {site.delta:g}")  # fmt: skip
    print("Every party keeps this file and checks these fingerprints out of band.")
    return 0


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
    if args.command == "keys":
        return _keys(args.out)
    if args.command == "manifest":
        return _manifest(args)
    if args.command == "secure":
        return security.command(args.out, args.host, args.sites, args.days, args.port)
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
