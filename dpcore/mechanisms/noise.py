"""Symmetric Gaussian noise for matrices and 3-tensors, vectorised.

A symmetric order-m array in D dimensions has one free entry per multiset
{i₁ ≤ … ≤ i_m}: C(D+m−1, m) of them. The samplers draw one i.i.d. N(0, τ²) value per
free entry and copy it to every permutation, so the diagonal has variance τ² (not 2τ²) —
the AG algorithm of Dwork et al. (2014) as used by the paper (Sec. 4, Alg. 1 step 5;
Alg. 2 and Appendix E for tensors). The copy is a single fancy-indexing step through an
index map computed in closed form (the lexicographic rank of each sorted index tuple) and
cached up to :data:`CACHED_MAP_ENTRIES`: no Python loop over entries, no sort of tuples.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from dpcore._validation import MAX_MAGNITUDE, RngLike, check_int, check_real, check_rng
from dpcore.resources import MAX_MEMORY


def n_free_entries(dim: int, order: int) -> int:
    """Number of distinct entries C(D+m−1, m) of a symmetric order-m array in D dimensions."""
    return math.comb(dim + order - 1, order)


CACHED_MAP_ENTRIES = 2_000_000  # maps up to 16 MB are kept (D ≤ 1414 for matrices, 125 for
# tensors); larger ones are recomputed (in closed form: a few array operations per entry), so
# a few odd requests cannot pin gigabytes


def symmetric_index_map(dim: int, order: int) -> NDArray[np.intp]:
    """Array of shape (D,)*order mapping each entry to the index of its multiset.

    Free entries are enumerated in lexicographic order of sorted index tuples
    (``itertools.combinations_with_replacement``). The returned array is read-only.
    """
    dim = check_int(dim, "dim", low=1)
    order = check_int(order, "order", low=1, high=3)
    if dim**order <= CACHED_MAP_ENTRIES:
        return _cached_index_map(dim, order)
    return _index_map(dim, order)


@lru_cache(maxsize=32)
def _cached_index_map(dim: int, order: int) -> NDArray[np.intp]:
    return _index_map(dim, order)


def _tetrahedral(n: NDArray[np.intp] | int) -> NDArray[np.intp] | int:
    return n * (n + 1) * (n + 2) // 6  # C(n+2, 3): pairs i ≤ j below n, summed


def _index_map(dim: int, order: int) -> NDArray[np.intp]:
    """The lexicographic rank of each entry's sorted index tuple, in closed form.

    Among sorted tuples over range(D): pairs (i ≤ j) before those starting at i number
    Σ_{a<i} (D − a) = iD − i(i−1)/2, so (i, j) has rank iD − i(i−1)/2 + (j − i). Triples
    (i ≤ j ≤ k) starting below i number Σ_{a<i} C(D−a+1, 2) = C(D+2, 3) − C(D−i+2, 3),
    and within those starting at i, (j, k) ranks as the pair (j − i, k − i) over D − i.
    """
    # broadcasting index vectors, one per axis
    axes = [a.astype(np.intp) for a in np.ogrid[(slice(0, dim),) * order]]
    if order == 1:
        rank = axes[0]
    elif order == 2:  # the sorted pair of each entry: (min, max)
        i, j = np.minimum(*axes), np.maximum(*axes)
        rank = i * dim - i * (i - 1) // 2 + (j - i)
    else:  # the sorted triple: (min, median, max)
        a, b, c = axes
        i = np.minimum(np.minimum(a, b), c)
        k = np.maximum(np.maximum(a, b), c)
        j = a + b + c - i - k
        rest, jj = dim - i, j - i
        rank = (
            _tetrahedral(dim) - _tetrahedral(rest) + jj * rest - jj * (jj - 1) // 2 + (k - j)
        )
    out = np.ascontiguousarray(np.broadcast_to(rank, (dim,) * order), dtype=np.intp)
    out.setflags(write=False)
    return out


def expand_symmetric(free: NDArray[np.float64], dim: int, order: int) -> NDArray[np.float64]:
    """Turn free entries (last axis, length C(D+m−1, m)) into full symmetric arrays.

    Parameters
    ----------
    free : ndarray, shape (..., C(D+m−1, m))
        One value per multiset, in the order of :func:`symmetric_index_map`.
    dim, order : int
        D and m.

    Returns
    -------
    ndarray, shape (..., D, ..., D)
        Symmetric arrays; leading axes of ``free`` are kept (batching).
    """
    expected = n_free_entries(dim, order)
    if free.shape[-1] != expected:
        raise ValueError(
            f"free must have {expected} entries on its last axis for dim={dim}, "
            f"order={order}; got {free.shape[-1]}"
        )
    return free[..., symmetric_index_map(dim, order)]


def symmetric_noise(
    dim: int,
    *,
    order: int,
    scale: float,
    size: tuple[int, ...] = (),
    rng: RngLike = None,
) -> NDArray[np.float64]:
    """Symmetric Gaussian noise: one N(0, scale²) value per multiset, mirrored.

    Parameters
    ----------
    dim : int
        D, must be ≥ 1.
    order : {1, 2, 3}
        1 gives an i.i.d. vector, 2 a symmetric D×D matrix, 3 a symmetric D×D×D tensor.
    scale : float
        Standard deviation τ of every entry (diagonal included), must be in [0, ∞).
    size : tuple of int
        Leading batch shape.
    rng : int, numpy.random.Generator or None
        Seed or generator (SPEC 7).
        Source of randomness.

    Returns
    -------
    ndarray, shape size + (D,)*order

    Examples
    --------
    >>> g = symmetric_noise(3, order=2, scale=1.0, rng=0)
    >>> bool((g == g.T).all())
    True

    References
    ----------
    Imtiaz & Sarwate, Sec. 4 (symmetric G_s with i.i.d. entries); Dwork, Talwar, Thakurta
    and Zhang, "Analyze Gauss", STOC 2014.
    """
    scale = check_real(scale, "scale", low=0.0, high=MAX_MAGNITUDE)
    dim = check_int(dim, "dim", low=1)
    order = check_int(order, "order", low=1, high=3)
    if not isinstance(size, tuple) or not all(isinstance(n, int) and n >= 0 for n in size):
        raise TypeError(f"size must be a tuple of non-negative ints; got {size!r}")
    # the mirrored output, and building the index map (≈ 4·order integers per entry)
    need = 8 * dim**order * (max(1, math.prod(size)) + 4 * order)
    if need > MAX_MEMORY:
        raise ValueError(
            f"symmetric_noise would need {need / 2**30:.1f} GiB; the limit is "
            f"{MAX_MEMORY / 2**30:.0f} GiB (dim {dim}, order {order}, size {size})"
        )
    free = check_rng(rng).standard_normal((*size, n_free_entries(dim, order)))
    free *= scale
    return expand_symmetric(free, dim, order)
