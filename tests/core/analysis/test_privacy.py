"""Per-party views, collusion, dropouts and the inverse calibration (dpcore.analysis.views)."""

import itertools
import math
import warnings

import numpy as np
import pytest

import dpcore
from dpcore.analysis import views
from dpcore.analysis.views import (
    MAX_EXACT_COALITIONS,
    coalition_report,
    coalition_view,
    collusion_bound,
    collusion_curve,
    dropout_analysis,
    dropout_run,
    party_views,
)
from dpcore.mechanisms.calibration import (
    ClassicGaussianWarning,
    gaussian_delta,
    gaussian_epsilon,
    gaussian_sigma,
    gaussian_sigmas,
)
from dpcore.protocol.cape import cape_design, paper_design, site_releases
from dpcore.protocol.joint_safe import joint_safe_design

UNEQUAL = cape_design([0.5, 1.0, 2.0, 0.8, 1.3], weights=[0.1, 0.3, 0.2, 0.25, 0.15])


# --- sanity anchors (issue #8) ------------------------------------------------------------


@pytest.mark.parametrize("design", [cape_design(np.ones(6)), UNEQUAL], ids=["equal", "unequal"])
def test_no_colluding_sites_every_site_keeps_its_full_tau_in_its_own_release(design):
    view = coalition_view(design)
    np.testing.assert_allclose(view.release_std, design.tau_site, rtol=1e-12)


@pytest.mark.parametrize("n_sites", [2, 3, 5, 10])
def test_all_other_sites_colluding_leave_only_g(n_sites):
    design = cape_design(np.full(n_sites, 2.0))
    view = coalition_view(design, range(1, n_sites))
    assert view.honest.tolist() == [0]
    # the zero sum pins E_1 down: only G_1 is left, std τ/√S in the equal case
    np.testing.assert_allclose(view.release_std, [2.0 / math.sqrt(n_sites)], rtol=1e-10)
    np.testing.assert_allclose(view.joint_std, view.release_std, rtol=1e-10)


@pytest.mark.parametrize("design", [cape_design(np.ones(4)), UNEQUAL], ids=["equal", "unequal"])
def test_noise_generator_with_aggregator_removes_all_correlated_noise(design):
    view = coalition_view(design, noise_generator=True)
    np.testing.assert_allclose(view.covariance, np.diag(design.var_g), rtol=1e-12)
    np.testing.assert_allclose(view.joint_std, np.sqrt(design.var_g), rtol=1e-12)


# --- the joint view ---------------------------------------------------------------------------


@pytest.mark.parametrize("n_sites", [2, 3, 10, 50])
def test_aggregator_joint_view_equal_sites_closed_form(n_sites):
    # C = τ²((1 + 1/S) I − J/S), whose inverse has diagonal 2/(τ²(1 + 1/S)):
    # σ_joint = τ sqrt((1 + 1/S)/2) < τ (derivation in docs/privacy.md).
    view = coalition_view(cape_design(np.full(n_sites, 3.0)))
    np.testing.assert_allclose(view.joint_std, 3.0 * math.sqrt((1 + 1 / n_sites) / 2), rtol=1e-10)


def test_joint_never_exceeds_own_release_and_more_colluders_never_help():
    prev = coalition_view(UNEQUAL)
    assert np.all(prev.joint_std <= prev.release_std * (1 + 1e-12))
    for n in range(1, 5):
        view = coalition_view(UNEQUAL, range(n))
        assert np.all(view.joint_std <= view.release_std * (1 + 1e-12))
        # honest sites common to both: knowing more can only lower the noise left
        common = np.isin(prev.honest, view.honest)
        assert np.all(view.release_std <= prev.release_std[common] * (1 + 1e-12))
        prev = view


def _coalition_residuals(design, colluding, n_draws, seed):
    """Draw the protocol's noise and remove what the coalition knows (conditional mean)."""
    e, f, _, released = site_releases(
        np.zeros((design.n_sites, n_draws)),
        design,
        symmetric=False,
        rng=np.random.default_rng(seed),
    )
    view = coalition_view(design, colluding)
    known = list(view.colluding)
    cov = design.e_covariance
    honest = view.honest
    if known:
        gain = cov[np.ix_(honest, known)] @ np.linalg.pinv(cov[np.ix_(known, known)])
        mean = gain @ e[known]
    else:
        mean = 0.0
    return view, (released - f)[honest] - mean


