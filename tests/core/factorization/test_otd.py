"""dpcore.factorization.otd: one capeAGN tensor stage (the E's cancel, the aggregate is the
projected sum) and the AVN baseline's noise radius."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.factorization.models import mog_model
from dpcore.factorization.moments import mog_site_moments
from dpcore.factorization.otd import avn_vector, cape_tensor_stage
from dpcore.factorization.tensor import multilinear, whitening
from dpcore.mechanisms.noise import n_free_entries
from dpcore.protocol.cape import cape_design

pytestmark = pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")


def test_cape_tensor_stage_aggregate_is_projected_sum_and_e_cancel():
    rng = np.random.default_rng(2)
    model = mog_model(8, 3, rng=rng)
    mom = mog_site_moments(model, np.array([500, 700, 900, 1100]), rng=rng)
    weights = mom.sizes / mom.sizes.sum()
    tau3 = np.array([0.05, 0.03, 0.02, 0.04])
    w = whitening(mom.m2.mean(axis=0), 3)[0]
    run = cape_tensor_stage(mom.m3, w, tau_site=tau3, weights=weights, rng=rng)
    assert run.messages.shape == (4, 3, 3, 3)  # sites send K×K×K tensors
    scale = np.max(np.abs(run.e))
    assert np.max(np.abs(np.tensordot(weights, run.e, axes=1))) < 1e-14 * scale
    expected = multilinear(np.tensordot(weights, mom.m3 + run.g, axes=1), w)
    np.testing.assert_allclose(run.t, expected, rtol=0, atol=1e-12 * np.max(np.abs(expected)))
    # G3 is the site's own symmetric noise with the design's std
    np.testing.assert_array_equal(run.g, run.g.transpose(0, 2, 1, 3))
    assert cape_design(tau3, weights=weights).tau_agg > 0


def test_avn_radius_has_mean_dsym_over_beta():
    # Radius ~ Gamma(n, 1/β): mean n/β, sd sqrt(n)/β. Over 4,000 draws the sample mean has
    # s.e. sqrt(n)/(β·sqrt(4000)); allow 5 of them.
    n, beta, draws = n_free_entries(10, 3), 3.0, 4000
    rng = np.random.default_rng(5)
    radii = np.array([np.linalg.norm(avn_vector(n, beta, rng=rng)) for _ in range(draws)])
    assert abs(radii.mean() - n / beta) < 5 * math.sqrt(n) / beta / math.sqrt(draws)
