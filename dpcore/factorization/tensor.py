"""Orthogonal tensor decomposition: whitening, the tensor power method, recovery.

References: Imtiaz & Sarwate, Sec. 5 and Appendix D.3; Anandkumar, Ge, Hsu, Kakade and
Telgarsky, "Tensor decompositions for learning latent variable models", JMLR 2014,
Algorithm 1 (robust tensor power method).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpcore._validation import check_int, check_real
from dpcore.factorization.metrics import top_k_eigh


def whitening(
    m2: NDArray[np.float64], k: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
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
    out: NDArray[np.float64] = np.einsum(
        "...ijk,ia,jb,kc->...abc", tensor, w, w, w, optimize="greedy"
    )
    return out


def _apply(t: NDArray[np.float64], u: NDArray[np.float64]) -> NDArray[np.float64]:
    """T_b(I, u, u) for every tensor T_b (shape (B, K, K, K)) and column u of u_b (B, K, L).

    One batched matrix product of T unfolded to K×K² with the columns u⊗u: the power method
    calls this thousands of times on tiny tensors, where ``einsum``'s per-call cost
    dominated.
    """
    b, k, _ = u.shape
    pairs = (u[:, :, None, :] * u[:, None, :, :]).reshape(b, k * k, u.shape[2])
    return t.reshape(b, k, k * k) @ pairs


def _column_norms(x: NDArray[np.float64]) -> NDArray[np.float64]:
    norms: NDArray[np.float64] = np.sqrt(np.sum(x * x, axis=-2))
    return norms


def _check_power_options(restarts: int, max_iter: int, tol: float) -> tuple[int, int, float]:
    return (
        check_int(restarts, "restarts", low=1),
        check_int(max_iter, "max_iter", low=1),
        check_real(tol, "tol", low=0.0, low_open=True),
    )


def _power_batch(
    t: NDArray[np.float64], options: tuple[int, int, float], rngs: Sequence[np.random.Generator]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int_]]:
    """Largest robust eigenpair of every symmetric tensor of a batch (B, K, K, K).

    Runs ``restarts`` random starts (uniform on the sphere) in parallel for up to
    ``max_iter`` steps u ← T(I,u,u)/‖T(I,u,u)‖, keeps the start with the largest T(u,u,u),
    and polishes it with up to ``max_iter`` more steps (Anandkumar et al. 2014, Alg. 1).
    Tensor b draws its starts from ``rngs[b]`` and stops once all its starts move by less
    than ``tol``, so its result is the one it would get alone.

    Returns
    -------
    eigenvalues, vectors, iterations : ndarray, shapes (B,), (B, K), (B,)
        λ = T(u,u,u) ≥ 0 (u is sign-flipped if needed) and the iterations used.
    """
    restarts, max_iter, tol = options
    k = t.shape[1]
    u = np.stack([r.standard_normal((k, restarts)) for r in rngs])
    u /= _column_norms(u)[:, None, :]
    u, used = _iterate(t, u, max_iter, tol)
    values = np.sum(_apply(t, u) * u, axis=1)
    best = np.take_along_axis(u, np.argmax(values, axis=1)[:, None, None], axis=2)
    best, more = _iterate(t, best, max_iter, tol)
    lam = np.sum(_apply(t, best) * best, axis=1)[:, 0]
    vec = best[:, :, 0] * np.where(lam < 0, -1.0, 1.0)[:, None]
    # T(I,u,u) is even in u: −u is as good a fixed point, with −λ
    return np.abs(lam), vec, used + more


def _iterate(
    t: NDArray[np.float64], u: NDArray[np.float64], max_iter: int, tol: float
) -> tuple[NDArray[np.float64], NDArray[np.int_]]:
    """Power steps for a batch; tensor b stops once all its columns move by < tol."""
    u = u.copy()
    used = np.full(t.shape[0], max_iter)
    active = np.arange(t.shape[0])
    t_act, u_act = t, u
    for it in range(1, max_iter + 1):
        nxt = _apply(t_act, u_act)
        norms = _column_norms(nxt)[:, None, :]
        nxt = nxt / np.where(norms > 0, norms, 1.0)
        # distance up to sign, since ±u are the same direction
        moved = np.minimum(_column_norms(nxt - u_act), _column_norms(nxt + u_act))
        u_act = nxt
        done = np.all(moved < tol, axis=1)
        if done.any():
            u[active] = u_act
            used[active[done]] = it
            active, keep = active[~done], ~done
            if active.size == 0:
                return u, used
            t_act, u_act = t_act[keep], u_act[keep]
    u[active] = u_act
    return u, used


def deflate(
    t: NDArray[np.float64], eigenvalues: NDArray[np.float64], vectors: NDArray[np.float64]
) -> NDArray[np.float64]:
    """T_b − λ_b u_b⊗u_b⊗u_b for a batch: t (B, K, K, K), eigenvalues (B,), vectors (B, K)."""
    cubes: NDArray[np.float64] = np.einsum("bi,bj,bk->bijk", vectors, vectors, vectors)
    return t - eigenvalues[:, None, None, None] * cubes


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
    """K rank-one components by the robust power method and :func:`deflate`.

    ``restarts=1, max_iter=1000, tol=1e-6`` reproduces the authors' single-start variant.
    """
    return tensor_power_method_batch(
        t[None], k, restarts=restarts, max_iter=max_iter, tol=tol, rngs=[rng]
    )[0]


def tensor_power_method_batch(
    tensors: NDArray[np.float64],
    k: int,
    *,
    restarts: int = 10,
    max_iter: int = 100,
    tol: float = 1e-8,
    rngs: list[np.random.Generator],
) -> list[Decomposition]:
    """:func:`tensor_power_method` on a batch of tensors (B, K', K', K') at once.

    Each tensor uses its own stream ``rngs[b]`` and its own stopping rule, so its
    decomposition is the one :func:`tensor_power_method` gives it alone; batching only
    removes the per-step Python overhead (the tensors are tiny: K ≤ 10 in the paper).
    """
    options = _check_power_options(restarts, max_iter, tol)
    if tensors.ndim != 4 or len(rngs) != tensors.shape[0]:
        raise ValueError(
            f"tensors must have shape (B, K, K, K) with one rng each; got {tensors.shape} "
            f"and {len(rngs)} rngs"
        )
    k = check_int(k, "k", low=1, high=tensors.shape[1])
    batch = tensors.shape[0]
    vals, vecs = np.empty((batch, k)), np.empty((batch, tensors.shape[1], k))
    iters = np.zeros(batch, dtype=int)
    step_rngs = [r.spawn(k) for r in rngs]
    t = np.array(tensors, dtype=float)
    for j in range(k):
        lam, vec, used = _power_batch(t, options, [steps[j] for steps in step_rngs])
        vals[:, j], vecs[:, :, j] = lam, vec
        iters += used
        t = deflate(t, lam, vec)
    return [Decomposition(vals[b], vecs[b], int(iters[b])) for b in range(batch)]


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


def normalise_components(
    raw: NDArray[np.float64], *, kind: str
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
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


def recover(
    decomposition: Decomposition,
    u: NDArray[np.float64],
    d: NDArray[np.float64],
    *,
    kind: str,
) -> Recovery:
    """Un-whiten the decomposition into components and weights.

    â_k = λ_k U D^{1/2} u_k and ŵ_k = 1/λ_k², then :func:`normalise_components`
    (Appendix D.3; Anandkumar et al. 2014, Thm. 4.3).
    """
    lam = decomposition.eigenvalues
    raw = (u * np.sqrt(d)) @ decomposition.vectors * lam
    weights = np.where(lam > 0, 1.0 / np.maximum(lam, 1e-150) ** 2, 0.0)
    comps, invalid = normalise_components(raw, kind=kind)
    return Recovery(comps, weights, invalid, decomposition.iterations)
