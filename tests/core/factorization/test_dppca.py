"""DP-PCA (Liu, Kong, Jain & Oh 2022) as the registry runs it (issue #52): its noise checked
against its stated (ε, δ) by a calibration written here, its sensitivity by brute force, the
non-private pass against a planted subspace."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

import dpcore
from dpcore.factorization import registry
from dpcore.factorization.dppca import block_sigmas, dp_pca, oja_step
from dpcore.factorization.iterative import initial_basis


def balle_wang_delta(sigma: float, sensitivity: float, epsilon: float) -> float:
    """δ(ε) of N(0, σ²) on a query of L2 sensitivity Δ (Balle & Wang, ICML 2018, Thm. 8)."""
    a, b = sensitivity / (2 * sigma), epsilon * sigma / sensitivity
    return norm.cdf(a - b) - math.exp(epsilon) * norm.cdf(-a - b)


def independent_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """The smallest σ with δ(ε) ≤ δ, by root finding (δ(ε) falls as σ grows)."""
    return brentq(
        lambda s: balle_wang_delta(s, sensitivity, epsilon) - delta, 1e-9, 1e3, xtol=1e-15
    )


@pytest.mark.parametrize(
    ("n", "epsilon", "delta", "neighbouring"),
    [(40, 1.0, 1e-5, "replace"), (200, 0.3, 1e-3, "add-remove"), (1000, 4.0, 1e-6, "replace")],
)
def test_each_release_carries_the_noise_its_epsilon_delta_needs(n, epsilon, delta, neighbouring):
    sens = dpcore.second_moment_sensitivity(n, neighbouring=neighbouring)
    (sigma,) = block_sigmas([sens], epsilon=epsilon, delta=delta)
    expected = independent_sigma(sens, epsilon, delta)
    assert sigma == pytest.approx(expected, rel=1e-6)
    # the release at that σ meets (ε, δ), and 1 % less noise would not: the noise is tight
    assert balle_wang_delta(sigma, sens, epsilon) <= delta * (1 + 1e-6)
    assert balle_wang_delta(0.99 * sigma, sens, epsilon) > delta
    # the noise actually drawn: G − A W over 40 releases of a 50×20 basis (40,000 entries);
    # the sample std's relative standard error is 1/√(2·40,000) = 0.0035, so 5 of them = 0.018
    rng = np.random.default_rng(7)
    basis = initial_basis(50, 20, rng=rng)
    moment = np.diag(np.linspace(0.0, 0.02, 50))
    noise = [oja_step(basis, moment, sigma, 1.0, rng=rng)[1] - moment @ basis for _ in range(40)]
    assert np.std(noise) / expected == pytest.approx(1.0, abs=0.018)


def test_one_sample_moves_a_release_by_at_most_the_sensitivity_given_to_it():
    # ‖(xxᵀ − x'x'ᵀ) W‖_F ≤ ‖xxᵀ − x'x'ᵀ‖_F for orthonormal W: the Frobenius Δ of A_b bounds
    # the release's; brute force over random unit rows, bases and the worst case x ⟂ x'
    rng = np.random.default_rng(3)
    n, worst = 50, 0.0
    for _ in range(2000):
        dim, k = rng.integers(2, 8), 1
        k = int(rng.integers(1, dim + 1))
        w = initial_basis(int(dim), k, rng=rng)
        x, y = (v / np.linalg.norm(v) for v in rng.standard_normal((2, int(dim))))
        worst = max(worst, np.linalg.norm((np.outer(x, x) - np.outer(y, y)) @ w) / n)
        assert np.linalg.norm(np.outer(x, x) @ w) / n <= dpcore.second_moment_sensitivity(n) + 1e-15
    assert worst <= dpcore.second_moment_sensitivity(n, neighbouring="replace") + 1e-15
    e = np.eye(3)  # x ⟂ x' and W spanning both: the replace bound is attained
    attained = np.linalg.norm((np.outer(e[0], e[0]) - np.outer(e[1], e[1])) @ e[:, :2]) / n
    assert attained == pytest.approx(dpcore.second_moment_sensitivity(n, neighbouring="replace"))


def test_without_noise_the_pass_finds_a_planted_subspace():
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.standard_normal((12, 12)))
    a = q @ np.diag([0.4, 0.3, *np.full(10, 0.01)]) @ q.T
    basis = dp_pca(np.stack([a] * 30), 2, sigmas=np.zeros(30), rng=np.random.default_rng(1))
    projector = basis @ basis.T
    np.testing.assert_allclose(projector, q[:, :2] @ q[:, :2].T, atol=1e-6)


def test_same_seed_same_basis_and_bad_inputs_name_the_parameter():
    moments = np.stack([np.eye(4) / 4] * 3)
    one = dp_pca(moments, 2, sigmas=[0.1] * 3, rng=np.random.default_rng(5))
    two = dp_pca(moments, 2, sigmas=[0.1] * 3, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(one, two)
    np.testing.assert_allclose(one.T @ one, np.eye(2), atol=1e-12)
    for bad, name in (([0.1] * 2, "sigmas"), ([-0.1] * 3, "sigmas"), ([np.nan] * 3, "sigmas")):
        with pytest.raises(ValueError, match=name):
            dp_pca(moments, 2, sigmas=bad, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="scale"):
        dp_pca(moments, 2, sigmas=[0.1] * 3, scale=0.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="k"):
        dp_pca(moments, 5, sigmas=[0.1] * 3, rng=np.random.default_rng(0))


def test_the_registry_entry_is_opt_in_appended_and_runs_at_one_site():
    assert registry.names("pca")[-1] == "dp_pca" and "dp_pca" not in registry.defaults("pca")
    common = dict(dim=10, k=2, epsilon=[1e9], runs=2, pool_size=4000, calibration="analytic")
    one = dpcore.pca_sweep(**common, sites=1, n_per_site=500, algorithms=["dp_pca"])
    assert len(one) == 2 and one.captured_energy_ratio.between(0, 1 + 1e-12).all()
    # ε → ∞ over 40 blocks: 40 normalised Oja steps reach the pooled top-K
    many = dpcore.pca_sweep(**common, sites=40, n_per_site=100, algorithms=["dp_pca"])
    assert many.captured_energy_ratio.min() > 0.95
