"""The CAPE protocol: designs, exact algebra, noise statistics, gain."""

import math

import numpy as np
import pytest

from dpcore import (
    best_conventional_gain,
    best_conventional_std,
    cape_average,
    cape_design,
    cape_gain,
    cape_gain_bounds,
    conventional_average,
    paper_design,
    site_noise_std,
)

# Unequal configurations: (τ_s, μ_s). The last one has a dominant site (u_1 > Σ others).
CONFIGS = {
    "equal-weights-unequal-tau": ([1.0, 2.0, 0.5, 3.0], [0.25, 0.25, 0.25, 0.25]),
    "unequal-weights": ([3.0, 1.0, 1.0, 0.5], [0.1, 0.3, 0.4, 0.2]),
    "dominant-site": ([10.0, 1.0, 1.0], [0.8, 0.1, 0.1]),
    "zero-weight-site": ([1.0, 2.0, 4.0], [0.5, 0.5, 0.0]),
    "two-sites": ([1.0, 5.0], [0.7, 0.3]),
    "tiny-taus": ([1e-9, 3e-9, 2e-9], [0.2, 0.3, 0.5]),
}


@pytest.mark.parametrize("sites", [2, 3, 5, 10, 100])
def test_equal_design_is_exactly_eq_2(sites):
    # Paper eq. (2): τ_e² = τ_f² = (1 − 1/S) τ_s², τ_g² = τ_s²/S.
    tau = 0.37
    d = cape_design([tau] * sites)
    np.testing.assert_allclose(d.var_e, (1 - 1 / sites) * tau**2, rtol=1e-12)
    np.testing.assert_allclose(d.var_f, (1 - 1 / sites) * tau**2, rtol=1e-12)
    np.testing.assert_allclose(d.var_g, tau**2 / sites, rtol=1e-12)
    assert d.tau_agg == pytest.approx(tau / sites, rel=1e-12)  # τ_c = τ_s/S (Lemma 1)
    assert d.tau_conv == pytest.approx(tau / math.sqrt(sites), rel=1e-12)


@pytest.mark.parametrize("config", CONFIGS.values(), ids=CONFIGS.keys())
def test_general_design_satisfies_every_constraint(config):
    tau, mu = map(np.asarray, config)
    d = cape_design(tau, weights=mu)
    assert d.feasible
    assert np.all(d.var_e >= 0) and np.all(d.var_g >= 0)
    # Sec. 3.1 constraints, met with equality: each party's view carries τ_s².
    np.testing.assert_allclose(d.var_e + d.var_g, tau**2, rtol=1e-12, atol=1e-30)
    np.testing.assert_allclose(d.var_f + d.var_g, tau**2, rtol=1e-12, atol=1e-30)
    # Aggregate noise equals the pooled requirement max_s μ_s² τ_s².
    assert np.sum(mu**2 * d.var_g) == pytest.approx(np.max(mu * tau) ** 2, rel=1e-12)
    assert d.tau_agg == pytest.approx(d.tau_pool, rel=1e-12)
    # Zero weighted sum: Σ_s μ_s e_s = 0 for every draw, i.e. μᵀM = 0; and var(e_s) = diag MMᵀ.
    scale = np.max(np.abs(d.e_mixing)) + 1e-300
    np.testing.assert_allclose(mu @ d.e_mixing / scale, 0.0, atol=1e-14)
    np.testing.assert_allclose(np.diag(d.e_covariance), d.var_e, rtol=1e-10, atol=1e-30)


def test_every_site_with_weight_keeps_some_local_noise():
    # Our design keeps τ_gs > 0 at every weighted site (not only in the equal case), so no
    # site's release depends on the e's alone.
    for tau, mu in CONFIGS.values():
        d = cape_design(tau, weights=mu)
        assert np.all(d.var_g[np.asarray(mu) > 0] > 0)


def test_pooled_requirement_is_papers_tau_c_for_proportional_weights():
    # μ_s = N_s/N and shared (ε, δ): max_s μ_s τ_s = τ_c = (1/(Nε)) sqrt(2 log(1.25/δ)).
    n = np.array([100, 400, 1500, 2000])
    tau = site_noise_std(n, epsilon=0.5, delta=1e-4)
    d = cape_design(tau, weights=n / n.sum())
    tau_c = site_noise_std([n.sum()], epsilon=0.5, delta=1e-4)[0]
    assert d.tau_agg == pytest.approx(tau_c, rel=1e-12)


def test_paper_closed_form_is_infeasible_for_five_equal_sites():
    # Sec. 3.1 / A.2 with S = 5 equal sites and τ_c = τ_s/S: τ_gS² = τ_s²(3 − S)/2 = −τ_s².
    tau, sites = 1.3, 5
    d = paper_design([tau] * sites, weights=[1 / sites] * sites, tau_pool=tau / sites)
    assert d.var_g[-1] == pytest.approx(tau**2 * (3 - sites) / 2, rel=1e-12)
    assert not d.feasible
    with pytest.raises(ValueError, match="infeasible"):
        _ = d.tau_g
    with pytest.raises(ValueError, match="infeasible"):
        cape_average(np.zeros((sites, 3)), [tau] * sites, design=d, rng=np.random.default_rng(0))


