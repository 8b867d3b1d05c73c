"""Privacy calibration: classic and analytic Gaussian σ, sensitivities, symmetric noise."""

import itertools
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

import dpcore
from dpcore import (
    ClassicGaussianWarning,
    gaussian_delta,
    gaussian_sigma,
    second_moment_sensitivity,
    site_noise_std,
    symmetric_noise,
)
from dpcore.mechanisms.noise import n_free_entries, symmetric_index_map

EPS_BELOW_1 = [1e-3, 0.01, 0.1, 0.5, 0.9]
DELTAS = [1e-10, 1e-6, 1e-3, 0.05]


@pytest.mark.parametrize(("epsilon", "delta"), list(itertools.product(EPS_BELOW_1, DELTAS)))
def test_classic_sigma_is_private_below_eps_1(epsilon, delta):
    # Dwork & Roth Thm A.1: for ε < 1 the classic σ gives (ε, δ)-DP, so the exact
    # privacy profile at that σ must not exceed the target δ.
    sigma = gaussian_sigma(1.0, epsilon=epsilon, delta=delta, calibration="classic")
    assert gaussian_delta(sigma, sensitivity=1.0, epsilon=epsilon) <= delta


def test_classic_sigma_matches_paper_formula():
    # Sec. 2: τ = (1/(Nε)) sqrt(2 log(1.25/δ)), here with N = 250 (Δ = 1/N).
    sigma = gaussian_sigma(1 / 250, epsilon=0.5, delta=0.01, calibration="classic")
    assert sigma == pytest.approx(math.sqrt(2 * math.log(125.0)) / (250 * 0.5), rel=1e-15)


@pytest.mark.parametrize("epsilon", [1.0, 2.0, 10.0])
def test_classic_warns_from_eps_1(epsilon):
    with pytest.warns(ClassicGaussianWarning, match="epsilon < 1"):
        gaussian_sigma(1.0, epsilon=epsilon, delta=1e-5, calibration="classic")


def test_classic_does_not_warn_below_1_and_analytic_never_warns():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gaussian_sigma(1.0, epsilon=0.99, delta=1e-5, calibration="classic")
        gaussian_sigma(1.0, epsilon=10.0, delta=1e-5, calibration="analytic")


def test_classic_above_1_can_fail_to_be_private():
    # The reason for the warning: at ε = 10, δ = 0.05 the classic σ attains a δ above target.
    with pytest.warns(ClassicGaussianWarning):
        sigma = gaussian_sigma(1.0, epsilon=10.0, delta=0.05, calibration="classic")
    assert gaussian_delta(sigma, sensitivity=1.0, epsilon=10.0) > 0.05


@pytest.mark.parametrize(
    ("epsilon", "delta"), list(itertools.product([1e-4, 0.01, 0.5, 1.0, 5.0, 100.0, 1e4], DELTAS))
)
def test_analytic_sigma_attains_target_delta_exactly(epsilon, delta):
    # The analytic σ is the root of δ(σ) = δ; brentq runs to 1e-14 in log σ, so the attained δ
    # matches to far better than 1e-8 relative.
    sigma = gaussian_sigma(2.5, epsilon=epsilon, delta=delta, calibration="analytic")
    attained = gaussian_delta(sigma, sensitivity=2.5, epsilon=epsilon)
    assert attained == pytest.approx(delta, rel=1e-8)


@pytest.mark.parametrize(("epsilon", "delta"), list(itertools.product([*EPS_BELOW_1, 1.0], DELTAS)))
def test_analytic_is_smaller_than_classic_up_to_eps_1(epsilon, delta):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClassicGaussianWarning)
        classic = gaussian_sigma(1.0, epsilon=epsilon, delta=delta, calibration="classic")
    assert gaussian_sigma(1.0, epsilon=epsilon, delta=delta, calibration="analytic") < classic


