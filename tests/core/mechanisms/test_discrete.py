"""dpcore.mechanisms.discrete: the exact discrete Gaussian sampler against its pmf, the pmf's closed
forms, and the accounting of a sum of shares (KLS) against an exact computation."""

from __future__ import annotations

import math
from datetime import timedelta

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import special, stats

import dpcore
from dpcore.mechanisms.discrete import (
    ALPHAS,
    ddg_epsilon,
    ddg_exact_epsilon,
    ddg_rdp,
    ddg_sigma,
    ddg_tau,
    discrete_gaussian_pmf,
    discrete_gaussian_variance,
    rdp_to_epsilon,
    rounded_l2_bound,
    sample_discrete_gaussian,
)

# --- the sampler --------------------------------------------------------------------------


@pytest.mark.parametrize("sigma", [0.4, 1.0, 2.5, 37.0])
def test_sampler_matches_the_discrete_gaussian_pmf(sigma):
    n = 200_000
    x = sample_discrete_gaussian(sigma, n, rng=int(sigma * 10))
    assert x.dtype == np.int64
    # bins: every integer whose expected count is at least 5, the two tails pooled
    support = np.arange(-math.ceil(10 * sigma) - 5, math.ceil(10 * sigma) + 6)
    expected = n * discrete_gaussian_pmf(support, sigma=sigma)
    keep = expected >= 5
    inner = support[keep]
    lo, hi = inner.min(), inner.max()
    observed = np.array([np.count_nonzero(x == v) for v in inner])
    tails_obs = np.array([np.count_nonzero(x < lo), np.count_nonzero(x > hi)])
    tails_exp = n * np.array(
        [
            discrete_gaussian_pmf(support[support < lo], sigma=sigma).sum(),
            discrete_gaussian_pmf(support[support > hi], sigma=sigma).sum(),
        ]
    )
    obs = np.concatenate([observed, tails_obs])
    exp = np.concatenate([expected[keep], tails_exp])
    obs, exp = obs[exp > 0], exp[exp > 0]
    chi2 = float(np.sum((obs - exp) ** 2 / exp))
    # threshold: the chi-square quantile at 1 − 1e-4 (a correct sampler fails 1 in 10⁴ seeds)
    assert chi2 < stats.chi2.ppf(1 - 1e-4, df=obs.size - 1), chi2
    # and its variance is the closed form (CKS Cor. 9): 5 SE of a sample variance
    var = discrete_gaussian_variance(sigma)
    se = math.sqrt((np.mean((x - x.mean()) ** 4) - x.var() ** 2) / n)
    assert abs(x.var() - var) < 5 * se


def test_pmf_sums_to_one_and_the_variance_is_below_sigma_squared():
    for sigma in (0.3, 0.9, 1.0, 4.0):
        half = math.ceil(40 * sigma) + 40
        y = np.arange(-half, half + 1)
        p = discrete_gaussian_pmf(y, sigma=sigma)
        assert abs(p.sum() - 1) < 1e-12
        direct = float(np.sum(y**2 * p))
        assert abs(direct - discrete_gaussian_variance(sigma)) < 1e-10 * max(1, sigma**2)
        assert discrete_gaussian_variance(sigma) <= sigma**2


# --- accounting against an exact computation ----------------------------------------------

# (share σ, shares n, integer shift Δ, δ): small σ where τ matters and larger ones where not
ACCOUNTING = [
    (0.5, 2, 1, 1e-5),
    (0.6, 3, 1, 1e-3),
    (0.8, 5, 2, 1e-5),
    (1.0, 2, 1, 1e-6),
    (1.5, 4, 3, 1e-5),
    (2.0, 10, 5, 1e-3),
    (3.0, 3, 2, 1e-5),
    (0.7, 10, 1, 1e-4),
    (5.0, 2, 10, 1e-5),
    (1.2, 6, 4, 1e-2),
    (0.55, 8, 1, 1e-5),
    (4.0, 5, 1, 1e-6),
]


