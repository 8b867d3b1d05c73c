"""Composition accountants and privacy profiles (dpcore.analysis.accounting) against independent
references: Google's dp_accounting (PLD and RDP accountants), the analytic Gaussian profile,
and the algebra of Gaussian DP."""

from __future__ import annotations

import math

import dp_accounting as dpa
import numpy as np
import pytest
from dp_accounting import pld, rdp
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcore
from dpcore.analysis.accounting import ACCOUNTANTS, composed_epsilon, composed_mu, gaussian_profile
from dpcore.mechanisms.calibration import gaussian_delta, gaussian_epsilon

# (noise multipliers of one round, rounds T, δ): scalars and sequences (releases with
# different σ), T from 1 to 40, δ from 1e-8 to 1e-2, ε from ~0.1 to ~30.
CONFIGS = [
    (1.0, 1, 1e-5),
    (1.0, 10, 1e-5),
    (2.0, 5, 1e-6),
    (0.8, 3, 1e-3),
    (5.0, 20, 1e-5),
    (10.0, 40, 1e-8),
    (3.0, 8, 1e-2),
    (20.0, 1, 1e-6),
    (1.5, 25, 1e-4),
    (4.0, 16, 1e-7),
    (0.9, 2, 1e-8),
    (50.0, 30, 1e-5),
    ([1.0, 2.0], 1, 1e-5),
    ([1.0, 2.0, 4.0], 3, 1e-6),
    ([0.8, 5.0], 5, 1e-3),
    ([3.0, 3.0, 10.0, 30.0], 2, 1e-5),
    ([2.0, 8.0], 10, 1e-8),
    ([1.2, 6.0, 6.0], 4, 1e-2),
    ([10.0, 20.0, 40.0], 12, 1e-6),
    ([0.7, 100.0], 1, 1e-4),
    ([4.0, 2.5], 7, 1e-5),
    ([25.0, 5.0, 1.0], 2, 1e-7),
]


def _ids(config) -> str:
    z, t, d = config
    return f"z={z}-T={t}-delta={d:g}"


def _events(z, releases: int) -> dpa.DpEvent:
    """T rounds of Gaussian releases (one event per σ) as one dp_accounting event."""
    zs = [float(v) for v in np.atleast_1d(z)]
    one_round = dpa.ComposedDpEvent([dpa.GaussianDpEvent(v) for v in zs])
    return dpa.SelfComposedDpEvent(one_round, releases)


PLD_INTERVAL = 1e-4


# The PLD accountant's cost grows with the releases it composes: the configurations of more
# than four in the full suite only (up to ~3 s each).
@pytest.mark.parametrize(
    "config",
    [c if c[1] * np.size(c[0]) <= 4 else pytest.param(c, marks=pytest.mark.slow) for c in CONFIGS],
    ids=_ids,
)
def test_exact_agrees_with_the_pld_accountant(config):
    z, releases, delta = config
    accountant = pld.PLDAccountant(value_discretization_interval=PLD_INTERVAL)
    accountant.compose(_events(z, releases))
    reference = accountant.get_epsilon(delta)
    exact = composed_epsilon(z, releases=releases, delta=delta)
    # The PLD accountant is pessimistic: each of the n composed privacy-loss distributions is
    # rounded up onto a grid of spacing h, so the composed loss is over-estimated by less than
    # n·h and its ε by at most n·h; it never lies below the true ε beyond root-finding error
    # (ours 1e-13, its grid search ~1e-8 relative, measured). n = T·(releases per round).
    n = releases * np.atleast_1d(z).size
    assert reference - exact >= -1e-6 * max(1.0, exact)
    assert reference - exact <= n * PLD_INTERVAL + 1e-6


@pytest.mark.parametrize("config", CONFIGS, ids=_ids)
def test_rdp_agrees_with_the_rdp_accountant(config):
    z, releases, delta = config
    accountant = rdp.RdpAccountant()  # its default order grid is ours (RDP_ORDERS)
    accountant.compose(_events(z, releases))
    reference = accountant.get_epsilon(delta)
    ours = composed_epsilon(z, releases=releases, delta=delta, accountant="rdp")
    # same orders, same conversion (CKS 2020 Prop. 12): equal up to float summation order
    np.testing.assert_allclose(ours, reference, rtol=1e-9, atol=1e-12)


@settings(max_examples=150, deadline=None)
@given(
    z=st.lists(st.floats(0.3, 200.0), min_size=1, max_size=4),
    releases=st.integers(1, 300),
    log_delta=st.floats(-12.0, -1.0),
)
def test_every_accountant_bounds_the_exact_one(z, releases, log_delta):
    delta = 10.0**log_delta
    exact = composed_epsilon(z, releases=releases, delta=delta)
    for name in ACCOUNTANTS:
        eps = composed_epsilon(z, releases=releases, delta=delta, accountant=name)
        assert eps >= exact - 1e-9 * (1.0 + exact), name  # root finding to 1e-13