def test_analytic_is_linear_in_sensitivity_and_decreasing_in_eps_and_delta():
    base = gaussian_sigma(1.0, epsilon=0.5, delta=1e-5, calibration="analytic")
    assert gaussian_sigma(3.0, epsilon=0.5, delta=1e-5, calibration="analytic") == pytest.approx(
        3 * base, rel=1e-12
    )
    assert gaussian_sigma(1.0, epsilon=0.6, delta=1e-5, calibration="analytic") < base
    assert gaussian_sigma(1.0, epsilon=0.5, delta=1e-4, calibration="analytic") < base


@pytest.mark.parametrize("method", ["classic", "analytic"])
def test_infinite_epsilon_means_no_noise(method):
    assert gaussian_sigma(1.0, epsilon=math.inf, delta=0.01, calibration=method) == 0.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"epsilon": 0.0}, r"epsilon must be a float in \(0, inf\]; got 0.0"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"epsilon": math.nan}, "epsilon"),
        ({"delta": 0.0}, r"delta must be a float in \(0, 1\); got 0.0"),
        ({"delta": 1.0}, "delta"),
        ({"sensitivity": 0.0}, "sensitivity"),
        ({"sensitivity": math.inf}, "sensitivity"),
        ({"method": "laplace"}, "calibration must be one of"),
    ],
)
def test_gaussian_sigma_rejects_bad_input(kwargs, match):
    args = {"sensitivity": 1.0, "epsilon": 0.5, "delta": 1e-5, "method": "classic", **kwargs}
    method = args.pop("method")
    with pytest.raises(ValueError, match=match):
        gaussian_sigma(**args, calibration=method)


def test_gaussian_sigma_rejects_wrong_types():
    with pytest.raises(TypeError, match="epsilon"):
        gaussian_sigma(1.0, epsilon="0.5", delta=1e-5)


def test_sensitivities_follow_the_neighbouring_relation():
    np.testing.assert_allclose(second_moment_sensitivity([1, 10, 1000]), [1, 0.1, 0.001])
    np.testing.assert_allclose(
        second_moment_sensitivity(100, neighbouring="replace"), math.sqrt(2) / 100
    )
    with pytest.raises(ValueError, match="neighbouring"):
        second_moment_sensitivity(10, neighbouring="swap")
    with pytest.raises(ValueError, match="n_samples"):
        second_moment_sensitivity(0)


def test_sensitivity_bounds_hold_on_random_neighbours():
    # Empirical check of Δ: for unit-ball data, removing one sample (N public) changes
    # A = XᵀX/N by at most 1/N in Frobenius norm, replacing one by at most √2/N; the replace
    # bound is attained by orthogonal unit vectors.
    rng = np.random.default_rng(7)
    n, d = 50, 6
    for _ in range(200):
        x = rng.standard_normal((n, d))
        x /= np.maximum(1.0, np.linalg.norm(x, axis=1))[:, None] * rng.uniform(1, 3)
        a = x.T @ x / n
        i = rng.integers(n)
        removed = np.delete(x, i, axis=0)
        assert np.linalg.norm(a - removed.T @ removed / n) <= 1 / n + 1e-15
        y = x.copy()
        y[i] = rng.standard_normal(d)
        y[i] /= np.linalg.norm(y[i])
        assert np.linalg.norm(a - y.T @ y / n) <= math.sqrt(2) / n + 1e-15
    e1, e2 = np.eye(d)[0], np.eye(d)[1]
    assert np.linalg.norm(np.outer(e1, e1) - np.outer(e2, e2)) == pytest.approx(math.sqrt(2))


def test_site_noise_std_is_per_site_and_warns_once():
    with pytest.warns(ClassicGaussianWarning) as record:
        tau = site_noise_std([100, 200], epsilon=[1.0, 2.0], delta=0.01, calibration="classic")
        expected = [
            gaussian_sigma(1 / 100, epsilon=1.0, delta=0.01, calibration="classic"),
            gaussian_sigma(1 / 200, epsilon=2.0, delta=0.01, calibration="classic"),
        ]
    assert len(record) == 3  # one from site_noise_std for both sites, one per direct call
    np.testing.assert_allclose(tau, expected, rtol=1e-15)


