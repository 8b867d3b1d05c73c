"""Property-based checks: every CAPE design for random valid inputs meets every constraint."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore import cape_design

taus = st.floats(min_value=1e-6, max_value=1e3, allow_nan=False)


@st.composite
def configurations(draw):
    sites = draw(st.integers(min_value=2, max_value=40))
    tau = np.array(draw(st.lists(taus, min_size=sites, max_size=sites)))
    raw = np.array(draw(st.lists(st.floats(0, 10), min_size=sites, max_size=sites)))
    if raw.sum() == 0:
        raw[0] = 1.0
    return tau, raw / raw.sum()


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(configurations())
def test_design_constraints_hold_for_random_configurations(config):
    tau, mu = config
    d = cape_design(tau, weights=mu)
    assert d.feasible
    np.testing.assert_allclose(d.var_e + d.var_g, tau**2, rtol=1e-9)
    np.testing.assert_allclose(d.var_f + d.var_g, tau**2, rtol=1e-9)
    np.testing.assert_allclose(np.sum(mu**2 * d.var_g), np.max(mu * tau) ** 2, rtol=1e-9)
    # Zero weighted sum: each column of μᵀM vanishes to rounding, i.e. relative to the sum of
    # the magnitudes it adds up (S ≤ 40 terms, each with a few ulps of error).
    terms = np.abs(mu[:, None] * d.e_mixing).sum(axis=0)
    assert np.all(np.abs(mu @ d.e_mixing) <= 1e-13 * terms + 1e-300)
    np.testing.assert_allclose(
        np.diag(d.e_covariance), d.var_e, rtol=1e-9, atol=1e-12 * tau.max() ** 2
    )
