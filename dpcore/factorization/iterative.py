"""Iterative private PCA: the noisy power method, central, distributed, and with CAPE per round.

All three run subspace iteration (Hardt & Price, "The Noisy Power Method: A Meta Algorithm
with Applications", NeurIPS 2014, Figure 1): from a random orthonormal X₀ ∈ R^{D×K}, every
round t = 1 … T releases Y_t = A X_{t−1} + G_t and orthonormalises X_t = QR(Y_t); the output
is X_T. They differ in who computes A X_{t−1} and where the noise G_t comes from:

* :func:`npm_pca` — central: a trusted curator holds the pooled A = Σ μ_s A_s and adds
  G_t ~ N(0, σ_T²) with the pooled std (Hardt & Price's private power method, Figure 3, with
  our calibration: :func:`per_round_std`).
* :func:`distributed_npm_pca` — every site releases A_s X_{t−1} + G_{s,t} with its own noise
  every round and the aggregator sums (the distributed noisy power method of Balcan, Du,
  Wang & Yu, "An Improved Gap-Dependency Analysis of the Noisy Power Method", COLT 2016):
  the aggregate carries sqrt(Σ μ_s² σ_s²), S times the pooled variance for equal sites.
* :func:`cape_npm_pca` — every round is one CAPE run (Imtiaz & Sarwate, Alg. 5) on the
  values A_s X_{t−1}: fresh zero-sum E_s from the noise generator, F_s from the aggregator,
  G_s from the sites, so each round's aggregate carries only the pooled noise (new here:
  issue #38).

Privacy is charged over all T rounds against the one total (ε_s, δ_s) of each site, by exact
Gaussian composition (:func:`per_round_std`). Random streams: ``rng`` is spawned into T + 1
children, the first drawing X₀ and child t the noise of round t (a round's CAPE run spawns
its own parties' streams from it, :func:`dpcore.cape_average`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpcore._validation import (
    MAX_MAGNITUDE,
    as_float_array,
    check_bool,
    check_choice,
    check_int,
    check_positive_array,
    check_real,
    check_rng,
    check_weights,
)
from dpcore.protocol.cape import AveragingRun, CapeDesign, cape_average, conventional_average
from dpcore.protocol.joint_safe import DESIGN_KINDS, design_for

# Hardt & Price's L = C σ_K/(σ_K − σ_{K+1}) ln D with C = 1 at the synthetic spectrum: ⌈2 ln 200⌉
DEFAULT_ROUNDS = 11  # (docs/deviations.md)
MAX_ROUNDS = 1000


def check_rounds(rounds: object) -> int:
    """T, the number of rounds, an integer in [1, :data:`MAX_ROUNDS`]."""
    return check_int(rounds, "rounds", low=1, high=MAX_ROUNDS)


def per_round_std(tau: float | ArrayLike, *, rounds: int) -> NDArray[np.float64]:
    """Per-round noise std σ_T = sqrt(T)·τ: T rounds together spend exactly what τ spends once.

    Parameters
    ----------
    tau : float or array_like
        τ ≥ 0, the std one Gaussian release of the statistic needs at the total (ε, δ) and
        sensitivity Δ (per site: :func:`dpcore.site_noise_std`; pooled: max_s μ_s τ_s).
    rounds : int
        T in [1, 1000].

    Returns
    -------
    ndarray
        sqrt(T)·τ, the shape of ``tau``.

    Notes
    -----
    **Sensitivity of one round.** Round t releases Y = A_s X for the public orthonormal
    X = X_{t−1} ∈ R^{D×K} (XᵀX = I), with A_s = (1/N_s) Σ_i x_i x_iᵀ and every ‖x_i‖₂ ≤ 1.
    Under add-remove neighbours (N_s public, the paper's Sec. 4 convention) A_s changes by
    ±x xᵀ/N_s, so Y changes by x (Xᵀx)ᵀ/N_s and

        ‖x xᵀ X‖_F = ‖x‖₂ ‖Xᵀx‖₂ ≤ ‖x‖₂² ≤ 1:   Δ(Y) ≤ 1/N_s = Δ(A_s),

    since ‖Xᵀx‖₂ ≤ ‖x‖₂ for orthonormal columns. Under replacement, ‖(xxᵀ − x'x'ᵀ)X‖_F ≤
    ‖xxᵀ − x'x'ᵀ‖_F ‖X‖₂ ≤ √2/N_s, again Δ(A_s) (:func:`dpcore.second_moment_sensitivity`).
    The noise is i.i.d. on all D·K entries of Y (Y is not symmetric).

    **Composition.** Each round is a Gaussian mechanism with noise multiplier z = σ_T/Δ; X_{t−1}
    depends on earlier releases only (adaptive composition). In Gaussian DP, T such rounds are
    exactly one release with μ = sqrt(T)·Δ/σ_T (Dong, Roth & Su, JRSS-B 2022, Cor. 3.3 and
    Thm. 3.2 for adaptive composition; :func:`dpcore.composed_mu`), i.e. one release with std
    σ_T/sqrt(T) = τ. Whatever calibrated τ for one release at (ε, δ) therefore calibrates the T
    rounds at the same (ε, δ): exactly so with the analytic calibration
    (``tests/core/factorization/test_iterative.py`` checks it against Google's ``dp_accounting``).

    Examples
    --------
    >>> per_round_std(0.5, rounds=4).tolist()
    1.0
    """
    rounds = check_rounds(rounds)
    arr = as_float_array(tau, "tau")
    if np.any(~np.isfinite(arr)) or np.any(arr < 0) or np.any(arr > MAX_MAGNITUDE):
        raise ValueError(f"every tau must be in [0, {MAX_MAGNITUDE:g}]; got {tau!r}")
    return math.sqrt(rounds) * arr


# --- one step each ------------------------------------------------------------------------------


def initial_basis(dim: int, k: int, *, rng: np.random.Generator) -> NDArray[np.float64]:
    """X₀: a uniformly random orthonormal D×K basis, QR of a Gaussian matrix (HP, Figure 1)."""
    return orthonormalise(rng.standard_normal((dim, k)))


def orthonormalise(y: NDArray[np.float64]) -> NDArray[np.float64]:
    """X with orthonormal columns spanning those of Y: the Q of Y = QR with diag(R) ≥ 0.

    The sign convention makes the factorisation unique (Gram–Schmidt's): the next round adds
    its noise to A X, so which orthonormal basis of the span is passed on matters for the
    realisation (not for the distribution). Hardt & Price, Figure 1, step 2(b).
    """
    q, r = np.linalg.qr(y)
    return q * np.where(np.diag(r) < 0, -1.0, 1.0)


def central_round(
    moment: NDArray[np.float64], basis: NDArray[np.float64], std: float, *, rng: np.random.Generator
) -> NDArray[np.float64]:
    """One round at a curator: Y = A X + G, G ~ N(0, std²) i.i.d. on D×K entries."""
    return moment @ basis + std * rng.standard_normal(basis.shape)


def site_round(
    moments: NDArray[np.float64],
    basis: NDArray[np.float64],
    std_site: NDArray[np.float64],
    weights: NDArray[np.float64],
    *,
    rng: np.random.Generator,
) -> AveragingRun:
    """One distributed round: site s releases A_s X + G_s with its own std; Σ μ_s at the aggregator.

    The round is conventional averaging (:func:`dpcore.conventional_average`) of the values
    A_s X; ``.estimate`` is Σ μ_s (A_s X + G_s).
    """
    values = np.einsum("sij,jk->sik", moments, basis)
    return conventional_average(values, std_site, weights=weights, rng=rng)


def cape_round(
    moments: NDArray[np.float64],
    basis: NDArray[np.float64],
    design: CapeDesign,
    *,
    rng: np.random.Generator,
) -> AveragingRun:
    """One CAPE round on the values A_s X: fresh zero-sum E_s, F_s and G_s (Alg. 5).

    ``.estimate`` is Σ μ_s (Â_s − F_s) = Σ μ_s (A_s X + G_s): this round's E_s cancel exactly
    (``.e`` holds them), so the aggregate carries the design's pooled noise ``tau_agg``.
    """
    values = np.einsum("sij,jk->sik", moments, basis)
    return cape_average(values, design.tau_site, design=design, rng=rng)


def check_block(block: object, k: int, dim: int) -> int:
    """The block size p: K ≤ p ≤ D (``None``: p = K, Hardt & Price's and our default)."""
    return k if block is None else check_int(block, "block", low=k, high=dim)


def _iterate(
    step: Callable[[NDArray[np.float64], np.random.Generator], NDArray[np.float64]],
    dim: int,
    k: int,
    rounds: int,
    rng: np.random.Generator,
    block: int | None = None,
) -> NDArray[np.float64]:
    """Subspace iteration X_t = QR(step(X_{t−1})) from a D×p X₀; streams as in the module doc.

    With p = K the output is X_T. With p > K it is the top-K left singular vectors of the
    last release Y_T (post-processing: no privacy cost), the K-dimensional part of the
    p-dimensional span the iteration converged to (Hardt & Price's p ≥ K; Balcan et al.'s
    gap σ_K − σ_{p+1}).
    """
    p = check_block(block, k, dim)
    streams = rng.spawn(rounds + 1)
    basis = initial_basis(dim, p, rng=streams[0])
    release = basis
    for t in range(1, rounds + 1):
        release = step(basis, streams[t])
        basis = orthonormalise(release)
    if p == k:
        return basis
    return np.linalg.svd(release, full_matrices=False)[0][:, :k]


# --- the algorithms -----------------------------------------------------------------------------


def check_moments(moments: ArrayLike, k: int, *, min_sites: int) -> tuple[NDArray[np.float64], int]:
    """The per-site second moments as an (S, D, D) float array and K, validated.

    Shared by the iterative and federated baselines; ``ValueError`` names the bad argument.
    """
    arr = as_float_array(moments, "moments")
    if arr.ndim != 3 or arr.shape[1] != arr.shape[2] or arr.shape[0] < min_sites:
        raise ValueError(
            f"moments must have shape (S, D, D) with S >= {min_sites}; got shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError("moments must be finite; got NaN or inf")
    return arr, check_int(k, "k", low=1, high=arr.shape[1])


def check_sites(
    moments: NDArray[np.float64], tau_site: ArrayLike, weights: ArrayLike | None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(τ_s, μ_s): the sites' noise stds and weights checked against the moments' S."""
    tau = check_positive_array(tau_site, "tau_site", allow_zero=True)
    if tau.size != moments.shape[0]:
        raise ValueError(
            f"tau_site must have one entry per site ({moments.shape[0]}); got {tau.size}"
        )
    if tau.max() > MAX_MAGNITUDE:
        raise ValueError(f"every tau_site must be in [0, {MAX_MAGNITUDE:g}]; got {tau.max()!r}")
    return tau, check_weights(weights, tau.size)


def pooled_round_std(
    tau_site: ArrayLike, *, weights: ArrayLike | None = None, rounds: int
) -> float:
    """A curator's per-round std: sqrt(T)·max_s μ_s τ_s.

    A sample of site s moves Σ μ_s A_s X by at most μ_s Δ_s, so one pooled release needs
    max_s μ_s τ_s (the pooled requirement of :func:`dpcore.cape_design`), and T rounds need
    sqrt(T) times that (:func:`per_round_std`).
    """
    tau = check_positive_array(tau_site, "tau_site", allow_zero=True)
    mu = check_weights(weights, tau.size)
    return float(per_round_std(float(np.max(mu * tau)), rounds=rounds))


def cape_round_design(
    tau_site: ArrayLike, *, weights: ArrayLike | None = None, rounds: int, design: str = "cape"
) -> CapeDesign:
    """The CAPE design every round uses: ``design`` for the per-round stds sqrt(T)·τ_s.

    Parameters
    ----------
    tau_site : array_like, shape (S,)
        τ_s, each site's one-release std at its total (ε_s, δ_s); S ≥ 2.
    weights : array_like, shape (S,), optional
        μ_s (default 1/S).
    rounds : int
        T in [1, 1000].
    design : {"cape", "joint"}
        The paper's design or the joint-view-safe one
        (:func:`dpcore.protocol.joint_safe.design_for`).
    """
    kind = check_choice(design, "design", DESIGN_KINDS)
    return design_for(kind, per_round_std(tau_site, rounds=rounds), weights=weights)


def noisy_power_method(
    moment: ArrayLike,
    k: int,
    *,
    std: float,
    rounds: int = DEFAULT_ROUNDS,
    block: int | None = None,
    rng: object = None,
) -> NDArray[np.float64]:
    """The noisy power method on one matrix with Gaussian noise of a given std every round.

    Parameters
    ----------
    moment : array_like, shape (D, D)
        A (symmetric).
    k : int
        K, 1 ≤ K ≤ D.
    std : float
        σ ≥ 0 of every entry of every G_t (0: the plain power method).
    rounds : int
        T = L in [1, 1000].
    block : int, optional
        Hardt & Price's block size p, K ≤ p ≤ D (default K). The noise per entry is the
        same at every p: ‖ΔA X‖_F ≤ ‖ΔA‖_F for orthonormal X of any width.
    rng : int, Generator or None
        Spawned into T + 1 streams (module docstring).

    Returns
    -------
    ndarray, shape (D, K)
        X_T, orthonormal.

    References
    ----------
    Hardt & Price, NeurIPS 2014, Figure 1 (NPM) with G_ℓ ~ N(0, σ²)^{D×K}.
    """
    a = as_float_array(moment, "moment")
    if a.ndim != 2 or a.shape[0] != a.shape[1] or not np.all(np.isfinite(a)):
        raise ValueError(f"moment must be a finite square (D, D) matrix; got shape {a.shape}")
    k = check_int(k, "k", low=1, high=a.shape[0])
    std = check_real(std, "std", low=0.0, high=MAX_MAGNITUDE)
    rounds = check_rounds(rounds)
    return _iterate(
        lambda x, r: central_round(a, x, std, rng=r), a.shape[0], k, rounds, check_rng(rng), block
    )


def npm_pca(
    moments: ArrayLike,
    k: int,
    *,
    tau_site: ArrayLike,
    weights: ArrayLike | None = None,
    rounds: int = DEFAULT_ROUNDS,
    block: int | None = None,
    rng: object = None,
) -> NDArray[np.float64]:
    """Central private power method: a trusted curator iterates on the pooled Σ μ_s A_s.

    Parameters
    ----------
    moments : array_like, shape (S, D, D)
        The sites' A_s.
    k : int
        K, 1 ≤ K ≤ D.
    tau_site : array_like, shape (S,)
        τ_s, each site's one-release std at its total (ε_s, δ_s).
    weights : array_like, shape (S,), optional
        μ_s (default 1/S).
    rounds : int
        T in [1, 1000] (default :data:`DEFAULT_ROUNDS`).
    block : int, optional
        Block size p, K ≤ p ≤ D (default K; :func:`noisy_power_method`).
    rng : int, Generator or None

    Returns
    -------
    ndarray, shape (D, K)

    Notes
    -----
    Every round's noise std is :func:`pooled_round_std`, sqrt(T)·max_s μ_s τ_s.

    References
    ----------
    Hardt & Price, NeurIPS 2014, Figure 3 (PPM); our noise is calibrated to the Frobenius
    sensitivity of A X under the lab's neighbouring relation (docs/deviations.md).
    """
    arr, k = check_moments(moments, k, min_sites=1)
    tau, mu = check_sites(arr, tau_site, weights)
    std = pooled_round_std(tau, weights=mu, rounds=rounds)
    return noisy_power_method(
        np.tensordot(mu, arr, axes=1), k, std=std, rounds=rounds, block=block, rng=rng
    )


def distributed_npm_pca(
    moments: ArrayLike,
    k: int,
    *,
    tau_site: ArrayLike,
    weights: ArrayLike | None = None,
    rounds: int = DEFAULT_ROUNDS,
    faithful: bool = True,
    block: int | None = None,
    rng: object = None,
) -> NDArray[np.float64]:
    """Distributed noisy power method: every site adds its own noise every round.

    Parameters
    ----------
    moments, k, tau_site, weights, rounds, block, rng
        As in :func:`npm_pca` (S ≥ 2).
    faithful : bool
        ``True`` runs every site's release (:func:`site_round`); ``False`` draws the
        aggregate noise Σ μ_s G_{s,t}, Gaussian with std sqrt(T)·sqrt(Σ μ_s² τ_s²), directly
        (same distribution; one stream per round).

    Returns
    -------
    ndarray, shape (D, K)

    References
    ----------
    Balcan, Du, Wang & Yu, COLT 2016 (distributed noisy power method); Hardt & Price,
    NeurIPS 2014, Figure 1.
    """
    arr, k = check_moments(moments, k, min_sites=2)
    tau, mu = check_sites(arr, tau_site, weights)
    rounds = check_rounds(rounds)
    std_site = per_round_std(tau, rounds=rounds)
    if check_bool(faithful, "faithful"):

        def step(x: NDArray[np.float64], r: np.random.Generator) -> NDArray[np.float64]:
            return site_round(arr, x, std_site, mu, rng=r).estimate

        return _iterate(step, arr.shape[1], k, rounds, check_rng(rng), block)
    std = float(np.sqrt(np.sum(mu**2 * std_site**2)))
    return noisy_power_method(
        np.tensordot(mu, arr, axes=1), k, std=std, rounds=rounds, block=block, rng=rng
    )


def cape_npm_pca(
    moments: ArrayLike,
    k: int,
    *,
    tau_site: ArrayLike,
    weights: ArrayLike | None = None,
    rounds: int = DEFAULT_ROUNDS,
    design: str = "cape",
    faithful: bool = True,
    block: int | None = None,
    rng: object = None,
) -> NDArray[np.float64]:
    """Distributed noisy power method with CAPE's correlated noise in every round.

    Parameters
    ----------
    moments, k, tau_site, weights, rounds, block, rng
        As in :func:`npm_pca` (S ≥ 2).
    design : {"cape", "joint"}
        The per-round noise design (:func:`dpcore.protocol.joint_safe.design_for`) for the per-round
        stds sqrt(T)·τ_s: the paper's, or the one whose aggregator's joint view of a round's
        releases also meets every site's per-round std.
    faithful : bool
        ``True`` runs the protocol every round (:func:`cape_round`); ``False`` draws the
        aggregate noise Σ μ_s G_{s,t} with the design's ``tau_agg`` directly (the E_s cancel
        exactly and the F_s are subtracted: same distribution).

    Returns
    -------
    ndarray, shape (D, K)

    Notes
    -----
    Every site's release in round t, seen by the aggregator (E + G) or the noise generator
    (F + G), carries std sqrt(T)·τ_s, so its T releases compose to its (ε_s, δ_s)
    (:func:`per_round_std`); the rounds use independent E's, so with ``design="joint"`` the
    aggregator's joint view of each round, and hence of all T rounds, meets it too.

    References
    ----------
    Imtiaz & Sarwate, Alg. 5 (CAPE) and eq. (2); Hardt & Price, NeurIPS 2014, Figure 1.
    """
    arr, k = check_moments(moments, k, min_sites=2)
    tau, mu = check_sites(arr, tau_site, weights)
    rounds = check_rounds(rounds)
    made = cape_round_design(tau, weights=mu, rounds=rounds, design=design)
    if check_bool(faithful, "faithful"):

        def step(x: NDArray[np.float64], r: np.random.Generator) -> NDArray[np.float64]:
            return cape_round(arr, x, made, rng=r).estimate

        return _iterate(step, arr.shape[1], k, rounds, check_rng(rng), block)
    return noisy_power_method(
        np.tensordot(mu, arr, axes=1), k, std=made.tau_agg, rounds=rounds, block=block, rng=rng
    )
