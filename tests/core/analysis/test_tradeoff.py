"""Trade-off curves, dips and posteriors (dpcore/analysis/tradeoff.py), each against an independent
computation: Neyman–Pearson tests on the two Gaussians, the canonical four-point (ε, δ) pair,
brute force over fine α grids, and the audit's own bound."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore import epsilon_lower_bound, gaussian_delta
from dpcore.analysis.tradeoff import (
    attack_box,
    dp_power,
    dp_tradeoff,
    gaussian_power,
    gaussian_tradeoff,
    gdp_epsilon,
    gdp_mu,
    largest_dip,
    posterior_bound,
    posterior_curve,
    read_view,
    tradeoff_curves,
)

# a fine α grid: log-spaced into the tails (the Gaussian's peaks sit at α* = Φ(−ε/μ − μ/2),
# from ~1e-9 to 0.5 for the cases below) and linear over the middle
GRID = np.unique(np.concatenate([np.logspace(-14, 0, 100_001), np.linspace(0, 1, 50_001)]))


def _cases(n: int, seed: int):
    """(μ, ε, δ) spread over the app's range: μ in [0.05, 5], ε in [0.05, 5], δ in [1e-8, 0.1]."""
    rng = np.random.default_rng(seed)
    return zip(
        np.exp(rng.uniform(math.log(0.05), math.log(5), n)),
        np.exp(rng.uniform(math.log(0.05), math.log(5), n)),
        10 ** rng.uniform(-8, -1, n),
        strict=True,
    )


def test_gaussian_curve_is_the_neyman_pearson_test_of_two_gaussians():
    # N(0, 1) against N(μ, 1); the most powerful test at level α rejects x > t (monotone
    # likelihood ratio): α = P(X > t | 0), β = P(X ≤ t | μ), from scipy's normal directly
    for mu in (0.1, 0.7, 3.0):
        t = np.linspace(-6, 8, 301)
        alpha, beta = stats.norm.sf(t), stats.norm.cdf(t - mu)
        assert np.allclose(gaussian_tradeoff(alpha, mu), beta, rtol=1e-9, atol=1e-15)
        assert np.allclose(gaussian_power(alpha, mu), stats.norm.sf(t - mu), rtol=1e-9, atol=0)
        curve = gaussian_tradeoff(GRID[::97], mu)
        # symmetric (f = f⁻¹), below the coin 1 − α, decreasing
        assert np.allclose(gaussian_tradeoff(curve, mu), GRID[::97], atol=1e-9)
        assert np.all(curve <= 1 - GRID[::97] + 1e-15) and np.all(np.diff(curve) <= 1e-15)


def test_promise_curve_is_the_canonical_pair_tested_by_neyman_pearson():
    # Kairouz, Oh & Viswanath's worst (ε, δ) pair on four outcomes; its most powerful tests
    # reject outcomes in decreasing likelihood ratio (∞, e^ε, e^-ε, 0), randomising on the
    # boundary: the curve is the linear interpolation of the cumulative (α, 1 − β) corners
    for eps, delta in ((0.5, 1e-3), (2.0, 0.05), (0.05, 1e-6)):
        w = math.exp(eps) / (1 + math.exp(eps))
        p1 = np.array([delta, (1 - delta) * w, (1 - delta) * (1 - w), 0.0])  # with the record
        p0 = p1[::-1]  # without: LR p1/p0 = ∞, e^ε, e^-ε, 0 in this order
        corners_a = np.concatenate([[0], np.cumsum(p0)])
        corners_p = np.concatenate([[0], np.cumsum(p1)])
        alpha = np.linspace(0, 1, 10_001)
        beta = 1 - np.interp(alpha, corners_a, corners_p)
        assert np.allclose(dp_tradeoff(alpha, epsilon=eps, delta=delta), beta, atol=1e-12)
        assert np.allclose(dp_power(alpha, eps, delta), 1 - beta, atol=1e-12)


def test_mu_and_epsilon_convert_exactly():
    for mu, eps, delta in _cases(40, 1):
        m = gdp_mu(epsilon=eps, delta=delta)
        assert gaussian_delta(1 / m, sensitivity=1.0, epsilon=eps) == pytest.approx(delta, rel=1e-9)
        assert gdp_epsilon(m, delta) == pytest.approx(eps, rel=1e-9)
        e = gdp_epsilon(mu, delta)
        if e > 0:  # the view's ε: its δ there is the promise's δ, and back to μ
            assert gaussian_delta(1 / mu, sensitivity=1.0, epsilon=e) == pytest.approx(
                delta, rel=1e-9
            )
            assert gdp_mu(epsilon=e, delta=delta) == pytest.approx(mu, rel=1e-9)


