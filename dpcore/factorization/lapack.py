"""Top-K symmetric eigenpairs with LAPACK's subset solver, outside the GIL.

For K ≪ D the subset driver ``dsyevr`` (MRRR: tridiagonalise, then only the K wanted
eigenvectors) costs half of a full ``syevd`` (measured with one BLAS thread, ms: D = 784,
K = 50: 32 vs 61; K = 100: 44 vs 64; at D = 400, K = 50: 9.6 vs 11.5, K = 100: 15 vs 11;
at D = 200 the full solve always wins). SciPy's wrapper of ``dsyevr`` holds the GIL, so the
sweeps' worker threads would queue behind each other; ctypes releases the GIL for the call,
so here it is called through ctypes in the LAPACK that NumPy itself loaded (found by
threadpoolctl). Where that library has no LAPACKE interface, SciPy's wrapper is used: the
same algorithm, GIL held.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

# (symbol, integer type): NumPy's wheels (scipy-openblas, 64-bit integers), a system OpenBLAS
# or reference LAPACKE built for 64-bit integers, then the common 32-bit build.
_SYMBOLS = (
    ("scipy_LAPACKE_dsyevr64_", ctypes.c_int64),
    ("LAPACKE_dsyevr64_", ctypes.c_int64),
    ("LAPACKE_dsyevr", ctypes.c_int32),
)
_COL_MAJOR = 102

# Subset only where it was measured faster than a full solve: D ≥ 500 and K ≤ D/4.
SUBSET_MIN_DIM = 500


def use_subset(dim: int, k: int) -> bool:
    """Whether the subset solver is the faster one for the top K of D (measured, above)."""
    return dim >= SUBSET_MIN_DIM and 4 * k <= dim


@functools.cache
def _dsyevr() -> tuple[Callable[..., int], type] | None:
    """LAPACKE_dsyevr from the BLAS library NumPy loaded, or None."""
    from threadpoolctl import threadpool_info

    np.linalg.eigh(np.eye(2))  # make sure NumPy's linear algebra (and its BLAS) is loaded
    for pool in threadpool_info():
        if pool.get("internal_api") not in ("openblas", "mkl", "blis", "flexiblas"):
            continue
        try:
            lib = ctypes.CDLL(pool["filepath"])
        except OSError:
            continue
        for name, integer in _SYMBOLS:
            fn = getattr(lib, name, None)
            if fn is None:
                continue
            ptr = ctypes.c_void_p
            fn.restype = integer
            # layout, jobz, range, uplo, n, a, lda, vl, vu, il, iu, abstol, m, w, z, ldz, isuppz
            fn.argtypes = [
                ctypes.c_int, ctypes.c_char, ctypes.c_char, ctypes.c_char,
                integer, ptr, integer,
                ctypes.c_double, ctypes.c_double, integer, integer, ctypes.c_double,
                ctypes.POINTER(integer), ptr, ptr, integer, ptr,
            ]  # fmt: skip
            return fn, integer
    return None


def top_k_subset(
    matrix: NDArray[np.float64], k: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Eigenvalues (decreasing) and eigenvectors of the K largest eigenvalues, by ``dsyevr``.

    Parameters
    ----------
    matrix : ndarray, shape (D, D)
        Symmetric (its upper triangle is read); not modified.
    k : int
        1 ≤ K ≤ D.

    Returns
    -------
    values : ndarray, shape (K,)
    vectors : ndarray, shape (D, K)
        Columns in decreasing eigenvalue order.
    """
    dim = matrix.shape[0]
    found = _dsyevr()
    if found is None:
        from scipy.linalg import eigh

        vals, vecs = eigh(matrix, subset_by_index=[dim - k, dim - 1], driver="evr")
        return vals[::-1], vecs[:, ::-1]
    fn, integer = found
    a = np.array(matrix, dtype=np.float64, order="F", copy=True)  # dsyevr overwrites it
    vals = np.empty(dim)
    vecs = np.empty((dim, k), order="F")
    support = np.empty(2 * k, dtype=np.int64 if integer is ctypes.c_int64 else np.int32)
    found_k = integer(0)
    info = fn(
        _COL_MAJOR, b"V", b"I", b"U", dim, a.ctypes.data, dim,
        0.0, 0.0, dim - k + 1, dim, 0.0,
        ctypes.byref(found_k), vals.ctypes.data, vecs.ctypes.data, dim, support.ctypes.data,
    )  # fmt: skip
    if info != 0 or found_k.value != k:
        raise np.linalg.LinAlgError(f"dsyevr failed (info={info}, found {found_k.value} of {k})")
    return vals[k - 1 :: -1].copy(), vecs[:, ::-1]