def _sum_pmf(sigma: float, n: int) -> np.ndarray:
    """pmf of the sum of n shares by direct convolution (support ±n(12σ + 10): the mass
    beyond 12σ + 10 of one share is below e^{-72})."""
    half = math.ceil(12 * sigma) + 10
    one = discrete_gaussian_pmf(np.arange(-half, half + 1), sigma=sigma)
    out = one
    for _ in range(n - 1):
        out = np.convolve(out, one)
    return out


def _exact_epsilon(sigma: float, n: int, shift: int, delta: float) -> float:
    """Smallest ε whose hockey-stick divergence Σ_x max(0, P(x) − e^ε P(x − Δ)) is ≤ δ.

    P is symmetric, so the other direction gives the same divergence.
    """
    p = _sum_pmf(sigma, n)
    q = np.concatenate([np.zeros(shift), p])
    p = np.concatenate([p, np.zeros(shift)])

    def hockey(e: float) -> float:
        return float(np.sum(np.maximum(p - math.exp(e) * q, 0.0)))

    lo, hi = 0.0, 1.0
    while hockey(hi) > delta:
        hi *= 2
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if hockey(mid) > delta else (lo, mid)
    return hi


@pytest.mark.parametrize(("sigma", "n", "shift", "delta"), ACCOUNTING)
def test_accounting_is_an_upper_bound_on_the_exact_privacy_of_the_summed_shares(
    sigma, n, shift, delta
):
    exact = _exact_epsilon(sigma, n, shift, delta)
    accounted = ddg_epsilon(sigma, shares=n, l2=float(shift), dim=1, delta=delta)
    assert exact <= accounted * (1 + 1e-9)
    # and it is close: the RDP→(ε, δ) conversion (CKS Prop. 12) is what separates them,
    # plus τ where σ is small (worst here: σ = 0.55, n = 8, +53%)
    assert accounted <= 1.6 * exact
    if ddg_tau(sigma, n) < 1e-6:
        # τ negligible: the accountant is the continuous Gaussian's (ρ = Δ²/2nσ²) …
        rho = shift**2 / (2 * n * sigma**2)
        assert accounted == pytest.approx(
            rdp_to_epsilon(ALPHAS, ALPHAS * rho, delta=delta), rel=1e-6
        )
        # … and the exact discrete sum is as private as the continuous Gaussian of the
        # same variance (Balle–Wang, computed independently), to within 3%
        continuous = dpcore.gaussian_epsilon(sigma * math.sqrt(n), sensitivity=shift, delta=delta)
        assert exact == pytest.approx(continuous, rel=0.03)


@pytest.mark.parametrize(
    ("sigma", "n"),
    [(0.5, 2), (0.6, 3), (0.8, 5), (1.0, 2), (1.0, 10), (1.2, 4), (1.5, 3), (0.7, 10)],
)
def test_the_sum_of_shares_is_within_tau_of_one_discrete_gaussian(sigma, n):
    # what lets the fast path draw the sum at once: TV(Σ shares, N_Z(0, nσ²)) ≤ τ (KLS)
    p = _sum_pmf(sigma, n)
    half = (p.size - 1) // 2
    q = discrete_gaussian_pmf(np.arange(-half, half + 1), sigma=sigma * math.sqrt(n))
    assert 0.5 * np.abs(p - q).sum() <= ddg_tau(sigma, n)


def test_rdp_has_the_tau_term_and_reduces_to_the_discrete_gaussian_for_one_share():
    a = np.array([2.0, 10.0])
    one = ddg_rdp(a, sigma=3.0, shares=1, l2=2.0, l1=2.0, dim=5)
    np.testing.assert_allclose(one, a * 4.0 / 18.0)  # αΔ²/(2σ²), CKS Thm. 4
    assert ddg_tau(0.5, 5) > 1e-3 and ddg_tau(0.5, 1) == 0.0
    small = ddg_rdp(a, sigma=0.5, shares=5, l2=2.0, l1=2.0, dim=5)
    assert np.all(small > a * 4.0 / (2 * 5 * 0.25))  # τ adds to the Gaussian term