def test_the_curve_dips_under_the_promise_exactly_when_the_views_epsilon_exceeds_it():
    seen = set()
    for mu, eps, delta in _cases(60, 2):
        gap = dp_tradeoff(GRID, epsilon=eps, delta=delta) - gaussian_tradeoff(GRID, mu)
        dip = largest_dip(mu, eps, delta)
        # the closed form is the supremum (or 0, at α = 1, where both curves end): the grid
        # never beats it, and gets within its spacing (the gap's slope is at most e^ε + 1,
        # the grid's step ≤ 1e-4·α there)
        assert gap.max() <= max(dip.depth, 0.0) + 1e-12
        if dip.depth > 0:
            assert gap.max() >= dip.depth - (math.exp(eps) + 1) * 1e-4 * max(dip.alpha, 1e-5)
        view_eps = gdp_epsilon(mu, delta)
        if abs(view_eps - eps) > 1e-6 * eps:  # away from the tie
            assert dip.breaks == (view_eps > eps) == bool(gap.max() > 0)
            seen.add(dip.breaks)
        assert dip.beta_promise - dip.beta_view == pytest.approx(dip.depth, abs=1e-12)
    assert seen == {True, False}  # both kinds of case were drawn


def test_exactly_calibrated_view_touches_the_promise():
    for _, eps, delta in _cases(20, 3):
        dip = largest_dip(gdp_mu(epsilon=eps, delta=delta), eps, delta)
        assert abs(dip.depth) <= 1e-9 * delta


@pytest.mark.parametrize("prior", [0.01, 0.1, 0.5, 0.9])
def test_posterior_bound_is_the_supremum_over_the_curve(prior):
    for mu, eps, delta in _cases(25, 4):
        view_eps = gdp_epsilon(mu, delta)
        # power − δ cancels: float64 keeps it to ~2e-16·δ/α relative, so α ≥ 1e-6·δ
        # (below every optimum here) keeps the brute force exact to 1e-9
        a = GRID[GRID >= 1e-6 * delta]
        brute = posterior_curve(a, gaussian_power(a, mu), prior=prior, delta=delta)
        exact = posterior_bound(epsilon=view_eps, prior=prior)
        assert brute.max() <= exact * (1 + 1e-9)
        assert brute.max() >= exact * (1 - 1e-4)
        # the promise's own curve: its supremum is the promise's ε
        brute = posterior_curve(a, dp_power(a, eps, delta), prior=prior, delta=delta)
        assert brute.max() == pytest.approx(posterior_bound(epsilon=eps, prior=prior), rel=1e-9)
        # a view breaks its promise exactly when it allows a larger posterior
        if abs(view_eps - eps) > 1e-6 * eps:
            assert (exact > posterior_bound(epsilon=eps, prior=prior)) == (view_eps > eps)


def test_posterior_inequality_holds_for_every_threshold_test_and_is_tight_at_the_loss_event():
    # P(in | S) ≤ q + (1 − q)·p·δ/P(S) for every event; with equality on S = {loss > ε_v}
    for mu, _, delta in _cases(30, 5):
        eps = gdp_epsilon(mu, delta)
        if eps == 0:
            continue
        for p in (0.01, 0.1, 0.5):
            q = posterior_bound(epsilon=eps, prior=p)
            t = np.concatenate([np.linspace(-5, 10, 301), [eps / mu + mu / 2]])  # last: the loss
            p0, p1 = stats.norm.sf(t), stats.norm.sf(t - mu)  # P_D(S), P_D′(S) for S = {x > t}
            seen = p * p1 + (1 - p) * p0
            post = p * p1 / seen
            bound = q + (1 - q) * p * delta / seen
            assert np.all(post <= bound * (1 + 1e-9))
            assert post[-1] == pytest.approx(bound[-1], rel=1e-7)


