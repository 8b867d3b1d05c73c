"""Helpers shared by the power-method tests (test_iterative.py, test_fedpca.py): an
orthonormalisation that is not numpy's QR, and data with a planted subspace."""

from __future__ import annotations

import numpy as np


def gram_schmidt(y: np.ndarray) -> np.ndarray:
    """Orthonormal columns spanning those of y, by modified Gram–Schmidt (not numpy's QR)."""
    q = np.array(y, dtype=float)
    for j in range(q.shape[1]):
        for i in range(j):
            q[:, j] -= (q[:, i] @ q[:, j]) * q[:, i]
        q[:, j] /= np.linalg.norm(q[:, j])
    return q


def planted_moments(sizes, dim, k, rng, *, spike=6.0):
    """Per-site second moments of data with a planted K-dimensional subspace (‖x‖ ≤ 1),
    and the planted basis."""
    u = np.linalg.qr(rng.standard_normal((dim, k)))[0]
    n = int(np.sum(sizes))
    x = rng.standard_normal((n, k)) * np.linspace(spike, spike / 2, k) @ u.T
    x += 0.3 * rng.standard_normal((n, dim))
    x /= np.max(np.linalg.norm(x, axis=1))
    blocks = np.split(x, np.cumsum(sizes)[:-1])
    return np.stack([b.T @ b / b.shape[0] for b in blocks]), u


# The shared small setting: three unequal sites, D = 12, K = 3, ε = 2 (analytic calibration).
SIZES = np.array([300, 500, 700])
DIM, K = 12, 3


def planted_sites():
    """(moments, planted basis, weights N_s/N, τ_s) of the shared small setting."""
    from dpcore import site_noise_std

    moments, planted = planted_moments(SIZES, DIM, K, np.random.default_rng(7))
    tau = site_noise_std(SIZES, epsilon=2.0, delta=1e-5, calibration="analytic")
    return moments, planted, SIZES / SIZES.sum(), tau