@pytest.mark.parametrize("z", [0.5, 1.0, 3.7, 40.0])
@pytest.mark.parametrize("delta", [1e-9, 1e-5, 0.05])
def test_one_release_is_the_analytic_gaussian(z, delta):
    expected = gaussian_epsilon(z, sensitivity=1.0, delta=delta)
    # exact goes through μ = 1/z and back: equal to a few ulps
    np.testing.assert_allclose(composed_epsilon(z, releases=1, delta=delta), expected, rtol=1e-14)
    # basic composition of one release is that release, bit for bit
    assert composed_epsilon(z, releases=1, delta=delta, accountant="basic") == expected


@pytest.mark.parametrize("releases", [1, 2, 7, 100])
def test_basic_is_t_times_one_release_at_delta_over_t(releases):
    z, delta = 3.0, 1e-5
    one = gaussian_epsilon(z, sensitivity=1.0, delta=delta / releases)
    basic = composed_epsilon(z, releases=releases, delta=delta, accountant="basic")
    np.testing.assert_allclose(basic, releases * one, rtol=1e-12)


def test_basic_with_different_sigmas_sums_each_release():
    z, delta = [1.0, 4.0, 9.0], 1e-6
    each = [gaussian_epsilon(v, sensitivity=1.0, delta=delta / 3) for v in z]
    got = composed_epsilon(z, releases=1, delta=delta, accountant="basic")
    np.testing.assert_allclose(got, sum(each), rtol=1e-12)


@pytest.mark.parametrize("releases", [1, 4, 9, 250])
def test_exact_composition_is_one_gaussian_with_sqrt_t_less_noise(releases):
    # Dong–Roth–Su Cor. 3.3: T releases of z are one release of z/sqrt(T)
    z, delta = 6.0, 1e-5
    got = composed_epsilon(z, releases=releases, delta=delta)
    one = composed_epsilon(z / math.sqrt(releases), releases=1, delta=delta)
    np.testing.assert_allclose(got, one, rtol=1e-11)
    assert composed_mu(z, releases=releases) == pytest.approx(math.sqrt(releases) / z, rel=1e-14)


@pytest.mark.parametrize("accountant", ACCOUNTANTS)
def test_releases_repeat_the_whole_sequence(accountant):
    z, delta = [2.0, 5.0, 11.0], 1e-5
    got = composed_epsilon(z, releases=4, delta=delta, accountant=accountant)
    flat = composed_epsilon(z * 4, releases=1, delta=delta, accountant=accountant)
    np.testing.assert_allclose(got, flat, rtol=1e-12)


@pytest.mark.parametrize("accountant", ACCOUNTANTS)
def test_a_release_without_information_costs_nothing(accountant):
    delta = 1e-5
    with_nothing = composed_epsilon([2.0, math.inf], releases=3, delta=delta, accountant=accountant)
    alone = composed_epsilon(2.0, releases=3, delta=delta, accountant=accountant)
    assert with_nothing == alone
    assert composed_epsilon(math.inf, releases=5, delta=delta, accountant=accountant) == 0.0


def test_advanced_beats_basic_only_for_many_small_releases():
    # the point of advanced composition: sqrt(T) growth for small ε_t, beaten by basic for few
    small = {
        a: composed_epsilon(50.0, releases=10_000, delta=1e-5, accountant=a) for a in ACCOUNTANTS
    }
    assert small["advanced"] < small["basic"]
    few = {a: composed_epsilon(1.0, releases=2, delta=1e-5, accountant=a) for a in ACCOUNTANTS}
    assert few["advanced"] > few["basic"]


def test_epsilon_grows_with_releases_for_every_accountant():
    curve = dpcore.epsilon_curve(3.0, max_releases=30, delta=1e-5)
    for name, group in curve.groupby("accountant"):
        assert np.all(np.diff(group.sort_values("releases").epsilon.to_numpy()) > 0), name
    assert set(curve.accountant) == set(ACCOUNTANTS)
    assert len(curve) == 30 * len(ACCOUNTANTS)


# --- how the exact ε grows with T (issue #34: "about √T" was false) -----------------------


