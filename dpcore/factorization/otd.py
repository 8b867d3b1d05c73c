"""Distributed (differentially private) orthogonal tensor decomposition: capeAGN and baselines.

Every algorithm turns per-site moments into a noisy M̂2 (→ whitening W) and a whitened
K×K×K tensor T̃, then runs the same decomposition and recovery (:mod:`dpcore.factorization.tensor`).

References: Imtiaz & Sarwate, Algorithm 2 (capeAGN), Appendix E Algorithms 3 (AGN) and 4
(AVN); the baselines of Sec. 6.2.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpcore.factorization.models import MixtureModel
from dpcore.factorization.tensor import (
    Recovery,
    multilinear,
    normalise_components,
    recover,
    tensor_power_method_batch,
    whitening,
)
from dpcore.mechanisms.noise import expand_symmetric, n_free_entries
from dpcore.protocol.cape import (
    add_symmetric_noise,
    aggregate_step,
    cape_average,
    conventional_std,
    pooled_plus_noise,
    site_releases,
)
from dpcore.protocol.joint_safe import design_for


@dataclass(frozen=True)
class PowerOptions:
    """Tensor power method settings (defaults: the robust method with restarts)."""

    restarts: int = 10
    max_iter: int = 100
    tol: float = 1e-8


@dataclass(frozen=True, eq=False)
class WhitenedTensor:
    """What the aggregator ends with: the whitening and the whitened tensor."""

    w: NDArray[np.float64]
    u: NDArray[np.float64]
    d: NDArray[np.float64]
    t: NDArray[np.float64]


def _whiten(m2_hat: NDArray[np.float64], m3_hat: NDArray[np.float64], k: int) -> WhitenedTensor:
    w, u, d = whitening(m2_hat, k)
    return WhitenedTensor(w, u, d, multilinear(m3_hat, w))


def decompose_batch(
    whitened: list[WhitenedTensor],
    k: int,
    *,
    kind: str,
    options: PowerOptions,
    rngs: Sequence[np.random.Generator],
) -> list[Recovery]:
    """Tensor power method on every T̃, then un-whitening (:func:`.tensor.recover`).

    The power method runs batched over all tensors (:func:`tensor_power_method_batch`);
    each keeps its own stream and stopping rule, so each result is the one it would get alone.
    """
    if not whitened:
        return []
    decs = tensor_power_method_batch(
        np.stack([wt.t for wt in whitened]),
        k,
        restarts=options.restarts,
        max_iter=options.max_iter,
        tol=options.tol,
        rngs=list(rngs),
    )
    return [recover(dec, wt.u, wt.d, kind=kind) for dec, wt in zip(decs, whitened, strict=True)]


def nonprivate_otd(
    m2: NDArray[np.float64], m3: NDArray[np.float64], k: int, *, weights: NDArray[np.float64]
) -> WhitenedTensor:
    """Pooled moments Σ μ_s M_s, no noise."""
    return _whiten(np.tensordot(weights, m2, axes=1), np.tensordot(weights, m3, axes=1), k)


@dataclass(frozen=True, eq=False)
class CapeTensorRun:
    """The M3 stage of capeAGN, message by message (Alg. 2 steps 8–11)."""

    e: NDArray[np.float64]  # (S, D, D, D) from the noise generator
    f: NDArray[np.float64]  # (S, D, D, D) from the aggregator
    g: NDArray[np.float64]  # (S, D, D, D) each site's own
    messages: NDArray[np.float64]  # (S, K, K, K): M̃3^s = M̂3^s(W, W, W), sent to the aggregator
    t: NDArray[np.float64]  # (K, K, K): Σ μ_s (M̃3^s − F3^s(W, W, W))


def cape_tensor_stage(
    m3: NDArray[np.float64],
    w: NDArray[np.float64],
    *,
    tau_site: NDArray[np.float64],
    weights: NDArray[np.float64],
    design: str = "cape",
    rng: np.random.Generator,
) -> CapeTensorRun:
    """Sites add E3 + F3 + G3 to M3^s, project with W and send K×K×K tensors.

    The aggregator subtracts F3^s(W, W, W) and combines with weights μ_s; since
    Σ μ_s E3^s = 0 and the projection is linear, the result equals
    (Σ μ_s (M3^s + G3^s))(W, W, W) (Appendix C.2).
    """
    made = design_for(design, tau_site, weights=weights)
    e, f, g, released = site_releases(m3, made, symmetric=True, rng=rng)
    messages = multilinear(released, w)
    t = aggregate_step(messages, multilinear(f, w), made.weights)
    return CapeTensorRun(e, f, g, messages, t)


def cape_otd(
    m2: NDArray[np.float64],
    m3: NDArray[np.float64],
    k: int,
    *,
    tau2: NDArray[np.float64],
    tau3: NDArray[np.float64],
    weights: NDArray[np.float64],
    faithful: bool = True,
    design: str = "cape",
    rng: np.random.Generator,
) -> WhitenedTensor:
    """CapeAGN (Algorithm 2): CAPE on M2 → W at the aggregator → CAPE on projected M3.

    ``faithful=False`` draws each stage's aggregate noise directly (std τ_agg), which is
    equal in distribution (see :func:`dpcore.factorization.pca.cape_pca`). ``design``: ``"cape"``
    (the paper's) or ``"joint"`` (joint-view-safe, :func:`dpcore.joint_safe_design`).
    """
    rng2, rng3 = rng.spawn(2)
    design2 = design_for(design, tau2, weights=weights)
    if faithful:
        m2_hat = cape_average(m2, tau2, symmetric=True, design=design2, rng=rng2).estimate
        w, u, d = whitening(m2_hat, k)
        t = cape_tensor_stage(m3, w, tau_site=tau3, weights=weights, design=design, rng=rng3).t
        return WhitenedTensor(w, u, d, t)
    design3 = design_for(design, tau3, weights=weights)
    m2_hat = pooled_plus_noise(m2, weights, design2.tau_agg, rng=rng2)
    m3_hat = pooled_plus_noise(m3, weights, design3.tau_agg, rng=rng3)
    return _whiten(m2_hat, m3_hat, k)


def conv_otd(
    m2: NDArray[np.float64],
    m3: NDArray[np.float64],
    k: int,
    *,
    tau2: NDArray[np.float64],
    tau3: NDArray[np.float64],
    weights: NDArray[np.float64],
    rng: np.random.Generator,
) -> WhitenedTensor:
    """Conventional: every site adds its own AGN noise (full ε₁, ε₂); the aggregator averages.

    Drawn as the aggregate noise, std sqrt(Σ μ_s² τ_s²) per stage.
    """
    rng2, rng3 = rng.spawn(2)
    m2_hat = pooled_plus_noise(m2, weights, conventional_std(tau2, weights), rng=rng2)
    m3_hat = pooled_plus_noise(m3, weights, conventional_std(tau3, weights), rng=rng3)
    return _whiten(m2_hat, m3_hat, k)


def agn_otd(
    m2: NDArray[np.float64],
    m3: NDArray[np.float64],
    k: int,
    *,
    tau2: float,
    tau3: float,
    rng: np.random.Generator,
) -> WhitenedTensor:
    """AGN (Algorithm 3) on one data set: symmetric Gaussian noise on M2 and on M3."""
    rng2, rng3 = rng.spawn(2)
    return _whiten(
        add_symmetric_noise(m2, tau2, rng=rng2), add_symmetric_noise(m3, tau3, rng=rng3), k
    )


def avn_noise(dim: int, beta: float, *, rng: np.random.Generator) -> NDArray[np.float64]:
    """Symmetric tensor from b ∈ R^{D_sym} with density ∝ exp(−β‖b‖₂) (Alg. 4 step 4).

    Direction uniform on the sphere, radius ~ Gamma(D_sym, scale 1/β) (Erlang; mean D_sym/β).
    """
    return expand_symmetric(avn_vector(n_free_entries(dim, 3), beta, rng=rng), dim, 3)


def avn_vector(n: int, beta: float, *, rng: np.random.Generator) -> NDArray[np.float64]:
    """B ∈ R^n with density ∝ exp(−β‖b‖₂): uniform direction times a Gamma(n, 1/β) radius."""
    direction = rng.standard_normal(n)
    direction /= np.linalg.norm(direction)
    return rng.gamma(n, 1.0 / beta) * direction


def avn_otd(
    m2: NDArray[np.float64],
    m3: NDArray[np.float64],
    k: int,
    *,
    tau2: float,
    beta: float,
    rng: np.random.Generator,
) -> WhitenedTensor:
    """AVN (Algorithm 4) on one data set: AG noise on M2, vector noise (pure ε₂) on M3."""
    rng2, rng3 = rng.spawn(2)
    return _whiten(
        add_symmetric_noise(m2, tau2, rng=rng2), m3 + avn_noise(m3.shape[0], beta, rng=rng3), k
    )


def random_components(model: MixtureModel, *, rng: np.random.Generator) -> Recovery:
    """The random-vectors baseline: what knowing nothing gives.

    MOG: unit Gaussian directions; STM: Gaussian vectors clipped at 0 and normalised to sum
    1; weights uniform 1/K.
    """
    comps, invalid = normalise_components(
        rng.standard_normal((model.dim, model.k)), kind=model.kind
    )
    return Recovery(comps, np.full(model.k, 1.0 / model.k), invalid, 0)
