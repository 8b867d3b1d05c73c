"""The GIL-free subset eigensolver agrees with the full solve."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.factorization import lapack
from dpcore.factorization.metrics import top_k_eigh


def _noisy_moment(dim: int, seed: int) -> np.ndarray:
    """A PSD matrix plus symmetric noise: indefinite, as DPdisPCA's sites see it."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(3 * dim, dim)) * np.linspace(2.0, 0.1, dim)
    noise = rng.normal(scale=0.3, size=(dim, dim))
    return x.T @ x / (3 * dim) + (noise + noise.T) / 2


@pytest.mark.parametrize("dim, k", [(520, 50), (520, 130), (40, 7)])
def test_subset_solver_gives_the_top_k_of_the_full_solve(dim, k):
    matrix = _noisy_moment(dim, seed=dim)
    vals, vecs = lapack.top_k_subset(matrix, k)
    full_vals, full_vecs = np.linalg.eigh(matrix)
    scale = np.abs(full_vals).max()
    # backward-stable solvers: eigenvalues agree to a few ulps of ‖A‖
    np.testing.assert_allclose(vals, full_vals[::-1][:k], rtol=0, atol=1e-12 * scale)
    assert np.all(np.diff(vals) <= 0)
    # orthonormal, and A v = λ v to rounding
    np.testing.assert_allclose(vecs.T @ vecs, np.eye(k), atol=1e-12)
    np.testing.assert_allclose(matrix @ vecs, vecs * vals, atol=1e-11 * scale)
    # the same subspace as the full solve's top K (the gap below λ_K is not tiny here)
    overlap = np.linalg.svd(vecs.T @ full_vecs[:, ::-1][:, :k], compute_uv=False)
    np.testing.assert_allclose(overlap, 1.0, atol=1e-8)
    np.testing.assert_array_equal(matrix, _noisy_moment(dim, seed=dim))  # input untouched


def test_subset_solver_is_found_in_numpys_lapack_and_releases_the_gil():
    # ctypes' CDLL functions drop the GIL for the call: found here means threads can overlap
    found = lapack._dsyevr()
    assert found is not None, "NumPy's BLAS has no LAPACKE_dsyevr: the SciPy fallback holds the GIL"


def test_scipy_fallback_gives_the_same_pairs(monkeypatch):
    matrix = _noisy_moment(80, seed=1)
    vals, vecs = lapack.top_k_subset(matrix, 10)
    monkeypatch.setattr(lapack, "_dsyevr", lambda: None)
    fb_vals, fb_vecs = lapack.top_k_subset(matrix, 10)
    np.testing.assert_allclose(fb_vals, vals, atol=1e-12)
    np.testing.assert_allclose(np.abs(fb_vecs.T @ vecs), np.eye(10), atol=1e-9)


def test_solver_choice_depends_only_on_the_shape():
    assert lapack.use_subset(784, 100) and lapack.use_subset(784, 50)
    assert not lapack.use_subset(200, 50)  # the full solve is faster there (measured)
    assert not lapack.use_subset(784, 400)
    vals, vecs = top_k_eigh(_noisy_moment(784, seed=2), 60)
    assert vals.shape == (60,) and vecs.shape == (784, 60)
