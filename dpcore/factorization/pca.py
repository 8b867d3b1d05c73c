"""Distributed (differentially private) PCA: capePCA and its baselines.

Every algorithm takes the sites' second-moment matrices A_s (shape (S, D, D)), the
per-site noise std τ_s and the aggregator's weights μ_s, and returns an orthonormal D×K
basis. Top-K is by signed eigenvalue (:func:`dpcore.factorization.metrics.top_k_eigvecs`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from dpcore.factorization.metrics import top_k_eigh, top_k_eigvecs
from dpcore.protocol.cape import (
    add_symmetric_noise,
    cape_average,
    conventional_average,
    conventional_std,
    pooled_plus_noise,
)
from dpcore.protocol.joint_safe import design_for


def nonprivate_pca(
    moments: NDArray[np.float64], k: int, *, weights: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Top-K subspace of the pooled second moment Σ μ_s A_s (no privacy)."""
    return top_k_eigvecs(np.tensordot(weights, moments, axes=1), k)


def cape_pca(
    moments: NDArray[np.float64],
    k: int,
    *,
    tau_site: NDArray[np.float64],
    weights: NDArray[np.float64],
    faithful: bool = True,
    design: str = "cape",
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    """CapePCA (Algorithm 1): CAPE-average the A_s, then take the top-K eigenvectors.

    Parameters
    ----------
    design : {"cape", "joint"}
        The noise design (:func:`dpcore.protocol.joint_safe.design_for`): the paper's, or the one
        whose aggregator's joint view of all releases also meets every site's (ε_s, δ_s).
    faithful : bool
        ``True`` runs the protocol message by message (:func:`dpcore.cape_average`).
        ``False`` draws the aggregate noise Σ μ_s G_s directly as one symmetric matrix with
        std τ_agg: identical in distribution, because the E_s cancel exactly, the F_s are
        subtracted, and a weighted sum of independent Gaussians is Gaussian with variance
        Σ μ_s² τ_gs² (tested in ``tests/core/factorization/test_pca.py``).

    References
    ----------
    Imtiaz & Sarwate, Algorithm 1 and Appendix C.1 (Â = (1/S) Σ (A_s + G_s)).
    """
    made = design_for(design, tau_site, weights=weights)
    if faithful:
        run = cape_average(moments, tau_site, symmetric=True, design=made, rng=rng)
        est = run.estimate
    else:
        est = pooled_plus_noise(moments, weights, made.tau_agg, rng=rng)
    return top_k_eigvecs(est, k)


def conv_pca(
    moments: NDArray[np.float64],
    k: int,
    *,
    tau_site: NDArray[np.float64],
    weights: NDArray[np.float64],
    faithful: bool = True,
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    """Conventional distributed PCA: every site releases A_s + G_s with its full (ε, δ).

    ``faithful=False`` draws the aggregate noise with std sqrt(Σ μ_s² τ_s²) directly.

    References
    ----------
    Imtiaz & Sarwate, Sec. 6.1 ("conv"); Imtiaz & Sarwate 2018 (DPdisPCA with full Â_s).
    """
    if faithful:
        est = conventional_average(
            moments, tau_site, weights=weights, symmetric=True, rng=rng
        ).estimate
    else:
        est = pooled_plus_noise(moments, weights, conventional_std(tau_site, weights), rng=rng)
    return top_k_eigvecs(est, k)


def local_pca(
    moment: NDArray[np.float64], k: int, *, tau: float, rng: np.random.Generator
) -> NDArray[np.float64]:
    """One site alone: top-K of A_s + G_s with G_s ~ sym N(0, τ_s²) (AG, Dwork et al. 2014)."""
    return top_k_eigvecs(add_symmetric_noise(moment, tau, rng=rng), k)


def dpdis_pca(
    moments: NDArray[np.float64],
    k: int,
    *,
    tau_site: NDArray[np.float64],
    weights: NDArray[np.float64],
    rank: int,
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    """DPdisPCA (Imtiaz & Sarwate 2018): sites send partial square roots P_s, not Â_s.

    Each site computes Â_s = A_s + G_s, keeps its top-R eigenpairs and sends
    P_s = U_R Λ_R^{1/2}; the aggregator returns the top-K of Σ μ_s P_s P_sᵀ.

    Notes
    -----
    The authors rank by |λ| (SVD); we rank by signed λ and clip negative eigenvalues at 0
    before the square root (a negative one only appears when noise dominates).
    """
    site_rngs = rng.spawn(moments.shape[0])
    agg = np.zeros(moments.shape[1:])
    for s, (a_s, tau, w) in enumerate(zip(moments, tau_site, weights, strict=True)):
        vals, vecs = top_k_eigh(add_symmetric_noise(a_s, tau, rng=site_rngs[s]), rank)
        p_s = vecs * np.sqrt(np.clip(vals, 0.0, None))
        agg += w * (p_s @ p_s.T)
    return top_k_eigvecs(agg, k)
