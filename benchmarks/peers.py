"""The peers table: dpcore's central and distributed PCA beside diffprivlib's and OpenDP's.

Usage::

    .venv/bin/python -m benchmarks.peers                       # wine, ε = 0.5, 1, 5; Markdown
    .venv/bin/python -m benchmarks.peers --data synthetic --runs 20 --epsilon 0.1,1

Every algorithm gets the same preprocessed data: the bundled set as ``dpcore`` loads it (rows
scaled into the unit ball, ``dpcore.experiments.realdata``), split over ``--sites`` equal sites
for the distributed ones and pooled for the central ones, at the same ε (δ = ``--delta`` for
the (ε, δ) ones; the pure-ε ones ignore it). The score is the captured energy of the released
top-K subspace over the optimum, mean ± standard error over ``--runs`` runs, and the median
wall time of one fit. diffprivlib and OpenDP are optional benchmark dependencies (not the
core's): a peer that does not import is a row that says so, never a failure. Where their
privacy notions differ from dpcore's: docs/peers.md.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd

import dpcore
from dpcore import BUNDLED_DATASETS as BUNDLED
from dpcore import captured_energy, load_bundled, optimal_energy

OURS = ("central_gauss", "central_laplace", "cape", "conv")
NOTION = {
    "central_gauss": "(ε, δ), add-remove, ‖x‖₂ ≤ 1, trusted curator",
    "central_laplace": "pure ε, add-remove, ‖x‖₂ ≤ 1, trusted curator",
    "cape": "(ε, δ) per site, add-remove, ‖x‖₂ ≤ 1, a noise generator",
    "conv": "(ε, δ) per site, add-remove, ‖x‖₂ ≤ 1, no trusted party",
    "diffprivlib": "pure ε, data_norm = 1 (diffprivlib.models.PCA)",
    "opendp": "OpenDP's PCA (opendp.sklearn.decomposition.PCA)",
}


def _data(name: str, rng: np.random.Generator) -> dpcore.Dataset:
    if name == "synthetic":
        return dpcore.synthetic_dataset(dim=20, k=4, n_samples=5_000, rng=rng)
    return load_bundled(name)


def _ours(data: dpcore.Dataset, args, epsilon: float) -> pd.DataFrame:
    n_per_site = data.n_samples // args.sites
    frame = dpcore.pca_sweep(
        data=data, epsilon=epsilon, delta=args.delta, k=args.k, sites=args.sites,
        n_per_site=n_per_site, runs=args.runs, algorithms=list(OURS), rng=args.seed,
        calibration="analytic",
    )  # fmt: skip
    return frame[["algorithm", "run", "captured_energy_ratio"]]


def _peer_fit(name: str) -> tuple[Callable[..., np.ndarray] | None, str]:
    """``fit(x, k, epsilon, seed) -> (D, K) basis`` of a peer library, or why there is none."""
    try:
        if name == "diffprivlib":
            from diffprivlib.models import PCA
        else:
            from opendp.sklearn.decomposition import PCA  # type: ignore[no-redef]
    except Exception as err:  # not installed, or does not import (diffprivlib 0.6.6, sk 1.9)
        return None, f"{type(err).__name__}: {str(err).splitlines()[0][:80]}"

    def fit(x: np.ndarray, k: int, epsilon: float, seed: int) -> np.ndarray:
        if name == "diffprivlib":
            model = PCA(n_components=k, epsilon=epsilon, data_norm=1.0, random_state=seed)
        else:  # OpenDP's scikit-learn-style PCA (its context is built from the bounds)
            import opendp.prelude as dp

            dp.enable_features("contrib")
            model = PCA(epsilon=epsilon, row_norm=1.0, n_samples=len(x), n_features=x.shape[1],
                        n_components=k)  # fmt: skip
        model.fit(x)
        return np.asarray(model.components_, dtype=float).T

    return fit, ""


def _peer(name: str, data: dpcore.Dataset, args, epsilon: float) -> pd.DataFrame | str:
    fit, why = _peer_fit(name)
    if fit is None:
        return why
    rows = []
    optimum = optimal_energy(data.reference, args.k)
    for run in range(args.runs):
        try:
            q, _ = np.linalg.qr(fit(data.samples, args.k, epsilon, args.seed + run))
            basis = q[:, : args.k]
        except Exception as err:  # a peer's failure is its row, not the table's
            return f"{type(err).__name__}: {str(err).splitlines()[0][:80]}"
        ratio = captured_energy(basis, data.reference) / optimum
        rows.append({"algorithm": name, "run": run, "captured_energy_ratio": ratio})
    return pd.DataFrame(rows)


def table(args) -> pd.DataFrame:
    """One row per (algorithm, ε): mean ± standard error, seconds per fit, privacy notion."""
    data = _data(args.data, np.random.default_rng(args.seed))
    out = []
    for epsilon in args.epsilon:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dpcore.ClassicGaussianWarning)
            start = time.perf_counter()
            ours = _ours(data, args, epsilon)
            per_fit = (time.perf_counter() - start) / (args.runs * len(OURS))
        frames: list[tuple[str, pd.DataFrame | str, float]] = [
            (name, part, per_fit) for name, part in ours.groupby("algorithm", sort=False)
        ]
        for peer in ("diffprivlib", "opendp"):
            start = time.perf_counter()
            result = _peer(peer, data, args, epsilon)
            frames.append((peer, result, (time.perf_counter() - start) / args.runs))
        for name, part, seconds in frames:
            if isinstance(part, str):
                out.append({"algorithm": name, "epsilon": epsilon, "captured": "—",
                            "s per fit": "—", "privacy": f"skipped ({part})"})  # fmt: skip
                continue
            r = part.captured_energy_ratio
            out.append({
                "algorithm": name, "epsilon": epsilon,
                "captured": f"{r.mean():.3f} ± {r.std(ddof=1) / len(r) ** 0.5:.3f}",
                "s per fit": f"{seconds:.1e}", "privacy": NOTION[name],
            })  # fmt: skip
    return pd.DataFrame(out)


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.peers``: print the peers table (Markdown)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", default="wine", choices=["synthetic", *BUNDLED])
    parser.add_argument("--epsilon", default="0.5,1,5", help="comma-separated ε values")
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--sites", type=int, default=4)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    args.epsilon = [float(e) for e in args.epsilon.split(",")]
    result = table(args)
    print(f"data: {args.data}, K = {args.k}, S = {args.sites} (distributed), δ = {args.delta:g}, "
          f"{args.runs} runs, seed {args.seed}")  # fmt: skip
    print(result.to_markdown(index=False) if _has_tabulate() else result.to_string(index=False))
    return 0


def _has_tabulate() -> bool:
    import importlib.util

    return importlib.util.find_spec("tabulate") is not None


if __name__ == "__main__":
    raise SystemExit(main())
