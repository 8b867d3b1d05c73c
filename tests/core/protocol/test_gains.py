"""CAPE's gains, each labelled with what it compares (issue #22, item 10)."""

import warnings

import numpy as np
import pytest

from dpcore.mechanisms.calibration import ClassicGaussianWarning, mean_noise_std
from dpcore.protocol.cape import cape_design, cape_gain


def _design(sizes, eps, delta, weights, calibration):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClassicGaussianWarning)
        tau = mean_noise_std(sizes, epsilon=eps, delta=delta, calibration=calibration)
    return cape_design(tau, weights=weights)


@pytest.mark.parametrize("calibration", ["classic", "analytic"])
@pytest.mark.parametrize("sizes", [[100, 100, 100, 1000], [50, 300, 2000], [10, 10]])
def test_equal_weights_gain_is_the_papers_g_under_its_conditions(calibration, sizes):
    # One common (ε, δ): τ_s = c/N_s; μ_s = N_s/N: CAPE's variance c²/N², conventional with
    # weights 1/S Σ c²/(S² N_s²) — their ratio is G(n) = (N²/S²) Σ 1/N_s² (Proposition 1).
    n = np.asarray(sizes)
    design = _design(n, 0.5, 1e-3, n / n.sum(), calibration)
    assert design.gain_equal_weights == pytest.approx(cape_gain(n), rel=1e-12)


def test_papers_g_is_not_the_gain_of_sites_with_other_epsilons():
    # The sizes [100, 100, 100, 1000] with ε = [2, 2, 2, 0.1] (analytic, δ = 1e-3,
    # μ_s = N_s/N): G(n) says 31.8×, the same comparison on these sites is 0.324× — the
    # 1000-sample site's tiny ε makes its τ, and CAPE's pooled noise, large.
    n = np.array([100, 100, 100, 1000])
    design = _design(n, [2, 2, 2, 0.1], 1e-3, n / n.sum(), "analytic")
    assert cape_gain(n) == pytest.approx(31.793125, rel=1e-12)
    assert design.gain_equal_weights == pytest.approx(0.3241, abs=5e-5)
    tau = design.tau_site
    by_hand = (np.sum(tau**2) / 16) / design.tau_agg**2  # Σ (τ_s/S)² over τ_agg²
    assert design.gain_equal_weights == pytest.approx(by_hand, rel=1e-12)
