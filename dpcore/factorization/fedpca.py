"""Federated PCA baselines: FedPower (iterative) and one-shot federated PCA (subspace merge).

* :func:`fedpower_pca` — FedPower (X. Guo, X. Li, X. Chang, S. Wang, Z. Zhang, "FedPower:
  Privacy-Preserving Distributed Eigenspace Estimation", Machine Learning 2024,
  arXiv:2103.00704, Algorithm 1): every site runs the noisy power iteration on its own
  A_s, Y_t^(s) = A_s Z_{t−1}^(s) + G_t^(s), and only every p-th round (and the last) the
  server aligns the sites' Y_t^(s) to site 1's by the Orthogonal Procrustes Transformation
  (OPT) D_s = argmin_{D orthogonal} ‖Y^(s) D − Y^(1)‖_F, averages Σ μ_s Y^(s) D_s,
  orthonormalises and broadcasts. The local power iterations between two synchronisations
  save communication (LocalPower: X. Li, S. Wang, K. Chen, Z. Zhang, ICML 2021).
* :func:`federated_pca` — one-shot federated PCA (A. Grammenos, R. Mendoza-Smith,
  J. Crowcroft, C. Mascolo, "Federated Principal Component Analysis", NeurIPS 2020): every
  site perturbs its A_s once (their MOD-SuLQ input perturbation, Chaudhuri et al. 2013),
  keeps its rank-K subspace U_s and singular values Σ_s, and the server merges the sites'
  subspaces pairwise up a binary tree (their Algorithm "Merge": the top-K left singular
  pairs of [U₁Σ₁, U₂Σ₂]).

Privacy. FedPower adds Gaussian noise in *every* iteration, released or not: each local
iterate feeds the next one's input, so the site's T noisy products are composed as T
Gaussian releases against its one total (ε_s, δ_s), exactly as the distributed noisy power
method (:func:`dpcore.factorization.iterative.per_round_std`: per round std sqrt(T)·τ_s on the
sensitivity
Δ_s of A_s Z, Z orthonormal); the server sees a post-processing of them. One-shot federated
PCA releases Â_s once (std τ_s, like every one-shot algorithm); the merge is post-processing.
What we took from the papers and where we depart from them: ``docs/baselines.md`` and
``docs/deviations.md``.

Random streams. FedPower spawns ``rng`` into T + 1 children: child 0 draws Z₀ (shared by all
sites), child t is spawned into one stream per site for round t's G_t^(s). Federated PCA
spawns one stream per site.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpcore._validation import check_int, check_rng
from dpcore.factorization.iterative import (
    DEFAULT_ROUNDS,
    central_round,
    check_moments,
    check_rounds,
    check_sites,
    initial_basis,
    orthonormalise,
    per_round_std,
)
from dpcore.factorization.metrics import top_k_eigh
from dpcore.protocol.cape import add_symmetric_noise

# Local power iterations between two synchronisations (p). Our choice, not the paper's
# (docs/baselines.md): with T = 11 rounds, p = 2 synchronises at t = 2, 4, …, 10 and 11.
DEFAULT_LOCAL_ITERATIONS = 2


def check_local_iterations(local_iterations: object, rounds: int) -> int:
    """p, the rounds between two synchronisations: an integer in [1, T]."""
    return check_int(local_iterations, "local_iterations", low=1, high=rounds)


def synchronisations(rounds: int, local_iterations: int) -> tuple[int, ...]:
    """The rounds t at which the server aggregates: every p-th, and the last (I_T^p).

    Examples
    --------
    >>> synchronisations(11, 4)
    (4, 8, 11)
    """
    rounds = check_rounds(rounds)
    p = check_local_iterations(local_iterations, rounds)
    return tuple(sorted({*range(p, rounds + 1, p), rounds}))


def procrustes_rotation(
    y: NDArray[np.float64], reference: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The orthogonal K×K D minimising ‖y D − reference‖_F: U Vᵀ of yᵀ·reference = U S Vᵀ.

    Schönemann (1966); FedPower's OPT weight of a site's release.
    """
    u, _, vt = np.linalg.svd(y.T @ reference)
    rotation: NDArray[np.float64] = u @ vt
    return rotation


