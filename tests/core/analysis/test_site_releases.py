"""dpcore.analysis.site_releases: from one Sites record to the accountants in one step (issue
#35), against the two-step path the Repeated releases page took before (z out of one call,
handed back down to the next): bit for bit the same numbers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import dpcore
from dpcore.analysis.site_releases import MEAN_RELEASE, SiteReleases

SITES = dpcore.Sites((100, 200, 300), (0.5, 1.0, 2.0), (0.01, 0.01, 0.001), (1 / 6, 1 / 3, 1 / 2))
JOINT, OWN = "aggregator's joint view", "own release"


def _z(sites: dpcore.Sites, design: str, view: str) -> np.ndarray:
    """The old path's first step: z_s = σ_s/Δ_s of each site's mean, from the design."""
    return dpcore.view_noise_multipliers(
        sites.design(design), sensitivity=sites.sensitivities, view=view
    )


@pytest.mark.parametrize("design", ["cape", "joint"])
@pytest.mark.parametrize("view", [JOINT, OWN])
def test_curve_and_growth_equal_the_old_two_step_path(design, view):
    seen = SiteReleases(SITES, design, view)
    z = _z(SITES, design, view)
    np.testing.assert_array_equal(seen.noise_multipliers, z)
    for site in range(SITES.count):
        old = dpcore.epsilon_curve(float(z[site]), max_releases=6, delta=SITES.delta[site])
        pd.testing.assert_frame_equal(seen.epsilon_curve(site, max_releases=6), old)
        assert seen.growth(site, releases=9) == dpcore.composition_growth(
            float(z[site]), releases=9, delta=SITES.delta[site]
        )


def test_the_own_release_is_protected_by_its_own_calibration():
    # The paper's argument (Thm. 1): each release on its own carries τ_s, so in the own-release
    # view one release of site s costs exactly its ε_s at δ_s under the analytic calibration.
    curve = SiteReleases(SITES, "cape", OWN).epsilon_curve(1, max_releases=1)
    exact = curve[curve.accountant == "exact"].epsilon.iloc[0]
    assert math.isclose(exact, SITES.epsilon[1], rel_tol=1e-6)


def test_the_ledger_equals_the_one_the_page_built():
    seen = SiteReleases(SITES, "joint", JOINT)
    z = [float(v) for v in _z(SITES, "joint", JOINT)]
    for made in (0, 3):
        old = dpcore.PrivacyLedger(
            budget=[2.5 * e for e in SITES.epsilon], delta=list(SITES.delta), accountant="rdp"
        )
        if made:
            old = old.add(z, label=MEAN_RELEASE, count=made)
        new = seen.ledger(budget_multiple=2.5, accountant="rdp", releases=made)
        pd.testing.assert_frame_equal(new.summary(), old.summary())
        np.testing.assert_array_equal(new.spent_after(z), old.spent_after(z))


@pytest.mark.parametrize(
    ("make", "error", "name"),
    [
        (lambda: SiteReleases((100, 200), "cape", JOINT), TypeError, "sites"),
        (lambda: SiteReleases(SITES, "paper", JOINT), ValueError, "design"),
        (lambda: SiteReleases(SITES, "cape", "coalition"), ValueError, "view"),
        (lambda: SiteReleases(SITES).epsilon_curve(3, max_releases=2), ValueError, "site"),
        (lambda: SiteReleases(SITES).growth(-1, releases=2), ValueError, "site"),
        (lambda: SiteReleases(SITES).epsilon_curve(0, max_releases=0), ValueError, "max_releases"),
        (
            lambda: SiteReleases(SITES).ledger(budget_multiple=0.5, accountant="rdp", releases=1),
            ValueError,
            "budget_multiple",
        ),
        (
            lambda: SiteReleases(SITES).ledger(budget_multiple=2, accountant="x", releases=1),
            ValueError,
            "accountant",
        ),
    ],
)
def test_bad_input_is_refused_by_name(make, error, name):
    with pytest.raises(error, match=name):
        make()
