"""The central peers in the registry (issue #39, item 4): a trusted curator's analytic-Gaussian
release (S = 1 allowed) and the pure-ε Laplace covariance mechanism, each checked against an
independent implementation written here."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

import dpcore
from dpcore.factorization import registry
from dpcore.factorization.registry import PcaInputs, SitePrivacy

pytestmark = pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")


def _inputs(rng, *, dim=6, sites=3, n=(200, 300, 500), epsilon=0.7, delta=1e-3,
            neighbouring="add-remove", calibration="analytic"):  # fmt: skip
    """Sites' second moments of unit-ball samples, proportional weights, their Δ_s."""
    moments, sizes = [], np.array(n[:sites])
    for n_s in sizes:
        x = rng.normal(size=(n_s, dim))
        x /= np.maximum(1.0, np.linalg.norm(x, axis=1))[:, None]
        moments.append(x.T @ x / n_s)
    weights = sizes / sizes.sum()
    scale = 1.0 if neighbouring == "add-remove" else math.sqrt(2)
    privacy = SitePrivacy(scale / sizes, epsilon, delta, calibration, 32, None, neighbouring)
    tau = np.ones(sites)
    inputs = PcaInputs(
        moments=np.array(moments),
        k=2,
        tau=tau,
        weights=weights,
        rank=4,
        faithful=False,
        privacy=privacy,
    )
    return inputs, sizes


def _projector(basis):
    return basis @ basis.T


# --- an independent analytic Gaussian (Balle & Wang 2018, Thm. 8), by root finding ---------


def _analytic_sigma(delta_2: float, epsilon: float, delta: float) -> float:
    """The smallest σ with Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ) ≤ δ (the exact condition)."""

    def excess(sigma):
        a, b = delta_2 / (2 * sigma), epsilon * sigma / delta_2
        return norm.cdf(a - b) - math.exp(epsilon) * norm.cdf(-a - b) - delta

    return brentq(excess, 1e-12 * delta_2, 1e6 * delta_2, xtol=1e-15, rtol=1e-13)


@pytest.mark.parametrize("calibration", ["analytic", "classic"])
def test_the_central_gaussian_release_is_the_sweeps_sigma_of_the_pooled_sensitivity(calibration):
    rng = np.random.default_rng(0)
    x, sizes = _inputs(rng, calibration=calibration)
    # one sample of site s moves A = Σ μ_s A_s by μ_s·(1/N_s) = 1/N: the pooled Δ
    pooled_delta = dpcore.factorization.central.pooled_sensitivity(x.privacy.sensitivity, x.weights)
    assert pooled_delta == pytest.approx(1 / sizes.sum(), rel=1e-12)
    # the sweep's calibration (issue #51: it was analytic inside a classic sweep)
    if calibration == "analytic":
        sigma = _analytic_sigma(pooled_delta, 0.7, 1e-3)
    else:  # the paper's formula (Sec. 2), σ = Δ sqrt(2 ln(1.25/δ))/ε
        sigma = pooled_delta * math.sqrt(2 * math.log(1.25 / 1e-3)) / 0.7
    # The release's noise, drawn the way the test reads the AG algorithm: the same stream
    # gives top-K of A + sym N(0, σ²) with σ found here independently
    method = registry.pca_method("central_gauss")
    got = method.run(x, np.random.default_rng(5))
    a = np.tensordot(x.weights, x.moments, axes=1)
    g = dpcore.symmetric_noise(a.shape[0], order=2, scale=1.0, rng=np.random.default_rng(5))
    vals, vecs = np.linalg.eigh(a + sigma * g)
    expected = vecs[:, np.argsort(vals)[::-1][:2]]
    np.testing.assert_allclose(_projector(got), _projector(expected), atol=1e-9)


def test_the_central_gaussian_noise_has_the_analytic_spread():
    # statistical check of the scale, independent of the stream order: with A = 0 the
    # release is the noise; an off-diagonal entry's sample std over n draws has relative
    # standard error 1/√(2n) ≈ 0.7 % at n = 10,000: 5 standard errors = 3.5 %
    from dpcore.protocol.cape import add_symmetric_noise

    sigma = _analytic_sigma(1e-3, 0.5, 1e-5)
    rng = np.random.default_rng(1)
    got = dpcore.gaussian_sigma(1e-3, epsilon=0.5, delta=1e-5, calibration="analytic")
    assert got == pytest.approx(sigma, rel=1e-6)
    draws = np.array([add_symmetric_noise(np.zeros((3, 3)), got, rng=rng)[0, 1]
                      for _ in range(10_000)])  # fmt: skip
    assert np.std(draws) == pytest.approx(sigma, rel=5 / math.sqrt(2 * 10_000))


