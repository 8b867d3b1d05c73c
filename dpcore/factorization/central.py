"""Central (trusted-curator) PCA baselines: the pooled second moment released once, with noise.

A curator holds every site's data, forms the pooled second-moment matrix A = Σ_s μ_s A_s and
releases it with noise calibrated to one sample's effect on A; one site (S = 1) is allowed.
They are the peers a distributed protocol is measured against, not protocols themselves:

- :func:`central_gaussian_pca`: symmetric Gaussian noise (the AG algorithm of Dwork, Talwar,
  Thakurta & Zhang, STOC 2014, "Analyze Gauss") with the analytic calibration of Balle & Wang
  (ICML 2018, Thm. 8) — (ε, δ)-DP;
- :func:`laplace_covariance_pca`: Laplace noise on the D(D+1)/2 upper-triangular entries of
  A (the Laplace mechanism of Dwork, McSherry, Nissim & Smith, TCC 2006, as the covariance
  perturbation baseline of Jiang, Xie & Zhang, AAAI 2016) — pure ε-DP, δ = 0.

One sample of site s changes A by μ_s·(its change of A_s): the pooled sensitivity is
max_s μ_s Δ_s (L2, from Δ_s of :func:`dpcore.mechanisms.calibration.second_moment_sensitivity`), and
for the Laplace mechanism the L1 norm of the upper triangle of xxᵀ, at most
(‖x‖₁² + ‖x‖₂²)/2 ≤ (D + 1)/2 for ‖x‖₂ ≤ 1, per sample added or removed (twice that for a
replacement).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from dpcore._validation import check_epsilon, check_int, check_real
from dpcore.factorization.metrics import top_k_eigvecs
from dpcore.mechanisms.calibration import NEIGHBOURING, CalibrationLike, gaussian_sigma
from dpcore.protocol.cape import add_symmetric_noise


def pooled(moments: NDArray[np.float64], weights: NDArray[np.float64]) -> NDArray[np.float64]:
    """A = Σ_s μ_s A_s, the curator's pooled second moment."""
    return np.tensordot(np.asarray(weights, dtype=float), moments, axes=1)


def pooled_sensitivity(sensitivity: NDArray[np.float64], weights: NDArray[np.float64]) -> float:
    """max_s μ_s Δ_s: the largest change of A one sample can make (any site).

    Examples
    --------
    >>> pooled_sensitivity(np.array([1 / 100, 1 / 300]), np.array([0.25, 0.75]))
    0.0025
    """
    return float(np.max(np.asarray(weights, dtype=float) * np.asarray(sensitivity, dtype=float)))


def l1_per_l2(dim: int, neighbouring: str) -> float:
    """The upper triangle's L1 bound over the Frobenius bound Δ_s of one sample's change.

    Add-remove: Δ_s = 1/N_s and L1 ≤ (D + 1)/(2 N_s); replace: Δ_s = √2/N_s and
    L1 ≤ (D + 1)/N_s (two samples' triangles).

    Examples
    --------
    >>> l1_per_l2(3, "add-remove"), round(l1_per_l2(3, "replace"), 4)
    (2.0, 2.8284)
    """
    dim = check_int(dim, "dim", low=1)
    if neighbouring not in NEIGHBOURING:
        raise ValueError(f"neighbouring must be one of {list(NEIGHBOURING)}; got {neighbouring!r}")
    half = (dim + 1) / 2
    return half if neighbouring == "add-remove" else 2 * half / math.sqrt(2.0)


def central_gaussian_pca(
    moments: NDArray[np.float64],
    k: int,
    *,
    weights: NDArray[np.float64],
    sensitivity: float,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    calibration: CalibrationLike = None,
) -> NDArray[np.float64]:
    """Top-K of A + G, G ~ sym N(0, σ²), σ the Gaussian σ of (Δ, ε, δ) by ``calibration``.

    ``sensitivity`` is the pooled Δ (:func:`pooled_sensitivity`); (ε, δ)-DP for the curator's
    one release (the AG algorithm of Dwork et al. 2014). ``calibration`` is the sweep's
    (:class:`dpcore.Calibration`, default analytic: Balle & Wang 2018, Thm. 8), so that the
    curator and CAPE are compared at one calibration.
    """
    sigma = gaussian_sigma(sensitivity, epsilon=epsilon, delta=delta, calibration=calibration)
    return top_k_eigvecs(add_symmetric_noise(pooled(moments, weights), sigma, rng=rng), k)


def laplace_noise(dim: int, scale: float, rng: np.random.Generator) -> NDArray[np.float64]:
    """Symmetric D×D noise: i.i.d. Laplace(0, scale) upper triangle, mirrored below.

    The entries are drawn row by row (``np.triu_indices`` order).
    """
    rows, cols = np.triu_indices(dim)
    noise = np.zeros((dim, dim))
    noise[rows, cols] = rng.laplace(0.0, scale, size=rows.size)
    noise[cols, rows] = noise[rows, cols]
    return noise


def laplace_covariance_pca(
    moments: NDArray[np.float64],
    k: int,
    *,
    weights: NDArray[np.float64],
    l1_sensitivity: float,
    epsilon: float,
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    """Top-K of A + L, L's upper triangle i.i.d. Laplace(0, Δ₁/ε): pure ε-DP (δ = 0).

    ``l1_sensitivity`` is Δ₁, the L1 sensitivity of A's upper triangle
    (:func:`pooled_sensitivity` × :func:`l1_per_l2`). Any top-K of the released matrix is
    post-processing (Dwork, McSherry, Nissim & Smith 2006).
    """
    l1 = check_real(l1_sensitivity, "l1_sensitivity", low=0.0, low_open=True)
    epsilon = check_epsilon(epsilon)
    a = pooled(moments, weights)
    if math.isinf(epsilon):
        return top_k_eigvecs(a, k)
    return top_k_eigvecs(a + laplace_noise(a.shape[0], l1 / epsilon, rng), k)