@pytest.mark.parametrize("sites", [2, 3])
def test_paper_closed_form_is_feasible_and_pooled_for_two_or_three_equal_sites(sites):
    tau = 0.8
    d = paper_design([tau] * sites, weights=[1 / sites] * sites, tau_pool=tau / sites)
    assert d.feasible
    assert d.tau_agg == pytest.approx(tau / sites, rel=1e-12)
    np.testing.assert_allclose(d.var_e + d.var_g, tau**2, rtol=1e-12)
    np.testing.assert_allclose(np.ones(sites) / sites @ d.e_mixing, 0.0, atol=1e-15)


VALUE_SHAPES = {"scalar": (), "vector": (7,), "sym-matrix": (6, 6), "sym-tensor": (4, 4, 4)}


@pytest.mark.parametrize("shape", VALUE_SHAPES.values(), ids=VALUE_SHAPES.keys())
def test_protocol_algebra_is_exact(shape):
    rng = np.random.default_rng(11)
    tau, mu = np.array([3.0, 1.0, 1.0, 0.5]), np.array([0.1, 0.3, 0.4, 0.2])
    values = rng.standard_normal((4, *shape))
    symmetric = len(shape) >= 2
    if symmetric:  # symmetrise the private values too
        values = sum(values.transpose(0, *p) for p in _perms(len(shape))) / math.factorial(
            len(shape)
        )
    run = cape_average(values, tau, weights=mu, symmetric=symmetric, rng=rng)
    # E_s cancel to rounding: |Σ μ_s E_s| is a few ulps of the e's magnitude.
    assert np.max(np.abs(np.tensordot(mu, run.e, axes=1))) < 1e-14 * np.max(np.abs(run.e)) * 10
    np.testing.assert_allclose(run.released, values + run.e + run.f + run.g, rtol=0, atol=0)
    # The aggregator's estimate equals Σ μ_s (A_s + G_s) to rounding.
    np.testing.assert_allclose(
        run.estimate, np.tensordot(mu, values + run.g, axes=1), rtol=0, atol=1e-13
    )
    if symmetric:
        for p in _perms(len(shape)):
            np.testing.assert_array_equal(run.e, run.e.transpose(0, *p))
            np.testing.assert_array_equal(run.g, run.g.transpose(0, *p))
    names = [m.name for m in run.messages]
    assert names[:3] == ["E_1", "F_1", "Â_1"] and len(names) == 12


def _perms(order):
    import itertools

    return [tuple(i + 1 for i in p) for p in itertools.permutations(range(order))]


def _noise_draws(scheme, tau, mu, n_entries, repeats, seed):
    """Per-entry noise of many protocol runs on all-zero values: (repeats*n_entries, ...)."""
    rng = np.random.default_rng(seed)
    values = np.zeros((len(tau), n_entries))
    runs = [scheme(values, tau, weights=mu, rng=r) for r in rng.spawn(repeats)]
    return runs


@pytest.mark.parametrize(
    ("tau", "mu"),
    [([1.0] * 5, None), *CONFIGS.values()],
    ids=["equal-5", *CONFIGS.keys()],
)
def test_empirical_noise_variances_match_the_design(tau, mu):
    # n = 20 runs × 5,000 entries = 100,000 independent draws per variance. An empirical
    # variance has relative standard error sqrt(2/n) ≈ 0.0045; we allow 5 of them (0.022).
    tau = np.asarray(tau)
    runs = _noise_draws(cape_average, tau, mu, n_entries=5_000, repeats=20, seed=5)
    design = runs[0].design
    n = 100_000
    tol = 5 * math.sqrt(2 / n)
    estimate = np.concatenate([r.estimate for r in runs])
    np.testing.assert_allclose(estimate.var(), design.tau_pool**2, rtol=tol)
    for s in np.flatnonzero(design.weights > 0):
        seen_by_aggregator = np.concatenate([r.e[s] + r.g[s] for r in runs])  # it knows F_s
        seen_by_generator = np.concatenate([r.f[s] + r.g[s] for r in runs])  # it knows E_s
        assert seen_by_aggregator.var() >= tau[s] ** 2 * (1 - tol)
        assert seen_by_generator.var() >= tau[s] ** 2 * (1 - tol)
    # The e's covariance matches the design's M Mᵀ (entries within 5 s.e. of the largest).
    e = np.concatenate([r.e for r in runs], axis=1)
    emp = np.cov(e)
    np.testing.assert_allclose(emp, design.e_covariance, atol=tol * design.var_e.max())


def test_conventional_noise_variance_is_sum_of_weighted_site_variances():
    tau, mu = np.array([1.0, 2.0, 0.5, 3.0]), np.array([0.1, 0.2, 0.3, 0.4])
    runs = _noise_draws(conventional_average, tau, mu, n_entries=5_000, repeats=20, seed=6)
    estimate = np.concatenate([r.estimate for r in runs])
    # Same 100,000-draw tolerance as above.
    np.testing.assert_allclose(
        estimate.var(), np.sum(mu**2 * tau**2), rtol=5 * math.sqrt(2 / 100_000)
    )
    assert np.all(runs[0].e == 0) and runs[0].messages[0].name == "Â_1"


