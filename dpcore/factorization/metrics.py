"""Quality measures for estimated subspaces, used by tests and plots alike."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import eigh

from dpcore._validation import check_int
from dpcore.factorization.lapack import top_k_subset, use_subset


def _matrix(value: ArrayLike, name: str, *, square: bool = False) -> NDArray[np.float64]:
    """A finite 2-D float array (square if asked), or a ValueError/TypeError naming it."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be a numeric 2-D array; got {type(value).__name__}") from err
    if arr.ndim != 2 or arr.size == 0 or (square and arr.shape[0] != arr.shape[1]):
        kind = "square 2-D" if square else "2-D"
        raise ValueError(f"{name} must be a non-empty {kind} array; got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite; got NaN or inf")
    return arr


def top_k_eigvecs(matrix: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    """Orthonormal eigenvectors of the K largest *signed* eigenvalues of a symmetric matrix.

    A noisy second-moment matrix is indefinite; ranking by |λ| (an SVD, as in the authors'
    code) can pick a large negative noise direction. Signed order is the correct top-K.

    Returns
    -------
    ndarray, shape (D, K)
        Columns in decreasing eigenvalue order.
    """
    matrix = _matrix(matrix, "matrix", square=True)
    return top_k_eigh(matrix, check_int(k, "k", low=1, high=matrix.shape[0]))[1]


def top_k_eigh(
    matrix: NDArray[np.float64], k: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Eigenvalues (decreasing) and eigenvectors of the K largest signed eigenvalues.

    ``numpy.linalg.eigh`` (LAPACK's divide-and-conquer ``syevd``) on the full spectrum, or,
    where it is faster (D ≥ 500 and K ≤ D/4), the subset solver ``dsyevr`` for the K wanted
    pairs only (:mod:`dpcore.factorization.lapack`). Both release the GIL, so independent runs use
    every core (``dpcore.parallel``). The choice depends only on D and K: same numbers on any
    executor.
    """
    if use_subset(np.shape(matrix)[0], k):
        return top_k_subset(matrix, k)
    vals, vecs = np.linalg.eigh(matrix)
    return vals[: -k - 1 : -1], vecs[:, : -k - 1 : -1]


def captured_energy(basis: NDArray[np.float64], reference: NDArray[np.float64]) -> float:
    """q(V̂) = tr(V̂ᵀ A V̂) (paper, Sec. 2 and Sec. 6.1)."""
    basis, reference = _matrix(basis, "basis"), _matrix(reference, "reference", square=True)
    if basis.shape[0] != reference.shape[0]:
        raise ValueError(f"basis has {basis.shape[0]} rows; reference is {reference.shape}")
    return float(np.sum(basis * (reference @ basis)))


def optimal_energy(reference: NDArray[np.float64], k: int) -> float:
    """Max q = sum of the K largest eigenvalues of A (attained by V_K(A))."""
    reference = _matrix(reference, "reference", square=True)
    d = reference.shape[0]
    k = check_int(k, "k", low=1, high=d)
    return float(np.sum(eigh(reference, eigvals_only=True, subset_by_index=(d - k, d - 1))))


def subspace_distance(basis: NDArray[np.float64], truth: NDArray[np.float64]) -> float:
    """‖V̂V̂ᵀ − V_K V_Kᵀ‖₂ for two orthonormal D×K bases: the sine of the largest principal angle.

    Computed as ‖(I − V_K V_Kᵀ) V̂‖₂, which equals the spectral norm of the projector
    difference for subspaces of equal dimension (paper, Sec. 4, second guarantee) and, unlike
    sqrt(1 − σ_min²), stays accurate for nearly equal subspaces.
    """
    basis, truth = _matrix(basis, "basis"), _matrix(truth, "truth")
    if basis.shape != truth.shape:
        raise ValueError(
            f"basis and truth must have the same shape; got {basis.shape}, {truth.shape}"
        )
    residual = basis - truth @ (truth.T @ basis)
    return float(np.linalg.norm(residual, ord=2))


def _distances(estimate: NDArray[np.float64], truth: NDArray[np.float64]) -> NDArray[np.float64]:
    """‖â_i − a_j‖₂ for every pair of columns: shape (K_est, K_true)."""
    estimate, truth = _matrix(estimate, "estimate"), _matrix(truth, "truth")
    if estimate.shape[0] != truth.shape[0]:
        raise ValueError(
            f"estimate and truth must have the same D; got {estimate.shape}, {truth.shape}"
        )
    distances: NDArray[np.float64] = np.linalg.norm(
        estimate[:, :, None] - truth[:, None, :], axis=0
    )
    return distances


def component_error(estimate: NDArray[np.float64], truth: NDArray[np.float64]) -> float:
    """q_comp = (1/K) Σ_k min_j ‖â_k − a_j‖₂ (Imtiaz & Sarwate, Sec. 6.2).

    Two recovered vectors may match the same true one; see :func:`component_error_matched`.
    """
    return float(np.mean(_distances(estimate, truth).min(axis=1)))


def matching(estimate: NDArray[np.float64], truth: NDArray[np.float64]) -> NDArray[np.intp]:
    """One-to-one assignment (Hungarian) minimising total distance: est column i ↔ truth[i]."""
    distances = _distances(estimate, truth)
    if distances.shape[0] > distances.shape[1]:  # else some â_k would get no a_j (np.empty)
        raise ValueError(
            f"estimate must have at most as many columns as truth ({distances.shape[1]}) for a "
            f"one-to-one matching; got {distances.shape[0]}"
        )
    from scipy.optimize import linear_sum_assignment  # lazy: costs every process ~1 CPU-s (#35)
    rows, cols = linear_sum_assignment(distances)
    out = np.empty(distances.shape[0], dtype=np.intp)
    out[rows] = cols
    return out


def component_error_matched(estimate: NDArray[np.float64], truth: NDArray[np.float64]) -> float:
    """Mean ‖â_k − a_π(k)‖₂ under the optimal one-to-one matching π."""
    pi = matching(estimate, truth)
    return float(np.mean(np.linalg.norm(estimate - truth[:, pi], axis=0)))


def weight_error(
    est_weights: ArrayLike, true_weights: ArrayLike, estimate: ArrayLike, truth: ArrayLike
) -> float:
    """Mean |ŵ_k − w_π(k)| with π the component matching of :func:`matching`.

    ``est_weights`` has one finite entry per column of ``estimate``; ``true_weights`` one per
    column of ``truth``.
    """
    est, true = _matrix(estimate, "estimate"), _matrix(truth, "truth")
    est_w = _vector(est_weights, "est_weights", est.shape[1], "estimate")
    true_w = _vector(true_weights, "true_weights", true.shape[1], "truth")
    pi = matching(est, true)
    return float(np.mean(np.abs(est_w - true_w[pi])))


def _vector(value: ArrayLike, name: str, size: int, of: str) -> NDArray[np.float64]:
    """A finite 1-D float array of ``size`` entries (columns of ``of``), or an error naming it."""
    try:
        flat = np.ndim(value) == 1
    except (TypeError, ValueError):  # a ragged sequence: _matrix names it
        flat = False
    arr = _matrix(np.atleast_2d(value) if flat else value, name)
    if arr.shape != (1, size):
        shape = np.shape(value)
        raise ValueError(
            f"{name} must have one entry per column of {of} ({size}); got shape {shape}"
        )
    row: NDArray[np.float64] = arr[0]
    return row
