"""Every core entry point that builds a CAPE design (S×S matrices) refuses more sites than
MAX_DESIGN_SITES before it allocates, naming the parameter the sites came from (issue #36:
``cape_design([1.0] * 100000)`` asked for 74 GiB, ``view_profiles`` with 20,000 sites 3 GiB).
"""

from __future__ import annotations

import re
import tracemalloc

import numpy as np
import pytest

import dpcore
from dpcore.experiments.limits import MAX_DESIGN_SITES, MAX_MEMORY
from dpcore.experiments.sweeps.dropout import dropout_pca
from dpcore.protocol.mean_release import mean_release_designs

TOO_MANY = MAX_DESIGN_SITES + 1


def _message(name: str, sites: int) -> str:
    return re.escape(f"{name} must have one entry per site, S in [2, {MAX_DESIGN_SITES}]") + (
        rf".*got S = {sites}$"
    )


def test_the_limit_keeps_one_design_matrix_within_a_64th_of_the_memory_bound():
    # six S×S float64 matrices live at once in cape_design (mixing, eye, 1 − eye, the outer
    # product, the read-only copy, M Mᵀ): at the limit they take 6/64 of MAX_MEMORY
    assert 8 * MAX_DESIGN_SITES**2 <= MAX_MEMORY / 64 < 8 * (MAX_DESIGN_SITES + 1) ** 2


BUILDERS = {
    "cape_design": lambda s: dpcore.cape_design(np.ones(s)),
    "joint_safe_design": lambda s: dpcore.joint_safe_design(np.ones(s)),
    "paper_design": lambda s: dpcore.paper_design(
        np.ones(s), weights=np.full(s, 1 / s), tau_pool=0.1
    ),
    "cape_average": lambda s: dpcore.cape_average(np.zeros(s), np.ones(s), rng=0),
}


@pytest.mark.parametrize("builder", BUILDERS)
@pytest.mark.parametrize("sites", [TOO_MANY, 100_000])
def test_design_builders_refuse_too_many_sites_before_allocating(builder, sites):
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=_message("tau_site", sites)):
            BUILDERS[builder](sites)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * sites  # a few per-site arrays, nothing S×S (8 S² = 800 MB at 1e4)


def test_the_limit_itself_is_a_design_that_works():
    d = dpcore.cape_design(np.ones(MAX_DESIGN_SITES))
    assert d.n_sites == MAX_DESIGN_SITES
    # eq. (2): equal sites, μ = 1/S → τ_e² = (1 − 1/S) τ², τ_g² = τ²/S
    np.testing.assert_allclose(d.var_g, 1 / MAX_DESIGN_SITES, rtol=1e-9)


def test_view_profiles_refuses_twenty_thousand_sites_naming_tau_site():
    with pytest.raises(ValueError, match=_message("tau_site", 20_000)):
        dpcore.view_profiles(np.ones(20_000), sensitivity=1.0, epsilons=[1.0])


def test_entry_points_taking_sizes_name_n_per_site():
    with pytest.raises(ValueError, match=_message("n_per_site", TOO_MANY)):
        mean_release_designs(np.full(TOO_MANY, 100), epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError, match=_message("n_per_site", TOO_MANY)):
        dropout_pca(
            n_per_site=[100] * TOO_MANY,
            epsilon=[1.0] * TOO_MANY,
            delta=[1e-5] * TOO_MANY,
            weights=[1 / TOO_MANY] * TOO_MANY,
            dropped=[0],
        )


def test_a_sweep_spec_refuses_more_sites_than_a_design_holds():
    with pytest.raises(ValueError, match=rf"sites must be an integer in \[1, {MAX_DESIGN_SITES}\]"):
        dpcore.PcaSpec.build(sites=TOO_MANY, n_per_site=10, epsilon=1.0)
    with pytest.raises(ValueError, match=rf"sites must be an integer in \[1, {MAX_DESIGN_SITES}\]"):
        dpcore.OtdSpec.build(sites=[10, TOO_MANY], n_per_site=10, epsilon=1.0)
