"""Orthogonal tensor decomposition: whitening, the tensor power method, recovery.

References: Imtiaz & Sarwate, Sec. 5 and Appendix D.3; Anandkumar, Ge, Hsu, Kakade and
Telgarsky, "Tensor decompositions for learning latent variable models", JMLR 2014,
Algorithm 1 (robust tensor power method).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpcore._validation import check_int, check_real
from dpcore.metrics import top_k_eigh


def whitening(m2: NDArray[np.float64], k: int) -> tuple[NDArray, NDArray, NDArray]:
    """W = U D^{-1/2} from the top-K (signed) eigenpairs of a (noisy) M2.

    Returns
    -------
    w : ndarray, shape (D, K)
        The whitening matrix.
    u : ndarray, shape (D, K)
    d : ndarray, shape (K,)
        The eigenvalues used. A noisy M2 can have non-positive ones among its top K; their
        magnitude (floored at 1e-12 of the largest) is used, as an SVD would.
    """
    vals, vecs = top_k_eigh(m2, k)
    mag = np.abs(vals)
    d = np.maximum(mag, 1e-12 * max(float(mag.max()), 1e-300))
    return vecs / np.sqrt(d), vecs, d


def multilinear(tensor: NDArray[np.float64], w: NDArray[np.float64]) -> NDArray[np.float64]:
    """T(W, W, W) = Σ T_ijk W_ia W_jb W_kc, contracted one mode at a time.

    ``tensor`` may carry leading batch axes: shape (..., D, D, D) → (..., K, K, K). The
    pairwise contraction order costs D³K + D²K² + DK³ and never forms a D³K² array.
    """
    return np.einsum("...ijk,ia,jb,kc->...abc", tensor, w, w, w, optimize="greedy")


def _apply(t: NDArray[np.float64], u: NDArray[np.float64]) -> NDArray[np.float64]:
    """T(I, u, u) for every column u of ``u`` (shape (K, L)) at once."""
    return np.einsum("ijk,jl,kl->il", t, u, u)


@dataclass(frozen=True)
class RankOneResult:
    """One robust power-method step: eigenvalue, unit eigenvector, iterations used."""

    eigenvalue: float
    vector: NDArray[np.float64]
    iterations: int


def power_iteration(
    t: NDArray[np.float64],
    *,
    restarts: int = 10,
    max_iter: int = 100,
    tol: float = 1e-8,
    rng: np.random.Generator,
) -> RankOneResult:
    """Largest robust eigenpair of a symmetric K×K×K tensor by the tensor power method.

    Runs ``restarts`` random starts (uniform on the sphere) in parallel for up to
    ``max_iter`` steps u ← T(I,u,u)/‖T(I,u,u)‖, keeps the start with the largest T(u,u,u),
    and polishes it with up to ``max_iter`` more steps (Anandkumar et al. 2014, Alg. 1).
    Iteration stops early once every start moves by less than ``tol``.

    Returns
    -------
    RankOneResult
        λ = T(u,u,u) ≥ 0 (u is sign-flipped if needed) and the total iterations used.
    """
    restarts = check_int(restarts, "restarts", low=1)
    max_iter = check_int(max_iter, "max_iter", low=1)
    tol = check_real(tol, "tol", low=0.0, low_open=True)
    k = t.shape[0]
    u = rng.standard_normal((k, restarts))
    u /= np.linalg.norm(u, axis=0)
    u, used = _iterate(t, u, max_iter, tol)
    values = np.einsum("il,il->l", _apply(t, u), u)
    best = u[:, [int(np.argmax(values))]]
    best, more = _iterate(t, best, max_iter, tol)
    vec = best[:, 0]
    lam = float(vec @ _apply(t, best)[:, 0])
    if lam < 0:  # T(I,u,u) is even in u: −u is as good a fixed point, with −λ
        vec, lam = -vec, -lam
    return RankOneResult(lam, vec, used + more)


def _iterate(t, u, max_iter, tol):
    for it in range(1, max_iter + 1):
        nxt = _apply(t, u)
        norms = np.linalg.norm(nxt, axis=0)
        nxt = nxt / np.where(norms > 0, norms, 1.0)
        # distance up to sign, since ±u are the same direction
        moved = np.minimum(np.linalg.norm(nxt - u, axis=0), np.linalg.norm(nxt + u, axis=0))
        u = nxt
        if np.all(moved < tol):
            return u, it
    return u, max_iter


def deflate(t: NDArray[np.float64], eigenvalue: float, vector: NDArray) -> NDArray[np.float64]:
    """T − λ u⊗u⊗u."""
    return t - eigenvalue * np.einsum("i,j,k->ijk", vector, vector, vector)


@dataclass(frozen=True, eq=False)
class Decomposition:
    """K eigenpairs of a whitened tensor and the iterations the power method used."""

    eigenvalues: NDArray[np.float64]
    vectors: NDArray[np.float64]  # (K, K), columns u_k
    iterations: int


def tensor_power_method(
    t: NDArray[np.float64],
    k: int,
    *,
    restarts: int = 10,
    max_iter: int = 100,
    tol: float = 1e-8,
    rng: np.random.Generator,
) -> Decomposition:
    """K rank-one components by :func:`power_iteration` and :func:`deflate`.

    ``restarts=1, max_iter=1000, tol=1e-6`` reproduces the authors' single-start variant.
    """
    k = check_int(k, "k", low=1, high=t.shape[0])
    vals, vecs, iters = np.empty(k), np.empty((t.shape[0], k)), 0
    for j, step_rng in enumerate(rng.spawn(k)):
        res = power_iteration(t, restarts=restarts, max_iter=max_iter, tol=tol, rng=step_rng)
        vals[j], vecs[:, j] = res.eigenvalue, res.vector
        iters += res.iterations
        t = deflate(t, res.eigenvalue, res.vector)
    return Decomposition(vals, vecs, iters)


@dataclass(frozen=True, eq=False)
class Recovery:
    """Recovered model parameters.

    Attributes
    ----------
    components : ndarray, shape (D, K)
        â_k as columns: unit norm (MOG) or probability vectors (STM).
    weights : ndarray, shape (K,)
        ŵ_k = 1/λ_k².
    invalid : ndarray of bool, shape (K,)
        STM columns that were all non-positive before clipping: no valid distribution can
        be made from them; they are replaced by the uniform distribution and flagged.
    iterations : int
    """

    components: NDArray[np.float64]
    weights: NDArray[np.float64]
    invalid: NDArray[np.bool_]
    iterations: int


def normalise_components(raw: NDArray[np.float64], *, kind: str) -> tuple[NDArray, NDArray]:
    """Turn raw recovered columns into model components.

    MOG: unit norm. STM: clip at 0 and divide by the sum (Sec. 6.2's post-processing); a
    column with no positive entry has no valid distribution: it becomes the uniform
    distribution and is flagged in the returned boolean mask (never a silent NaN).
    """
    invalid = np.zeros(raw.shape[1], dtype=bool)
    if kind == "mog":
        norms = np.linalg.norm(raw, axis=0)
        return raw / np.where(norms > 0, norms, 1.0), invalid
    comps = np.clip(raw, 0.0, None)
    sums = comps.sum(axis=0)
    invalid = sums <= 0
    comps = np.where(invalid, 1.0 / raw.shape[0], comps / np.where(invalid, 1.0, sums))
    return comps, invalid


def recover(decomposition: Decomposition, u: NDArray, d: NDArray, *, kind: str) -> Recovery:
    """Un-whiten: â_k = λ_k U D^{1/2} u_k and ŵ_k = 1/λ_k², then
    :func:`normalise_components` (Appendix D.3; Anandkumar et al. 2014, Thm. 4.3)."""
    lam = decomposition.eigenvalues
    raw = (u * np.sqrt(d)) @ decomposition.vectors * lam
    weights = np.where(lam > 0, 1.0 / np.maximum(lam, 1e-150) ** 2, 0.0)
    comps, invalid = normalise_components(raw, kind=kind)
    return Recovery(comps, weights, invalid, decomposition.iterations)
