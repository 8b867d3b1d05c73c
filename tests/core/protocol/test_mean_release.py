"""dpcore.protocol.mean_release: the three designs the averaging pages compare, on the same
sites."""

from __future__ import annotations

import numpy as np
import pytest

import dpcore
from dpcore.protocol.mean_release import GAIN_NAMES, mean_release_designs


def test_equal_sites_reach_the_pooled_noise_and_gain_exactly_s():
    # S equal sites, μ_s = 1/S (eq. (2)): τ_agg = τ_s/S = pooled, conventional τ_s/√S, gain S.
    sites = 7
    d = mean_release_designs([400] * sites, epsilon=0.5, delta=1e-5)
    tau = d.tau_site[0]
    assert d.cape.tau_agg == pytest.approx(tau / sites, rel=1e-12)
    assert d.cape.tau_conv == pytest.approx(tau / np.sqrt(sites), rel=1e-12)
    assert d.gains["same_weights"] == pytest.approx(sites, rel=1e-12)
    assert d.paper_formula == pytest.approx(sites, rel=1e-12)  # G(n) = S for equal sizes
    assert d.paper_formula_differs == ()


def test_tau_is_the_mean_release_calibration():
    sizes, eps, delta = [100, 300, 600], [0.2, 0.5, 1.5], [1e-5, 1e-6, 1e-5]
    d = mean_release_designs(sizes, epsilon=eps, delta=delta, calibration="analytic")
    expected = dpcore.mean_noise_std(sizes, epsilon=eps, delta=delta, calibration="analytic")
    np.testing.assert_array_equal(d.tau_site, expected)
    np.testing.assert_array_equal(d.epsilon, eps)
    np.testing.assert_array_equal(d.n_per_site, sizes)


def test_the_three_designs_share_tau_and_weights():
    weights = [0.2, 0.3, 0.5]
    d = mean_release_designs([100, 200, 300], epsilon=0.5, delta=1e-5, weights=weights)
    for design in (d.cape, d.joint, d.paper):
        np.testing.assert_allclose(design.tau_site, d.tau_site, rtol=0)
        np.testing.assert_allclose(design.weights, weights, rtol=1e-15)
    # the joint-view-safe design pays a little accuracy, never less than pooled
    assert d.cape.tau_pool <= d.joint.tau_agg <= 1.06 * d.cape.tau_pool
    assert d.cape.tau_agg == pytest.approx(d.cape.tau_pool, rel=1e-12)


@pytest.mark.parametrize(
    ("epsilon", "delta", "weights", "reasons"),
    [
        ([0.5, 1.0], 1e-5, [0.25, 0.75], ("the sites' ε differ",)),
        (0.5, [1e-5, 1e-6], [0.25, 0.75], ("the sites' δ differ",)),
        (0.5, 1e-5, [0.5, 0.5], ("the weights are not μ_s = N_s/N",)),
        (0.5, 1e-5, [0.25, 0.75], ()),
    ],
)
def test_paper_formula_says_why_it_is_not_the_sites_gain(epsilon, delta, weights, reasons):
    d = mean_release_designs([100, 300], epsilon=epsilon, delta=delta, weights=weights)
    assert d.paper_formula_differs == reasons
    if not reasons:  # then G(n) is exactly the equal-weights comparison it stands for
        assert d.gains["paper_g"] == pytest.approx(d.paper_formula, rel=1e-9)


def test_paper_design_can_be_infeasible_and_the_table_still_draws():
    # For S equal sites the paper's last site gets τ_g² = τ_s²(3 − S)/2: negative for S > 3.
    d = mean_release_designs([100] * 5, epsilon=0.5, delta=1e-5)
    assert not d.paper.feasible
    table = d.table()
    assert table["paper τ_g²"].iloc[-1] == pytest.approx(d.tau_site[-1] ** 2 * (3 - 5) / 2)
    assert list(table["site"]) == [1, 2, 3, 4, 5]
    np.testing.assert_allclose(table["τ_e"] ** 2 + table["τ_g"] ** 2, d.tau_site**2, rtol=1e-12)
    assert set(d.gains) == set(GAIN_NAMES)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"n_per_site": [0, 10]}, "n_per_site"),
        ({"n_per_site": [10]}, "n_per_site"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"delta": 2.0}, "delta"),
        ({"weights": [1.0, 1.0, 1.0]}, "weights"),
        ({"calibration": "nope"}, "calibration"),
    ],
)
def test_bad_inputs_name_the_parameter(kwargs, name):
    args = {"n_per_site": [10, 20], "epsilon": 0.5, "delta": 1e-5} | kwargs
    with pytest.raises(ValueError, match=name):
        mean_release_designs(args.pop("n_per_site"), **args)