def test_attack_box_corner_under_the_promise_iff_the_audit_proves_a_break():
    rng = np.random.default_rng(6)
    agree = {True: 0, False: 0}
    for _ in range(300):
        n0, n1 = (int(x) for x in rng.integers(100, 10**6, 2))
        fp, fn = int(rng.integers(0, n0 // 20)), int(rng.integers(n1 // 2, n1))
        eps, delta = float(rng.uniform(0.05, 3)), float(10 ** rng.uniform(-6, -2))
        box = attack_box(fp, n0, fn, n1)
        proven, fpr_up, fnr_up = epsilon_lower_bound(fp, n0, fn, n1, delta=delta)
        assert (box.fpr_high, box.fnr_high) == (fpr_up, fnr_up)
        assert box.fpr_low <= box.fpr <= box.fpr_high and box.fnr_low <= box.fnr <= box.fnr_high
        under = box.fnr_high < float(dp_tradeoff(box.fpr_high, epsilon=eps, delta=delta))
        if abs(proven - eps) > 1e-9:
            assert under == (proven > eps)
            agree[under] += 1
    assert min(agree.values()) > 10  # both outcomes drawn


def test_read_view_collects_the_same_numbers():
    r = read_view(1 / 3.42, epsilon=0.5, delta=1e-3)
    assert r.epsilon == gdp_epsilon(1 / 3.42, 1e-3)
    assert r.dip == largest_dip(1 / 3.42, 0.5, 1e-3) and r.dip.breaks
    expected = tuple(posterior_bound(epsilon=r.epsilon, prior=p) for p in (0.01, 0.1, 0.5))
    assert r.posteriors == expected


def test_curves_frame_holds_each_view_and_the_promise():
    frame = tradeoff_curves({"a": 0.3, "b": 2.0}, epsilon=0.5, delta=1e-3, points=50)
    assert list(frame.view.unique()) == ["a", "b", "promise"]
    for name, part in frame.groupby("view"):
        expected = (
            dp_tradeoff(part.alpha, epsilon=0.5, delta=1e-3)
            if name == "promise"
            else gaussian_tradeoff(part.alpha, part.mu.iloc[0])
        )
        assert np.allclose(part.beta, expected, rtol=0, atol=1e-15)
        assert np.allclose(part.power, 1 - part.beta, atol=1e-12)
        under = dp_tradeoff(part.alpha, epsilon=0.5, delta=1e-3) - part.beta
        assert np.array_equal(part.under, under)
        if name == "a":  # μ = 0.3 breaks (ε, δ) = (0.5, 1e-3): under it around α*, no deeper
            dip = largest_dip(0.3, 0.5, 1e-3)
            assert under.max() > 0 and under.max() <= dip.depth
        assert part.alpha.iloc[0] == pytest.approx(1e-6) and part.alpha.iloc[-1] == 1.0


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: gaussian_tradeoff(1.5, 1.0), "alpha"),
        (lambda: gaussian_tradeoff(0.5, -1.0), "mu"),
        (lambda: dp_tradeoff(0.5, epsilon=1.0, delta=0.0), "delta"),
        (lambda: dp_tradeoff([0.1, np.nan], epsilon=1.0, delta=0.1), "alpha"),
        (lambda: gdp_mu(epsilon=0.0, delta=1e-5), "epsilon"),
        (lambda: largest_dip(0.0, 1.0, 1e-5), "mu"),
        (lambda: posterior_bound(epsilon=1.0, prior=1.0), "prior"),
        (lambda: posterior_curve(0.1, 0.5, prior=0.5, delta=1.0), "delta"),
        (lambda: posterior_curve(0.1, 1.5, prior=0.5, delta=0.1), "power"),
        (lambda: attack_box(1, 0, 1, 10), "negatives"),
        (lambda: read_view(1.0, epsilon=1.0, delta=1e-5, priors=(0.0,)), "prior"),
        (lambda: tradeoff_curves({"a": 1.0}, epsilon=1.0, delta=1e-5, points=3), "points"),
        (lambda: tradeoff_curves({"a": -1.0}, epsilon=1.0, delta=1e-5), "mu"),
    ],
)
def test_bad_inputs_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_the_numbers_docs_audit_quotes_are_the_cores():
    """docs/audit.md's trade-off paragraph, recomputed by the command it names."""
    from pathlib import Path

    import dpcore
    from dpcore.analysis.tradeoff import PRIORS

    text = (Path(__file__).resolve().parents[3] / "docs" / "audit.md").read_text()
    tau = dpcore.gaussian_sigmas(np.full(10, 1e-3), epsilon=0.5, delta=1e-3, calibration="analytic")
    z = dpcore.view_noise_multipliers(
        dpcore.cape_design(tau), sensitivity=1e-3, view="aggregator's joint view"
    )[0]
    r = read_view(1 / z, epsilon=0.5, delta=1e-3)
    quoted = [
        f"μ = {r.mu:.4f}",
        f"ε = {r.epsilon:.4f}",
        f"{r.dip.depth:.3g}, at α = {r.dip.alpha:.3g}",
        f"{100 * r.posteriors[0]:.3g} %, {100 * r.posteriors[1]:.3g} %",
        f"or {100 * r.posteriors[2]:.3g} %",
        f"allows {100 * posterior_bound(epsilon=0.5, prior=PRIORS[0]):.3g} %",
        f"{100 * posterior_bound(epsilon=0.5, prior=PRIORS[1]):.3g} % and "
        f"{100 * posterior_bound(epsilon=0.5, prior=PRIORS[2]):.3g} %",
    ]
    flat = " ".join(text.split())
    for number in quoted:
        assert " ".join(number.split()) in flat, number