def test_calibration_meets_the_promise_and_the_rounding_bound_is_kls():
    sigma = ddg_sigma(epsilon=0.7, delta=1e-6, shares=4, l2=30.0, dim=100)
    assert ddg_epsilon(sigma, shares=4, l2=30.0, dim=100, delta=1e-6) <= 0.7 * (1 + 1e-9)
    assert ddg_epsilon(sigma * 0.99, shares=4, l2=30.0, dim=100, delta=1e-6) > 0.7
    c, d, b = 50.0, 400, 1e-4
    assert rounded_l2_bound(c, dim=d, beta=0.0) == c + 20.0
    assert rounded_l2_bound(c, dim=d, beta=b) == pytest.approx(
        math.sqrt(c**2 + d / 4 + math.sqrt(2 * math.log(1 / b)) * (c + 10.0))
    )


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: sample_discrete_gaussian(1.0, -1, rng=0), "size"),
        (lambda: sample_discrete_gaussian(1.0, 10**8, rng=0), "size"),
        (lambda: discrete_gaussian_pmf([0.5], sigma=1.0), "values"),
        (lambda: ddg_rdp([1.0], sigma=1.0, shares=2, l2=1.0, l1=1.0, dim=1), "alpha"),
        (lambda: ddg_rdp([2.0], sigma=0.4, shares=2, l2=1.0, l1=1.0, dim=1), "sigma"),
        (lambda: rounded_l2_bound(1.0, dim=1, beta=1.0), "beta"),
        (lambda: ddg_sigma(epsilon=0.0, delta=1e-5, shares=2, l2=1.0, dim=1), "epsilon"),
        # σ past 2^40: (ε, δ) then needs TV(N(0, σ²), N(Δ, σ²)) ≈ Δ/(σ√2π) ≤ δ, i.e. Δ ≳ 3e7
        (lambda: ddg_sigma(epsilon=0.5, delta=1e-5, shares=2, l2=1e20, dim=1), "too small"),
    ],
)
def test_bad_inputs_name_the_parameter(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()


# --- the exact ε at every legal input (issue #52) -------------------------------------------


def _log_sum_pmf(sigma: float, n: int, reach: int) -> tuple[int, np.ndarray]:
    """log P of the sum of n shares on [−n·reach, n·reach], by direct convolution in log space.

    Independent of the core's transforms and tilting: log Σ_{a+b=x} P(a)Q(b) pair by pair
    (logsumexp), so every tail probability keeps its relative precision however small.
    """
    z = np.arange(-reach, reach + 1, dtype=float)
    one = -(z**2) / (2 * sigma**2)
    one -= special.logsumexp(one)
    out = one
    for _ in range(n - 1):
        size = out.size + one.size - 1
        grid = np.full((out.size, size), -np.inf)
        for i, lp in enumerate(out):
            grid[i, i : i + one.size] = lp + one
        out = special.logsumexp(grid, axis=0)
    return -n * reach, out


def _log_space_exact_epsilon(sigma: float, n: int, shift: int, delta: float) -> float:
    """Smallest ε with Σ_x P(x)(1 − e^{ε − L(x)})⁺ ≤ δ, L(x) = log P(x) − log P(x − v)."""
    reach = math.ceil(20 * sigma) + shift + 5  # the sum's mass beyond n·reach is below e^-200
    _, logp = _log_sum_pmf(sigma, n, reach)
    here, moved = logp[shift:], logp[: logp.size - shift]

    def hockey(e: float) -> float:
        return float(np.sum(np.exp(here) * -np.expm1(np.minimum(e - (here - moved), 0.0))))

    lo, hi = 0.0, 1.0
    while hockey(hi) > delta:
        hi *= 2
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if hockey(mid) > delta else (lo, mid)
    return hi


# (σ, n, v, δ) whose ε lies where the probabilities P(x − v) are far below 1e-16 of the
# largest: one transform of the pmf had only rounding there (the first raised OverflowError,
# issue #52); the largest ε here is e^{400}'s.
DEEP_TAIL = [
    (0.1, 2, 1, 1e-2),
    (0.05, 2, 2, 1e-12),
    (0.3, 7, 2, 1e-6),
    (0.5, 4, 3, 1e-9),
    (0.2, 3, 5, 1e-3),
    (0.8, 2, 12, 1e-5),
]


@pytest.mark.parametrize(("sigma", "n", "shift", "delta"), DEEP_TAIL)
def test_exact_epsilon_in_the_deep_tail_matches_a_log_space_convolution(sigma, n, shift, delta):
    ours = ddg_exact_epsilon(sigma, shares=n, shift=shift, delta=delta)
    # both bisect to ~1e-12 relative; the tilted transforms are accurate to ~1e-11 relative
    assert ours == pytest.approx(_log_space_exact_epsilon(sigma, n, shift, delta), rel=1e-9)


def test_exact_epsilon_past_e_to_the_709_in_the_closed_form():
    """σ = 3.98, n = 4, v = 233 (Trust models at ε_s = 100, classic, issue #52): the
    closed-form path formed e^ε and raised OverflowError; the answer is about 520."""
    sigma, n, v, delta = 3.9778688922419776, 4, 233, 9e-4
    ours = ddg_exact_epsilon(sigma, shares=n, shift=v, delta=delta)
    # KLS's τ is 1.5e-67 here: the sum is N_ℤ(0, nσ²) to that factor, and the direct
    # convolution agrees to the bisections' precision
    assert ours == pytest.approx(_log_space_exact_epsilon(sigma, n, v, delta), rel=1e-9)
    # the continuous Gaussian of the same variance (Balle–Wang) is near but not equal: at
    # Δ/s ≈ 29 the integer lattice of the threshold moves ε by about 0.1 %
    continuous = dpcore.gaussian_epsilon(sigma * math.sqrt(n), sensitivity=v, delta=delta)
    assert ours == pytest.approx(continuous, rel=3e-3)


@st.composite
def _exact_inputs(draw):
    sigma = math.exp(draw(st.floats(math.log(0.05), math.log(1e4))))
    shares = draw(st.integers(1, 1000))
    delta = math.exp(draw(st.floats(math.log(1e-12), math.log(0.1))))
    # moves from nothing to far beyond any noise: in units of the sum's std and small integers
    ratio = draw(st.floats(0.0, 300.0))
    shift = draw(st.one_of(st.integers(0, 60), st.just(round(ratio * math.sqrt(shares) * sigma))))
    return sigma, shares, shift, delta


@pytest.mark.slow  # ~1 s (80 examples, some at n = 1000), more on a busy machine
@settings(max_examples=80, deadline=timedelta(seconds=10))
@given(_exact_inputs())
@example((2.0**40, 1000, 10**14, 1e-6))  # √n σ beyond MAX_SIGMA: the closed form's own normaliser
def test_exact_epsilon_is_a_float_or_infinity_at_every_legal_input(case):
    sigma, shares, shift, delta = case
    eps = ddg_exact_epsilon(sigma, shares=shares, shift=shift, delta=delta)
    assert isinstance(eps, float)
    assert eps == math.inf or 0.0 <= eps <= 1e6
    if shift == 0:
        assert eps == 0.0
    if sigma >= 0.5 and math.isfinite(eps):
        # exact for one coordinate ≤ KLS's certificate over every move (an upper bound),
        # up to the bisection's 1e-12 relative
        kls = ddg_epsilon(sigma, shares=shares, l2=float(shift), dim=1, delta=delta)
        assert eps <= kls * (1 + 1e-9) + 1e-12
