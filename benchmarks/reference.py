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


# --- Tensor decomposition (capeAGN and its baselines), the same way ------------------------


def _sym3_noise(dim: int, std: float, rng: np.random.Generator) -> np.ndarray:
    """A symmetric D×D×D Gaussian tensor: draw D³ entries, copy the sorted-index ones."""
    full = rng.normal(0.0, std, (dim, dim, dim))
    idx = np.sort(np.indices((dim, dim, dim)).reshape(3, -1), axis=0)
    return full[idx[0], idx[1], idx[2]].reshape(dim, dim, dim)


def _sym3(t: np.ndarray) -> np.ndarray:
    perms = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    return sum(t.transpose(p) for p in perms) / 6


def _mog_moments(x: np.ndarray, sigma2: float) -> tuple[np.ndarray, np.ndarray]:
    n, dim = x.shape
    m2 = x.T @ x / n - sigma2 * np.eye(dim)
    m3 = np.zeros((dim, dim, dim))
    for start in range(0, n, 4096):  # full outer products, chunked
        c = x[start : start + 4096]
        m3 += np.einsum("ni,nj,nk->ijk", c, c, c, optimize=True)
    m3 /= n
    mean = x.mean(axis=0)
    eye = np.eye(dim)
    corr = (
        np.einsum("i,jk->ijk", mean, eye)
        + np.einsum("j,ik->ijk", mean, eye)
        + np.einsum("k,ij->ijk", mean, eye)
    )
    return m2, m3 - sigma2 * corr


def _stm_moments(words: np.ndarray, dim: int) -> tuple[np.ndarray, np.ndarray]:
    n = words.shape[0]
    m2 = np.zeros((dim, dim))
    np.add.at(m2, (words[:, 0], words[:, 1]), 1.0)
    m3 = np.zeros((dim, dim, dim))
    np.add.at(m3, (words[:, 0], words[:, 1], words[:, 2]), 1.0)
    return (m2 + m2.T) / (2 * n), _sym3(m3 / n)


def _power(t: np.ndarray, rng, restarts: int, max_iter: int, tol: float):
    """Robust tensor power method, one start at a time (Anandkumar et al. 2014, Alg. 1)."""
    k = t.shape[0]
    vals, vecs = np.zeros(k), np.zeros((k, k))
    for j in range(k):
        best, best_val = None, -np.inf
        for _ in range(restarts):
            u = rng.standard_normal(k)
            u /= np.linalg.norm(u)
            u = _power_steps(t, u, max_iter, tol)
            val = np.einsum("ijk,i,j,k->", t, u, u, u)
            if val > best_val:
                best, best_val = u, val
        u = _power_steps(t, best, max_iter, tol)
        lam = np.einsum("ijk,i,j,k->", t, u, u, u)
        if lam < 0:
            u, lam = -u, -lam
        vals[j], vecs[:, j] = lam, u
        t = t - lam * np.einsum("i,j,k->ijk", u, u, u)
    return vals, vecs


def _power_steps(t, u, max_iter, tol):
    for _ in range(max_iter):
        nxt = np.einsum("ijk,j,k->i", t, u, u)
        nxt /= np.linalg.norm(nxt)
        moved = min(np.linalg.norm(nxt - u), np.linalg.norm(nxt + u))
        u = nxt
        if moved < tol:
            break
    return u


def _recover(m2_hat, m3_hat, k, kind, rng):
    vals, vecs = np.linalg.eigh(m2_hat)
    order = np.argsort(vals)[::-1][:k]
    u, d = vecs[:, order], np.maximum(np.abs(vals[order]), 1e-12 * np.abs(vals).max())
    w = u / np.sqrt(d)
    t = np.einsum("ijk,ia,jb,kc->abc", m3_hat, w, w, w, optimize=True)
    lam, v = _power(t, rng, restarts=10, max_iter=100, tol=1e-8)
    raw = (u * np.sqrt(d)) @ v * lam
    if kind == "mog":
        return raw / np.linalg.norm(raw, axis=0)
    comps = np.clip(raw, 0, None)
    sums = comps.sum(axis=0)
    return np.where(sums > 0, comps / np.where(sums > 0, sums, 1), 1 / raw.shape[0])


def _q_comp(est: np.ndarray, truth: np.ndarray) -> float:
    dist = np.linalg.norm(est[:, :, None] - truth[:, None, :], axis=0)
    return float(dist.min(axis=1).mean())


