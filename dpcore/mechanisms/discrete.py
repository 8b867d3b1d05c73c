"""The discrete Gaussian: an exact sampler, its pmf, and the privacy of a sum of shares.

Secure aggregation (:mod:`dpcore.protocol.secagg`) adds integers modulo 2^b, so its noise must be an
integer too. Each site adds an independent share Z_s ~ N_Z(0, σ²), the discrete Gaussian

    P(Z = z) = exp(−z²/(2σ²)) / Σ_{y ∈ ℤ} exp(−y²/(2σ²)),    z ∈ ℤ,

and the server sees the sum of the shares. That sum is *not* a discrete Gaussian; Kairouz,
Liu & Steinke bound how far it is from one (the τ term below) and give its Rényi DP.

References
----------
C. L. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential Privacy",
NeurIPS 2020, arXiv:2004.00010 (CKS): Algorithm 3 (exact sampler, from discrete Laplace
rejection), Theorem 4 (it is (Δ²/2σ²)-concentrated DP like the continuous one),
Proposition 12 in arXiv v4 (conversion from Rényi / concentrated DP to (ε, δ)).
P. Kairouz, Z. Liu, T. Steinke, "The Distributed Discrete Gaussian Mechanism for Federated
Learning with Secure Aggregation", ICML 2021, arXiv:2102.06387 (KLS): Theorem 1 (the sum of
n shares; τ and the norm of a randomly rounded vector), Proposition 14, eq. (17) (Rényi DP
of the sum with the τ term).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from dpcore._validation import RngLike, check_delta, check_int, check_real, check_rng

MAX_SIGMA = 2.0**40  # samples stay far inside int64 and float64's exact integers (2^53)
MIN_SIGMA = 0.01  # below it N_Z(0, σ²) is 0 but for a mass e^{-5000}; 2σ² stays a normal float
MAX_SAMPLES = 10**7  # per call: the candidates' temporaries stay below ~0.5 GB
MIN_SHARE_SIGMA = 0.5  # KLS Proposition 14 holds for shares with σ ≥ 1/2
ALPHAS = 1.0 + np.geomspace(1e-4, 1e6, 4000)  # Rényi orders searched by the conversion


# --- sampling ------------------------------------------------------------------------------


def _check_size(size: object) -> tuple[int, ...]:
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        size = (int(size),)
    if not isinstance(size, tuple) or not all(
        isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0 for n in size
    ):
        raise TypeError(f"size must be a non-negative int or a tuple of them; got {size!r}")
    return tuple(int(n) for n in size)


def discrete_laplace(t: float, size: int, *, rng: np.random.Generator) -> NDArray[np.float64]:
    """Candidates for Y ~ Lap_ℤ(t), P(Y = y) ∝ exp(−|y|/t), and which of them to keep.

    A geometric G on {0, 1, …} with P(G ≥ k) = e^{−k/t} is ⌊t·E⌋ for E ~ Exp(1), since
    P(⌊tE⌋ ≥ k) = P(E ≥ k/t). With a fair sign B, ±G has P(y) ∝ e^{−|y|/t} for y ≠ 0 and
    twice that at 0, so "−0" is rejected (CKS Algorithm 2's rule). Returns ``size``
    candidates with −0 replaced by NaN: the caller drops them.
    """
    g = np.floor(t * rng.standard_exponential(size))
    negative = rng.random(size) < 0.5
    y = np.where(negative, -g, g)
    y[negative & (g == 0)] = np.nan
    return y


def sample_discrete_gaussian(
    sigma: float, size: int | tuple[int, ...] = (), *, rng: RngLike = None
) -> NDArray[np.int64]:
    """Exact samples of the discrete Gaussian N_ℤ(0, σ²) (CKS Algorithm 3, vectorised).

    Parameters
    ----------
    sigma : float
        σ in [0.01, 2^40]: the parameter of the pmf ∝ exp(−z²/(2σ²)) (its variance is σ² up to
        a relative e^{−2π²σ²}; :func:`discrete_gaussian_variance`).
    size : int or tuple of int
        Output shape, at most 10⁷ samples.
    rng : int, Generator or None
        Seed or generator (SPEC 7).

    Returns
    -------
    ndarray of int64

    Notes
    -----
    With t = ⌊σ⌋ + 1, draw Y ~ Lap_ℤ(t) (:func:`discrete_laplace`) and accept it with
    probability exp(−(|Y| − σ²/t)²/(2σ²)) (CKS Algorithm 3); the accepted Y are exactly
    N_ℤ(0, σ²), and about 1.3 candidates are drawn per sample (acceptance ≈
    √(π/2)·e^{−1/2} ≈ 0.76 for large σ). The Bernoulli(e^{−x}) test is E ≥ x with
    E ~ Exp(1). Candidates are drawn in vectorised batches. The algorithm is exact; this
    implementation evaluates the acceptance test in floating point (as TensorFlow
    Privacy's does), where CKS use exact rational arithmetic — fine for a simulation, not a
    hardened implementation (it is not constant-time either).
    """
    sigma = check_real(sigma, "sigma", low=MIN_SIGMA, high=MAX_SIGMA)
    shape = _check_size(size)
    n = math.prod(shape)
    if n > MAX_SAMPLES:
        raise ValueError(f"size must hold at most {MAX_SAMPLES:,} samples; got {size!r}")
    gen = check_rng(rng)
    t = math.floor(sigma) + 1.0
    centre, two_var = sigma * sigma / t, 2.0 * sigma * sigma
    out = np.empty(n, dtype=np.int64)
    filled = 0
    while filled < n:
        batch = int(1.35 * (n - filled)) + 32
        y = discrete_laplace(t, batch, rng=gen)  # NaN (a rejected −0) never passes the test
        accept = gen.standard_exponential(batch) >= (np.abs(y) - centre) ** 2 / two_var
        kept = y[accept][: n - filled]
        out[filled : filled + kept.size] = kept
        filled += kept.size
    return out.reshape(shape)


# --- the distribution ----------------------------------------------------------------------

_POISSON_TERMS = np.arange(1, 6)  # k in the Poisson sums below; e^{−2π²σ²k²} < 1e-8 at σ ≥ 1, k=1


def _direct_support(sigma: float) -> NDArray[np.float64]:
    half = math.ceil(40.0 * sigma) + 40
    return np.arange(-half, half + 1, dtype=float)


def discrete_gaussian_pmf(values: ArrayLike, *, sigma: float) -> NDArray[np.float64]:
    """P(Z = z) of N_ℤ(0, σ²) at integer ``values``.

    The normaliser Σ_y exp(−y²/(2σ²)) is summed directly for σ < 1 and by Poisson summation,
    σ√(2π)·(1 + 2 Σ_{k≥1} e^{−2π²σ²k²}), for σ ≥ 1 (exact up to rounding; CKS Fact 18).

    Examples
    --------
    >>> round(float(discrete_gaussian_pmf(0, sigma=1.0)), 6)
    0.398942
    """
    sigma = check_real(sigma, "sigma", low=MIN_SIGMA, high=MAX_SIGMA)
    z = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(z)) or np.any(z != np.round(z)):
        raise ValueError(f"values must be integers; got {values!r}")
    if sigma < 1.0:
        norm = float(np.sum(np.exp(-(_direct_support(sigma) ** 2) / (2 * sigma**2))))
    else:
        terms = np.exp(-2 * math.pi**2 * sigma**2 * _POISSON_TERMS**2)
        norm = sigma * math.sqrt(2 * math.pi) * (1 + 2 * float(terms.sum()))
    return np.exp(-(z**2) / (2 * sigma**2)) / norm


def discrete_gaussian_variance(sigma: float) -> float:
    """Var N_ℤ(0, σ²): slightly below σ² (CKS Corollary 9), equal to it for σ ≳ 3.

    Direct sum for σ < 1; for σ ≥ 1 the Poisson-summation form
    σ²·(1 + 2 Σ_k (1 − 4π²σ²k²) e^{−2π²σ²k²}) / (1 + 2 Σ_k e^{−2π²σ²k²}).
    """
    sigma = check_real(sigma, "sigma", low=MIN_SIGMA, high=MAX_SIGMA)
    if sigma < 1.0:
        y = _direct_support(sigma)
        w = np.exp(-(y**2) / (2 * sigma**2))
        return float(np.sum(y**2 * w) / np.sum(w))
    k2 = _POISSON_TERMS**2
    e = np.exp(-2 * math.pi**2 * sigma**2 * k2)
    num = 1 + 2 * float(np.sum((1 - 4 * math.pi**2 * sigma**2 * k2) * e))
    return sigma**2 * num / (1 + 2 * float(e.sum()))


# --- privacy of the sum of n shares --------------------------------------------------------


def ddg_tau(sigma: float, shares: int) -> float:
    """KLS Theorem 1's τ = 10 Σ_{k=1}^{n−1} exp(−2π²σ² k/(k+1)) for n shares of N_ℤ(0, σ²).

    τ measures how far the sum of n discrete Gaussians is from one discrete Gaussian of
    variance nσ² (0 for a single share); it is negligible once σ ≳ 1.

    Examples
    --------
    >>> ddg_tau(2.0, 1), ddg_tau(2.0, 10) < 1e-15
    (0.0, True)
    """
    sigma = check_real(sigma, "sigma", low=MIN_SIGMA, high=MAX_SIGMA)
    n = check_int(shares, "shares", low=1)
    k = np.arange(1, min(n, 10_000), dtype=float)  # terms past k≈10⁴ equal the limit e^{−2π²σ²}
    tau = float(np.sum(np.exp(-2 * math.pi**2 * sigma**2 * k / (k + 1))))
    if n > 10_000:
        tau += (n - 10_000) * math.exp(-2 * math.pi**2 * sigma**2)
    return 10.0 * tau


def ddg_rdp(
    alpha: ArrayLike, *, sigma: float, shares: int, l2: float, l1: float, dim: int
) -> NDArray[np.float64]:
    """Rényi DP ε(α) of the sum of n shares N_ℤ(0, σ²)^d on a query of norms Δ₂, Δ₁.

    KLS Proposition 14, eq. (17) (arXiv:2102.06387v4), with s = √n·σ:

        ε(α) = min{ αΔ₂²/(2s²) + τd,  (α/2)(Δ₂²/s² + 2Δ₁τ/s + τ²d),  (α/2)(Δ₂/s + τ√d)² }.

    With one share τ = 0 and this is the discrete Gaussian's αΔ₂²/(2σ²) (CKS Theorem 4).
    Inputs are in integer units (after scaling by 1/γ). σ must be ≥ 1/2 (the proposition's
    condition).
    """
    sigma = check_real(sigma, "sigma", low=MIN_SHARE_SIGMA, high=MAX_SIGMA)
    n = check_int(shares, "shares", low=1)
    l2 = check_real(l2, "l2", low=0.0, high=MAX_SIGMA**2)
    l1 = check_real(l1, "l1", low=0.0, high=MAX_SIGMA**3)
    d = check_int(dim, "dim", low=1)
    a = np.asarray(alpha, dtype=float)
    if np.any(~np.isfinite(a)) or np.any(a <= 1.0):
        raise ValueError(f"every entry of alpha must be in (1, inf); got {alpha!r}")
    tau = ddg_tau(sigma, n)
    s = math.sqrt(n) * sigma
    one = a * l2**2 / (2 * s**2) + tau * d
    two = a / 2 * (l2**2 / s**2 + 2 * l1 * tau / s + tau**2 * d)
    three = a / 2 * (l2 / s + tau * math.sqrt(d)) ** 2
    return np.minimum(np.minimum(one, two), three)


def rdp_to_epsilon(alpha: ArrayLike, rdp: ArrayLike, *, delta: float) -> float:
    """(ε, δ) from a Rényi DP curve: min over α of ε(α) + log(1 − 1/α) − log(αδ)/(α − 1).

    CKS Proposition 12 (arXiv:2004.00010v4; also Asoodeh et al. 2020): a mechanism with
    D_α(P‖Q) ≤ ε(α) is (ε', δ)-DP with ε' as above, for every α > 1. Any α gives a valid
    bound; the minimum over the grid is reported (never below 0).
    """
    a = np.asarray(alpha, dtype=float)
    r = np.asarray(rdp, dtype=float)
    dlt = check_delta(delta)
    eps = r + np.log1p(-1.0 / a) - (math.log(dlt) + np.log(a)) / (a - 1.0)
    return max(0.0, float(np.min(eps)))


def ddg_epsilon(
    sigma: float, *, shares: int, l2: float, l1: float | None = None, dim: int, delta: float
) -> float:
    """ε at δ of n shares N_ℤ(0, σ²)^d summed, for a query of L2 norm Δ₂ (integer units).

    Rényi DP of KLS eq. (17) (:func:`ddg_rdp`) converted by CKS Proposition 12
    (:func:`rdp_to_epsilon`). ``l1`` defaults to the bound Δ₂·min(√d, Δ₂) for integer
    vectors (‖v‖₁ ≤ √d‖v‖₂, and ‖v‖₁ ≤ ‖v‖₂² when every non-zero |v_i| ≥ 1), as KLS do.

    Examples
    --------
    >>> e1 = ddg_epsilon(20.0, shares=1, l2=5.0, dim=1, delta=1e-5)
    >>> e10 = ddg_epsilon(20.0 / 10**0.5, shares=10, l2=5.0, dim=1, delta=1e-5)
    >>> round(e1, 3), abs(e10 - e1) < 1e-9  # same total variance: same ε (τ ≈ 0 at σ ≈ 6)
    (1.012, True)
    """
    if l1 is None:
        l2f = check_real(l2, "l2", low=0.0, high=MAX_SIGMA**2)
        l1 = l2f * min(math.sqrt(check_int(dim, "dim", low=1)), l2f)
    rdp = ddg_rdp(ALPHAS, sigma=sigma, shares=shares, l2=l2, l1=l1, dim=dim)
    return rdp_to_epsilon(ALPHAS, rdp, delta=delta)


def rounded_l2_bound(l2: float, *, dim: int, beta: float) -> float:
    """Bound on ‖round(v)‖₂ for ‖v‖₂ ≤ c after unbiased randomised rounding to ℤ^d.

    KLS Theorem 1 (the rounding part, their eq. for Δ₂):
    min{ c + √d,  sqrt(c² + d/4 + √(2 log(1/β))·(c + √d/2)) }; the first holds always, the
    second with probability ≥ 1 − β. β = 0 gives the first.

    Examples
    --------
    >>> round(rounded_l2_bound(100.0, dim=100, beta=1e-3), 2)
    102.06
    """
    c = check_real(l2, "l2", low=0.0, high=MAX_SIGMA**2)
    d = check_int(dim, "dim", low=1)
    b = check_real(beta, "beta", low=0.0, high=1.0, high_open=True)
    always = c + math.sqrt(d)
    if b == 0.0:
        return always
    likely = math.sqrt(c**2 + d / 4 + math.sqrt(-2 * math.log(b)) * (c + math.sqrt(d) / 2))
    return min(always, likely)


def ddg_sigma(
    *,
    epsilon: float,
    delta: float,
    shares: int,
    l2: float,
    l1: float | None = None,
    dim: int,
) -> float:
    """The smallest share σ (≥ 1/2) whose n-share sum is (ε, δ)-DP by :func:`ddg_epsilon`.

    Bisection on log σ (ε is decreasing in σ: both the scale Δ/(√n σ) and τ shrink).
    """
    eps = check_real(epsilon, "epsilon", low=0.0, low_open=True, high_open=True)
    check_delta(delta)

    def eps_at(sig: float) -> float:
        return ddg_epsilon(sig, shares=shares, l2=l2, l1=l1, dim=dim, delta=delta)

    lo = MIN_SHARE_SIGMA
    if eps_at(lo) <= eps:
        return lo
    hi = 2.0 * lo
    while eps_at(hi) > eps:
        hi *= 2.0
        if hi > MAX_SIGMA:
            raise ValueError(
                f"epsilon is too small for this sensitivity: the share σ would exceed "
                f"{MAX_SIGMA:g} (epsilon {epsilon!r}, l2 {l2!r})"
            )
    for _ in range(60):  # relative precision 2^-60 of the bracket in log space
        mid = math.sqrt(lo * hi)
        if eps_at(mid) > eps:
            lo = mid
        else:
            hi = mid
        if hi / lo < 1 + 1e-12:
            break
    return hi


# --- the exact privacy of the sum, numerically ---------------------------------------------

MAX_PMF_POINTS = 2**23  # the sum's pmf on at most 8M integers (64 MiB): a page move stays fast
_TAIL_SIGMAS = 15.0  # the pmf's support: ±15 std, a mass of 2Φ(−15) ≈ 7e-51 left out


def sum_of_shares_pmf(sigma: float, *, shares: int) -> tuple[int, NDArray[np.float64]]:
    """The pmf of Z_1 + … + Z_n, Z_i ~ N_ℤ(0, σ²) i.i.d., on a window of integers.

    The n-fold convolution of :func:`discrete_gaussian_pmf`, computed as the n-th power of
    its discrete Fourier transform on a circle of L ≥ 2·15·√n·σ + 1 integers: what the circle
    folds back is the mass beyond 15 standard deviations (≈ 7e-51). The transform's rounding
    (≈ 1e-16 of the largest probability) is clipped at 0.

    Parameters
    ----------
    sigma : float
        σ of each share, in [0.01, 2^40].
    shares : int
        n ≥ 1.

    Returns
    -------
    (int, ndarray)
        The first integer of the window, x_0, and P(x_0), P(x_0 + 1), … (summing to 1).

    Raises
    ------
    ValueError
        If the window would exceed 2^23 integers (15·√n·σ above about 2.8 million).

    Examples
    --------
    >>> x0, p = sum_of_shares_pmf(1.0, shares=2)
    >>> round(float(p[-x0]), 6), round(float(p.sum()), 12)  # P(0) of the sum; total mass
    (0.282124, 1.0)
    """
    sigma = check_real(sigma, "sigma", low=MIN_SIGMA, high=MAX_SIGMA)
    n = check_int(shares, "shares", low=1)
    half = math.ceil(_TAIL_SIGMAS * math.sqrt(n * discrete_gaussian_variance(sigma))) + 1
    one_half = min(half, math.ceil(_TAIL_SIGMAS * sigma) + 1)
    if 2 * half + 1 > MAX_PMF_POINTS:
        raise ValueError(
            f"sigma and shares give a pmf on {2 * half + 1:,} integers (limit "
            f"{MAX_PMF_POINTS:,}); got sigma {sigma!r}, shares {n!r}"
        )
    single = discrete_gaussian_pmf(np.arange(-one_half, one_half + 1), sigma=sigma)
    if n == 1:
        return -one_half, single
    size = 2 * half + 1
    circle = np.zeros(size)
    circle[: one_half + 1] = single[one_half:]  # z ≥ 0 at index z
    circle[size - one_half :] = single[:one_half]  # z < 0 at index size + z
    total = np.fft.irfft(np.fft.rfft(circle) ** n, n=size)
    total = np.clip(np.roll(total, half), 0.0, None)  # index i ↔ the integer i − half
    return -half, total / total.sum()


def shift_hockey_stick(pmf: NDArray[np.float64], shift: int, epsilon: float) -> float:
    """δ(ε) = Σ_x max(0, P(x) − e^ε P(x − v)) for a pmf on consecutive integers, v ≥ 0.

    The hockey-stick divergence between the noise and the noise moved by v: the smallest δ
    for which adding this noise to a query that moves by v is (ε, δ)-DP against that move
    (both directions agree for a symmetric pmf). Mass moved off the window counts in full.
    """
    p = np.asarray(pmf, dtype=float)
    q = np.zeros(p.size + shift)  # Q = P moved by v, on the window extended by v
    q[shift:] = p
    p_ext = np.concatenate([p, np.zeros(shift)])
    with np.errstate(divide="ignore", over="ignore"):  # e^ε q as e^{ε + log q}: 0 or ∞, no error
        moved = np.exp(epsilon + np.log(q))
    return float(np.sum(np.maximum(p_ext - moved, 0.0)))


EXACT_TAU = 1e-14  # below it the sum of shares is N_ℤ(0, nσ²) to a factor e^{±τ} (KLS Thm. 1)


EULER_MACLAURIN_SIGMA = 1000.0  # from here on the cdf's closed form below is exact to ~1e-15


@lru_cache(maxsize=8)
def _discrete_gaussian_cdf(sigma: float) -> tuple[int, NDArray[np.float64]]:
    """(x_0, F(x_0), F(x_0 + 1), …) of N_ℤ(0, σ²) on [−15σ, 15σ], summed from the left."""
    half = math.ceil(_TAIL_SIGMAS * sigma) + 1
    cdf = np.cumsum(discrete_gaussian_pmf(np.arange(-half, half + 1), sigma=sigma))
    cdf.setflags(write=False)  # cached and shared
    return -half, cdf


def discrete_gaussian_cdf(x: int, *, sigma: float) -> float:
    """P(Z ≤ x) for Z ~ N_ℤ(0, σ²), σ in [0.01, 2^40].

    Summed over the support for σ < 1000; from there on by the Euler–Maclaurin formula for
    the sum of f(y) = e^{−y²/(2σ²)} over y ≤ x, divided by the normaliser of
    :func:`discrete_gaussian_pmf`:

        ∫_{−∞}^x f + f(x)/2 + f′(x)/12 − f‴(x)/720,

    whose next term is below f(x)·10⁻¹⁵ at σ ≥ 1000 (each derivative brings a factor
    |x|/σ² or 1/σ², and |x| ≤ 40σ where F(x) is not 0 or 1 to double precision).
    """
    sigma = check_real(sigma, "sigma", low=MIN_SIGMA, high=MAX_SIGMA)
    if sigma < EULER_MACLAURIN_SIGMA:
        x0, cdf = _discrete_gaussian_cdf(sigma)
        i = x - x0
        return 0.0 if i < 0 else float(cdf[min(i, cdf.size - 1)])
    if x > 0:  # the upper tail by symmetry, accurate where F is near 1
        return 1.0 - discrete_gaussian_cdf(-x - 1, sigma=sigma)
    s2 = sigma * sigma
    f = math.exp(-x * x / (2 * s2))
    d1 = -x / s2 * f
    d3 = (3 * x / s2**2 - x**3 / s2**3) * f
    integral = sigma * math.sqrt(2 * math.pi) * float(special.ndtr(x / sigma))
    total = integral + f / 2 + d1 / 12 - d3 / 720
    norm = float(discrete_gaussian_pmf(0, sigma=sigma)) ** -1  # Σ_y f(y), Poisson summation
    return total / norm


def _gaussian_hockey_stick(sigma: float, shift: int, epsilon: float) -> float:
    """:func:`shift_hockey_stick` of N_ℤ(0, σ²), from its cdf at one threshold, in log space.

    log P(x)/P(x − v) = (v² − 2xv)/(2σ²) decreases in x, so the x with P(x) > e^ε P(x − v)
    are those below x* = (v² − 2εσ²)/(2v): δ = F(m) − e^ε F(m − v), m = ⌈x*⌉ − 1, computed
    as F(m)·(1 − e^{ε + log F(m − v) − log F(m)}) so that no e^ε is ever formed.
    """
    m = math.ceil((shift * shift - 2.0 * epsilon * sigma * sigma) / (2.0 * shift)) - 1
    log_f = _log_discrete_gaussian_cdf(m, sigma)
    if log_f == -math.inf:
        return 0.0
    gap = epsilon + _log_discrete_gaussian_cdf(m - shift, sigma) - log_f
    return max(0.0, -math.exp(log_f) * math.expm1(min(gap, 0.0)))


_DIRECT_TERMS = 200_000  # the left tail summed term by term when it needs at most this many


def _log_discrete_gaussian_cdf(x: int, sigma: float) -> float:
    """The log cdf, log P(Z ≤ x) for Z ~ N_ℤ(0, σ²), at any integer x (no 0 → −∞ in the tail).

    For x ≤ 0, F(x) = e^{−x²/(2σ²)} Σ_{k ≥ 0} e^{−(2k|x| + k²)/(2σ²)} / Σ_y e^{−y²/(2σ²)}:
    the sum in log space over the k whose term exceeds e^{−50} of the first (at most
    min(100σ²/|x|, 10σ) + 2 of them); past 200,000 terms (|x| < σ²/2000 and σ > 20,000) by
    the Euler–Maclaurin form of :func:`discrete_gaussian_cdf` with its integral as a log
    Gaussian cdf (next term below 10⁻¹⁵ there). For x > 0, log(1 − F(−x − 1)).
    """
    if x > 0:
        return math.log1p(-math.exp(_log_discrete_gaussian_cdf(-x - 1, sigma)))
    if sigma <= MAX_SIGMA and x >= -(_TAIL_SIGMAS - 1) * sigma:
        # inside the cached table (summed from the left: relatively exact in the left tail)
        # or Euler–Maclaurin's |x| ≤ 40σ: discrete_gaussian_cdf, ~100× faster than the sum
        f = discrete_gaussian_cdf(x, sigma=sigma)
        if f > 1e-250:
            return math.log(f)
    s2 = sigma * sigma
    a = -float(x)
    if sigma < 1.0:
        log_norm = -math.log(float(discrete_gaussian_pmf(0, sigma=sigma)))
    else:  # Poisson summation (as discrete_gaussian_pmf), also for √n σ beyond MAX_SIGMA
        poisson = np.exp(-2 * math.pi**2 * s2 * _POISSON_TERMS**2)
        log_norm = math.log(sigma * math.sqrt(2 * math.pi)) + math.log1p(2 * float(poisson.sum()))
    terms = math.ceil(min(100.0 * s2 / max(a, 1.0), 10.0 * sigma)) + 2
    if terms <= _DIRECT_TERMS:
        k = np.arange(terms, dtype=float)
        log_tail = float(special.logsumexp(-(2.0 * k * a + k * k) / (2.0 * s2)))
        return -a * a / (2.0 * s2) + log_tail - log_norm
    log_f = -a * a / (2.0 * s2)
    log_int = math.log(sigma * math.sqrt(2 * math.pi)) + float(special.log_ndtr(x / sigma))
    d1, d3 = a / s2, (3 * a / s2**2 - a**3 / s2**3) * -1.0  # f′/f and f‴/f at x = −a
    ratio = math.exp(log_f - log_int) * (0.5 + d1 / 12 - d3 / 720)
    return log_int + math.log1p(ratio) - log_norm


def _subgaussian_lower_bound(sigma: float, shares: int, shift: int, delta: float) -> float:
    """A lower bound on the exact ε of n summed shares against a move of v, at δ.

    Each share is σ²-subgaussian, E e^{tZ} ≤ e^{t²σ²/2}: E e^{tZ} = e^{t²σ²/2} Z(tσ²)/Z(0)
    with Z(c) = Σ_y e^{−(y−c)²/(2σ²)} ≤ Z(0) by Poisson summation (CKS Sec. 2). So the sum S
    has P(S > h) ≤ e^{−h²/(2nσ²)} = (1 − δ)/2 at h = sqrt(2nσ² log(2/(1 − δ))), and the set
    {S ≤ h} gives δ(ε) ≥ (1 + δ)/2 − e^ε e^{−(v − h)²/(2nσ²)} for v > h: ε ≥
    (v − h)²/(2nσ²) + log((1 − δ)/2).
    """
    var = shares * sigma * sigma
    h = math.sqrt(2.0 * var * (math.log(2.0) - math.log1p(-delta)))
    if shift <= h:
        return 0.0
    return (shift - h) ** 2 / (2.0 * var) + math.log1p(-delta) - math.log(2.0)


MAX_TILT_ENTRIES = 2**24  # residues × circle of the tilted convolutions (≈ 256 MiB of complex)


def _tilt_offsets(
    sigma: float, shares: int, residues: NDArray[np.int64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """For each residue k in [0, n): the centre g in [0, 1] whose N_ℤ(g, σ²) has mean k/n.

    Returns g, its pmf's log normaliser log Σ_w e^{−(w−g)²/(2σ²)}, and the support w.
    The mean of N_ℤ(g, σ²) increases with g (an exponential family in g/σ²), is 0 at g = 0
    and 1 at g = 1: bisection, 60 steps, on every residue at once.
    """
    half = math.ceil(_TAIL_SIGMAS * sigma) + 2
    w = np.arange(-half, half + 2, dtype=float)
    target = residues.astype(float) / shares
    lo, hi = np.zeros(target.size), np.ones(target.size)

    def mean(g: NDArray[np.float64]) -> NDArray[np.float64]:
        e = -((w[None, :] - g[:, None]) ** 2) / (2 * sigma * sigma)
        e -= e.max(axis=1, keepdims=True)
        p = np.exp(e)
        out: NDArray[np.float64] = (p @ w) / p.sum(axis=1)
        return out

    for _ in range(60):
        mid = 0.5 * (lo + hi)
        up = mean(mid) < target
        lo, hi = np.where(up, mid, lo), np.where(up, hi, mid)
    g = 0.5 * (lo + hi)
    g[residues == 0] = 0.0
    log_z = special.logsumexp(-((w[None, :] - g[:, None]) ** 2) / (2 * sigma * sigma), axis=1)
    return g, log_z, w


def sum_of_shares_log_pmf(sigma: float, *, shares: int, values: ArrayLike) -> NDArray[np.float64]:
    """The log pmf of Z_1 + … + Z_n, Z_i ~ N_ℤ(0, σ²) i.i.d., at integers y, by tilting.

    Accurate to about 1e-11 relative at every y, however far in the tail (where
    :func:`sum_of_shares_pmf`'s transform, accurate to 1e-16 of the largest probability,
    has only rounding). With c = y/n − d for any d, Σ z_i² = Σ (z_i − c)² + 2cy − nc² on
    Σ z_i = y, so

        P(y) = e^{−y²/(2nσ²) + nd²/(2σ²)} (Z(g)/Z(0))^n · P(W_1 + … + W_n = k),

    with k = y mod n, g = k/n − d, W_i ~ N_ℤ(g, σ²) and Z(g) its normaliser. Choosing g so
    that E W_i = k/n (:func:`_tilt_offsets`) puts k at the mean of the W-sum, where its pmf
    (one transform per residue) is near its largest: no tail is ever read from a transform.

    Parameters
    ----------
    sigma : float
        σ of each share, in [0.01, 2^40].
    shares : int
        n ≥ 1.
    values : array_like of int
        The integers y.

    Returns
    -------
    ndarray of float
        log P(y), the shape of ``values``.

    Raises
    ------
    ValueError
        If the residues' transforms would exceed 2^24 entries (n·15√n·σ above about 10⁷).
    """
    sigma = check_real(sigma, "sigma", low=MIN_SIGMA, high=MAX_SIGMA)
    n = check_int(shares, "shares", low=1)
    y = np.asarray(values)
    if y.size and (not np.all(np.isfinite(y)) or np.any(y != np.round(y))):
        raise ValueError(f"values must be integers; got {values!r}")
    y = y.astype(np.int64)
    residues, where = np.unique(np.mod(y, n), return_inverse=True)
    spread = math.sqrt(n * (sigma * sigma + 0.25))  # var N_ℤ(g, σ²) ≤ σ² + 1/4 (≤ σ² at g = 0)
    size = 2 * math.ceil(_TAIL_SIGMAS * spread) + 3  # the W-sum's mass within k ± 15 std
    if residues.size * size > MAX_TILT_ENTRIES:
        raise ValueError(
            f"sigma and shares need {residues.size * size:,} transform entries (limit "
            f"{MAX_TILT_ENTRIES:,}); got sigma {sigma!r}, shares {n!r}"
        )
    log_z0 = -math.log(float(discrete_gaussian_pmf(0, sigma=sigma)))
    if n == 1:
        return np.asarray(-(y.astype(float) ** 2) / (2 * sigma * sigma) - log_z0, dtype=float)
    g, log_z, w = _tilt_offsets(sigma, n, residues)
    log_r = np.empty(residues.size)
    idx = np.mod(w.astype(np.int64), size)
    rows = max(1, MAX_TILT_ENTRIES // 8 // size)
    for start in range(0, residues.size, rows):
        gs, lz = g[start : start + rows], log_z[start : start + rows]
        q = np.exp(-((w[None, :] - gs[:, None]) ** 2) / (2 * sigma * sigma) - lz[:, None])
        circle = np.zeros((gs.size, size))
        for j in range(w.size):  # fold the support onto the circle (it may wrap)
            circle[:, idx[j]] += q[:, j]
        total = np.fft.irfft(np.fft.rfft(circle, axis=1) ** n, n=size, axis=1)
        at = np.mod(residues[start : start + rows], size)
        log_r[start : start + rows] = np.log(total[np.arange(gs.size), at])
    d = residues / n - g
    yf = y.astype(float)
    out = (
        -(yf**2) / (2 * n * sigma * sigma)
        + (n * d**2 / (2 * sigma * sigma) + n * (log_z - log_z0) + log_r)[where.reshape(y.shape)]
    )
    return np.asarray(out, dtype=float)


def ddg_exact_epsilon(sigma: float, *, shares: int, shift: int, delta: float) -> float:
    """The exact ε at δ of n summed shares N_ℤ(0, σ²) against an integer move of v, numerically.

    The smallest ε ≥ 0 with hockey-stick divergence δ(ε) ≤ δ between the sum's pmf and the
    pmf moved by v, by bisection to 1e-12 (δ(ε) decreases in ε), in log space: e^ε is never
    formed, and probabilities far below 1e-16 of the largest keep their relative precision
    (the ε of a move by v reads the pmf at x − v, deep in its tail when ε is large). Where
    KLS's τ (:func:`ddg_tau`) is at least 1e-14 the pmf is the n-fold convolution, by
    exponential tilting (:func:`sum_of_shares_log_pmf`); below it, the sum is within a factor
    e^{±τ} of N_ℤ(0, nσ²) at every point (KLS Theorem 1), whose δ(ε) has a closed threshold
    (:func:`_gaussian_hockey_stick`, an error in ε below 1e-13). Where a subgaussian tail
    bound already puts ε above 10⁶ (:func:`_subgaussian_lower_bound`), ∞ without a search.

    This is the privacy of one coordinate moved by v: exact for that move, and so a *lower*
    bound on the ε over every move of norm ≤ v in d dimensions; :func:`ddg_epsilon` (KLS)
    is an upper bound over all of them. The true worst case lies between the two.

    Parameters
    ----------
    sigma : float
        σ of each share, in [0.01, 2^40].
    shares : int
        n ≥ 1.
    shift : int
        v ≥ 0 in integer units (e.g. ⌊Δ̃⌋, the rounded norm bound).
    delta : float
        δ in (0, 1).

    Returns
    -------
    float
        ε (0 for v = 0; ∞ where no ε ≤ 10⁶ reaches δ). Beyond a few thousand shares at
        σ < 2 the tilted transforms would exceed 2^24 entries: one transform of the pmf
        (:func:`sum_of_shares_pmf`) is used instead, exact to its 1e-16 absolute precision.

    Examples
    --------
    >>> round(ddg_exact_epsilon(4.0, shares=4, shift=8, delta=1e-5), 3)
    4.372
    """
    sigma = check_real(sigma, "sigma", low=MIN_SIGMA, high=MAX_SIGMA)
    n = check_int(shares, "shares", low=1)
    v = check_int(shift, "shift", low=0)
    dlt = check_delta(delta)
    if v == 0:
        return 0.0
    if _subgaussian_lower_bound(sigma, n, v, dlt) > MAX_EXACT_EPSILON:
        return math.inf
    hockey = _exact_hockey_stick(sigma, n, v)
    if hockey(0.0) <= dlt:
        return 0.0
    hi = 1.0
    while hockey(hi) > dlt:
        if hi >= MAX_EXACT_EPSILON:
            return math.inf
        hi = min(2.0 * hi, MAX_EXACT_EPSILON)
    lo = 0.0
    while hi - lo > 1e-12 * max(1.0, hi):
        mid = 0.5 * (lo + hi)
        if hockey(mid) > dlt:
            lo = mid
        else:
            hi = mid
    return hi


def rounded_move_epsilon(sigma: float, *, shares: int, move: float, delta: float) -> float:
    """The exact ε at δ of n summed shares against a one-coordinate data move of c, rounded.

    A data change that moves one coordinate by c (integer units) moves the randomly rounded
    message by ⌊c⌋ with probability 1 − frac(c) and by ⌈c⌉ with probability frac(c)
    (⌊x + c + U⌋ − ⌊x + U⌋ with a shared U ~ U[0, 1) and x an integer, so that the other
    data set's message is not randomised at all). The two output distributions are

        P = law of S,    Q = (1 − f)·law of (S + ⌊c⌋) + f·law of (S + ⌈c⌉),   f = frac(c),

    S = Z_1 + … + Z_n, and this is the smallest ε ≥ 0 with max(δ_{P‖Q}(ε), δ_{Q‖P}(ε)) ≤ δ
    (the hockey-stick divergences in both orders), to 1e-12 (Brent's method). Since the pair is
    one a neighbouring pair of data sets can realise, ε above a promise (at the promise's own
    δ) *refutes* it: this is the refutation ε of :meth:`dpcore.SecAggDesign.refutation_epsilons`.

    Where KLS's τ (:func:`ddg_tau`) is below 1e-14, S is N_ℤ(0, nσ²) to a factor e^{±τ}
    at every point (KLS Theorem 1) and S's likelihood ratios are monotone (a log-concave
    pmf), so both divergences are one threshold each: δ_{P‖Q}(ε) = F(m) − e^ε F_Q(m) at the
    largest m with log P(m)/Q(m) > ε (found by bisection over the integers), and its mirror
    for δ_{Q‖P}, from log cdfs (:func:`_log_discrete_gaussian_cdf`), so e^ε is never formed.
    Otherwise the sum over a window holding all but 1e-50 of the mass, of the log pmf by
    tilting (:func:`sum_of_shares_log_pmf`).

    Parameters
    ----------
    sigma : float
        σ of each share, in [0.01, 2^40].
    shares : int
        n ≥ 1.
    move : float
        c in [0, 2^40]: the data move in integer units (μ_s Δ_s / γ for a site whose
        statistic can move by Δ_s on one coordinate).
    delta : float
        δ in (0, 1).

    Returns
    -------
    float
        ε (0 for c = 0; ∞ where no ε ≤ 10⁶ reaches δ). For an integer c it equals
        :func:`ddg_exact_epsilon` at shift c.

    Examples
    --------
    >>> a = ddg_exact_epsilon(4.0, shares=4, shift=8, delta=1e-5)
    >>> b = ddg_exact_epsilon(4.0, shares=4, shift=9, delta=1e-5)
    >>> a < rounded_move_epsilon(4.0, shares=4, move=8.5, delta=1e-5) < b
    True
    """
    sigma = check_real(sigma, "sigma", low=MIN_SIGMA, high=MAX_SIGMA)
    n = check_int(shares, "shares", low=1)
    c = check_real(move, "move", low=0.0, high=MAX_SIGMA)
    dlt = check_delta(delta)
    a = math.floor(c)
    f = c - a
    if f == 0.0:
        return ddg_exact_epsilon(sigma, shares=n, shift=a, delta=dlt)
    # Q is a mixture of shifts ≥ ⌊c⌋: the subgaussian set {S ≤ h} bounds its ε from below too
    if a > 0 and _subgaussian_lower_bound(sigma, n, a, dlt) > MAX_EXACT_EPSILON:
        return math.inf
    hockey = _rounded_move_hockey_stick(sigma, n, a, f, dlt)
    if hockey(0.0) <= dlt:
        return 0.0
    lo, hi = 0.0, 1.0
    while hockey(hi) > dlt:
        if hi >= MAX_EXACT_EPSILON:
            return math.inf
        lo, hi = hi, min(2.0 * hi, MAX_EXACT_EPSILON)
    from scipy.optimize import brentq  # lazy: costs every process ~1 CPU-s (#35)

    # δ(ε) is continuous and decreasing: Brent's method in ~10 steps where bisection takes 40
    tol = 1e-12 * max(1.0, hi)
    root = float(brentq(lambda e: hockey(e) - dlt, lo, hi, xtol=tol, rtol=1e-13))
    return min(hi, root + tol)  # the side where δ(ε) ≤ δ, as the bisections return


def _log_mix(
    log_lo: NDArray[np.float64] | float, log_hi: NDArray[np.float64] | float, f: float
) -> NDArray[np.float64]:
    """log((1 − f)e^{log_lo} + f e^{log_hi}), −∞-safe."""
    return np.logaddexp(math.log1p(-f) + np.asarray(log_lo), math.log(f) + np.asarray(log_hi))


def _rounded_move_hockey_stick(
    sigma: float, shares: int, a: int, f: float, delta: float
) -> Callable[[float], float]:
    """max(δ_{P‖Q}(ε), δ_{Q‖P}(ε)) of :func:`rounded_move_epsilon`'s pair, a function of ε.

    Exact where it is at least δ/e (below it, possibly reported as 0: see the closed form).
    """
    if ddg_tau(sigma, shares) < EXACT_TAU:
        return _gaussian_rounded_move_hockey_stick(math.sqrt(shares) * sigma, a, f, delta)
    half = math.ceil(sigma * math.sqrt(2.0 * shares * math.log(2e50))) + 1
    values = np.arange(-half - a - 1, half + a + 2)  # log P at x, x − a, x − a − 1
    try:
        log_p = sum_of_shares_log_pmf(sigma, shares=shares, values=values)
    except ValueError:  # the residues' transforms would be too large: one transform
        x0, pmf = sum_of_shares_pmf(sigma, shares=shares)
        full = np.zeros(values.size)
        idx = values - x0
        ok = (idx >= 0) & (idx < pmf.size)
        full[ok] = pmf[idx[ok]]
        with np.errstate(divide="ignore"):
            log_p = np.log(full)
    m = 2 * half + a + 2  # x in [−half, half + a + 1]
    here = log_p[a + 1 : a + 1 + m]
    moved = _log_mix(log_p[1 : 1 + m], log_p[:m], f)  # log Q(x) from P(x − a), P(x − a − 1)
    # the loss from the logs, never from exp'd probabilities: deep in the tails both P and Q
    # underflow to 0 while their ratio is finite (σ = 0.05, n = 7, c = 7.3: ε ≈ 1400, not ∞)
    with np.errstate(invalid="ignore"):
        loss = here - moved  # log P/Q; ±∞ only where the one-transform fallback holds a 0
    both_zero = np.isnan(loss)  # P = Q = 0 there: no contribution either way
    p = np.where(both_zero, 0.0, np.exp(here))
    q = np.where(both_zero, 0.0, np.exp(moved))
    loss = np.where(both_zero, 0.0, loss)

    def hockey(eps: float) -> float:
        forward = np.sum(p * -np.expm1(np.minimum(eps - loss, 0.0)))
        backward = np.sum(q * -np.expm1(np.minimum(eps + loss, 0.0)))
        return float(max(forward, backward))

    return hockey


def _gaussian_rounded_move_hockey_stick(
    s: float, a: int, f: float, delta: float
) -> Callable[[float], float]:
    """The pair's δ(ε) for S ~ N_ℤ(0, s²), by one threshold per order (log cdfs).

    log P(x)/Q(x) = −log((1 − f)e^{−L_a(x)} + f e^{−L_{a+1}(x)}), L_v(x) = (v² − 2xv)/(2s²),
    decreases in x. δ_{P‖Q}(ε) = max_m F(m) − e^ε F_Q(m) is attained at the largest m with
    log P/Q > ε, δ_{Q‖P}(ε) = max_m Q(S > m) − e^ε P(S > m) at the largest m with
    log P/Q ≥ −ε; F_Q(m) = (1 − f)F(m − a) + f F(m − a − 1) and P(S > m) = F(−m − 1). Any m
    gives a lower bound on δ; the search runs over ±(40s + 2) (+ a), beyond which P and Q
    hold less than e^{−800} < 1e-300.
    """
    s2 = 2.0 * s * s
    width = math.ceil(40.0 * s) + 2
    lo_x, hi_x = -width - 1, width + a + 2

    def loss(x: int) -> float:
        la = (a * a - 2.0 * x * a) / s2
        lb = ((a + 1) ** 2 - 2.0 * x * (a + 1)) / s2
        return -float(_log_mix(-la, -lb, f))

    def last_above(level: float, strict: bool) -> int | None:
        """The largest x in [lo_x, hi_x) with loss(x) > level (≥ if not strict).

        None if there is none (the set lies below the window: P and Q hold < 1e-300 there).
        """
        lo, hi = lo_x, hi_x
        if not (loss(lo) > level or (not strict and loss(lo) >= level)):
            return None
        while hi - lo > 1:
            mid = (lo + hi) // 2
            above = loss(mid) > level or (not strict and loss(mid) >= level)
            lo, hi = (mid, hi) if above else (lo, mid)
        return lo

    @lru_cache(maxsize=256)  # the search revisits the same thresholds as it converges
    def log_cdf(x: int) -> float:
        return _log_discrete_gaussian_cdf(x, s)

    def side(log_first: float, log_second: float, eps: float) -> float:
        """e^{log_first} − e^{ε + log_second}, ≥ 0, without forming e^ε."""
        if log_first == -math.inf:
            return 0.0
        gap = eps + log_second - log_first
        return max(0.0, -math.exp(log_first) * math.expm1(min(gap, 0.0)))

    def negligible(t: float) -> bool:
        """P(S ≥ t) ≤ e^{−t²/(2s²)} below δ/e (N_ℤ(0, s²) is s²-subgaussian, CKS Sec. 2)."""
        return t > 0 and -t * t / s2 < log_floor

    log_floor = math.log(delta) - 1.0

    def hockey(eps: float) -> float:
        # a side whose region holds less than δ/e is reported as 0: it decides nothing (the
        # search compares with δ, and where max(…) is near δ that side is not the max), and
        # its log cdf deep in the tail is the slow part (up to 0.2 s at σ ≈ 10³)
        forward = backward = 0.0
        m = last_above(eps, strict=True)
        if m is not None and not negligible(float(-m)):
            q_cdf = float(_log_mix(log_cdf(m - a), log_cdf(m - a - 1), f))
            forward = side(log_cdf(m), q_cdf, eps)
        m = last_above(-eps, strict=False)
        # Q(S > m) = (1 − f)F(a − m − 1) + f F(a − m), P(S > m) = F(−m − 1)
        m = lo_x if m is None else m  # every x in the window: all of Q's mass
        if not negligible(float(m - a)):  # Q(S > m) ≤ P(S ≥ m − a)
            q_tail = float(_log_mix(log_cdf(a - m - 1), log_cdf(a - m), f))
            backward = side(q_tail, log_cdf(-m - 1), eps)
        return max(forward, backward)

    return hockey


# ddg_exact_epsilon reports ∞ beyond it: the top of the promises the trust models take
# (dpcore.resources.MAX_TRUST_EPSILON), so ∞ > ε_s always means the promise fails (at 10⁴, a
# true ε of 2·10⁴ against ε_s = 10⁵ read as ∞ and refuted a promise that holds)
MAX_EXACT_EPSILON = 1e6


def _exact_hockey_stick(sigma: float, shares: int, shift: int) -> Callable[[float], float]:
    """δ(ε) of the sum of n shares against a move of v, as a function of ε (log space).

    Where KLS's τ < 1e-14, that of N_ℤ(0, nσ²) (:func:`_gaussian_hockey_stick`). Otherwise
    Σ_x P(x)·(1 − e^{ε − L(x)})⁺ over a window of x, with
    L(x) = log P(x) − log P(x − v) from :func:`sum_of_shares_log_pmf` (the window holds all
    but 1e-50 of the mass by the subgaussian tail bound of :func:`_subgaussian_lower_bound`).
    If the tilted transforms would be too large, the sum's pmf by one transform
    (:func:`sum_of_shares_pmf`, :func:`shift_hockey_stick`): exact to its 1e-16 absolute
    precision.
    """
    if ddg_tau(sigma, shares) < EXACT_TAU:
        s = math.sqrt(shares) * sigma
        return lambda eps: _gaussian_hockey_stick(s, shift, eps)
    # the window: P(|S| > h) ≤ 2e^{−h²/(2nσ²)} ≤ 1e-50 (σ²-subgaussian shares), whatever σ;
    # ±15 std of the sum is not enough below σ ≈ 1, where the tails are a lattice's, not a
    # Gaussian's (σ = 0.3, n = 7: P(6) ≈ 3e-14 lies beyond 15 std = 1.3)
    half = math.ceil(sigma * math.sqrt(2.0 * shares * math.log(2e50))) + 1
    try:
        log_p = sum_of_shares_log_pmf(
            sigma, shares=shares, values=np.arange(-half - shift, half + 1)
        )
    except ValueError:  # the residues' transforms would be too large
        _, pmf = sum_of_shares_pmf(sigma, shares=shares)
        return lambda eps: shift_hockey_stick(pmf, shift, eps)
    here, moved = log_p[shift:], log_p[: 2 * half + 1]  # log P(x), log P(x − v)
    weight, loss = np.exp(here), here - moved

    def hockey(eps: float) -> float:
        return float(np.sum(weight * -np.expm1(np.minimum(eps - loss, 0.0))))

    return hockey
