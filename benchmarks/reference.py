"""A straightforward NumPy transcription of the paper's PCA experiment, for benchmarking.

Written the way the authors' MATLAB code works, on purpose without our optimisations: a
full ``np.linalg.eigh`` per decomposition, a Python loop over sites drawing every D×D noise
matrix (noise generator, aggregator and site), and the site moments recomputed at every
grid point. It shares only the data generator with dpcore so both see the same pool.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd


def _sym_noise(dim: int, std: float, rng: np.random.Generator) -> np.ndarray:
    upper = np.triu(rng.normal(0.0, std, (dim, dim)))
    return upper + np.triu(upper, 1).T


def _top_k(matrix: np.ndarray, k: int) -> np.ndarray:
    vals, vecs = np.linalg.eigh(matrix)
    return vecs[:, np.argsort(vals)[::-1][:k]]


def _tau(n: int, epsilon: float, delta: float) -> float:
    return math.sqrt(2 * math.log(1.25 / delta)) / (n * epsilon)


def reference_pca_sweep(
    samples: np.ndarray,
    reference: np.ndarray,
    *,
    k: int,
    sites: int,
    n_per_site: int,
    epsilons,
    delta: float,
    runs: int,
    seed: int,
    algorithms,
    rank: int | None = None,
) -> pd.DataFrame:
    """Captured-energy ratio per (algorithm, ε, run), equal sites, classic calibration."""
    rng = np.random.default_rng(seed)
    dim = samples.shape[1]
    rank = min(2 * k, dim) if rank is None else rank
    vals = np.linalg.eigvalsh(reference)
    optimum = float(np.sort(vals)[::-1][:k].sum())
    pick = rng.choice(samples.shape[0], size=sites * n_per_site, replace=False)
    x = samples[pick] - samples[pick].mean(axis=0)
    x /= max(1.0, float(np.max(np.linalg.norm(x, axis=1))))
    rows = []
    for eps in epsilons:
        blocks = np.split(x, sites)
        moments = [b.T @ b / n_per_site for b in blocks]  # recomputed per grid point
        tau = _tau(n_per_site, eps, delta)
        for run in range(runs):
            for alg in algorithms:
                if alg == "nonprivate":
                    est = sum(moments) / sites
                elif alg == "cape":
                    e = [_sym_noise(dim, math.sqrt(1 - 1 / sites) * tau, rng) for _ in range(sites)]
                    mean_e = sum(e) / sites
                    e = [(ei - mean_e) / math.sqrt(1 - 1 / sites) for ei in e]  # zero sum
                    f = [_sym_noise(dim, math.sqrt(1 - 1 / sites) * tau, rng) for _ in range(sites)]
                    g = [_sym_noise(dim, tau / math.sqrt(sites), rng) for _ in range(sites)]
                    released = [
                        m + ei + fi + gi for m, ei, fi, gi in zip(moments, e, f, g, strict=True)
                    ]
                    est = sum(r - fi for r, fi in zip(released, f, strict=True)) / sites
                elif alg == "conv":
                    est = sum(m + _sym_noise(dim, tau, rng) for m in moments) / sites
                elif alg == "local":
                    est = moments[0] + _sym_noise(dim, tau, rng)
                else:  # dpdis
                    est = np.zeros((dim, dim))
                    for m in moments:
                        noisy = m + _sym_noise(dim, tau, rng)
                        w, v = np.linalg.eigh(noisy)
                        order = np.argsort(w)[::-1][:rank]
                        p = v[:, order] * np.sqrt(np.clip(w[order], 0, None))
                        est += p @ p.T / sites
                basis = _top_k(est, k)
                energy = float(np.trace(basis.T @ reference @ basis))
                rows.append(
                    {
                        "algorithm": alg,
                        "epsilon": eps,
                        "run": run,
                        "captured_energy_ratio": energy / optimum,
                    }
                )
    return pd.DataFrame(rows)
