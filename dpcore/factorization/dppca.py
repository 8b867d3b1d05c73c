"""DP-PCA (Liu, Kong, Jain & Oh, NeurIPS 2022): one private pass of minibatch Oja updates.

DP-PCA ("DP-PCA: Statistically optimal and differentially private PCA") reads the
data once, in disjoint minibatches; at step t it releases a private mean of the batch's
gradients x xᵀ w and takes an Oja step w ← (w + η_t g)/‖w + η_t g‖. Every sample enters one
release only, so the steps compose in parallel: each batch's release is (ε, δ)-DP for the
samples of that batch and the whole pass is (ε, δ)-DP (parallel composition: the later
steps see the batch only through earlier outputs).

As this registry runs it (its record ``dp_pca``):

- the minibatches are the sweep's data blocks (one per site, in site order), so the
  gradient mean of batch b at the basis W is A_b W (A_b the block's second moment);
- K > 1 by the subspace (block) form of Oja's step, W ← QR(W + η G) (Liu et al. analyse
  K = 1; Düngler & Sanyal, "An iterative algorithm for differentially private k-PCA with
  adaptive noise", NeurIPS 2025, extend it to K);
- the private mean is the Gaussian mechanism at the data-independent bound: one sample
  changes A_b W by at most ‖ΔA_b‖_F ‖W‖₂ = Δ_b in Frobenius norm (W orthonormal), Δ_b the
  block's second-moment sensitivity under the sweep's neighbouring relation. The paper's
  PrivMean instead adapts its clipping radius to the batch with a private histogram
  (their PrivMean), which needs every sample's gradient; the sweeps carry the blocks'
  second moments only. At ‖x‖₂ ≤ 1 this is a valid but more conservative noise: it gives
  up the adaptivity that makes DP-PCA optimal for sub-Gaussian data far inside the bound
  (docs/baselines.md).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpcore._validation import check_real
from dpcore.factorization.iterative import check_moments, initial_basis, orthonormalise
from dpcore.mechanisms.calibration import CalibrationLike, gaussian_sigmas

DEFAULT_STEP = 1.0  # c of η_t = c/‖G_t‖₂ (:func:`oja_step`); chosen on synthetic data


def block_sigmas(
    sensitivity: ArrayLike,
    *,
    epsilon: float,
    delta: float,
    calibration: CalibrationLike = None,
) -> NDArray[np.float64]:
    """σ_b of each block's release A_b W + N(0, σ_b²): the Gaussian σ of (Δ_b, ε, δ).

    Every block spends the full (ε, δ) on its own samples (parallel composition).
    """
    return gaussian_sigmas(sensitivity, epsilon=epsilon, delta=delta, calibration=calibration)


def oja_step(
    basis: NDArray[np.float64],
    moment: NDArray[np.float64],
    sigma: float,
    scale: float,
    *,
    rng: np.random.Generator,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """One minibatch: the released G = A_b W + N(0, σ²), then W ← QR(W + η G), η = c/‖G‖₂.

    The step is normalised by the released gradient's spectral norm (``scale`` = c): η
    then follows the scale of A without a private estimate of λ₁ (the paper spends part of
    the data on one), and reading the release costs no privacy (post-processing). c = 1
    turns W by at most about one radian per step; c → ∞ is the noisy power method with one
    block per step.
    """
    gradient = moment @ basis + sigma * rng.standard_normal(basis.shape)
    norm = float(np.linalg.norm(gradient, 2))
    if norm == 0.0:  # a zero release (all-zero block, no noise): nothing to learn from it
        return basis, gradient
    return orthonormalise(basis + (scale / norm) * gradient), gradient


def dp_pca(
    moments: ArrayLike,
    k: int,
    *,
    sigmas: ArrayLike,
    scale: float = DEFAULT_STEP,
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    """DP-PCA's single pass over the blocks' second moments (module doc): a D×K basis.

    Parameters
    ----------
    moments : array_like, shape (T, D, D)
        The blocks' second moments A_b, in the order they are read.
    k : int
        Subspace dimension K, 1 ≤ K ≤ D.
    sigmas : array_like, shape (T,)
        Each block's noise std (:func:`block_sigmas`); 0 for a non-private pass.
    scale : float
        c > 0 of the step η_t = c/‖G_t‖₂ (:func:`oja_step`).
    rng : numpy.random.Generator
        W₀ (uniform, as the paper's w₀) from its first child, block b's noise from child b + 1.
    """
    arr, k = check_moments(moments, k, min_sites=1)
    sig = np.asarray(sigmas, dtype=float)
    if sig.shape != (arr.shape[0],) or not np.all(np.isfinite(sig)) or np.any(sig < 0):
        raise ValueError(
            f"sigmas must be {arr.shape[0]} finite values ≥ 0 (one per block); got {sigmas!r}"
        )
    scale = check_real(scale, "scale", low=0.0, low_open=True)
    streams = rng.spawn(arr.shape[0] + 1)
    basis = initial_basis(arr.shape[1], k, rng=streams[0])
    for moment, sigma, stream in zip(arr, sig, streams[1:], strict=True):
        basis, _ = oja_step(basis, moment, float(sigma), scale, rng=stream)
    return basis