@pytest.mark.parametrize("order", [2, 3])
def test_symmetric_noise_is_symmetric_with_one_value_per_multiset(order):
    d = 5
    x = symmetric_noise(d, order=order, scale=1.0, rng=np.random.default_rng(0))
    for perm in itertools.permutations(range(order)):
        np.testing.assert_array_equal(x, x.transpose(perm))
    assert np.unique(x).size == n_free_entries(d, order) == math.comb(d + order - 1, order)


def test_symmetric_noise_entry_variance_including_diagonal():
    # 40,000 draws: an empirical variance has relative standard error sqrt(2/n) ≈ 0.0071; allow
    # 5 standard errors. Diagonal entries must have variance τ², not 2τ².
    n, tau = 40_000, 0.3
    x = symmetric_noise(4, order=2, scale=tau, size=(n,), rng=np.random.default_rng(1))
    tol = 5 * math.sqrt(2 / n)
    np.testing.assert_allclose(x[:, 0, 0].var(), tau**2, rtol=tol)
    np.testing.assert_allclose(x[:, 1, 3].var(), tau**2, rtol=tol)
    # Distinct free entries are independent: |corr| below 5/sqrt(n).
    assert abs(np.corrcoef(x[:, 0, 1], x[:, 1, 2])[0, 1]) < 5 / math.sqrt(n)


