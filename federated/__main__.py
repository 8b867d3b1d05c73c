"""``python -m federated run --sites 3``: a whole CAPE run on 127.0.0.1, then stop;
``python -m federated keys`` and ``manifest``: a party's identity key and the federation's
manifest (:mod:`federated.identity`).

Starts a SuperLink, the noise generator and one SuperNode per site (subprocesses), runs
CAPE once, prints the release and its privacy statement, and stops everything it started
(also on error, timeout or Ctrl-C). Without ``--data`` it writes unequal demo sites.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from federated import identity, security
from federated.launcher import HOST, Federation, demo_data, run_once
from federated.protocol import KINDS, SCHEMES, Release, simulate
from federated.runlog import read_log


def _federation_args(parser: argparse.ArgumentParser) -> None:
    """The sites, their promises and where the federation listens (``run``, ``up``)."""
    parser.add_argument("--sites", type=int, default=3, help="S in [2, 20] (default 3)")
    parser.add_argument("--data", nargs="+", type=Path, help="one CSV per site (default: demo)")
    parser.add_argument("--epsilon", type=float, default=1.0, help="every site's ε")
    parser.add_argument("--delta", type=float, default=1e-5, help="every site's δ")
    parser.add_argument(
        "--seed", type=int, default=-1, help="≥ 0 reproduces the in-process run (demo only)"
    )
    parser.add_argument("--port", type=int, default=9091, help="SuperLink port (nodes above it)")
    parser.add_argument("--workdir", type=Path, help="logs and results (default: a temp dir)")


def _analysis_args(parser: argparse.ArgumentParser) -> None:
    """What one run releases (``run``, ``submit``)."""
    parser.add_argument("--kind", choices=KINDS, default="mean")
    parser.add_argument("--design", choices=("joint", "cape"), default="joint")
    parser.add_argument(
        "--scheme", choices=SCHEMES, default="helper", help="pairwise: no noise generator"
    )
    parser.add_argument("--k", type=int, default=2, help="PCA subspace dimension")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m federated")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="one CAPE run on loopback: start, run, stop")
    _federation_args(run)
    _analysis_args(run)
    run.add_argument("--timeout", type=float, default=300.0, help="whole run, seconds")
    up = sub.add_parser("up", help="start a federation on loopback and keep it running")
    _federation_args(up)
    up.add_argument("--timeout", type=float, default=120.0, help="seconds to start, at most")
    submit = sub.add_parser("submit", help="one analysis on the federation `up` runs")
    submit.add_argument("--workdir", type=Path, required=True, help="the federation's (up's)")
    _analysis_args(submit)
    submit.add_argument("--timeout", type=float, default=120.0, help="whole analysis, seconds")
    down = sub.add_parser("down", help="stop the federation `up` runs")
    down.add_argument("--workdir", type=Path, required=True, help="the federation's (up's)")
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


def _report(outcome: dict, args: argparse.Namespace, data, eps, dlt, log: Path, wall: float) -> int:
    """Print a run's outcome as ``run`` and ``submit`` do; 0 released, 2 refused."""
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
            dropped=[d - 1 for d in release.dropped],  # the same remedy, in process
        )
        diff = np.max(np.abs(release.estimate - ref.estimate)) / np.max(np.abs(ref.estimate))
        same = f", sites {list(release.dropped)} dropped" if release.dropped else ""
        print(
            f"  in-process dpcore run with the same seed{same}: max relative difference {diff:.3g}"
        )
    print()
    print(release.statement())
    entries = read_log(log)
    phases = ", ".join(f"{k} {v:.1f} s" for k, v in outcome.get("phases", {}).items())
    print(f"\n{len(entries)} log entries in {log}; logs in {log.parent}")
    print(f"{wall:.1f} s wall time" + (f" ({phases})" if phases else ""))
    return 0


def _failed(err: BaseException) -> int:
    """One line for what ended a command early; its exit status."""
    if isinstance(err, KeyboardInterrupt):
        print("interrupted; every process started was stopped", file=sys.stderr)
        return 1
    if isinstance(err, ValueError):  # a bad --port, --data, --workdir or setting
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"FAILED: {err}", file=sys.stderr)
    return 1


def _up(args: argparse.Namespace) -> int:
    """``python -m federated up``: start the federation and keep it running until stopped."""
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="cape-federation-"))
    data = args.data or demo_data(workdir / "data", args.sites)
    eps, dlt = [args.epsilon] * len(data), [args.delta] * len(data)
    stop = []
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.append(1))
    try:
        fed = Federation(data, eps, dlt, seed=args.seed, port=args.port, workdir=workdir)
        with fed:
            fed.start(time.monotonic() + args.timeout)
            fed.announce()
            print(f"federation up in {workdir}: {len(data)} sites, SuperLink {HOST}:{args.port}")
            print(
                f"submit analyses with: python -m federated submit --workdir {workdir} --kind pca"
            )
            print("stop it with Ctrl-C, or: python -m federated down --workdir " + str(workdir))
            sys.stdout.flush()
            while not stop:
                fed.check_up()
                time.sleep(0.5)
            (workdir / Federation.UP_FILE).unlink(missing_ok=True)
    except (ValueError, RuntimeError, TimeoutError, OSError, KeyboardInterrupt) as err:
        (workdir / Federation.UP_FILE).unlink(missing_ok=True)
        return _failed(err)
    print("federation stopped; every process started was stopped")
    return 0


def _submit(args: argparse.Namespace) -> int:
    """``python -m federated submit``: one analysis on the federation ``up`` keeps running."""
    started = time.monotonic()
    try:
        fed = Federation.attach(args.workdir)
        args.seed = fed.seed
        tag = f"run-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        output, log = fed.submit(kind=args.kind, design=args.design, k=args.k,
                                 timeout=args.timeout / 2, scheme=args.scheme, tag=tag)  # fmt: skip
        outcome = fed.wait(output, started + args.timeout, tag=tag)
    except (ValueError, RuntimeError, TimeoutError, OSError, KeyboardInterrupt) as err:
        return _failed(err)
    wall = time.monotonic() - started
    return _report(outcome, args, fed.data, fed.epsilon, fed.delta, log, wall)


def _down(args: argparse.Namespace) -> int:
    """``python -m federated down``: stop the federation ``up`` keeps running."""
    try:
        pid = Federation.attach(args.workdir).announced_pid()
    except ValueError as err:
        return _failed(err)
    os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + 20.0
    while (args.workdir / Federation.UP_FILE).exists() and time.monotonic() < end:
        time.sleep(0.1)
    print(f"federation in {args.workdir} stopped")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the command; 0 released (or done), 2 refused or a bad argument, 1 failed."""
    args = _parser().parse_args(argv)
    if args.command == "keys":
        return _keys(args.out)
    if args.command == "manifest":
        return _manifest(args)
    if args.command == "submit":
        return _submit(args)
    if args.command == "down":
        return _down(args)
    if args.command == "secure":
        return security.command(args.out, args.host, args.sites, args.days, args.port)
    if not 2 <= args.sites <= 20:
        print(f"--sites must be in [2, 20]; got {args.sites}", file=sys.stderr)
        return 2
    if args.command == "up":
        return _up(args)
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
    except (ValueError, RuntimeError, TimeoutError, OSError, KeyboardInterrupt) as err:
        return _failed(err)
    return _report(outcome, args, data, eps, dlt, log, time.monotonic() - started)


if __name__ == "__main__":
    sys.exit(main())
