"""The reproduction of Grammenos et al.'s utility-loss figure, panel (b) (MOD-SuLQ,
non-symmetric mask): the noise level, the two ends of the ε axis, and the ordering by α."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import gammaln

from dpcore.experiments.grammenos import (
    DIM,
    compare,
    curve_p_value,
    figure_b,
    mod_sulq_std,
    per_data_set,
    power_law_data,
    tail_probabilities,
    utility_loss,
)


def test_mod_sulq_std_is_the_papers_beta():
    d, n, eps, delta = 20, 5000, 1.5, 0.05
    # Chaudhuri, Sarwate & Sinha 2013, Alg. 2, as mod_sulq_variance.m writes it
    beta = (d + 1) / (n * eps) * math.sqrt(
        2 * math.log((d**2 + d) / (delta * 2 * math.sqrt(2 * math.pi)))
    ) + 1 / (n * math.sqrt(eps))
    assert mod_sulq_std(d, n, eps, delta) == pytest.approx(beta, rel=1e-14)
    with pytest.raises(ValueError, match="epsilon"):
        mod_sulq_std(d, n, 0.0, delta)


def test_data_columns_have_norm_at_most_one_and_the_spectrum_decays():
    y = power_law_data(DIM, 4000, 1.0, rng=np.random.default_rng(0))
    assert np.max(np.linalg.norm(y, axis=0)) == pytest.approx(1.0, rel=1e-12)
    lam = np.linalg.eigvalsh(y @ y.T)[::-1]
    # σ_k ∝ k^(−1): λ₁/λ₂ ≈ 4 up to sampling error (n = 4000: a few per cent)
    assert 3.5 < lam[0] / lam[1] < 4.5


def test_the_two_ends_of_the_epsilon_axis():
    y = power_law_data(DIM, 5000, 1.0, rng=np.random.default_rng(1))
    out = utility_loss(y, [1e-4, 1e4], delta=0.05, sims=400, rng=2)
    # tiny ε: û₁ is uniform on the sphere, E|⟨u, û⟩| = Γ(d/2)/(√π Γ((d+1)/2)) ≈ 0.181,
    # its std ≈ 0.13: 5 standard errors of the mean over 400 masks
    chance = math.exp(gammaln(DIM / 2) - gammaln((DIM + 1) / 2)) / math.sqrt(math.pi)
    assert abs(out.q_mean[0] - chance) < 5 * out.q_std[0] / math.sqrt(400)
    assert out.q_mean[1] > 0.999  # huge ε: the mask vanishes


def test_a_larger_spectral_gap_is_recovered_first():
    # After the columns are scaled to norm ≤ 1, α = 1 has the larger eigengap per unit
    # noise ((1 − 1/4)/Σk⁻² ≈ 0.46 against (1 − 1/2)/Σk⁻¹ ≈ 0.14): its q_A is higher at
    # every ε of the transition. The published panel's legend has it the other way round
    # (docs/baselines.md).
    table = figure_b(alphas=(0.5, 1.0), epsilons=(1.5, 2.0), sims=20, draws=3, seed=4)
    half, one = (table[table.alpha == a].q_mean.to_numpy() for a in (0.5, 1.0))
    assert np.all(one > half)
    assert set(compare(table).columns) >= {"published", "difference", "z"}


def test_tail_probabilities_count_the_data_sets_as_far_out_as_the_published_point():
    # issue #52: the comparison as a share of data sets, not a z from a standard deviation
    curves = np.array([[0.1, 0.5], [0.2, 0.6], [0.3, 0.7], [0.4, 0.8], [0.34, 0.56]])
    table = tail_probabilities(curves, [0.35, 0.55])
    # mean (0.268, 0.632): 0.35 lies above it (1 of 5 curves ≥ 0.35), 0.55 below (1 of 5 ≤)
    np.testing.assert_allclose(table["tail"], [0.2, 0.2])


def test_a_curve_p_value_ranks_the_published_curve_among_the_data_sets():
    rng = np.random.default_rng(4)
    curves = rng.normal([0.3, 0.6, 0.9], [0.02, 0.05, 0.01], size=(199, 3))
    # the mean curve is the least extreme possible: every data set is at least as far out
    assert curve_p_value(curves, curves.mean(axis=0)) == 1.0
    # far outside every data set: only the "+1" of the estimator is left
    assert curve_p_value(curves, [0.5, 0.6, 0.9]) == 1 / 200
    # a curve drawn from the same law is a uniform rank: over many, p ≤ 0.1 about 10 % of the
    # time (binomial sd over 400: 0.015, so 0.1 ± 0.05 is over 3 sd)
    ps = [
        curve_p_value(curves, rng.normal([0.3, 0.6, 0.9], [0.02, 0.05, 0.01])) for _ in range(400)
    ]
    assert abs(np.mean(np.array(ps) <= 0.1) - 0.1) < 0.05


def test_one_row_per_data_set_reproducible_and_distinct():
    a = per_data_set(0.5, epsilons=(1.0, 4.0), sims=3, draws=3, seed=1)
    b = per_data_set(0.5, epsilons=(1.0, 4.0), sims=3, draws=3, seed=1)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (3, 2) and len({tuple(r) for r in a}) == 3
    assert not np.array_equal(a, per_data_set(1.0, epsilons=(1.0, 4.0), sims=3, draws=3, seed=1))
