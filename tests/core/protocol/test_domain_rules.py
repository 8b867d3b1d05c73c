"""Domain rules the app relies on live in the core: a mean's sensitivity and noise, the
dropout verdict, the one-large-site layout."""

from __future__ import annotations

import numpy as np
import pytest

import dpcore


def test_mean_noise_is_the_gaussian_mechanism_at_sensitivity_one_over_n():
    n = np.array([10, 200, 3000])
    np.testing.assert_array_equal(dpcore.mean_sensitivity(n), 1.0 / n)  # exact algebra
    tau = dpcore.mean_noise_std(n, epsilon=0.5, delta=1e-3, calibration="analytic")
    want = [
        dpcore.gaussian_sigma(1 / m, epsilon=0.5, delta=1e-3, calibration="analytic") for m in n
    ]
    np.testing.assert_array_equal(tau, want)
    with pytest.raises(ValueError, match="n_samples"):
        dpcore.mean_sensitivity([10, 0])
    with pytest.raises(ValueError, match="n_samples"):
        dpcore.mean_sensitivity([2.5])


def test_dropout_verdict_per_remedy():
    design = dpcore.cape_design([1.0, 1.0, 1.0, 1.0])
    analysis = dpcore.dropout_analysis(design, [0])
    # The cape remedy restores the pooled noise of the remaining sites exactly; none leaves
    # the missing E's uncancelled (more noise); naive misses the dropped G (less noise).
    assert analysis.meets == {"none": True, "naive": False, "cape": True}


@pytest.mark.parametrize(("total", "sites", "share"), [(100, 4, 0.5), (13, 5, 0.9), (10, 10, 0.1)])
def test_one_large_site_holds_its_share_and_the_rest_split_evenly(total, sites, share):
    sizes = dpcore.one_large_site(total, sites, share)
    assert sizes.size == sites and sizes.min() >= 1
    assert sizes[0] == round(share * total)
    assert sizes[1:].max() - sizes[1:].min() <= 1
    if round(share * total) <= total - (sites - 1):  # room for one sample each
        assert sizes.sum() == total