# --- an independent Laplace covariance mechanism -------------------------------------------


def _laplace_release(a: np.ndarray, b: float, rng: np.random.Generator) -> np.ndarray:
    """A + L, L symmetric with i.i.d. Laplace(0, b) on and above the diagonal, row by row."""
    d = a.shape[0]
    out = a.copy()
    for i in range(d):
        for j in range(i, d):
            z = rng.laplace(0.0, b)
            out[i, j] += z
            if i != j:
                out[j, i] += z
    return out


@pytest.mark.parametrize("neighbouring", ["add-remove", "replace"])
def test_the_laplace_entry_is_the_laplace_mechanism_with_the_l1_sensitivity(neighbouring):
    rng = np.random.default_rng(2)
    x, sizes = _inputs(rng, neighbouring=neighbouring)
    d, n = x.moments.shape[1], sizes.sum()
    # L1 of one sample's change of triu(A): (‖x‖₁² + ‖x‖₂²)/2 ≤ (D + 1)/2 per sample added
    # or removed, twice that for a replacement; scaled by μ_s/N_s = 1/N
    l1 = (d + 1) / 2 / n * (1 if neighbouring == "add-remove" else 2)
    got = registry.pca_method("central_laplace").run(x, np.random.default_rng(9))
    a = np.tensordot(x.weights, x.moments, axes=1)
    released = _laplace_release(a, l1 / 0.7, np.random.default_rng(9))
    vals, vecs = np.linalg.eigh(released)
    expected = vecs[:, np.argsort(vals)[::-1][:2]]
    np.testing.assert_allclose(_projector(got), _projector(expected), atol=1e-9)


def test_the_laplace_l1_bound_is_attained_and_never_passed():
    # brute force over unit-ball samples: the upper triangle's L1 norm of xxᵀ never passes
    # (D + 1)/2, and x = (1, …, 1)/√D attains it: the privacy loss of one added sample,
    # ‖triu(xxᵀ)‖₁/(N·b) with b = Δ₁/ε, is at most ε and reaches it
    d = 5
    rng = np.random.default_rng(3)
    bound = dpcore.factorization.central.l1_per_l2(d, "add-remove")  # × Δ_s = 1/N_s
    xs = rng.normal(size=(20_000, d))
    xs /= np.linalg.norm(xs, axis=1)[:, None] * rng.uniform(1, 2, size=(20_000, 1))
    rows, cols = np.triu_indices(d)
    l1 = np.abs(xs[:, rows] * xs[:, cols]).sum(axis=1)
    assert l1.max() <= bound + 1e-12
    flat = np.full(d, 1 / math.sqrt(d))
    assert np.abs(np.outer(flat, flat)[rows, cols]).sum() == pytest.approx(bound, rel=1e-12)


def test_central_entries_run_with_one_site_and_the_protocols_do_not():
    frame = dpcore.pca_sweep(
        epsilon=[0.5, 5.0], sites=1, n_per_site=2000, dim=8, k=2, pool_size=3000, runs=2,
        algorithms=["nonprivate", "central_gauss", "central_laplace", "local"],
    )  # fmt: skip
    assert set(frame.sites) == {1} and frame.captured_energy_ratio.between(0, 1 + 1e-12).all()
    means = frame.groupby(["algorithm", "epsilon"]).captured_energy_ratio.mean()
    assert means["central_gauss", 5.0] > means["central_gauss", 0.5]  # less noise, better
    with pytest.raises(ValueError, match=r"sites must be at least 2 for \['cape'\]; got 1"):
        dpcore.pca_sweep(epsilon=1.0, sites=1, algorithms=["cape", "central_gauss"])
    with pytest.raises(ValueError, match="sites must be at least 2"):
        dpcore.otd_sweep(epsilon=1.0, sites=1)
    # opt-in: no default frame moves
    assert not {"central_gauss", "central_laplace"} & set(registry.defaults("pca"))
