"""One small, real run of CAPE to step through message by message (Algorithm 1 / Alg. 5).

:func:`protocol_demo` draws S private values (a scalar mean or a 2×2 second-moment matrix
per site), runs :func:`dpcore.cape_average` on them and returns the run together with the
aggregator's intermediate sums, so a stepper can show every number of that one draw.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpcore._validation import check_choice, check_delta, check_epsilon, check_int
from dpcore.mechanisms.calibration import CalibrationLike, gaussian_sigmas
from dpcore.protocol.cape import AveragingRun, cape_average

VALUE_KINDS = ("scalar", "2x2")


@dataclass(frozen=True, eq=False)
class ProtocolDemo:
    """A CAPE run and the aggregator's arithmetic on it.

    Attributes
    ----------
    run : AveragingRun
        The faithful run (its ``messages`` are the protocol's messages).
    n_per_site : int
        N_s, the samples behind each site's value (sensitivity 1/N_s).
    unmasked : ndarray, shape (S, ...)
        Â_s − F_s = a_s + E_s + G_s: each release after the aggregator removes its own F_s.
    value_sum, e_sum, g_sum : ndarray, shape (...)
        Σ μ_s a_s (the pooled, non-private answer), Σ μ_s E_s (zero to rounding) and
        Σ μ_s G_s (the only noise left); ``run.estimate`` is their sum up to rounding.
    """

    run: AveragingRun
    n_per_site: int
    unmasked: NDArray[np.float64]
    value_sum: NDArray[np.float64]
    e_sum: NDArray[np.float64]
    g_sum: NDArray[np.float64]


def _site_values(
    kind: str, sites: int, n_per_site: int, rng: np.random.Generator
) -> NDArray[np.float64]:
    """Each site's statistic from N_s private samples.

    A mean of values in [0, 1], or the second-moment matrix (1/N_s) X_s X_sᵀ of 2-d samples
    in the unit disc (Sec. 4).
    """
    if kind == "scalar":  # each site its own Beta population, so the values differ
        shape = rng.uniform(0.5, 4.0, size=(sites, 2, 1))
        means: NDArray[np.float64] = rng.beta(
            shape[:, 0], shape[:, 1], size=(sites, n_per_site)
        ).mean(axis=1)
        return means
    angle = rng.uniform(0.0, np.pi, size=(sites, 1))  # each site has its own main direction
    t = rng.standard_normal((sites, n_per_site))
    s = 0.3 * rng.standard_normal((sites, n_per_site))
    x = np.stack([t * np.cos(angle) - s * np.sin(angle), t * np.sin(angle) + s * np.cos(angle)])
    x = x / np.maximum(1.0, np.linalg.norm(x, axis=0))  # into the unit disc: Δ = 1/N_s
    second: NDArray[np.float64] = np.einsum("isn,jsn->sij", x, x) / n_per_site
    return second


def protocol_demo(
    *,
    sites: int,
    kind: str = "scalar",
    epsilon: float = 0.5,
    delta: float = 0.01,
    n_per_site: int = 50,
    calibration: CalibrationLike = None,
    seed: int = 0,
) -> ProtocolDemo:
    """Run CAPE once on S small private values and keep every intermediate number.

    Parameters
    ----------
    sites : int
        S, in [2, 10].
    kind : {"scalar", "2x2"}
        Each site's value: a mean of N_s values in [0, 1] (sensitivity 1/N_s, Sec. 2) or a
        2×2 second-moment matrix of N_s samples in the unit disc (symmetric noise, Sec. 4).
    epsilon, delta : float
        Every site's privacy: ε in (0, ∞], δ in (0, 1).
    n_per_site : int
        N_s in [1, 10⁶], equal at every site, so the weights are μ_s = 1/S and eq. (2) holds.
    calibration : Calibration or {"analytic", "classic"}, optional
        How τ_s is calibrated (:func:`dpcore.gaussian_sigma`).
    seed : int
        ≥ 0. ``SeedSequence(seed)`` is spawned once for the data and once for the protocol,
        so the same seed gives the same values and the same noise.

    Returns
    -------
    ProtocolDemo

    References
    ----------
    Imtiaz & Sarwate, Algorithm 1 (steps 1–8) and Algorithm 5; eq. (2).

    Examples
    --------
    >>> d = protocol_demo(sites=4, seed=1)
    >>> bool(abs(d.e_sum) < 1e-12), bool(np.isclose(d.run.estimate, d.value_sum + d.g_sum))
    (True, True)
    """
    sites = check_int(sites, "sites", low=2, high=10)
    kind = check_choice(kind, "kind", VALUE_KINDS)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    n_per_site = check_int(n_per_site, "n_per_site", low=1, high=10**6)
    seed = check_int(seed, "seed", low=0, high=2**63 - 1)
    data_rng, noise_rng = np.random.default_rng(seed).spawn(2)
    values = _site_values(kind, sites, n_per_site, data_rng)
    tau = gaussian_sigmas(
        np.full(sites, 1.0 / n_per_site), epsilon=epsilon, delta=delta, calibration=calibration
    )
    run = cape_average(values, tau, symmetric=kind == "2x2", rng=noise_rng)
    mu = run.weights
    return ProtocolDemo(
        run=run,
        n_per_site=n_per_site,
        unmasked=run.released - run.f,
        value_sum=np.tensordot(mu, run.values, axes=1),
        e_sum=np.tensordot(mu, run.e, axes=1),
        g_sum=np.tensordot(mu, run.g, axes=1),
    )
