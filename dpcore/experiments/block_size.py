"""Block size p of the private power methods: p = K against p = 2K at equal total privacy.

Hardt & Price (NeurIPS 2014) and Balcan, Du, Wang & Yu (COLT 2016) analyse subspace iteration
with a D×p block, p ≥ K: the convergence rate is set by σ_{p+1}/σ_K instead of σ_{K+1}/σ_K,
while each round's noise per entry is unchanged (‖ΔA X‖_F ≤ ‖ΔA‖_F for orthonormal X of any
width; :func:`dpcore.factorization.iterative.noisy_power_method`). The output at p > K is the
top-K of the last release (post-processing).

    python -m dpcore.experiments.block_size       # docs/baselines.md's table, ~1 min

Each data draw is a fresh synthetic pool (the paper's spectrum, :func:`dpcore.synthetic_dataset`)
split into S equal sites; a cell is the median over the draws of each draw's mean captured
energy over ``runs`` noise draws, and the gain of p = 2K is paired by draw.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import numpy as np
import pandas as pd

from dpcore._validation import check_int
from dpcore.factorization.datasets import synthetic_dataset
from dpcore.factorization.iterative import cape_npm_pca, distributed_npm_pca, npm_pca
from dpcore.factorization.metrics import captured_energy, optimal_energy
from dpcore.mechanisms.calibration import gaussian_sigmas, second_moment_sensitivity

METHODS = {"npm": npm_pca, "npm_distributed": distributed_npm_pca, "npm_cape": cape_npm_pca}


def block_table(
    *,
    dim: int = 50,
    k: int = 5,
    sites: int = 10,
    n_per_site: int = 1000,
    epsilon: float = 0.5,
    delta: float = 0.01,
    rounds: Sequence[int] = (4, 8, 16),
    draws: int = 5,
    runs: int = 10,
    seed: int = 0,
) -> pd.DataFrame:
    """Captured energy over the optimum per (method, T) at p = K and 2K, and the paired gain.

    ``p=K``, ``p=2K``: medians over the data draws of each draw's mean over ``runs``;
    ``gain``: the median over draws of (p = 2K) − (p = K) on the same draw, with its range.

    Sites release at the analytic Gaussian τ_s of (1/N_s, ε, δ) (add-remove), charged over the
    T rounds by each method (:func:`dpcore.factorization.iterative.per_round_std`).
    """
    draws = check_int(draws, "draws", low=1, high=1000)
    tau = gaussian_sigmas(
        np.full(sites, second_moment_sensitivity(n_per_site)),
        epsilon=epsilon,
        delta=delta,
        calibration="analytic",
    )
    per_draw: dict[tuple[str, int, int], list[float]] = {}
    for draw_rng in np.random.default_rng(seed).spawn(draws):
        data_rng, noise_rng = draw_rng.spawn(2)
        pool = synthetic_dataset(dim=dim, k=k, n_samples=sites * n_per_site, rng=data_rng)
        blocks = pool.samples.reshape(sites, n_per_site, dim)
        moments = np.einsum("sni,snj->sij", blocks, blocks) / n_per_site
        optimum = optimal_energy(pool.reference, k)
        streams = iter(noise_rng.spawn(len(METHODS) * len(rounds) * 2 * runs))
        for name, method in METHODS.items():
            for t in rounds:
                for p in (k, 2 * k):
                    scores = [
                        captured_energy(
                            method(moments, k, tau_site=tau, rounds=t, block=p, rng=next(streams)),
                            pool.reference,
                        )
                        / optimum
                        for _ in range(runs)
                    ]
                    per_draw.setdefault((name, t, p), []).append(float(np.mean(scores)))
    rows = []
    for name in METHODS:
        for t in rounds:
            base, wide = np.array(per_draw[name, t, k]), np.array(per_draw[name, t, 2 * k])
            gain = wide - base  # paired: the same data draw
            rows.append(
                {
                    "algorithm": name,
                    "rounds": t,
                    "p=K": float(np.median(base)),
                    "p=2K": float(np.median(wide)),
                    "gain": float(np.median(gain)),
                    "gain min": float(gain.min()),
                    "gain max": float(gain.max()),
                }
            )
    return pd.DataFrame(rows)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table (p = K and p = 2K side by side)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--draws", type=int, default=5)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args(argv)
    table = block_table(draws=args.draws, runs=args.runs, seed=args.seed)
    fmt = lambda v: f"{v:.3f}"  # noqa: E731
    sys.stdout.write(table.to_string(index=False, float_format=fmt) + "\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