def test_cape_beats_conventional_by_factor_s_for_equal_sites():
    d = cape_design([2.0] * 8)
    assert d.tau_conv**2 / d.tau_agg**2 == pytest.approx(8.0, rel=1e-12)


def test_same_seed_same_run():
    a = cape_average(np.ones((3, 4)), [1, 2, 3], rng=np.random.default_rng(42))
    b = cape_average(np.ones((3, 4)), [1, 2, 3], rng=np.random.default_rng(42))
    np.testing.assert_array_equal(a.released, b.released)
    np.testing.assert_array_equal(a.estimate, b.estimate)


def test_gain_minimum_at_equal_sizes_and_maximum_at_extreme():
    n_total, sites = 1000, 4
    low, high = cape_gain_bounds(n_total, sites)
    assert cape_gain([250] * 4) == pytest.approx(low, rel=1e-12) == 4
    assert cape_gain([1, 1, 1, 997]) == pytest.approx(high, rel=1e-12)
    rng = np.random.default_rng(0)
    for _ in range(200):  # every other split lies between the two
        cuts = np.sort(rng.choice(np.arange(1, n_total), size=sites - 1, replace=False))
        sizes = np.diff(np.concatenate([[0], cuts, [n_total]]))
        assert low - 1e-9 <= cape_gain(sizes) <= high + 1e-9


def test_gain_is_the_variance_ratio_of_conv_over_cape():
    # Prop. 1: G = τ_ag²/τ_imp² with conv weighted 1/S and CAPE at the pooled level.
    n = np.array([50, 100, 400])
    tau = site_noise_std(n, epsilon=0.5, delta=1e-3)
    conv = cape_design(tau).tau_conv ** 2
    pooled = cape_design(tau, weights=n / n.sum()).tau_agg ** 2
    assert conv / pooled == pytest.approx(cape_gain(n), rel=1e-12)


def test_three_gains_each_compare_one_thing():
    # issue #14, item 2: sizes [100, 100, 100, 1000] at a common (ε, δ). Like for like (same
    # weights N_s/N) CAPE gains exactly S = 4; against the least-noise conventional estimator
    # (weights ∝ N_s², variance c²/ΣN_s²) N²/ΣN_s² = 1.64; the paper's G(n) = 31.8 also counts
    # the reweighting from 1/S to N_s/N.
    n = np.array([100, 100, 100, 1000])
    tau = site_noise_std(n, epsilon=0.5, delta=1e-3)
    design = cape_design(tau, weights=n / n.sum())
    assert design.gain_same_weights == pytest.approx(4.0, rel=1e-12)
    assert design.gain_best_conventional == pytest.approx(1300**2 / 1_030_000, rel=1e-12)
    assert best_conventional_gain(n) == pytest.approx(1.6408, abs=1e-4)
    assert cape_gain(n) == pytest.approx(31.79, abs=0.01)
    # the best conventional weighting really is the least-variance one: any other is worse
    rng = np.random.default_rng(0)
    best = best_conventional_std(tau) ** 2
    for _ in range(100):
        w = rng.dirichlet(np.ones(4))
        assert np.sum(w**2 * tau**2) >= best * (1 - 1e-12)
    inverse = (1 / tau**2) / np.sum(1 / tau**2)
    assert np.sum(inverse**2 * tau**2) == pytest.approx(best, rel=1e-12)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: cape_design([1.0]), r"S in \[2, "),
        (lambda: cape_design([1.0, -1.0]), "tau_site"),
        (lambda: cape_design([1.0, np.nan]), "tau_site"),
        (lambda: cape_design([1.0, 1.0], weights=[0.5, 0.6]), "weights must sum to 1"),
        (lambda: cape_design([1.0, 1.0], weights=[1.5, -0.5]), "weights"),
        (lambda: cape_design([1.0, 1.0], weights=[1.0]), "one entry per site"),
        (lambda: cape_gain([10]), "n_per_site"),
        (lambda: cape_gain([10, 0]), "n_per_site"),
        (lambda: cape_gain_bounds(3, 4), "total"),
        (lambda: paper_design([1, 1], weights=[0.5, 0.5], tau_pool=-1), "tau_pool"),
        (
            lambda: cape_average(np.zeros((3, 2)), [1, 1], rng=np.random.default_rng()),
            "one entry per site",
        ),
        (
            lambda: cape_average(
                np.zeros((2, 3, 4)), [1, 1], symmetric=True, rng=np.random.default_rng()
            ),
            "symmetric",
        ),
        (
            lambda: cape_average(np.full((2, 2), np.inf), [1, 1], rng=np.random.default_rng()),
            "finite",
        ),
    ],
)
def test_bad_input_raises_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_normalise_weights():
    from dpcore import normalise_weights

    np.testing.assert_allclose(normalise_weights([1, 3]), [0.25, 0.75])
    with pytest.raises(ValueError, match="positive sum"):
        normalise_weights([0, 0])
    with pytest.raises(ValueError, match="weights"):
        normalise_weights([1, -1])