@pytest.mark.parametrize("colluding", [(), (1,), (0, 3)])
def test_monte_carlo_covariance_of_what_the_coalition_sees(colluding):
    # Sample covariance entries have std sqrt((C_ii C_jj + C_ij²)/n); 5 of them is the
    # tolerance (a false alarm has probability ~1e-6 per entry at n = 200,000).
    n = 200_000
    view, resid = _coalition_residuals(UNEQUAL, colluding, n, seed=len(colluding))
    emp = resid @ resid.T / n
    c = view.covariance
    tol = 5 * np.sqrt((np.outer(np.diag(c), np.diag(c)) + c**2) / n)
    assert np.all(np.abs(emp - c) <= tol), np.abs(emp - c) / tol


def test_monte_carlo_best_estimate_attains_the_joint_std():
    # The best linear unbiased estimate of a_s from all honest releases has variance
    # 1/[C⁻¹]_ss = σ_joint²; its sample variance is within 5·sqrt(2/n) relative.
    n = 200_000
    view, resid = _coalition_residuals(UNEQUAL, (), n, seed=7)
    precision = np.linalg.inv(view.covariance)
    for s in range(view.honest.size):
        w = precision[:, s] / precision[s, s]
        var = np.var(w @ resid)
        assert var == pytest.approx(view.joint_std[s] ** 2, rel=5 * math.sqrt(2 / n))
    assert np.all(view.joint_std < view.release_std)


def test_report_and_curve_give_consistent_epsilons():
    design = cape_design(np.full(9, 0.02))
    # the promise ε_s is the exact ε of τ_s here (as with the analytic calibration)
    promised = gaussian_epsilon(0.02, sensitivity=0.01, delta=1e-5)
    report = coalition_report(design, sensitivity=0.01, delta=1e-5, epsilon=promised)
    assert report.release_meets.all() and not report.joint_meets.any()
    np.testing.assert_allclose(report.epsilon_release, report.epsilon_at_required, rtol=1e-9)
    assert np.all(report.epsilon_joint > report.epsilon_at_required)
    curve = collusion_curve(design, sensitivity=0.01, delta=1e-5, epsilon=promised)
    own = curve[curve.view == "own release"].set_index("colluding")
    assert own.epsilon.is_monotonic_increasing
    assert own.loc[0, "epsilon"] == pytest.approx(report.epsilon_at_required.max(), rel=1e-9)
    assert own.loc[8, "std_ratio"] == pytest.approx(1 / 3, rel=1e-9)  # only G: τ/√9
    joint = curve[curve.view == "all releases"].set_index("colluding")
    assert np.all(joint.epsilon >= own.epsilon - 1e-12)


@pytest.mark.parametrize(("n_sites", "bound"), [(2, 0), (3, 0), (4, 1), (9, 2), (10, 3)])
def test_collusion_bound(n_sites, bound):
    assert collusion_bound(n_sites) == bound


def test_party_views():
    promised = [gaussian_epsilon(t, sensitivity=0.1, delta=1e-5) for t in UNEQUAL.tau_site]
    views = party_views(UNEQUAL, sensitivity=0.1, delta=1e-5, epsilon=promised)
    agg = views[views.party == "aggregator"]
    np.testing.assert_allclose(agg.release_std, UNEQUAL.tau_site, rtol=1e-12)
    ng = views[views.party == "noise generator"]
    np.testing.assert_allclose(ng.joint_std, UNEQUAL.tau_site, rtol=1e-12)
    assert ng.meets.all()
    agg = views[views.party == "aggregator"]
    assert not agg.meets.any() and np.all(agg.epsilon_joint > agg.promised_epsilon)
    final = views[views.party.str.startswith("anyone")]
    assert np.all(final.joint_std >= UNEQUAL.tau_site * (1 - 1e-12))
    sites = views[views.party.str.startswith("site")]
    assert np.isinf(sites.joint_std).all() and len(sites) == 5 * 4


# --- verdicts are ε against the promised ε_s at the same δ (issue #14) -----------------------