@pytest.mark.parametrize("z, delta", [(5.85, 1e-3), (0.7, 1e-5), ([2.0, 9.0], 1e-8), (40.0, 1e-2)])
def test_the_crossover_is_where_the_zcdp_terms_meet(z, delta):
    growth = dpcore.composition_growth(z, releases=50, delta=delta)
    mu_one = composed_mu(z)
    # at T*, μ²/2 = μ sqrt(2 ln(1/δ)) with μ = sqrt(T*)·μ₁ (zCDP's two terms, Bun–Steinke 1.3)
    mu = math.sqrt(growth.crossover) * mu_one
    assert mu**2 / 2 == pytest.approx(mu * math.sqrt(2 * math.log(1 / delta)), rel=1e-12)
    for t in (1, 10, 100, 1000, 10_000):
        if math.sqrt(t) * mu_one > 1e4:
            continue
        g = dpcore.composition_growth(z, releases=t, delta=delta)
        m = math.sqrt(t) * mu_one
        assert g.linear == (m**2 / 2 > m * math.sqrt(2 * math.log(1 / delta)))
        assert g.epsilon_total == composed_epsilon(z, releases=t, delta=delta)
        assert g.epsilon_one == composed_epsilon(z, releases=1, delta=delta)
    if np.isscalar(z):
        assert growth.crossover == pytest.approx(8 * z**2 * math.log(1 / delta), rel=1e-12)


@settings(max_examples=150, deadline=None)
@given(
    log_z=st.floats(-0.5, 2.5),
    log_delta=st.floats(-10.0, -1.0),
    releases=st.integers(2, 5000),
)
def test_t_releases_cost_at_least_sqrt_t_times_one(log_z, log_delta, releases):
    # the exact ε of one Gaussian release over its μ grows with μ, so T releases (one release of
    # sqrt(T)·μ) cost ≥ sqrt(T) times one; "about √T" understated it (issue #34)
    z, delta = 10.0**log_z, 10.0**log_delta
    if math.sqrt(releases) / z > 1e4:
        return
    growth = dpcore.composition_growth(z, releases=releases, delta=delta)
    if growth.ratio is None:  # one release has ε = 0 at this δ
        assert growth.epsilon_one == 0.0
        return
    assert growth.ratio >= math.sqrt(releases) * (1 - 1e-9)


def test_the_issue_numbers_at_the_page_defaults():
    # the Repeated-releases page's default: z = 5.85 (5 sites, classic, joint view), δ = 10⁻³
    for t, ratio in ((50, "10.6"), (200, "25.9"), (10_000, "526")):
        growth = dpcore.composition_growth(5.85, releases=t, delta=1e-3)
        assert f"{growth.ratio:.3g}" == ratio
        assert growth.ratio > 1.4 * math.sqrt(t)  # not "about √T"
    assert dpcore.composition_growth(5.85, releases=10_000, delta=1e-3).linear
    assert dpcore.composition_growth(math.inf, releases=3, delta=1e-3).ratio is None


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"noise_multiplier": 1.0, "releases": 0, "delta": 1e-5}, "releases"),
        ({"noise_multiplier": 1.0, "releases": 2, "delta": 1.5}, "delta"),
        ({"noise_multiplier": -1.0, "releases": 2, "delta": 1e-5}, "noise_multiplier"),
    ],
)
def test_composition_growth_rejects_bad_inputs(kwargs, name):
    with pytest.raises(ValueError, match=name):
        dpcore.composition_growth(**kwargs)


# --- privacy profiles ---------------------------------------------------------------------


@pytest.mark.parametrize("releases", [1, 5])
def test_profile_is_the_analytic_gaussian_delta_and_decreasing(releases):
    z = 2.5
    eps = np.linspace(0.05, 6.0, 40)
    profile = gaussian_profile(z, eps, releases=releases)
    expected = [
        gaussian_delta(z / math.sqrt(releases), sensitivity=1.0, epsilon=float(e)) for e in eps
    ]
    np.testing.assert_allclose(profile, expected, rtol=1e-12, atol=1e-300)
    assert np.all(np.diff(profile) < 0)
    # and it inverts composed_epsilon: δ(ε(δ)) = δ
    target = composed_epsilon(z, releases=releases, delta=1e-4)
    np.testing.assert_allclose(gaussian_profile(z, [target], releases=releases), 1e-4, rtol=1e-7)


def _equal_sites(sites=10, n=1000, epsilon=0.5, delta=1e-3):
    sens = dpcore.mean_sensitivity([n] * sites)
    tau = dpcore.mean_noise_std([n] * sites, epsilon=epsilon, delta=delta, calibration="analytic")
    return tau, sens


