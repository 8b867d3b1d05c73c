"""The joint-view-safe CAPE design (dpcore.protocol.joint_safe, issue #14, docs/privacy.md)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore import (
    cape_design,
    coalition_report,
    coalition_view,
    collusion_curve,
    gaussian_sigmas,
    joint_safe_design,
    party_views,
)
from dpcore.protocol.cape import site_releases


@pytest.mark.parametrize("n_sites", [2, 3, 5, 10, 50])
@pytest.mark.parametrize("price", [1.01, 1.05, 1.2])
def test_equal_sites_closed_form(n_sites, price):
    # S equal sites, μ = 1/S: a = (S − p²)/(p² − 1), τ_g² = p² τ²/S, τ_e² = a (p²/S)(1 − 1/S) τ²
    # (module docstring); when S ≤ p² conventional averaging (a = 0) is already within p.
    tau = 2.0
    d = joint_safe_design(np.full(n_sites, tau), price=price)
    p2 = min(price**2, n_sites)
    a = max(n_sites - price**2, 0.0) / (price**2 - 1)
    np.testing.assert_allclose(d.var_g, p2 * tau**2 / n_sites, rtol=1e-10)
    np.testing.assert_allclose(d.var_e, a * p2 / n_sites * (1 - 1 / n_sites) * tau**2, rtol=1e-9)
    assert d.tau_agg == pytest.approx(math.sqrt(p2) * d.tau_pool, rel=1e-12)
    view = coalition_view(d)
    np.testing.assert_allclose(view.joint_std, tau, rtol=1e-9)


def test_exact_covariance_algebra_unequal():
    # C = Σ_E + diag(τ_g²) in the aggregator's view; [C⁻¹]_ss = 1/τ_s² exactly (the design's
    # equality), computed here with a plain inverse, independent of dpcore.analysis.views.
    tau = np.array([0.5, 1.0, 2.0, 0.8, 1.3])
    mu = np.array([0.1, 0.3, 0.2, 0.25, 0.15])
    d = joint_safe_design(tau, weights=mu, price=1.1)
    cov = d.e_mixing @ d.e_mixing.T + np.diag(d.var_g)
    np.testing.assert_allclose(np.diag(np.linalg.inv(cov)), 1 / tau**2, rtol=1e-9)
    assert np.abs(mu @ d.e_mixing).max() < 1e-14 * np.abs(d.e_mixing).max()  # zero sum
    assert d.tau_agg == pytest.approx(1.1 * np.max(mu * tau), rel=1e-12)
    # the noise generator's view (F + G, independent) also carries τ_s
    np.testing.assert_allclose(d.var_f + d.var_g, tau**2, rtol=1e-12)


def test_monte_carlo_aggregator_cannot_beat_tau():
    # Run the real protocol on zero data; the aggregator holds r = â − F = E + G for all
    # sites. Its best linear unbiased estimate of a_s, w = C⁻¹e_s/[C⁻¹]_ss, has variance
    # τ_s² exactly; a sample variance over n draws has relative s.e. sqrt(2/n), so 5 s.e.
    # bound it (1 test per site, 5 sites: false-alarm chance ~3e-6). The sample covariance
    # matches C entrywise within 5 s.e. of a Wishart entry, sqrt((C_ii C_jj + C_ij²)/n).
    n = 200_000
    tau = np.array([0.5, 1.0, 2.0, 0.8, 1.3])
    mu = np.array([0.1, 0.3, 0.2, 0.25, 0.15])
    d = joint_safe_design(tau, weights=mu, price=1.05)
    _, f, _, released = site_releases(np.zeros((5, n)), d, symmetric=False, rng=_rng(3))
    resid = released - f
    cov = d.e_mixing @ d.e_mixing.T + np.diag(d.var_g)
    emp = resid @ resid.T / n
    tol = 5 * np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov**2) / n)
    assert np.all(np.abs(emp - cov) <= tol)
    precision = np.linalg.inv(cov)
    for s in range(5):
        w = precision[:, s] / precision[s, s]
        assert np.var(w @ resid) == pytest.approx(tau[s] ** 2, rel=5 * math.sqrt(2 / n))
    # and the aggregate Σ μ_s (â_s − F_s) carries exactly the design's τ_agg
    assert np.var(mu @ resid) == pytest.approx(d.tau_agg**2, rel=5 * math.sqrt(2 / n))


def _rng(seed):
    return np.random.default_rng(seed)


@st.composite
def unequal_sites(draw):
    sites = draw(st.integers(min_value=2, max_value=50))
    n = np.array(draw(st.lists(st.integers(10, 100_000), min_size=sites, max_size=sites)))
    eps = np.array(draw(st.lists(st.floats(0.01, 5.0), min_size=sites, max_size=sites)))
    delta = np.array(draw(st.lists(st.floats(1e-8, 1e-2), min_size=sites, max_size=sites)))
    raw = np.array(draw(st.lists(st.floats(0, 10), min_size=sites, max_size=sites)))
    if raw.sum() == 0:
        raw[0] = 1.0
    price = draw(st.floats(1.01, 1.5))
    return n, eps, delta, raw / raw.sum(), price


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(unequal_sites())
def test_every_site_joint_epsilon_within_its_promise(config):
    # The Done-when of issue #14: S = 2…50, random unequal N_s, ε_s, δ_s, μ_s; analytic
    # calibration (τ_s gives exactly ε_s); each site's ε in the aggregator's joint view
    # ≤ ε_s, and the aggregate std within [pooled, price × pooled].
    n, eps, delta, mu, price = config
    sens = 1.0 / n
    tau = gaussian_sigmas(sens, epsilon=eps, delta=delta, calibration="analytic")
    d = joint_safe_design(tau, weights=mu, price=price)
    report = coalition_report(d, sensitivity=sens, delta=delta, epsilon=eps)
    assert report.joint_meets.all() and report.release_meets.all()
    assert np.all(report.epsilon_joint <= eps * (1 + 1e-6))
    assert d.tau_pool * (1 - 1e-12) <= d.tau_agg <= price * d.tau_pool * (1 + 1e-12)
    assert d.tau_agg <= d.tau_conv * (1 + 1e-12)
    parties = party_views(d, sensitivity=sens, delta=delta, epsilon=eps)
    assert parties.meets.all()


def test_the_papers_design_breaks_the_joint_view_and_the_safe_one_does_not():
    # issue #14 figures: S = 10 equal sites, ε = 0.5, δ = 1e-3, N_s = 1000, analytic τ:
    # the paper's design gives joint ε ≈ 0.71 > 0.5; the joint-safe one exactly 0.5.
    sens, eps, delta = 1e-3, 0.5, 1e-3
    tau = gaussian_sigmas(np.full(10, sens), epsilon=eps, delta=delta, calibration="analytic")
    paper = coalition_report(cape_design(tau), sensitivity=sens, delta=delta, epsilon=eps)
    safe = coalition_report(joint_safe_design(tau), sensitivity=sens, delta=delta, epsilon=eps)
    assert paper.epsilon_joint.max() == pytest.approx(0.7135, abs=5e-4)
    assert not paper.joint_meets.any()
    np.testing.assert_allclose(safe.epsilon_joint, eps, rtol=1e-6)
    assert safe.joint_meets.all()


def test_price_is_validated():
    with pytest.raises(ValueError, match="price"):
        joint_safe_design([1.0, 1.0], price=1.0)
    with pytest.raises(ValueError, match="price"):
        joint_safe_design([1.0, 1.0], price=float("nan"))


@pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")
def test_cape_joint_in_the_sweeps_pays_a_small_price_and_leaves_the_others_unchanged():
    # PCA: S = 10 sites, 20 runs. The joint-safe design's aggregate noise std is 1.05× the
    # paper's, so its captured energy lies between capePCA's and conv's (√10 ≈ 3.2× noise),
    # within noise of capePCA: |Δ mean| ≤ 4 s.e. of the difference (s.e. from the runs).
    from dpcore import otd_sweep, pca_sweep

    small = {"dim": 30, "k": 5, "sites": 10, "n_per_site": 500, "runs": 20}
    with_joint = pca_sweep(**small, epsilon=[0.1, 1.0], algorithms=["cape", "cape_joint", "conv"])
    without = pca_sweep(**small, epsilon=[0.1, 1.0], algorithms=["cape", "conv"])
    keep = with_joint.algorithm != "cape_joint"
    np.testing.assert_array_equal(
        with_joint[keep].captured_energy.to_numpy(), without.captured_energy.to_numpy()
    )
    stats = with_joint.groupby(["algorithm", "epsilon"]).captured_energy_ratio.agg(
        ["mean", "std", "count"]
    )
    for eps in (0.1, 1.0):
        cape, joint, conv = (stats.loc[(a, eps)] for a in ("cape", "cape_joint", "conv"))
        se = math.hypot(cape["std"], joint["std"]) / math.sqrt(cape["count"])
        assert abs(cape["mean"] - joint["mean"]) <= 4 * se + 1e-12
        assert joint["mean"] > conv["mean"]
    tensors = otd_sweep(dim=6, k=2, epsilon=[1.0], runs=2, algorithms=["cape_joint"])
    assert set(tensors.algorithm) == {"cape_joint"} and tensors.component_error.notna().all()


@pytest.mark.parametrize("faithful", [True, False])
def test_cape_joint_pca_runs_the_protocol_with_the_joint_design(faithful):
    # With ε → ∞ (τ = 0) both designs are the non-private result exactly.
    from dpcore.factorization.pca import cape_pca, nonprivate_pca

    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 6, 6))
    moments = a @ a.transpose(0, 2, 1)
    w = np.full(4, 0.25)
    basis = cape_pca(
        moments, 2, tau_site=np.zeros(4), weights=w, faithful=faithful, design="joint", rng=rng
    )
    truth = nonprivate_pca(moments, 2, weights=w)
    np.testing.assert_allclose(np.abs(basis.T @ truth), np.eye(2), atol=1e-9)
    with pytest.raises(ValueError, match="design must be one of"):
        cape_pca(moments, 2, tau_site=np.ones(4), weights=w, design="nope", rng=rng)


def test_joint_safe_design_is_no_worse_than_the_papers_under_collusion():
    # docs/privacy.md: with k colluding sites the safe design's worst ε (both views) never
    # exceeds the paper's design's (S = 10, analytic ε_s = 0.5): the larger E's only add
    # noise where the coalition cannot pin them down. It is not collusion-proof: one colluder
    # already lifts the joint ε above ε_s.
    sens, eps, delta = 1e-3, 0.5, 1e-3
    tau = gaussian_sigmas(np.full(10, sens), epsilon=eps, delta=delta, calibration="analytic")
    paper = collusion_curve(cape_design(tau), sensitivity=sens, delta=delta, epsilon=eps)
    safe = collusion_curve(joint_safe_design(tau), sensitivity=sens, delta=delta, epsilon=eps)
    assert np.all(safe.epsilon.to_numpy() <= paper.epsilon.to_numpy() * (1 + 1e-9))
    joint = safe[safe.view == "all releases"].set_index("colluding").epsilon
    assert joint.loc[0] == pytest.approx(eps, rel=1e-6) and joint.loc[1] > eps
    assert [round(joint.loc[k], 2) for k in (1, 2, 5, 9)] == [0.53, 0.56, 0.73, 1.87]