def reference_otd_sweep(
    model,
    sample,
    public_bound,
    *,
    sites: int,
    n_per_site: int,
    epsilons,
    delta: float,
    runs: int,
    seed: int,
    algorithms,
) -> pd.DataFrame:
    """q_comp per (algorithm, ε, run): equal sites, classic calibration, the paper's Δ's.

    ``model`` is a planted dpcore model and ``sample(model, n, rng)`` its sampler, so that
    both sides see the same distribution; everything else is written out here.
    """
    rng = np.random.default_rng(seed)
    dim, k, kind = model.components.shape[0], model.components.shape[1], model.kind
    data = [sample(model, n_per_site, rng=rng) for _ in range(sites)]
    sigma2 = 0.0
    if kind == "mog":
        bound = public_bound(dim, model.sigma2)
        sigma2 = model.sigma2 / bound**2
        for i, x in enumerate(data):
            norms = np.linalg.norm(x, axis=1)
            data[i] = x * (np.minimum(1.0, bound / norms) / bound)[:, None]
    d2, d3 = (1 / n_per_site, (2 + 6 * dim * sigma2) / n_per_site)
    if kind == "stm":
        d2 = d3 = math.sqrt(2) / n_per_site
    n_sym = dim * (dim + 1) * (dim + 2) // 6
    rows = []
    for eps in epsilons:
        moments = [  # recomputed per grid point
            _mog_moments(x, sigma2) if kind == "mog" else _stm_moments(x, dim) for x in data
        ]
        tau2 = d2 * math.sqrt(2 * math.log(1.25 / (delta / 2))) / (eps / 2)
        tau3 = d3 * math.sqrt(2 * math.log(1.25 / (delta / 2))) / (eps / 2)
        tau2_avn = d2 * math.sqrt(2 * math.log(1.25 / delta)) / (eps / 2)
        beta = (eps / 2) / d3
        c = math.sqrt(1 - 1 / sites)
        for run in range(runs):
            for alg in algorithms:
                if alg == "random":
                    raw = rng.standard_normal((dim, k))
                    est = (
                        raw / np.linalg.norm(raw, axis=0)
                        if kind == "mog"
                        else np.clip(raw, 0, None) / np.clip(raw, 0, None).sum(axis=0)
                    )
                    rows.append(
                        {
                            "algorithm": alg,
                            "epsilon": eps,
                            "run": run,
                            "component_error": _q_comp(est, model.components),
                        }
                    )
                    continue
                if alg == "nonprivate":
                    m2 = sum(m[0] for m in moments) / sites
                    m3 = sum(m[1] for m in moments) / sites
                elif alg == "cape":
                    est = []
                    for stage, tau, noise in ((0, tau2, _sym_noise), (1, tau3, _sym3_noise)):
                        e = [noise(dim, c * tau, rng) for _ in range(sites)]
                        mean_e = sum(e) / sites
                        e = [(ei - mean_e) / c for ei in e]
                        f = [noise(dim, c * tau, rng) for _ in range(sites)]
                        g = [noise(dim, tau / math.sqrt(sites), rng) for _ in range(sites)]
                        released = [
                            m[stage] + ei + fi + gi
                            for m, ei, fi, gi in zip(moments, e, f, g, strict=True)
                        ]
                        est.append(sum(r - fi for r, fi in zip(released, f, strict=True)) / sites)
                    m2, m3 = est
                elif alg == "conv":
                    m2 = sum(m[0] + _sym_noise(dim, tau2, rng) for m in moments) / sites
                    m3 = sum(m[1] + _sym3_noise(dim, tau3, rng) for m in moments) / sites
                elif alg == "local_agn":
                    m2 = moments[0][0] + _sym_noise(dim, tau2, rng)
                    m3 = moments[0][1] + _sym3_noise(dim, tau3, rng)
                else:  # local_avn
                    m2 = moments[0][0] + _sym_noise(dim, tau2_avn, rng)
                    b = rng.standard_normal(n_sym)
                    b *= rng.gamma(n_sym, 1 / beta) / np.linalg.norm(b)
                    idx = np.sort(np.indices((dim,) * 3).reshape(3, -1), axis=0)
                    _, inverse = np.unique(idx, axis=1, return_inverse=True)
                    m3 = moments[0][1] + b[inverse.ravel()].reshape(dim, dim, dim)
                est = _recover(m2, m3, k, kind, rng)
                rows.append(
                    {
                        "algorithm": alg,
                        "epsilon": eps,
                        "run": run,
                        "component_error": _q_comp(est, model.components),
                    }
                )
    return pd.DataFrame(rows)