def test_view_profiles_order_the_views_and_the_designs():
    tau, sens = _equal_sites()
    eps = np.linspace(0.1, 3.0, 30)
    frame = dpcore.view_profiles(tau, sensitivity=sens, site=0, colluding=[3, 4], epsilons=eps)
    curves = {
        (d, v): g.sort_values("epsilon").delta.to_numpy()
        for (d, v), g in frame.groupby(["design", "view"])
    }
    promise = curves[("cape", "calibration τ_s")]
    # the paper's design: each release on its own carries exactly τ_s (Thm. 1) ...
    np.testing.assert_allclose(curves[("cape", "own release")], promise, rtol=1e-9)
    # ... but the aggregator's joint view is weaker everywhere, a coalition weaker still
    assert np.all(curves[("cape", "aggregator's joint view")] > promise)
    assert np.all(curves[("cape", "coalition")] > curves[("cape", "aggregator's joint view")])
    # the joint-view-safe design meets τ_s in the joint view exactly (joint_safe.py)
    np.testing.assert_allclose(curves[("joint", "aggregator's joint view")], promise, rtol=1e-7)
    assert np.all(curves[("joint", "own release")] <= promise * (1 + 1e-9))
    assert set(frame.design) == {"cape", "joint"}


def test_view_profile_matches_the_privacy_explorers_epsilon():
    # S = 10 equal sites, analytic, ε_s = 0.5: the joint view's ε is 0.714 (docs/privacy.md)
    tau, sens = _equal_sites()
    design = dpcore.cape_design(tau)
    z = dpcore.view_noise_multipliers(design, sensitivity=sens, view="aggregator's joint view")
    eps = composed_epsilon(float(z[0]), releases=1, delta=1e-3)
    report = dpcore.coalition_report(design, sensitivity=sens, epsilon=0.5, delta=1e-3)
    np.testing.assert_allclose(eps, report.epsilon_joint.iloc[0], rtol=1e-12)
    assert 0.70 < eps < 0.72
    # two releases of that view: exact composition, sqrt(2) less noise
    two = composed_epsilon(float(z[0]), releases=2, delta=1e-3)
    np.testing.assert_allclose(
        two, composed_epsilon(float(z[0]) / math.sqrt(2), releases=1, delta=1e-3), rtol=1e-12
    )


def test_colluding_sites_are_not_counted_in_the_coalition_view():
    tau, sens = _equal_sites(sites=4)
    design = dpcore.cape_design(tau)
    z = dpcore.view_noise_multipliers(design, sensitivity=sens, view="coalition", colluding=[1])
    assert math.isinf(z[1]) and np.all(np.isfinite(z[[0, 2, 3]]))


# --- validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"noise_multiplier": 0.0}, "noise_multiplier"),
        ({"noise_multiplier": -1.0}, "noise_multiplier"),
        ({"noise_multiplier": float("nan")}, "noise_multiplier"),
        ({"noise_multiplier": []}, "noise_multiplier"),
        ({"noise_multiplier": [[1.0]]}, "noise_multiplier"),
        ({"noise_multiplier": 1e-6}, "noise_multiplier"),  # μ = 1e6: refused, ε not finite
        ({"releases": 0}, "releases"),
        ({"releases": 10**7}, "releases"),
        ({"delta": 0.0}, "delta"),
        ({"delta": 1.0}, "delta"),
        ({"accountant": "moments"}, "accountant"),
    ],
)
def test_bad_inputs_are_refused_by_name(kwargs, match):
    call = {"noise_multiplier": 2.0, "releases": 3, "delta": 1e-5, **kwargs}
    z = call.pop("noise_multiplier")
    with pytest.raises(ValueError, match=match):
        composed_epsilon(z, **call)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"noise_multiplier": "2"}, TypeError),
        ({"noise_multiplier": None}, TypeError),
        ({"releases": 2.5}, TypeError),
        ({"releases": True}, TypeError),
    ],
)
def test_bad_types_are_type_errors(kwargs, error):
    call = {"noise_multiplier": 2.0, "releases": 3, "delta": 1e-5, **kwargs}
    z = call.pop("noise_multiplier")
    with pytest.raises(error):
        composed_epsilon(z, **call)


def test_profile_and_views_refuse_bad_inputs():
    with pytest.raises(ValueError, match="epsilons"):
        gaussian_profile(2.0, [-1.0])
    tau, sens = _equal_sites(sites=3)
    with pytest.raises(ValueError, match="colluding"):
        dpcore.view_profiles(tau, sensitivity=sens, site=0, colluding=[0], epsilons=[1.0])
    with pytest.raises(ValueError, match="site"):
        dpcore.view_profiles(tau, sensitivity=sens, site=3, epsilons=[1.0])
    with pytest.raises(ValueError, match="view"):
        dpcore.view_noise_multipliers(dpcore.cape_design(tau), sensitivity=sens, view="everyone")
