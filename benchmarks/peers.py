"""The peers table: dpcore's PCA beside diffprivlib's and OpenDP's, one neighbouring relation.

Usage::

    bash scripts/peers_env.sh                     # once: the peers' own venv (.peers-venv)
    .venv/bin/python -m benchmarks.peers          # wine, ε = 0.5, 1, 2, 5; Markdown (~2 min)
    .venv/bin/python -m benchmarks.peers --data synthetic --draws 8 --epsilon 0.1,1

Every row is differentially private for **one row replaced** (replace-one, N public): dpcore's
rows run with ``neighbouring="replace"``; diffprivlib's and OpenDP's PCA are calibrated for a
replacement by their own analyses (``benchmarks/peers_worker.py``). Pure-ε rows (δ = 0) and
(ε, δ) rows are grouped apart and say which they are.

A **data draw** is a uniformly random 90 % of the data set's rows (or a fresh synthetic data
set), centred and scaled into the unit ball (``dpcore.experiments.realdata``); every row of
one draw fits the same rows. The score is the captured energy of the released top-K
subspace over the optimum on that draw, averaged over ``--runs`` noise draws; a cell is the
median over ``--draws`` data draws and their [min, max]. "s per fit" is the median wall time
of one fit (dpcore's: its sweep's time over its fits). The peer libraries run in a separate
interpreter (``--peers-python``, default ``.peers-venv/bin/python``): diffprivlib 0.6.6
does not import with scikit-learn ≥ 1.8. A fit that takes longer than ``--fit-timeout``
seconds ends that row with the reason. docs/peers.md is this command's output.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import dpcore
from dpcore import BUNDLED_DATASETS as BUNDLED
from dpcore import captured_energy, dataset_from_array, load_bundled, optimal_energy

ROOT = Path(__file__).resolve().parents[1]
PEERS_PYTHON = ROOT / ".peers-venv" / "bin" / "python"
WORKER = Path(__file__).with_name("peers_worker.py")
OURS = ("central_laplace", "central_gauss", "cape", "conv", "dp_pca")
PEERS = ("diffprivlib", "opendp")
PURE = ("central_laplace", "diffprivlib", "opendp")  # ε-DP (δ = 0); the rest are (ε, δ)
NOTION = {
    "central_laplace": "Laplace on the second moment's upper triangle, trusted curator",
    "central_gauss": "analytic Gaussian on the second moment, trusted curator",
    "cape": "CAPE (Imtiaz & Sarwate Alg. 1), S sites, a noise generator",
    "conv": "each site adds its own noise, S sites, no trusted party",
    "dp_pca": "DP-PCA (Liu et al. 2022): one pass, the S blocks as minibatches",
    "diffprivlib": "diffprivlib 0.6.6 PCA, centered=True, data_norm=1, bounds given",
    "opendp": "OpenDP 0.16 make_private_pca, origin and norm given (map(2) = ε)",
}
FRACTION = 0.9  # of the rows in one data draw


@dataclass(frozen=True)
class Row:
    """One (algorithm, ε): per-draw scores and seconds per fit, or why there are none."""

    algorithm: str
    epsilon: float
    scores: tuple[float, ...] = ()
    seconds: float = float("nan")
    why: str = ""


def draws(name: str, count: int, sites: int, seed: int) -> list[dpcore.Dataset]:
    """``count`` data draws of equal size, a multiple of ``sites`` (every row is used)."""
    rngs = np.random.default_rng(seed).spawn(count)
    if name == "synthetic":
        size = 2_000 // sites * sites
        return [dpcore.synthetic_dataset(dim=20, k=4, n_samples=size, rng=r) for r in rngs]
    full = load_bundled(name)
    size = int(FRACTION * full.n_samples) // sites * sites
    return [
        dataset_from_array(full.samples, name=name, max_rows=size, rng=r) for r in rngs
    ]  # fmt: skip


def _ratio(basis: np.ndarray, data: dpcore.Dataset, k: int) -> float:
    q, _ = np.linalg.qr(basis)
    return captured_energy(q[:, :k], data.reference) / optimal_energy(data.reference, k)


def ours(name: str, data: list[dpcore.Dataset], args: argparse.Namespace, eps: float) -> Row:
    """One of dpcore's registry entries on every draw, replace-one, analytic calibration."""
    scores, spent = [], 0.0
    for i, d in enumerate(data):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dpcore.ClassicGaussianWarning)
            frame = dpcore.pca_sweep(
                data=d, epsilon=eps, delta=args.delta, k=args.k, sites=args.sites,
                n_per_site=d.n_samples // args.sites, runs=args.runs, algorithms=[name],
                rng=args.seed * 1000 + i, calibration="analytic", neighbouring="replace",
            )  # fmt: skip
        spent += time.perf_counter() - start
        scores.append(float(frame.captured_energy_ratio.mean()))
    return Row(name, eps, tuple(scores), spent / (len(data) * args.runs))


def _lines(process: subprocess.Popen[str]) -> queue.Queue[str | None]:
    """The worker's output lines, read on a thread so the parent can wait with a timeout."""
    out: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            out.put(line)
        out.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return out