def _mean_sites(sites, eps, calibration, delta=1e-3, n=1000):
    sens = np.full(sites, 1.0 / n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClassicGaussianWarning)  # classic at ε ≥ 1, on purpose
        tau = gaussian_sigmas(sens, epsilon=eps, delta=delta, calibration=calibration)
    return cape_design(tau), sens


@pytest.mark.parametrize(
    ("eps", "calibration", "joint_eps", "holds"),
    [
        (0.5, "classic", 0.3964, True),  # promise holds: classic's slack covers the gap
        (0.5, "analytic", 0.7135, False),  # the promise really breaks
        (2.0, "classic", 2.078, False),  # classic's slack runs out at ε ≳ 1–2
    ],
)
def test_joint_view_verdict_is_epsilon_against_the_promise(eps, calibration, joint_eps, holds):
    # issue #14, item 1: S = 10 sites of N = 1000, δ = 1e-3 (the Privacy explorer's sites)
    design, sens = _mean_sites(10, eps, calibration)
    report = coalition_report(design, sensitivity=sens, delta=1e-3, epsilon=eps)
    assert report.epsilon_joint.max() == pytest.approx(joint_eps, abs=5e-4)
    assert report.joint_meets.all() == holds and report.joint_meets.any() == holds
    assert report.release_meets.all()
    np.testing.assert_allclose(report.promised_epsilon, eps)
    views = party_views(design, sensitivity=sens, delta=1e-3, epsilon=eps)
    assert views[views.party == "aggregator"].meets.all() == holds


def test_classic_own_noise_is_not_the_promise():
    # 'ε at τ_s' (0.277 for classic at ε = 0.5, δ = 1e-3) is what τ_s alone gives, not ε_s
    design, sens = _mean_sites(10, 0.5, "classic")
    report = coalition_report(design, sensitivity=sens, delta=1e-3, epsilon=0.5)
    assert report.epsilon_at_required.max() == pytest.approx(0.2772, abs=5e-4)
    assert (report.promised_epsilon == 0.5).all()


def test_collusion_curve_marks_broken_promises():
    design, sens = _mean_sites(6, 0.5, "analytic")
    curve = collusion_curve(design, sensitivity=sens, delta=1e-3, epsilon=0.5)
    own = curve[curve.view == "own release"].set_index("colluding")
    assert own.loc[0, "meets"] and not own.loc[5, "meets"]
    joint = curve[curve.view == "all releases"].set_index("colluding")
    assert not joint.meets.any()
    assert (curve.promised_epsilon == 0.5).all()


# --- the worst coalition of each size (issue #22, item 10) ----------------------------------

VIEW_COLUMNS = {
    "own release": ("epsilon_release", "release_meets"),
    "all releases": ("epsilon_joint", "joint_meets"),
}


