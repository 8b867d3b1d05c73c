"""CAPE without a trusted noise generator: pairwise antisymmetric noise
(dpcore.protocol.pairwise, #37)."""

import numpy as np
import pytest

from dpcore import cape_design
from dpcore.analysis.views import coalition_view
from dpcore.protocol.cape import CapeDesign
from dpcore.protocol.joint_safe import design_for
from dpcore.protocol.pairwise import (
    pair_rng,
    pair_variances,
    pairwise_average,
    pairwise_coalition_covariance,
    pairwise_covariance,
)

# unequal sites: τ_s and weights μ_s = N_s/N of three layouts
LAYOUTS = [
    ([0.3, 0.1, 0.05, 0.2], [0.1, 0.3, 0.4, 0.2]),
    ([0.02, 0.5, 0.07], [0.6, 0.05, 0.35]),
    ([1.0, 1.0, 1.0, 1.0, 1.0], None),
]


@pytest.mark.parametrize("kind", ["cape", "joint"])
@pytest.mark.parametrize(("tau", "weights"), LAYOUTS)
def test_pair_variances_give_the_designs_e_covariance(kind, tau, weights):
    """Exact algebra: the Laplacian of the σ_st², scaled by 1/μ_sμ_t, is M Mᵀ."""
    design = design_for(kind, tau, weights=weights)
    var = pair_variances(design)
    assert np.all(var >= 0) and np.allclose(var, var.T) and np.all(np.diag(var) == 0)
    cov = pairwise_covariance(design)
    np.testing.assert_allclose(cov, design.e_covariance, atol=1e-14 * np.abs(cov).max())
    # the aggregator's view (no colluders) is the design's: the same covariance as CAPE's
    honest, left = pairwise_coalition_covariance(design)
    np.testing.assert_allclose(left, coalition_view(design).covariance, atol=1e-14)
    assert honest.tolist() == list(range(len(tau)))


@pytest.mark.parametrize("symmetric", [False, True])
def test_the_pair_noise_cancels_in_the_weighted_sum_and_only_g_remains(symmetric):
    design = design_for("joint", [0.3, 0.1, 0.05, 0.2], weights=[0.1, 0.3, 0.4, 0.2])
    values = np.random.default_rng(1).standard_normal((4, 3, 3))
    values = (values + values.transpose(0, 2, 1)) / 2
    run = pairwise_average(values, design, seed=5, symmetric=symmetric)
    assert run.scheme == "pairwise" and not run.f.any()
    weighted_e = np.tensordot(run.weights, run.e, axes=1)
    assert np.abs(weighted_e).max() <= 1e-15 * np.abs(run.e).max() * 8
    np.testing.assert_allclose(
        run.estimate, np.tensordot(run.weights, run.values + run.g, axes=1), atol=1e-15
    )
    assert np.abs(run.e).min() > 0  # every site's E_s is noise, not zero
    if symmetric:
        np.testing.assert_array_equal(run.released, run.released.transpose(0, 2, 1))
    again = pairwise_average(values, design, seed=5, symmetric=symmetric)
    np.testing.assert_array_equal(again.released, run.released)


def test_a_pair_shares_one_stream_whichever_site_asks():
    assert pair_rng(3, 0, 2).random() == pair_rng(3, 2, 0).random()
    assert pair_rng(3, 0, 2).random() != pair_rng(3, 0, 1).random()
    with pytest.raises(ValueError, match="two different sites"):
        pair_rng(3, 1, 1)
    with pytest.raises(ValueError, match="seed"):
        pair_rng(-1, 0, 1)


def test_a_design_with_positively_correlated_e_is_refused():
    base = cape_design([1.0, 1.0, 1.0])
    mixing = np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [-2.0, 0.0, 0.0]])  # e_1 = e_2
    bad = CapeDesign(
        tau_site=base.tau_site, weights=base.weights, var_e=np.array([1.0, 1.0, 4.0]),
        var_f=base.var_f, var_g=base.var_g, e_mixing=mixing, tau_pool=base.tau_pool,
    )  # fmt: skip
    with pytest.raises(ValueError, match="Cov"):
        pair_variances(bad)


def test_colluders_know_their_pairs_so_an_honest_site_keeps_only_honest_pairs():
    """Brute force: the honest covariance from the pairs not touching the coalition."""
    design = design_for("cape", [0.3, 0.1, 0.05, 0.2], weights=[0.1, 0.3, 0.4, 0.2])
    var = pair_variances(design)
    honest, left = pairwise_coalition_covariance(design, (1,))
    assert honest.tolist() == [0, 2, 3]
    mu = design.weights
    expected = np.zeros((3, 3))
    for i, s in enumerate(honest):
        for j, t in enumerate(honest):
            if s == t:
                pairs = sum(var[s, u] for u in honest if u != s)
                expected[i, j] = pairs / mu[s] ** 2 + design.var_g[s]
            else:
                expected[i, j] = -var[s, t] / (mu[s] * mu[t])
    np.testing.assert_allclose(left, expected, atol=1e-15)