def test_symmetric_noise_is_reproducible():
    a = symmetric_noise(6, order=3, scale=1.0, rng=np.random.default_rng(3))
    b = symmetric_noise(6, order=3, scale=1.0, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(("dim", "order"), [(5, 2), (4, 3), (7, 3)])
def test_index_map_enumerates_multisets_in_lexicographic_order(dim, order):
    m = symmetric_index_map(dim, order)
    for rank, combo in enumerate(itertools.combinations_with_replacement(range(dim), order)):
        assert m[combo] == rank


def test_classic_warning_once_collapses_classic_and_keeps_other_warnings():
    from dpcore.mechanisms.calibration import classic_warning_once

    with pytest.warns(Warning) as record:
        with classic_warning_once():
            gaussian_sigma(1.0, epsilon=2.0, delta=0.01, calibration="classic")
            gaussian_sigma(1.0, epsilon=3.0, delta=0.01, calibration="classic")
            warnings.warn("something else", RuntimeWarning, stacklevel=1)
    kinds = [w.category for w in record]
    assert kinds.count(ClassicGaussianWarning) == 1
    assert kinds.count(RuntimeWarning) == 1


def test_analytic_is_more_noise_than_classic_at_large_epsilon():
    # issue #14: the tooltip said analytic is "never more noise than classic"; at ε = 10,
    # δ = 1e-3 it is 0.406 vs 0.378 (classic is no proof there); below ε ≈ 6.7 it is less.
    with pytest.warns(ClassicGaussianWarning):
        classic = gaussian_sigma(1.0, epsilon=10.0, delta=1e-3, calibration="classic")
    analytic = gaussian_sigma(1.0, epsilon=10.0, delta=1e-3, calibration="analytic")
    assert (round(analytic, 3), round(classic, 3)) == (0.406, 0.378)
    for eps in (0.1, 0.5, 0.99):
        analytic = gaussian_sigma(1.0, epsilon=eps, delta=1e-2, calibration="analytic")
        assert analytic < gaussian_sigma(1.0, epsilon=eps, delta=1e-2, calibration="classic")


@pytest.mark.parametrize(
    ("phrase", "where"),
    [
        ("never more noise", ("README.md", "docs", "app_pages", "ui")),
        ("keeps every guarantee", ("README.md", "docs", "app_pages", "ui")),
        ("(tight)", ("README.md", "docs", "app_pages", "ui", "dpcore")),
        ("the tight ", ("README.md", "docs", "app_pages", "ui", "dpcore")),
    ],
)
def test_no_statement_the_numbers_do_not_support(phrase, where):
    # issue #14, item 4: statements the computed numbers contradict must not come back
    root = Path(__file__).resolve().parents[3]
    files = []
    for w in where:
        p = root / w
        files += [p] if p.is_file() else [*p.rglob("*.py"), *p.rglob("*.md")]
    hits = [str(f.relative_to(root)) for f in files if phrase in f.read_text(encoding="utf-8")]
    assert not hits, f"{phrase!r} still in {hits}"


# --- a warning names the caller's line, not the core's (issue #39, item 5) ----------------


def _warned_here(call) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    assert caught, "no warning"
    return caught


@pytest.mark.parametrize(
    "call",
    [
        lambda: dpcore.pca_sweep(epsilon=[0.5, 2.0], dim=6, k=2, runs=1, pool_size=300,
                                 n_per_site=20, sites=3, calibration="classic"),
        lambda: dpcore.run_pca_sweep(
            dpcore.PcaSpec.build(epsilon=2.0, dim=6, k=2, runs=1, pool_size=300,
                                 n_per_site=20, sites=3, calibration="classic"), 0),
        lambda: dpcore.otd_sweep(epsilon=2.0, dim=3, k=2, runs=1, n_per_site=100,
                                 calibration="classic"),
        lambda: dpcore.gaussian_sigmas([1.0, 2.0], epsilon=2.0, delta=0.01, calibration="classic"),
        lambda: dpcore.gaussian_sigma(1.0, epsilon=2.0, delta=0.01, calibration="classic"),
        lambda: dpcore.gaussian_sigma(1.0, epsilon=0.5, delta=0.01, method="analytic"),
        lambda: dpcore.site_noise_std([10, 20], epsilon=2.0, delta=0.01, calibration="classic"),
        lambda: dpcore.pca_sweep(epsilon=0.5, dim=6, k=2, runs=1, pool_size=300,
                                 n_per_site=20, sites=3, seed=1),
    ],
    ids=["pca_sweep", "run_pca_sweep", "otd_sweep", "gaussian_sigmas", "gaussian_sigma",
         "method (deprecated)", "site_noise_std", "seed (deprecated)"],
)  # fmt: skip
def test_a_core_warning_points_at_the_callers_line(call):
    # before: the sweeps' ClassicGaussianWarning named dpcore/sweeps/pca.py (stacklevel)
    for w in _warned_here(call):
        assert w.filename == __file__, (w.category.__name__, w.filename, w.lineno)


def test_method_is_a_deprecated_name_of_calibration():
    with pytest.warns(DeprecationWarning, match="calibration="):
        old = gaussian_sigma(1.0, epsilon=0.5, delta=1e-5, method="classic")
    assert old == gaussian_sigma(1.0, epsilon=0.5, delta=1e-5, calibration="classic")
    with pytest.raises(ValueError, match="not both"), pytest.warns(DeprecationWarning):
        gaussian_sigma(1.0, epsilon=0.5, delta=1e-5, method="classic", calibration="analytic")


def test_a_calibration_is_one_value_with_one_default():
    assert dpcore.DEFAULT_CALIBRATION == dpcore.Calibration() == dpcore.Calibration.of(None)
    assert dpcore.Calibration.of("classic") == dpcore.Calibration("classic", "add-remove")
    replace = dpcore.Calibration("classic", "replace")
    assert dpcore.Calibration.of(replace) is replace
    assert dpcore.Calibration.of("analytic", neighbouring="replace").neighbouring == "replace"
    for bad, name in (("gauss", "calibration"), (3, "calibration")):
        with pytest.raises(ValueError, match=name):
            dpcore.Calibration.of(bad)
    with pytest.raises(ValueError, match="neighbouring"):
        dpcore.Calibration("analytic", "swap")
    # the default is analytic: the classic σ is 1.64× at these sites (issue #51)
    tau = dpcore.mean_noise_std([100, 100], epsilon=0.5, delta=1e-3)
    classic = dpcore.mean_noise_std([100, 100], epsilon=0.5, delta=1e-3, calibration="classic")
    assert (round(tau[0], 4), round(classic[0], 4)) == (0.0461, 0.0755)