def _random_sites(seed, n_sites, calibration):
    """Random unequal sites releasing means: N_s, ε_s, δ_s, μ_s all differ (fixed seed)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(50, 3001, n_sites)
    eps = rng.uniform(0.1, 3.0, n_sites)
    delta = 10.0 ** rng.uniform(-6, -2, n_sites)
    weights = rng.dirichlet(np.ones(n_sites))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClassicGaussianWarning)  # classic at ε ≥ 1, on purpose
        tau = gaussian_sigmas(1.0 / sizes, epsilon=eps, delta=delta, calibration=calibration)
    return tau, 1.0 / sizes, eps, delta, weights


def _design(kind, tau, weights):
    if kind == "joint":
        return joint_safe_design(tau, weights=weights)
    made = cape_design(tau, weights=weights)
    if kind == "paper":  # the closed form of Sec. 3.1, at the same pooled level
        return paper_design(tau, weights=weights, tau_pool=made.tau_pool)
    return made


def _brute_force(design, sens, eps, delta, noise_generator):
    """(size, view) → (largest ε/ε_s over every coalition of that size, every promise kept)."""
    out = {}
    for size in range(design.n_sites):
        for coalition in itertools.combinations(range(design.n_sites), size):
            report = coalition_report(
                design,
                sensitivity=sens,
                colluding=coalition,
                epsilon=eps,
                delta=delta,
                noise_generator=noise_generator,
            )
            for view, (col, ok) in VIEW_COLUMNS.items():
                worst, kept = out.get((size, view), (-math.inf, True))
                ratio = float((report[col] / report.promised_epsilon).max())
                out[size, view] = (max(worst, ratio), kept and bool(report[ok].all()))
    return out


def _check_against_brute_force(design, sens, eps, delta, noise_generator=False):
    curve = collusion_curve(
        design, sensitivity=sens, epsilon=eps, delta=delta, noise_generator=noise_generator
    )
    brute = _brute_force(design, sens, eps, delta, noise_generator)
    assert curve.exact.all() and len(curve) == 2 * design.n_sites
    for row in curve.itertuples():
        worst, kept = brute[row.colluding, row.view]
        # the same ε's (one root find each) picked by a different route: equal to rounding
        assert row.epsilon / row.promised_epsilon == pytest.approx(worst, rel=1e-9)
        assert bool(row.meets) == kept
        # the coalition and site it names attain the worst case
        report = coalition_report(
            design,
            sensitivity=sens,
            colluding=[k - 1 for k in row.coalition],
            epsilon=eps,
            delta=delta,
            noise_generator=noise_generator,
        ).set_index("site")
        named = report.loc[row.site, VIEW_COLUMNS[row.view][0]]
        assert named == pytest.approx(row.epsilon, rel=1e-9)
    for view in VIEW_COLUMNS:  # a worst coalition grown by one more site can only see more
        part = curve[curve.view == view]
        ratio = (part.epsilon / part.promised_epsilon).to_numpy()
        assert np.all(np.diff(ratio) >= -1e-9 * ratio[:-1])
    return curve


@pytest.mark.parametrize("calibration", ["classic", "analytic"])
@pytest.mark.parametrize("kind", ["cape", "joint"])
@pytest.mark.parametrize("seed", [0, *(pytest.param(s, marks=pytest.mark.slow) for s in (1, 2, 3))])
def test_collusion_curve_is_the_worst_coalition_by_brute_force(calibration, kind, seed):
    # issue #22: the curve is the worst coalition of each size, not one greedy coalition.
    # Every coalition is tried with coalition_report (itertools.combinations) on random
    # unequal sites, S = 3 … 6; seed 3 also lets the noise generator collude.
    tau, sens, eps, delta, weights = _random_sites(seed, 3 + seed, calibration)
    design = _design(kind, tau, weights)
    _check_against_brute_force(design, sens, eps, delta, noise_generator=seed == 3)


@pytest.mark.parametrize("calibration", ["classic", "analytic"])
@pytest.mark.parametrize("n_sites", [3, 4])
def test_collusion_curve_of_the_papers_closed_form_design_by_brute_force(calibration, n_sites):
    # dpcore.paper_design (Sec. 3.1) is infeasible for most unequal sites (for S = 4 about 1
    # random configuration in 200): take the first feasible seed.
    for seed in range(2000):
        tau, sens, eps, delta, weights = _random_sites(seed, n_sites, calibration)
        design = _design("paper", tau, weights)
        if design.feasible:
            break
    else:  # pragma: no cover - the search is deterministic
        pytest.fail("no feasible closed-form design among the seeds")
    _check_against_brute_force(design, sens, eps, delta)


def test_issue_22_counter_example_greedy_showed_a_kept_promise_another_pair_breaks():
    # The issue: S = 4, classic, paper's design, 2 colluders — the greedy curve showed
    # 0.960·ε_s ✓ where another coalition gives 1.077·ε_s. The issue did not record its
    # generator; this configuration is seed 1 of N_s = 1000, ε_s ~ U(0.1, 2), δ = 1e-3,
    # μ ~ Dirichlet(1) (0.962·ε_s ✓ against 1.074·ε_s), with ε_1 and μ_3 tuned and rounded
    # to three decimals to give the issue's two numbers.
    sizes = np.full(4, 1000)
    eps, delta = [1.054, 1.906, 0.374, 1.902], 1e-3
    weights = [0.166, 0.052, 0.555, 0.227]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClassicGaussianWarning)
        tau = gaussian_sigmas(1.0 / sizes, epsilon=eps, delta=delta, calibration="classic")
    design, sens = cape_design(tau, weights=weights), 1.0 / sizes

    def report(coalition):
        return coalition_report(
            design, sensitivity=sens, colluding=coalition, epsilon=eps, delta=delta
        )

    # The old greedy added the site leaving the smallest σ/τ_s: site 3, then site 4 (0.7115
    # against 0.7135 for site 1) — and that pair keeps every promise, at most 0.960·ε_s.
    assert min(range(4), key=lambda k: report([k]).joint_ratio.min()) == 2
    assert report([2, 3]).joint_ratio.min() < report([0, 2]).joint_ratio.min()
    greedy = report([2, 3])
    assert (greedy.epsilon_joint / greedy.promised_epsilon).max() == pytest.approx(0.960, abs=5e-4)
    assert greedy.joint_meets.all()
    # The worst pair is sites 1 and 3: site 4 gets 1.077·ε_s, and the curve says so.
    curve = collusion_curve(design, sensitivity=sens, epsilon=eps, delta=delta)
    row = curve[(curve.colluding == 2) & (curve.view == "all releases")].iloc[0]
    assert row.epsilon / row.promised_epsilon == pytest.approx(1.077, abs=5e-4)
    assert (row.coalition, row.site, bool(row.exact), bool(row.meets)) == ((1, 3), 4, True, False)
    own = curve[(curve.colluding == 2) & (curve.view == "own release")].iloc[0]
    assert not own.meets  # the own-release view breaks it too (1.062·ε_s)
    _check_against_brute_force(design, sens, eps, delta)


@pytest.mark.slow
def test_collusion_curve_beyond_the_exhaustive_range_is_a_lower_bound_without_a_tick(
    monkeypatch,
):
    # S = 13: sizes with more than MAX_EXACT_COALITIONS coalitions are searched greedily.
    # Their rows must say so (exact False), never claim the promise kept (meets True), name a
    # coalition that attains their ε, and lie at or below the true worst case — computed
    # here by lifting the limit (8,191 coalitions).
    n_sites = 13
    tau, sens, eps, delta, weights = _random_sites(11, n_sites, "analytic")
    design = cape_design(tau, weights=weights)
    curve = collusion_curve(design, sensitivity=sens, epsilon=eps, delta=delta)
    exact_sizes = {n for n in range(n_sites) if math.comb(n_sites, n) <= MAX_EXACT_COALITIONS}
    assert set(curve[curve.exact].colluding) == exact_sizes != set(range(n_sites))
    lower = curve[~curve.exact]
    assert not lower.meets.eq(True).any()
    assert (lower.meets.isna() | lower.meets.eq(False)).all()
    for row in lower.itertuples():
        assert row.searched < math.comb(n_sites, row.colluding)
        named = coalition_report(
            design,
            sensitivity=sens,
            colluding=[k - 1 for k in row.coalition],
            epsilon=eps,
            delta=delta,
        ).set_index("site")
        assert named.loc[row.site, VIEW_COLUMNS[row.view][0]] == pytest.approx(
            row.epsilon, rel=1e-9
        )
    monkeypatch.setattr(views, "MAX_EXACT_COALITIONS", math.comb(n_sites, n_sites // 2))
    full = collusion_curve(design, sensitivity=sens, epsilon=eps, delta=delta)
    assert full.exact.all() and full.meets.notna().all()
    bound = (curve.epsilon / curve.promised_epsilon).to_numpy()
    worst = (full.epsilon / full.promised_epsilon).to_numpy()
    assert np.all(bound <= worst * (1 + 1e-12))
    same = curve.exact.to_numpy()
    np.testing.assert_allclose(bound[same], worst[same], rtol=1e-12)


def test_collusion_curve_bad_input():
    with pytest.raises(TypeError, match="noise_generator"):
        collusion_curve(UNEQUAL, sensitivity=0.1, epsilon=1.0, delta=1e-5, noise_generator=1)
    with pytest.raises(ValueError, match="delta"):
        collusion_curve(UNEQUAL, sensitivity=0.1, epsilon=1.0, delta=1.5)
    with pytest.raises(ValueError, match="at most 40 sites"):
        collusion_curve(cape_design(np.ones(41)), sensitivity=0.1, epsilon=1.0, delta=1e-5)


# --- dropouts -----------------------------------------------------------------------------------


def test_dropout_analysis_equal_sites():
    design = cape_design(np.ones(10))
    a = dropout_analysis(design, [0])
    w = 0.9
    # none: Σ_R μ² τ_g² + μ_d² τ_e² = 9/1000 + 9/1000; naive: only the G's; cape: all G's
    assert a.std["none"] == pytest.approx(math.sqrt(0.018) / w, rel=1e-12)
    assert a.std["naive"] == pytest.approx(math.sqrt(0.009) / w, rel=1e-12)
    assert a.std["cape"] == pytest.approx(0.1 / w, rel=1e-12)
    assert a.required_std == pytest.approx(0.1 / w, rel=1e-12)
    assert a.std["naive"] < a.required_std <= a.std["cape"] * (1 + 1e-12)
    # the remedy lets the aggregator learn exactly as much as in the normal run; the naive
    # correction (E's without stand-in G's) lets it learn more
    normal = coalition_view(design).joint_std.min() / 1.0
    assert a.joint_std["cape"] == pytest.approx(normal, rel=1e-10)
    assert a.joint_std["naive"] < normal
    assert a.normal_joint_std == pytest.approx(normal, rel=1e-12)  # τ_s = 1 here


@pytest.mark.parametrize("dropped", [(0,), (1, 3)])
def test_dropout_table_is_the_analysis_row_by_row(dropped):
    a = dropout_analysis(UNEQUAL, dropped)
    view = coalition_view(UNEQUAL)
    # the normal run's baseline is the worst site's σ_joint / τ_s with nobody colluding
    assert a.normal_joint_std == pytest.approx(np.min(view.joint_std / UNEQUAL.tau_site), rel=1e-12)
    table = a.table()
    assert table["remedy"].tolist() == ["none", "naive", "cape"]
    for row in table.itertuples():
        assert row.aggregate_std == a.std[row.remedy]
        assert row.joint_ratio == a.joint_std[row.remedy]
        assert row.meets_requirement == a.meets[row.remedy]
        assert row.verdict == a.verdict[row.remedy]
        assert row.noise_ratio == a.noise_ratio[row.remedy]


def test_dropout_verdict_tells_the_whole_truth():
    # issue #22: without a remedy the aggregate carries enough noise for privacy but more than
    # the remedy needs: √0.018/0.9 against 0.1/0.9 (equal sites, see above) = 1.342× — not a
    # plain "meets". The naive correction is below the requirement: √0.009/0.1 = 0.949×.
    a = dropout_analysis(cape_design(np.ones(10)), [0])
    assert a.verdict == {"none": "excess noise", "naive": "too little noise", "cape": "meets"}
    assert a.noise_ratio["none"] == pytest.approx(math.sqrt(1.8), rel=1e-12)
    assert a.noise_ratio["naive"] == pytest.approx(math.sqrt(0.9), rel=1e-12)
    assert a.noise_ratio["cape"] == pytest.approx(1.0, rel=1e-12)
    assert a.meets["none"]  # private: what the old tile showed, and only half the story


@pytest.mark.parametrize("dropped", [(0,), (1, 3)])
def test_dropout_remedy_meets_the_requirement(dropped):
    a = dropout_analysis(UNEQUAL, dropped)
    assert a.std["cape"] >= a.required_std * (1 - 1e-12)
    assert a.std["naive"] < a.std["cape"]
    assert a.remaining_weights.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("remedy", ["none", "naive", "cape"])
def test_dropout_run_monte_carlo_matches_analysis(remedy):
    # Estimate minus truth over n independent entries: its sample std is within
    # 5·sqrt(1/(2n)) relative of the analytic one.
    n = 100_000
    values = np.random.default_rng(1).uniform(-1, 1, (5, n))
    est, corr = dropout_run(values, UNEQUAL, [1, 3], remedy=remedy, rng=np.random.default_rng(2))
    a = dropout_analysis(UNEQUAL, [1, 3])
    truth = a.remaining_weights @ values
    assert np.std(est - truth) == pytest.approx(a.std[remedy], rel=5 / math.sqrt(2 * n))
    assert (remedy == "none") == bool(np.all(corr == 0))


def test_dropout_remedy_view_is_a_normal_run_view():
    # What the aggregator holds in the remedied run — (â_t − F_t) for remaining t and the
    # correction c = μ_d (E_d + H_d) — has the covariance of the normal run's
    # (â_t − F_t, μ_d (â_d − F_d)) with a_d = 0: it learns no more. Checked by Monte Carlo
    # with twice the sample-covariance variance (two independent estimates).
    design, n, d = UNEQUAL, 200_000, 2
    zeros = np.zeros((5, n))
    _, f, _, released = site_releases(zeros, design, symmetric=False, rng=np.random.default_rng(4))
    keep = [0, 1, 3, 4]
    normal = np.vstack([(released - f)[keep], design.weights[d] * (released - f)[d]])
    cov_normal = normal @ normal.T / n
    _, corr = dropout_run(zeros, design, [d], remedy="cape", rng=np.random.default_rng(3))
    _, f2, _, rel2 = site_releases(
        zeros, design, symmetric=False, rng=np.random.default_rng(3).spawn(2)[0]
    )
    remedied = np.vstack([(rel2 - f2)[keep], corr])
    cov_rem = remedied @ remedied.T / n
    diag = np.diag(cov_normal)
    tol = 5 * np.sqrt(2 * (np.outer(diag, diag) + cov_normal**2) / n)
    assert np.all(np.abs(cov_rem - cov_normal) <= tol)


# --- the inverse calibration ------------------------------------------------------------------


@pytest.mark.parametrize("epsilon", [1e-3, 0.1, 1.0, 7.0, 50.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-5, 0.05])
def test_gaussian_epsilon_inverts_the_analytic_calibration(epsilon, delta):
    sigma = gaussian_sigma(0.3, epsilon=epsilon, delta=delta, calibration="analytic")
    assert gaussian_epsilon(sigma, sensitivity=0.3, delta=delta) == pytest.approx(epsilon, rel=1e-7)
    eps_found = gaussian_epsilon(sigma, sensitivity=0.3, delta=delta)
    assert gaussian_delta(sigma, sensitivity=0.3, epsilon=eps_found) == pytest.approx(
        delta, rel=1e-6
    )


def test_gaussian_epsilon_edges():
    assert gaussian_epsilon(0.0, sensitivity=1.0, delta=1e-5) == math.inf
    assert gaussian_epsilon(1e9, sensitivity=1.0, delta=0.5) == 0.0  # δ(0) ≤ δ already


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: coalition_view(UNEQUAL, [0, 0]), ValueError, "must not repeat"),
        (
            lambda: coalition_view(UNEQUAL, [5]),
            ValueError,
            r"colluding must be an integer in \[0, 4\]",
        ),
        (lambda: coalition_view(UNEQUAL, "12"), TypeError, "sequence of site indices"),
        (lambda: coalition_view(UNEQUAL, [1.5]), TypeError, "colluding must be an integer"),
        (lambda: coalition_view("design"), TypeError, "CapeDesign"),
        (lambda: coalition_view(UNEQUAL, noise_generator=1), TypeError, "noise_generator"),
        (lambda: dropout_analysis(UNEQUAL, range(5)), ValueError, "at least one site"),
        (
            lambda: dropout_run(
                np.zeros((5, 2)), UNEQUAL, [0], remedy="x", rng=np.random.default_rng()
            ),
            ValueError,
            "remedy must be one of",
        ),
        (lambda: gaussian_epsilon(-1.0, sensitivity=1.0, delta=0.1), ValueError, "sigma"),
        (lambda: collusion_bound(1), ValueError, "n_sites"),
    ],
)
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_calibration_comparison():
    from dpcore.mechanisms.calibration import calibration_comparison

    table = calibration_comparison([0.1, 0.5, 1.0, 4.0], delta=1e-5, sensitivity=2.0)
    assert table.classic_is_proof.tolist() == [True, True, False, False]
    # analytic is never larger than classic where classic is a proof, and both calibrate
    # to the stated δ: the analytic σ attains it exactly
    assert np.all(table.analytic[table.classic_is_proof] <= table.classic[table.classic_is_proof])
    for row in table.itertuples():
        assert gaussian_delta(row.analytic, sensitivity=2.0, epsilon=row.epsilon) == pytest.approx(
            1e-5, rel=1e-6
        )
    assert np.all((table.saving > 0) & (table.saving < 1))


def test_agn_budget_composes_to_the_total():
    from dpcore.mechanisms.calibration import agn_budget

    b = agn_budget(epsilon=1.2, delta=0.01, split=0.25)
    assert b["epsilon1"] + b["epsilon2"] == pytest.approx(1.2)
    assert b["delta1"] + b["delta2"] == pytest.approx(0.01)
    assert b["epsilon1"] == pytest.approx(0.3)
    with pytest.raises(ValueError, match="split"):
        agn_budget(epsilon=1.0, delta=0.01, split=1.0)


def test_dropout_of_all_but_a_tiny_site_is_accurate():
    # Found by hypothesis in a fresh clone: with every large site dropped, μ_Dᵀ Σ_E μ_D
    # cancelled to a wrong (once negative) value. By the zero sum the missing E's equal
    # −μ_R E_R, so their variance is μ_R² τ_eR² exactly.
    w = np.array(
        [0.05857373, 0.41001611, 0.05857373, 0.05857373, 0.41001611, 0.00366086, 5.8574e-4]
    )
    design = cape_design([1, 7, 1, 4, 7, 1e-4, 1e-4], weights=w / w.sum())
    a = dropout_analysis(design, [0, 1, 2, 3, 4, 5])
    mu, last = design.weights[6], 6
    missing = (a.std["none"] * mu) ** 2 - mu**2 * design.var_g[last]
    assert missing == pytest.approx(mu**2 * design.var_e[last], rel=1e-6, abs=0)


@pytest.mark.parametrize(("sites", "ratio"), [(3, 0.9428), (5, 0.9798), (10, 0.9950)])
def test_dropout_remedy_leaks_nothing_beyond_a_normal_run_but_own_release_drops(sites, ratio):
    # issue #14 / README: the remedy does not "keep every guarantee". Counting the correction,
    # a remaining site's own-release noise against the aggregator is 0.94–0.995 τ_s (one
    # dropout among S equal sites), exactly what a normal run's extra release would leave:
    # there the aggregator also holds μ_d(â_d − F_d) = μ_d(E_d + G_d) for the dropped site.
    design = cape_design(np.ones(sites))
    remedy = dropout_analysis(design, [0]).release_std["cape"]
    assert remedy == pytest.approx(ratio, abs=1e-4)
    # normal run, the dropped site's release known as E_d + G_d (G_d playing H_d's part):
    cov = design.e_covariance
    known = cov[1:, [0]]  # Cov(E_t, E_d) for the remaining t
    var_d = cov[0, 0] + design.var_g[0]
    own = cov[1, 1] - known[0, 0] ** 2 / var_d + design.var_g[1]
    assert math.sqrt(own) / design.tau_site[1] == pytest.approx(remedy, rel=1e-9)


def test_coalition_report_with_the_exact_design_adds_that_designs_views():
    """exact_design: the three *_exact columns are the same report on the exactly calibrated
    design (the classic formula over-calibrates τ_s at small ε, so its views give smaller ε)."""
    n, eps, delta = [1000, 2000, 500, 800], [0.5, 0.3, 0.8, 0.5], [1e-3] * 4
    sens = dpcore.mean_sensitivity(n)

    def design(method):
        tau = dpcore.mean_noise_std(n, epsilon=eps, delta=delta, calibration=method)
        return dpcore.cape_design(tau)

    classic, exact = design("classic"), design("analytic")
    kw = {"sensitivity": sens, "epsilon": eps, "delta": delta, "colluding": (1,)}
    both = dpcore.coalition_report(classic, exact_design=exact, **kw)
    tight = dpcore.coalition_report(exact, **kw)
    assert np.array_equal(both["epsilon_joint_exact"], tight["epsilon_joint"])
    assert np.array_equal(both["epsilon_release_exact"], tight["epsilon_release"])
    assert np.array_equal(both["joint_meets_exact"], tight["joint_meets"])
    # classic's larger τ_s leaves more noise in every view: a smaller ε than exact's
    assert np.all(both["epsilon_joint"] < both["epsilon_joint_exact"])
    plain = dpcore.coalition_report(classic, **kw)
    assert "epsilon_joint_exact" not in plain
    with pytest.raises(TypeError, match="exact_design"):
        dpcore.coalition_report(classic, exact_design="x", **kw)
    with pytest.raises(TypeError, match="exact_design"):
        dpcore.coalition_report(classic, exact_design=dpcore.cape_design([1.0, 1.0]), **kw)