def fedpower_pca(
    moments: ArrayLike,
    k: int,
    *,
    tau_site: ArrayLike,
    weights: ArrayLike | None = None,
    rounds: int = DEFAULT_ROUNDS,
    local_iterations: int = DEFAULT_LOCAL_ITERATIONS,
    rng: object = None,
) -> NDArray[np.float64]:
    """FedPower: local noisy power iterations, OPT-aligned averaging every p-th round.

    Parameters
    ----------
    moments : array_like, shape (S, D, D)
        The sites' A_s, S ≥ 2.
    k : int
        K, 1 ≤ K ≤ D.
    tau_site : array_like, shape (S,)
        τ_s, each site's one-release std at its total (ε_s, δ_s).
    weights : array_like, shape (S,), optional
        μ_s (default 1/S): the server's average Σ μ_s Y^(s) D_s.
    rounds : int
        T in [1, 1000], the power iterations every site runs (each one noised).
    local_iterations : int
        p in [1, T]: the server aggregates at t = p, 2p, … and at T
        (:func:`synchronisations`).
    rng : int, Generator or None
        Streams as in the module docstring.

    Returns
    -------
    ndarray, shape (D, K)
        Z_T, orthonormal.

    Notes
    -----
    Round t at site s: Y_t^(s) = A_s Z_{t−1}^(s) + G_t^(s), G ~ N(0, T τ_s²) i.i.d. on D×K
    entries (:func:`dpcore.factorization.iterative.per_round_std`). Off a synchronisation,
    Z_t^(s) = orth(Y_t^(s)). At one, the server forms Y_t = Σ_s μ_s Y_t^(s) D_s with
    D_s = :func:`procrustes_rotation` (Y_t^(s), Y_t^(1)) and every site continues from
    Z_t = orth(Y_t). With p = 1 every round is aggregated.

    References
    ----------
    Guo, Li, Chang, Wang & Zhang, Machine Learning 2024 (arXiv:2103.00704), Algorithm 1
    (from our reading; docs/baselines.md says which parts are from memory).
    """
    arr, k = check_moments(moments, k, min_sites=2)
    tau, mu = check_sites(arr, tau_site, weights)
    rounds = check_rounds(rounds)
    sync = set(synchronisations(rounds, local_iterations))
    std = per_round_std(tau, rounds=rounds)
    streams = check_rng(rng).spawn(rounds + 1)
    shared = initial_basis(arr.shape[1], k, rng=streams[0])
    bases = [shared] * arr.shape[0]
    for t in range(1, rounds + 1):
        site_rngs = streams[t].spawn(arr.shape[0])
        ys = [
            central_round(a, z, s, rng=r)  # A_s Z + G, on the site's own data
            for a, z, s, r in zip(arr, bases, std, site_rngs, strict=True)
        ]
        if t in sync:
            merged = sum(
                (m * y @ procrustes_rotation(y, ys[0]) for m, y in zip(mu, ys, strict=True)),
                np.zeros_like(shared),
            )
            bases = [orthonormalise(merged)] * arr.shape[0]
        else:
            bases = [orthonormalise(y) for y in ys]
    return bases[0]


# --- one-shot federated PCA (Grammenos et al. 2020) -------------------------------------------


def local_subspace(
    moment: NDArray[np.float64], k: int, *, tau: float, weight: float, rng: np.random.Generator
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """A site's private rank-K summary (U_s, Σ_s): the top-K eigenpairs of Â_s = A_s + G_s.

    G_s ~ symmetric N(0, τ_s²) (input perturbation, as MOD-SuLQ; our calibration τ_s) and
    Σ_s = sqrt(μ_s · max(λ, 0)): U_s Σ_s² U_sᵀ is μ_s times Â_s's rank-K part, so the merge
    of all sites estimates Σ μ_s A_s. Ranked by signed eigenvalue
    (:func:`dpcore.factorization.metrics.top_k_eigh`).
    """
    vals, vecs = top_k_eigh(add_symmetric_noise(moment, tau, rng=rng), k)
    return vecs, np.sqrt(weight * np.clip(vals, 0.0, None))


def merge_subspaces(
    first: tuple[NDArray[np.float64], NDArray[np.float64]],
    second: tuple[NDArray[np.float64], NDArray[np.float64]],
    k: int,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Grammenos et al.'s Merge: the top-K left singular pairs of [U₁Σ₁, U₂Σ₂].

    Their Algorithm 2 with forgetting factors λ₁ = λ₂ = 1 (their code's SVD-based merge,
    ``fpca_subspace_merge.m`` type 1): (U, Σ) with U Σ² Uᵀ the best rank-K approximation of
    U₁Σ₁²U₁ᵀ + U₂Σ₂²U₂ᵀ.
    """
    (u1, s1), (u2, s2) = first, second
    u, s, _ = np.linalg.svd(np.hstack([u1 * s1, u2 * s2]), full_matrices=False)
    return u[:, :k], s[:k]


def federated_pca(
    moments: ArrayLike,
    k: int,
    *,
    tau_site: ArrayLike,
    weights: ArrayLike | None = None,
    rng: object = None,
) -> NDArray[np.float64]:
    """One-shot federated PCA: private local subspaces merged up a binary tree.

    Parameters
    ----------
    moments, k, tau_site, weights
        As in :func:`fedpower_pca`; K is also the rank every site keeps and every merge
        truncates to, and τ_s is the std of the site's one release.
    rng : int, Generator or None
        Spawned into one stream per site.

    Returns
    -------
    ndarray, shape (D, K)
        The root's U, orthonormal.

    Notes
    -----
    Leaves are the sites' :func:`local_subspace`; each level merges neighbours (1, 2),
    (3, 4), … with :func:`merge_subspaces` and an odd one out moves up unmerged, until one
    remains. Each site releases Â_s once; everything after is post-processing, so the site
    spends its (ε_s, δ_s) once, like the one-shot algorithms. The truncation to rank K at
    every merge is what separates it from DPdisPCA with R = K (one merge of all sites).

    References
    ----------
    Grammenos, Mendoza-Smith, Crowcroft & Mascolo, NeurIPS 2020, Algorithms 2 (Merge) and
    the federated tree of Section 4, one block per site (docs/baselines.md).
    """
    arr, k = check_moments(moments, k, min_sites=2)
    tau, mu = check_sites(arr, tau_site, weights)
    site_rngs = check_rng(rng).spawn(arr.shape[0])
    level = [
        local_subspace(a, k, tau=float(t), weight=float(m), rng=r)
        for a, t, m, r in zip(arr, tau, mu, site_rngs, strict=True)
    ]
    while len(level) > 1:
        merged = [merge_subspaces(a, b, k) for a, b in zip(level[::2], level[1::2], strict=False)]
        level = merged + level[len(merged) * 2 :]
    return level[0][0]