def peer(name: str, data: list[dpcore.Dataset], args: argparse.Namespace, eps: float) -> Row:
    """A peer library's fits in the peers interpreter; a row that cannot run says why."""
    python = Path(args.peers_python)
    if not python.exists():
        return Row(name, eps, why=f"not run: no peers environment at {python}; "
                   "`bash scripts/peers_env.sh` makes it")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "draws.npz"
        np.savez(path, **{f"x{i}": d.samples for i, d in enumerate(data)})
        command = [str(python), str(WORKER), name, str(path), repr(eps), str(args.k),
                   str(args.runs), str(args.seed)]  # fmt: skip
        process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        lines = _lines(process)
        try:
            return _collect(name, eps, data, args, lines)
        finally:
            if process.poll() is None:  # a fit past the timeout: end this worker only
                process.kill()
            process.wait()


def _collect(name: str, eps: float, data, args, lines: queue.Queue[str | None]) -> Row:
    first = lines.get(timeout=120)  # the imports
    reply = json.loads(first) if first else {"error": "the worker ended before its first line"}
    if "error" in reply:
        return Row(name, eps, why=f"not run: {reply['error']}")
    per_draw: list[list[float]] = [[] for _ in data]
    seconds: list[float] = []
    for _ in range(len(data) * args.runs):
        try:
            line = lines.get(timeout=args.fit_timeout)
        except queue.Empty:
            return Row(name, eps, why=f"no fit within {args.fit_timeout:g} s at ε = {eps:g} "
                       "(its eigenvector sampler slows as ε·N grows); a smaller ε or a "
                       "larger --fit-timeout")  # fmt: skip
        if line is None:
            return Row(name, eps, why="not run: the worker ended early (see its error above)")
        fit = json.loads(line)
        basis = np.asarray(fit["components"], dtype=float).T
        per_draw[fit["draw"]].append(_ratio(basis, data[fit["draw"]], args.k))
        seconds.append(fit["seconds"])
    return Row(name, eps, tuple(float(np.mean(s)) for s in per_draw), float(np.median(seconds)))


def table(args: argparse.Namespace) -> list[Row]:
    """Every algorithm at every ε, pure-ε rows first within each ε."""
    data = draws(args.data, args.draws, args.sites, args.seed)
    rows = []
    for eps in args.epsilon:
        found = {n: ours(n, data, args, eps) for n in OURS}
        found |= {n: peer(n, data, args, eps) for n in PEERS}
        rows += [found[n] for n in sorted(found, key=lambda n: (n not in PURE, n in OURS))]
    return rows


def markdown(rows: list[Row], args: argparse.Namespace) -> str:
    """The table as docs/peers.md shows it (one line per row)."""
    head = ("| algorithm | guarantee | ε | captured / optimum, median [min, max] | s per fit "
            "| settings |\n| --- | --- | --- | --- | --- | --- |")  # fmt: skip
    lines = [head]
    for r in rows:
        guarantee = "ε-DP" if r.algorithm in PURE else f"(ε, {args.delta:g})-DP"
        if r.why:
            cells = f"— | — | {r.why}"
        else:
            s = np.asarray(r.scores)
            cells = (f"{np.median(s):.3f} [{s.min():.3f}, {s.max():.3f}] | {r.seconds:.1e} | "
                     f"{NOTION[r.algorithm]}")  # fmt: skip
        lines.append(f"| {r.algorithm} | {guarantee} | {r.epsilon:g} | {cells} |")
    return "\n".join(lines)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", default="wine", choices=["synthetic", *BUNDLED])
    parser.add_argument("--epsilon", default="0.5,1,2,5", help="comma-separated ε values")
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--sites", type=int, default=4)
    parser.add_argument("--draws", type=int, default=5, help="data draws (≥ 5 for a spread)")
    parser.add_argument("--runs", type=int, default=20, help="noise draws per data draw")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fit-timeout", type=float, default=20.0, help="seconds per peer fit")
    parser.add_argument("--peers-python", default=str(PEERS_PYTHON))
    args = parser.parse_args(argv)
    args.epsilon = [float(e) for e in args.epsilon.split(",")]
    return args


def random_level(data: list[dpcore.Dataset], k: int) -> str:
    """What knowing nothing gives: a uniformly random K-subspace captures K·tr(A)/D on average."""
    level = [
        k * np.trace(d.reference) / d.reference.shape[0] / optimal_energy(d.reference, k)
        for d in data
    ]
    return f"{np.median(level):.3f} [{min(level):.3f}, {max(level):.3f}]"


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.peers``: print the peers table (Markdown)."""
    from benchmarks.calibration import loop_ms

    args = parse(argv)
    rows = table(args)
    print(f"data: {args.data} ({FRACTION:.0%} of the rows per draw), K = {args.k}, S = "
          f"{args.sites} (distributed rows), δ = {args.delta:g}, {args.draws} data draws × "
          f"{args.runs} noise draws, seed {args.seed}, every row replace-one")  # fmt: skip
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, calibration loop "
          f"{loop_ms():.1f} ms (benchmarks.calibration)")  # fmt: skip
    print(markdown(rows, args))
    data = draws(args.data, args.draws, args.sites, args.seed)
    print(f"\nA uniformly random {args.k}-dimensional subspace: {random_level(data, args.k)} "
          "of the optimum (K·tr(A)/D, in expectation).")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
