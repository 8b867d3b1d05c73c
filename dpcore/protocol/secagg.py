"""Secure aggregation with distributed discrete noise: the algebra of the protocol.

What a practitioner would use instead of a trusted noise generator: every site quantises its
weighted statistic x_s = μ_s a_s to integers, adds its own share of discrete Gaussian noise,
hides the result under pairwise masks that cancel in the sum, and sends it modulo 2^b. The
server learns only the modular sum, which decodes to

    Σ_s round(μ_s a_s / γ) + Σ_s Z_s       (if it did not wrap around),

times γ: the pooled estimate plus the noise one curator would add, with no trusted party.

Simulated for real, step by step, in exact integer arithmetic:

1. **Quantisation** at scale γ with unbiased randomised rounding, round(v) = ⌊v/γ + U⌋,
   U ~ U[0, 1) (:func:`quantise`; E round(v) = v/γ).
2. **Noise shares** Z_s ~ N_ℤ(0, σ²)^d from the exact sampler of Canonne, Kamath & Steinke
   (:func:`dpcore.mechanisms.discrete.sample_discrete_gaussian`).
3. **Pairwise masks** (Bonawitz et al., CCS 2017, Sec. 3 "masking with one-time pads"): for
   every pair i < j a seed shared by i and j expands to m_ij ∈ [0, 2^b)^d; site i adds
   m_ij, site j subtracts it, so Σ_s M_s ≡ 0 (mod 2^b) *exactly* (:func:`pair_masks`).
4. **Messages** y_s = (r_s + Z_s + M_s) mod 2^b; the server sums them mod 2^b and maps the
   result to [−2^{b−1}, 2^{b−1}) (:func:`decode`). A coordinate whose true sum leaves that
   range wraps around; the simulation knows the true sum and counts them.
5. **Dropouts**: a site that drops after the masks were set up leaves its m_ij in the
   others' messages; the server reconstructs those pair seeds from the survivors' Shamir
   shares (possible when at least t survive) and removes them (:func:`recover_masks`). The
   dropped site's noise share is missing: the sum carries n − k shares.

Not simulated (the cryptography): key agreement, Shamir sharing and authenticated
encryption are replaced by seeds handed to both ends of a pair, the self-masks b_s of
Bonawitz et al.'s double masking are omitted (they only matter against a server that lies
about who dropped), and no party is malicious. The *accounting* is for the honest-but-curious
server of Bonawitz et al.'s Theorem 6.2 (any coalition of the server and fewer than t sites
learns only the sum of the others' inputs).

Privacy (``docs/trust-models.md``): neighbouring data sets change one sample of one site s,
so x_s moves by at most μ_s Δ_s in L2 (the same relation and Δ_s as CAPE). Rounding with a
shared U couples the two roundings so that their difference is itself a randomised rounding
of the change v/γ (⌊x + v + U⌋ − ⌊x + U⌋ = ⌊v⌋ + Bernoulli(frac v)); KLS Theorem 1 bounds its
norm by Δ̃_s with probability 1 − β_s (:func:`dpcore.mechanisms.discrete.rounded_l2_bound`), and the
failure probability β_s = δ_s/10 is charged to δ_s (joint convexity of the hockey-stick
divergence). The sum of n shares is then accounted by KLS Proposition 14, eq. (17) and
converted to (ε, δ) by CKS Proposition 12 (:func:`dpcore.mechanisms.discrete.ddg_epsilon`) at
δ_s − β_s.

References
----------
K. Bonawitz et al., "Practical Secure Aggregation for Privacy-Preserving Machine Learning",
CCS 2017. P. Kairouz, Z. Liu, T. Steinke, ICML 2021, arXiv:2102.06387. C. Canonne,
G. Kamath, T. Steinke, NeurIPS 2020, arXiv:2004.00010.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpcore._validation import (
    MAX_MAGNITUDE,
    RngLike,
    as_float_array,
    check_bool,
    check_choice,
    check_int,
    check_per_site,
    check_positive_array,
    check_real,
    check_rng,
    check_weights,
)
from dpcore.mechanisms.calibration import CALIBRATIONS, ClassicGaussianWarning, gaussian_sigma
from dpcore.mechanisms.discrete import (
    MAX_SIGMA,
    MIN_SHARE_SIGMA,
    MIN_SIGMA,
    ddg_epsilon,
    ddg_exact_epsilon,
    ddg_sigma,
    ddg_tau,
    discrete_gaussian_variance,
    rounded_l2_bound,
    rounded_move_epsilon,
    sample_discrete_gaussian,
)
from dpcore.mechanisms.noise import expand_symmetric, n_free_entries, symmetric_index_map

SECAGG_CALIBRATIONS = ("ddg", "classic", "analytic")
DEFAULT_BITS = 32
BETA_FRACTION = 0.1  # β_s = δ_s/10: the rounding bound may fail with this probability
# Smallest δ_s a round accepts: β_s = δ_s/10 and the bounds built on it stay ordinary floats
# (δ = 5e-324 made β underflow to 0, issue #36). Nothing physical comes near it.
MIN_DELTA = 1e-300
ROUNDING_INFLATION = 1.01  # the automatic scale lets rounding inflate Δ by at most 1%
MAX_COORDINATES = 10**7
MAX_SITES = 1000  # Σ of S values below 2^52 each stays inside int64
QUANTISED_LIMIT = 2.0**52  # |x/γ| must stay an exact float64 integer
MAX_MESSAGE_ENTRIES = 20_000_000  # S·d per round: a few int64 arrays of this size
TAU_NEGLIGIBLE = 1e-12  # the fast path draws the shares' sum at once below this distance
MAX_PAD_ENTRIES = 200_000_000  # S(S−1)/2·d pad integers to expand (seconds, not hours)


# --- parameters ----------------------------------------------------------------------------


def default_threshold(sites: int) -> int:
    """The default threshold t = ⌊S/2⌋ + 1: a majority must survive to unmask (Bonawitz Sec. 4)."""
    return check_int(sites, "sites", low=2, high=MAX_SITES) // 2 + 1


def auto_scale(
    sensitivity: ArrayLike, *, weights: ArrayLike, coordinates: int, beta: float
) -> float:
    """The largest γ at which rounding inflates every site's Δ by at most 1%.

    Solves sqrt(c² + d/4 + L(c + √d/2)) = 1.01·c for c (L = √(2 log(1/β)), KLS Theorem 1)
    and returns γ = min_s μ_s Δ_s / c over sites with μ_s > 0.

    Examples
    --------
    >>> g = auto_scale([0.01, 0.01], weights=[0.5, 0.5], coordinates=100, beta=1e-3)
    >>> c = 0.005 / g
    >>> from dpcore.mechanisms.discrete import rounded_l2_bound
    >>> round(rounded_l2_bound(c, dim=100, beta=1e-3) / c, 6)
    1.01
    """
    sens = check_positive_array(sensitivity, "sensitivity")
    mu = check_weights(weights, sens.size)
    d = check_int(coordinates, "coordinates", low=1, high=MAX_COORDINATES)
    b = check_real(beta, "beta", low=0.0, high=1.0, low_open=True, high_open=True)
    ell = math.sqrt(-2 * math.log(b))  # not log(1/β): 1/β overflows below β ≈ 5.6e-309
    k = ROUNDING_INFLATION**2 - 1
    const = d / 4 + ell * math.sqrt(d) / 2
    c = (ell + math.sqrt(ell**2 + 4 * k * const)) / (2 * k)
    weighted = mu * sens
    return float(weighted[mu > 0].min() / c)


# --- the design ----------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class SecAggDesign:
    """Quantisation, modulus and noise of one secure-aggregation round, and its accounting.

    Made by :func:`secagg_design`. Integer units are those of the quantised values (data
    divided by γ); std's in data units are of the estimate Σ μ_s a_s.

    Attributes
    ----------
    weights, sensitivity, epsilon, delta : ndarray, shape (S,)
        μ_s, Δ_s (of site s's own statistic a_s), and its promise (ε_s, δ_s).
    coordinates : int
        d, the number of integers each site sends.
    bits : int
        b: arithmetic modulo 2^b.
    scale : float
        γ: one integer step in data units.
    threshold : int
        t: survivors needed to unmask the dropped sites' pair masks.
    noise_shares : int
        n: how many shares the calibration counts on (S minus the expected dropouts).
    calibration : {"ddg", "classic", "analytic"}
        ``"ddg"``: the smallest share σ whose n-share sum meets every (ε_s, δ_s) by the KLS
        accounting. ``"classic"``/``"analytic"``: the n-share sum gets the variance of the
        continuous Gaussian mechanism of that calibration (as CAPE's τ_pool) at the rounded
        sensitivity; its accounted ε (:meth:`epsilons`) may then exceed ε_s.
    sigma : float
        σ of each site's share N_ℤ(0, σ²) in integer units (0 for ε = ∞).
    beta : ndarray, shape (S,)
        β_s = δ_s/10: probability that rounding exceeds the bound Δ̃_s (charged to δ_s).
    rounded_l2 : ndarray, shape (S,)
        Δ̃_s: the L2 sensitivity of site s's rounded message, integer units (KLS Thm. 1).
    coordinate_sensitivity : ndarray, shape (S,)
        The largest change of *one* coordinate of a_s that neighbouring data sets can make
        (data units, ≤ Δ_s; default Δ_s): the move :meth:`refutation_epsilons` realises.
    """

    weights: NDArray[np.float64]
    sensitivity: NDArray[np.float64]
    epsilon: NDArray[np.float64]
    delta: NDArray[np.float64]
    coordinates: int
    bits: int
    scale: float
    threshold: int
    noise_shares: int
    calibration: str
    sigma: float
    beta: NDArray[np.float64]
    rounded_l2: NDArray[np.float64]
    coordinate_sensitivity: NDArray[np.float64] | None = None

    def __post_init__(self) -> None:
        if self.coordinate_sensitivity is None:
            object.__setattr__(self, "coordinate_sensitivity", self.sensitivity)
        names = ("weights", "sensitivity", "epsilon", "delta", "beta", "rounded_l2")
        for name in (*names, "coordinate_sensitivity"):
            arr = np.array(as_float_array(getattr(self, name), name))
            arr.setflags(write=False)  # designs are cached and shared (point_design)
            object.__setattr__(self, name, arr)

    @property
    def n_sites(self) -> int:
        """S."""
        return int(self.weights.size)

    @property
    def modulus(self) -> int:
        """2^b."""
        return int(2**self.bits)

    @property
    def representable(self) -> float:
        """2^{b−1}·γ: the largest |Σ μ_s a_s + noise| per coordinate that does not wrap."""
        return float(2 ** (self.bits - 1) * self.scale)

    @property
    def site_l2(self) -> NDArray[np.float64]:
        """c_s = μ_s Δ_s / γ: site s's sensitivity before rounding, integer units."""
        return self.weights * self.sensitivity / self.scale

    @property
    def rounding_inflation(self) -> float:
        """max_s Δ̃_s / c_s over sites with μ_s > 0: what rounding costs in sensitivity."""
        c = self.site_l2
        return float(np.max(self.rounded_l2[c > 0] / c[c > 0]))

    @property
    def share_variance(self) -> float:
        """Var N_ℤ(0, σ²) of one share (integer units)."""
        return 0.0 if self.sigma == 0 else discrete_gaussian_variance(self.sigma)

    def noise_std(self, shares: int | None = None) -> float:
        """Std of the estimate's noise (data units) when ``shares`` shares are summed.

        γ·sqrt(n·Var Z); ``shares`` defaults to all S sites. Rounding adds at most γ²S/4 of
        variance on top (:attr:`rounding_std`).
        """
        n = self.n_sites if shares is None else check_int(shares, "shares", low=0)
        return self.scale * math.sqrt(n * self.share_variance)

    @property
    def tau_agg(self) -> float:
        """Aggregate noise std with every share present (data units)."""
        return self.noise_std()

    @property
    def rounding_std(self) -> float:
        """Largest std the S roundings add to a coordinate: γ·sqrt(S/4) (data units)."""
        return self.scale * math.sqrt(self.n_sites / 4)

    @property
    def tau_central(self) -> float:
        """What one trusted curator would add: max_s μ_s σ_s, σ_s the Gaussian σ of each site.

        The pooled requirement of :func:`dpcore.cape_design` at every site's own
        (Δ_s, ε_s, δ_s) and no rounding: the reference "central" level. Its calibration is
        the design's when that is a Gaussian one ("classic", "analytic"), else the default
        (:data:`dpcore.DEFAULT_CALIBRATION`, for "ddg"), so a matched round and the
        curator it is compared with calibrate alike (issue #51).
        """
        cal = self.calibration if self.calibration in CALIBRATIONS else None
        with warnings.catch_warnings():  # the design warned once when it was calibrated
            warnings.simplefilter("ignore", ClassicGaussianWarning)
            sig = [
                gaussian_sigma(float(s), epsilon=float(e), delta=float(d), calibration=cal)
                for s, e, d in zip(self.sensitivity, self.epsilon, self.delta, strict=True)
            ]
        return float(np.max(self.weights * np.array(sig)))

    def epsilons(self, shares: int | None = None) -> NDArray[np.float64]:
        """Accounted ε_s of every site when ``shares`` shares are in the sum (default S).

        KLS eq. (17) + CKS Prop. 12 at δ_s − β_s, sensitivity Δ̃_s (:func:`ddg_epsilon`);
        ∞ with no share or σ < 1/2 (no noise, or outside KLS Prop. 14), 0 for a site with
        μ_s = 0.
        """
        n = self.n_sites if shares is None else check_int(shares, "shares", low=0)
        return np.array(
            [
                _site_epsilon(self.sigma, n, float(l2), self.coordinates, float(d - b))
                for l2, d, b in zip(self.rounded_l2, self.delta, self.beta, strict=True)
            ]
        )

    def meets(self, shares: int | None = None) -> bool:
        """Every site's accounted ε_s is within its promise (to 1e-9) with ``shares`` shares."""
        return bool(np.all(self.epsilons(shares) <= self.epsilon * (1 + 1e-9)))

    def exact_epsilons(self, shares: int | None = None) -> NDArray[np.float64]:
        """Numerically exact ε_s of the summed shares against a shift of ⌊Δ̃_s⌋ on one coordinate.

        :func:`dpcore.mechanisms.discrete.ddg_exact_epsilon` at δ_s − β_s (the δ the certificate
        :meth:`epsilons` spends): the privacy loss of the sum's own pmf, no Rényi bound. A
        lower bound on the worst case over every *rounded message* moved by norm ≤ Δ̃_s, but
        not a refutation of (ε_s, δ_s): a data change moves the rounded message by ⌊c_s⌋ or
        ⌈c_s⌉ at random, not by ⌊Δ̃_s⌋, and the promise is at δ_s. The verdicts use
        :meth:`refutation_epsilons`. ∞ with no share, 0 for μ_s = 0.
        """
        n = self.n_sites if shares is None else check_int(shares, "shares", low=0)
        return np.array(
            [
                _site_exact_epsilon(self.sigma, n, math.floor(float(l2)), float(d - b))
                for l2, d, b in zip(self.rounded_l2, self.delta, self.beta, strict=True)
            ]
        )

    def refutation_epsilons(self, shares: int | None = None) -> NDArray[np.float64]:
        """The exact ε_s, at δ_s, of a move neighbouring data sets can make: a refutation.

        Site s's data change moves one coordinate of x_s = μ_s a_s by
        c_s = μ_s · :attr:`coordinate_sensitivity`_s / γ integer steps; with the other data
        set's value on the integer grid, randomised rounding moves the message by ⌊c_s⌋
        with probability 1 − frac(c_s) and ⌈c_s⌉ otherwise. This is the exact ε of that
        pair of output distributions (the summed shares, moved and not) at the promise's
        own δ_s, :func:`dpcore.mechanisms.discrete.rounded_move_epsilon`: a pair the data
        can realise, so ε above ε_s *proves* that (ε_s, δ_s)-DP fails. It is at most the
        true ε, and :meth:`epsilons` (the KLS certificate) at least: the promise is open
        between them. ∞ with no share, 0 for μ_s = 0.
        """
        n = self.n_sites if shares is None else check_int(shares, "shares", low=0)
        assert self.coordinate_sensitivity is not None  # set by __post_init__
        moves = self.weights * self.coordinate_sensitivity / self.scale
        return np.array(
            [
                _site_refutation_epsilon(self.sigma, n, float(c), float(d))
                for c, d in zip(moves, self.delta, strict=True)
            ]
        )


@lru_cache(maxsize=4096)
def _site_refutation_epsilon(sigma: float, shares: int, move: float, delta: float) -> float:
    if move == 0:
        return 0.0
    if shares == 0 or sigma == 0:
        return math.inf
    return rounded_move_epsilon(sigma, shares=shares, move=move, delta=delta)


@lru_cache(maxsize=4096)
def _site_epsilon(sigma: float, shares: int, l2: float, dim: int, delta: float) -> float:
    if l2 == 0:
        return 0.0
    if shares == 0 or sigma < MIN_SHARE_SIGMA:  # no noise, or no KLS certificate (σ < 1/2)
        return math.inf
    return ddg_epsilon(sigma, shares=shares, l2=l2, dim=dim, delta=delta)


@lru_cache(maxsize=4096)
def _site_exact_epsilon(sigma: float, shares: int, shift: int, delta: float) -> float:
    if shift == 0:
        return 0.0
    if shares == 0 or sigma == 0:
        return math.inf
    return ddg_exact_epsilon(sigma, shares=shares, shift=shift, delta=delta)


def secagg_design(
    sensitivity: ArrayLike,
    *,
    epsilon: ArrayLike,
    delta: ArrayLike,
    coordinates: int,
    weights: ArrayLike | None = None,
    bits: int = DEFAULT_BITS,
    scale: float | None = None,
    calibration: str = "ddg",
    expected_dropouts: int = 0,
    threshold: int | None = None,
    coordinate_sensitivity: ArrayLike | None = None,
) -> SecAggDesign:
    """Calibrate a secure-aggregation round to every site's (ε_s, δ_s), like CAPE's pooled level.

    Parameters
    ----------
    sensitivity : array_like, shape (S,)
        Δ_s > 0: L2 sensitivity of site s's statistic a_s under the neighbouring relation
        (e.g. :func:`dpcore.second_moment_sensitivity`), S ≥ 2.
    epsilon, delta : float or array_like, shape (S,)
        ε_s in (0, ∞] and δ_s in (0, 1) per site.
    coordinates : int
        d ≥ 1: integers per message (D(D+1)/2 for a symmetric D×D matrix).
    weights : array_like, shape (S,), optional
        μ_s ≥ 0 summing to 1 (default 1/S); each site sends round(μ_s a_s / γ).
    bits : int
        b in [2, 64]: the modulus 2^b (default 32).
    scale : float, optional
        γ > 0 in data units; default :func:`auto_scale` (rounding costs ≤ 1% of Δ).
    calibration : {"ddg", "classic", "analytic"}
        See :class:`SecAggDesign`; ``"ddg"`` (default) is a proof by the KLS accounting.
    expected_dropouts : int
        k in [0, S − 1]: over-provision every share for n = S − k shares (KLS Sec. 4 /
        Bonawitz: the usual remedy for dropouts, paid in noise when nobody drops).
    threshold : int, optional
        t in [1, S]: survivors needed to unmask; default ⌊S/2⌋ + 1.
    coordinate_sensitivity : array_like, shape (S,), optional
        The largest change of one coordinate of a_s neighbouring data sets can make, in
        (0, Δ_s] per site (default Δ_s: the statistic attains its L2 bound on one
        coordinate, as a second moment under add-remove does with x = e_1). Only the
        refutation ε (:meth:`SecAggDesign.refutation_epsilons`) uses it.

    Returns
    -------
    SecAggDesign

    Notes
    -----
    The sum must carry the noise one curator would add: with all shares i.i.d., the share σ
    is the largest any site needs, σ = max_s σ_s (the pooled requirement max_s μ_s τ_s of
    :func:`dpcore.cape_design`, in integer units μ_s Δ_s/γ → Δ̃_s).

    Examples
    --------
    >>> d = secagg_design([0.01] * 4, epsilon=1.0, delta=1e-5, coordinates=10)
    >>> d.meets(), round(d.tau_agg / d.tau_central, 2)
    (True, 1.1)
    """
    sens = check_positive_array(sensitivity, "sensitivity")
    s = check_int(sens.size, "sensitivity (number of sites)", low=2, high=MAX_SITES)
    if sens.max() > MAX_MAGNITUDE:
        raise ValueError(
            f"every entry of sensitivity must be in (0, {MAX_MAGNITUDE:g}]; got {sens.max()!r}"
        )
    eps = check_per_site(epsilon, s, "epsilon", high=math.inf)
    dlt = check_per_site(delta, s, "delta", high=1.0, low=MIN_DELTA)  # δ/10 must stay a float
    d = check_int(coordinates, "coordinates", low=1, high=MAX_COORDINATES)
    mu = check_weights(weights, s)
    b = check_int(bits, "bits", low=2, high=64)
    cal = check_choice(calibration, "calibration", SECAGG_CALIBRATIONS)
    k = check_int(expected_dropouts, "expected_dropouts", low=0, high=s - 1)
    t = default_threshold(s) if threshold is None else check_int(threshold, "threshold", high=s)
    if coordinate_sensitivity is None:
        coord = sens
    else:
        coord = check_positive_array(coordinate_sensitivity, "coordinate_sensitivity")
        if coord.shape != sens.shape or np.any(coord > sens * (1 + 1e-12)):
            raise ValueError(
                f"coordinate_sensitivity must hold {s} values in (0, Δ_s] (Δ_s = sensitivity); "
                f"got {coordinate_sensitivity!r}"
            )
    beta = BETA_FRACTION * dlt
    if scale is None:
        gamma = auto_scale(sens, weights=mu, coordinates=d, beta=float(beta.min()))
    else:
        gamma = check_real(scale, "scale", low=0.0, high=MAX_MAGNITUDE, low_open=True)
    c = mu * sens / gamma
    if np.any(c > MAX_SIGMA):
        raise ValueError(
            f"scale is too small for these sensitivities: μ_s Δ_s / γ reaches {c.max():.3g} "
            f"integer steps (limit {MAX_SIGMA:g}); got scale {gamma!r}"
        )
    rounded = np.array(
        [
            rounded_l2_bound(float(x), dim=d, beta=float(bb)) if x > 0 else 0.0
            for x, bb in zip(c, beta, strict=True)
        ]
    )
    sigma = _share_sigma(rounded, eps, dlt - beta, d, s - k, cal)
    return SecAggDesign(
        weights=mu,
        sensitivity=sens,
        epsilon=eps,
        delta=dlt,
        coordinates=d,
        bits=b,
        scale=gamma,
        threshold=t,
        noise_shares=s - k,
        calibration=cal,
        sigma=sigma,
        beta=beta,
        rounded_l2=rounded,
        coordinate_sensitivity=coord,
    )


def _share_sigma(
    rounded: NDArray[np.float64],
    eps: NDArray[np.float64],
    delta: NDArray[np.float64],
    dim: int,
    shares: int,
    calibration: str,
) -> float:
    """Share σ: the largest any site with μ_s > 0 and finite ε_s needs (0 if none does)."""
    need = [0.0]
    for l2, e, dl in zip(rounded, eps, delta, strict=True):
        if l2 == 0 or math.isinf(e):
            continue
        if calibration == "ddg":
            need.append(_cached_ddg_sigma(float(e), float(dl), shares, float(l2), dim))
        else:
            total = gaussian_sigma(
                float(l2), epsilon=float(e), delta=float(dl), calibration=calibration
            )
            need.append(total / math.sqrt(shares))
    sigma = max(need)
    if 0 < sigma < MIN_SIGMA:  # the sampler's floor; only adds (a mass e^{-5000} of) noise
        sigma = MIN_SIGMA
    if sigma > MAX_SIGMA:
        raise ValueError(
            f"the share σ would be {sigma:.3g} integer steps (limit {MAX_SIGMA:g}); use a "
            f"larger scale or epsilon"
        )
    return float(sigma)


@lru_cache(maxsize=4096)
def _cached_ddg_sigma(eps: float, delta: float, shares: int, l2: float, dim: int) -> float:
    return ddg_sigma(epsilon=eps, delta=delta, shares=shares, l2=l2, dim=dim)


# --- the protocol, one step per function ---------------------------------------------------


def quantise(values: ArrayLike, scale: float, *, rng: RngLike = None) -> NDArray[np.int64]:
    """Unbiased randomised rounding of values/γ to integers: ⌊v/γ + U⌋, U ~ U[0, 1).

    E⌊v/γ + U⌋ = v/γ exactly, with variance frac(v/γ)(1 − frac(v/γ)) ≤ 1/4 per coordinate.

    Raises
    ------
    ValueError
        If a value is not finite or |v/γ| ≥ 2^52 (no longer an exact float64 integer).
    """
    gamma = check_real(scale, "scale", low=0.0, high=MAX_MAGNITUDE, low_open=True)
    v = as_float_array(values, "values")
    scaled = v / gamma
    if not np.all(np.isfinite(scaled)) or np.any(np.abs(scaled) >= QUANTISED_LIMIT):
        raise ValueError(
            f"values / scale must be finite and below 2^52 in magnitude; got max "
            f"{np.max(np.abs(scaled)) if scaled.size else 0:.3g} (scale {gamma!r})"
        )
    u = check_rng(rng).random(scaled.shape)
    return np.floor(scaled + u).astype(np.int64)


def _mask_bits(bits: int) -> np.uint64:
    return np.uint64(2**bits - 1)


def to_ring(values: NDArray[np.int64], bits: int) -> NDArray[np.uint64]:
    """Integers modulo 2^b as uint64 (two's complement wraps negatives correctly)."""
    return values.astype(np.uint64) & _mask_bits(bits)


def decode(total: NDArray[np.uint64], bits: int) -> NDArray[np.int64]:
    """A sum modulo 2^b mapped to its representative in [−2^{b−1}, 2^{b−1})."""
    v = total & _mask_bits(bits)
    if bits == 64:
        return v.view(np.int64)
    out = v.astype(np.int64)
    half = np.int64(2 ** (bits - 1))  # 2^b itself overflows int64 at b = 63
    return np.where(out >= half, out - half - half, out)


def _pairs(n_sites: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(n_sites) for j in range(i + 1, n_sites)]


def pair_seeds(
    n_sites: int, *, rng: np.random.Generator
) -> dict[tuple[int, int], np.random.SeedSequence]:
    """One seed per pair i < j (stands in for the key agreement of Bonawitz et al. Round 1)."""
    pairs = _pairs(check_int(n_sites, "n_sites", low=2, high=MAX_SITES))
    seeds = {}
    for p, child in zip(pairs, rng.spawn(len(pairs)), strict=True):
        seq = child.bit_generator.seed_seq
        assert isinstance(seq, np.random.SeedSequence)  # spawned children carry theirs
        seeds[p] = seq
    return seeds


def _expand(seed: np.random.SeedSequence, coordinates: int, bits: int) -> NDArray[np.uint64]:
    """The one-time pad m_ij ∈ [0, 2^b)^d a pair's seed expands to (a PRG in the protocol)."""
    gen = np.random.default_rng(seed)
    draw = gen.integers(0, np.iinfo(np.uint64).max, coordinates, dtype=np.uint64, endpoint=True)
    return draw & _mask_bits(bits)


def pair_masks(
    seeds: dict[tuple[int, int], np.random.SeedSequence], n_sites: int, coordinates: int, bits: int
) -> NDArray[np.uint64]:
    """Every site's net mask M_s = Σ_{j>s} m_sj − Σ_{j<s} m_js (mod 2^b), shape (S, d).

    Σ_s M_s ≡ 0 (mod 2^b) exactly: each m_ij is added once and subtracted once.
    """
    masks = np.zeros((n_sites, coordinates), dtype=np.uint64)
    for (i, j), seed in seeds.items():
        m = _expand(seed, coordinates, bits)
        masks[i] += m  # uint64 arithmetic wraps modulo 2^64, a multiple of 2^b
        masks[j] -= m
    return masks & _mask_bits(bits)


def recover_masks(
    seeds: dict[tuple[int, int], np.random.SeedSequence],
    dropped: Sequence[int],
    coordinates: int,
    bits: int,
) -> NDArray[np.uint64]:
    """What the server subtracts after dropouts: the survivors' masks shared with dropped sites.

    For a pair (i, j) with one end dropped, the survivor's message still contains ±m_ij; the
    server rebuilds m_ij from the pair seed (reconstructed from ≥ t Shamir shares, Bonawitz
    et al. Round 4) and returns Σ of those residues, so that (Σ_survivors y_s − this) ≡
    Σ_survivors (r_s + Z_s) (mod 2^b).
    """
    gone = set(dropped)
    residue = np.zeros(coordinates, dtype=np.uint64)
    for (i, j), seed in seeds.items():
        if (i in gone) == (j in gone):
            continue  # both present (cancels) or both gone (never sent)
        m = _expand(seed, coordinates, bits)
        if i in gone:  # survivor j subtracted m_ij
            residue -= m
        else:  # survivor i added m_ij
            residue += m
    return residue & _mask_bits(bits)


@dataclass(frozen=True, eq=False)
class SecAggRun:
    """One secure-aggregation round, every message.

    Attributes
    ----------
    design : SecAggDesign
    quantised : ndarray of int64, shape (S, d)
        r_s = round(μ_s a_s / γ).
    noise : ndarray of int64, shape (S, d) or (1, d)
        Each site's share Z_s; on the fast path with a negligible τ, one row: the sum of the
        surviving sites' shares drawn at once.
    masks : ndarray of uint64, shape (S, d), or None
        Net pairwise masks M_s (``None`` on the fast path, which skips them: they cancel
        exactly, so the decoded sum is bit-identical).
    messages : ndarray of uint64, shape (S, d), or None
        y_s = (r_s + Z_s + M_s) mod 2^b as sent (``None`` on the fast path).
    dropped : tuple of int
        Sites that sent nothing.
    total : ndarray of int64, shape (d,)
        The exact integer Σ_survivors (r_s + Z_s) the server is meant to learn.
    decoded : ndarray of int64, shape (d,)
        What it decodes from the modular sum.
    estimate : ndarray, shape (d,)
        γ·decoded / W, W = Σ_survivors μ_s: the estimate of the survivors' weighted mean.
    """

    design: SecAggDesign
    quantised: NDArray[np.int64]
    noise: NDArray[np.int64]
    masks: NDArray[np.uint64] | None
    messages: NDArray[np.uint64] | None
    dropped: tuple[int, ...]
    total: NDArray[np.int64]
    decoded: NDArray[np.int64]
    estimate: NDArray[np.float64]

    @property
    def wraparounds(self) -> int:
        """Coordinates whose true sum left [−2^{b−1}, 2^{b−1}) and decoded wrongly."""
        return int(np.count_nonzero(self.decoded != self.total))

    @property
    def noise_shares(self) -> int:
        """Shares in the sum: S minus the dropped sites."""
        return self.design.n_sites - len(self.dropped)


def _check_dropped(dropped: Sequence[int], design: SecAggDesign) -> tuple[int, ...]:
    if isinstance(dropped, (str, bytes)) or not isinstance(dropped, (Sequence, np.ndarray)):
        raise TypeError(f"dropped must be a sequence of site indices; got {dropped!r}")
    out = tuple(check_int(s, "dropped", low=0, high=design.n_sites - 1) for s in dropped)
    if len(set(out)) != len(out):
        raise ValueError(f"dropped must not repeat a site; got {list(out)}")
    survivors = design.n_sites - len(out)
    if survivors < design.threshold:
        raise ValueError(
            f"dropped leaves {survivors} sites, fewer than the threshold t = "
            f"{design.threshold}: the server cannot unmask and the round must be re-run; "
            f"got dropped = {list(out)}"
        )
    return tuple(sorted(out))


def secagg_sum(
    values: ArrayLike,
    design: SecAggDesign,
    *,
    dropped: Sequence[int] = (),
    faithful: bool = True,
    rng: RngLike = None,
) -> SecAggRun:
    """Run one round: quantise, add shares, mask, sum modulo 2^b, unmask dropouts, decode.

    Parameters
    ----------
    values : array_like, shape (S, d)
        a_s for every site (unweighted; site s sends round(μ_s a_s/γ)).
    design : SecAggDesign
    dropped : sequence of int
        0-based sites that drop after the masks were set up (at least t must remain).
    faithful : bool
        Draw every share and apply the pairwise masks. ``False`` skips the masks (they cancel
        exactly modulo 2^b, so the decoded sum is the same bit for bit) and, when KLS's
        τ(σ, n) ≤ 10⁻¹² (σ ≳ 2 steps), draws the n shares' sum at once as N_ℤ(0, nσ²):
        the two laws are within total variation τ (KLS Theorem 1's τ; checked against the
        convolved pmf in ``tests/core/protocol/test_secagg.py``) — S times fewer samples.
    rng : int, Generator or None
        Spawned into rounding, noise and mask streams (per site / per pair).

    Returns
    -------
    SecAggRun
    """
    if not isinstance(design, SecAggDesign):
        raise TypeError(f"design must be a SecAggDesign; got {type(design).__name__}")
    faithful = check_bool(faithful, "faithful")
    arr = as_float_array(values, "values")
    shape = (design.n_sites, design.coordinates)
    if arr.shape != shape:
        raise ValueError(f"values must have shape {shape} (S, d); got {arr.shape}")
    gone = _check_dropped(dropped, design)
    pairs = shape[0] * (shape[0] - 1) // 2
    if shape[0] * shape[1] > MAX_MESSAGE_ENTRIES or (
        faithful and pairs * shape[1] > MAX_PAD_ENTRIES
    ):
        raise ValueError(
            f"values has {shape[0] * shape[1]:,} entries (limit {MAX_MESSAGE_ENTRIES:,}) and "
            f"{pairs * shape[1]:,} pad entries to expand (limit {MAX_PAD_ENTRIES:,} with "
            f"faithful=True); use fewer sites or coordinates, or faithful=False"
        )
    round_rng, noise_rng, mask_rng = check_rng(rng).spawn(3)
    quantised = np.stack(
        [
            quantise(w * a, design.scale, rng=r)
            for w, a, r in zip(design.weights, arr, round_rng.spawn(shape[0]), strict=True)
        ]
    )
    keep = np.array([s not in gone for s in range(shape[0])])
    n = int(keep.sum())
    masks = messages = None
    if not faithful and design.sigma > 0 and ddg_tau(design.sigma, n) <= TAU_NEGLIGIBLE:
        # The n shares' sum, drawn at once: within total variation τ of N_ℤ(0, nσ²)
        noise = sample_discrete_gaussian(
            design.sigma * math.sqrt(n), (1, shape[1]), rng=noise_rng.spawn(1)[0]
        )
        total = quantised[keep].sum(axis=0) + noise[0]
    else:
        noise = np.zeros(shape, dtype=np.int64)
        if design.sigma > 0:
            for s, r in enumerate(noise_rng.spawn(shape[0])):
                noise[s] = sample_discrete_gaussian(design.sigma, shape[1], rng=r)
        total = (quantised[keep] + noise[keep]).sum(axis=0)
    # Without masks the modular sum is the true sum reduced mod 2^b (int64 does not overflow:
    # S ≤ 1000 values below 2^52 plus shares below 2^40·40).
    summed = to_ring(total, design.bits)
    if faithful:
        seeds = pair_seeds(shape[0], rng=mask_rng)
        masks = pair_masks(seeds, *shape, design.bits)
        messages = (to_ring(quantised + noise, design.bits) + masks) & _mask_bits(design.bits)
        summed = messages[keep].sum(axis=0, dtype=np.uint64)
        if gone:
            summed = summed - recover_masks(seeds, gone, shape[1], design.bits)
    decoded = decode(summed, design.bits)
    weight = float(design.weights[keep].sum())
    if weight <= 0:
        raise ValueError(f"dropped must leave a site with positive weight; got {list(gone)}")
    estimate = decoded.astype(float) * design.scale / weight
    return SecAggRun(design, quantised, noise, masks, messages, gone, total, decoded, estimate)


# --- symmetric matrices and tensors as messages --------------------------------------------


@lru_cache(maxsize=16)
def _first_positions(dim: int, order: int) -> NDArray[np.intp]:
    _, first = np.unique(symmetric_index_map(dim, order).ravel(), return_index=True)
    first.setflags(write=False)
    return first


def free_entries(values: ArrayLike, order: int) -> NDArray[np.float64]:
    """(S, D, …, D) symmetric arrays → (S, C(D+m−1, m)): one entry per multiset i ≤ j (≤ k).

    The order of :func:`dpcore.mechanisms.noise.symmetric_index_map`, so that
    :func:`dpcore.mechanisms.noise.expand_symmetric` inverts it. Its L2 norm is at most the
    Frobenius norm of the full array, so a sensitivity Δ (Frobenius) bounds the message's too.
    """
    arr = as_float_array(values, "values")
    order = check_int(order, "order", low=1, high=3)
    if arr.ndim != order + 1 or len(set(arr.shape[1:])) != 1:
        raise ValueError(f"values must have shape (S, D{', D' * (order - 1)}); got {arr.shape}")
    dim = arr.shape[1]
    return arr.reshape(arr.shape[0], -1)[:, _first_positions(dim, order)]


def symmetric_coordinates(dim: int, order: int) -> int:
    """Integers per message for a symmetric order-m array: d = C(D+m−1, m)."""
    return n_free_entries(check_int(dim, "dim", low=1), check_int(order, "order", low=1, high=3))


# --- the baseline: symmetric moments through one round ---------------------------------------


@lru_cache(maxsize=1024)
def _point_design(
    sensitivity: tuple[float, ...],
    epsilon: float,
    delta: float,
    calibration: str,
    bits: int,
    scale: float | None,
    weights: tuple[float, ...],
    coordinates: int,
) -> SecAggDesign:
    with warnings.catch_warnings():  # the sweep warns once for its classic calibration
        warnings.simplefilter("ignore", ClassicGaussianWarning)
        return secagg_design(
            np.array(sensitivity),
            epsilon=epsilon,
            delta=delta,
            coordinates=coordinates,
            weights=np.array(weights),
            bits=bits,
            scale=scale,
            calibration=calibration,
        )


def point_design(
    sensitivity: ArrayLike,
    *,
    epsilon: float,
    delta: float,
    calibration: str,
    bits: int,
    scale: float | None,
    weights: ArrayLike,
    coordinates: int,
) -> SecAggDesign:
    """:func:`secagg_design` for one sweep grid point, cached (every run reuses it).

    Without its ClassicGaussianWarning: the sweep that asks has already warned once.
    """
    return _point_design(
        tuple(np.asarray(sensitivity, dtype=float).tolist()),
        float(epsilon),
        float(delta),
        str(calibration),
        int(bits),
        None if scale is None else float(scale),
        tuple(np.asarray(weights, dtype=float).tolist()),
        int(coordinates),
    )


def secagg_symmetric(
    values: ArrayLike, design: SecAggDesign, *, faithful: bool = True, rng: RngLike = None
) -> NDArray[np.float64]:
    """Σ μ_s A_s of symmetric (S, D, D) or (S, D, D, D) arrays through one round.

    Each site sends its free entries (one per i ≤ j (≤ k), :func:`secagg_sum`); the decoded
    estimate is mirrored back into a full symmetric array.
    """
    arr = as_float_array(values, "values")
    order = arr.ndim - 1
    run = secagg_sum(free_entries(arr, order), design, faithful=faithful, rng=rng)
    return expand_symmetric(run.estimate, arr.shape[1], order)
