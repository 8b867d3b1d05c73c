"""Privacy auditing: an attacker's empirical lower bound on ε, from a distinguishing game.

Played on a Gaussian mechanism and on the CAPE protocol's actual messages. The game
(Jagielski, Ullman & Oprea 2020; Nasr, Song, Thakurta, Papernot & Carlini 2021): half of
the trials run the mechanism on a data set D, half on a neighbour D' (one record added at
one site). An attacker sees the output and guesses "D'" when a test statistic
exceeds a threshold t. Any (ε, δ)-DP mechanism forces every such test to satisfy

    FPR + e^ε FNR ≥ 1 − δ   and   FNR + e^ε FPR ≥ 1 − δ

(Kairouz, Oh & Viswanath, ICML 2015, Thm. 2.1),

so the observed rates give  ε ≥ max(ln((1 − δ − FNR)/FPR), ln((1 − δ − FPR)/FNR)).
Evaluated at one-sided Clopper–Pearson upper bounds of both rates (each at confidence
1 − (1 − c)/2, Bonferroni), the result is a lower bound on the mechanism's ε that holds with
probability at least c (:func:`epsilon_lower_bound`).

The test is the likelihood-ratio test, optimal by Neyman–Pearson: for a Gaussian output with
known covariance C and a shift v between the worlds it thresholds vᵀC⁻¹y, a 1-D Gaussian
with shift ‖v‖·sqrt([C⁻¹]_ss) (:mod:`dpcore.analysis.views`). The threshold is planned from the
claimed noise before any trial is drawn (:func:`plan_threshold`), never tuned on the
samples that are bounded. ``docs/audit.md`` states what this shows and what it does not.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import betainc, betaincinv, ndtr, ndtri

from dpcore._validation import RngLike, check_choice, check_delta, check_int, check_real, check_rng
from dpcore.analysis.views import check_sites, coalition_view
from dpcore.factorization.iterative import MAX_ROUNDS
from dpcore.mechanisms.calibration import gaussian_epsilon
from dpcore.protocol.cape import CapeDesign, site_releases

AUDIT_VIEWS = ("release", "joint", "coalition")
CONFIDENCE = 0.95
MAX_TRIALS = 10**7  # ~5 s here (docs/performance.md); beyond, add up several audits
MAX_COUNT = 10**15  # trials a count may come from (float64 counts stay exact below 2^53)
_CHUNK = 1 << 15  # trials per protocol run: S × 32,768 floats per message array


# --- the statistics: Clopper–Pearson and the bound ----------------------------------------------


def _check_confidence(confidence: object) -> float:
    return check_real(confidence, "confidence", low=0.5, high=1.0, high_open=True)


def clopper_pearson(
    successes: int, trials: int, *, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """One-sided Clopper–Pearson bounds on a binomial proportion.

    Parameters
    ----------
    successes : int
        k, in [0, n].
    trials : int
        n, in [1, 10¹⁵].
    confidence : float
        Level of *each* one-sided bound, in [0.5, 1).

    Returns
    -------
    (lower, upper) : tuple of float
        ``lower`` solves P(X ≥ k | p) = 1 − c (0 if k = 0), ``upper`` solves
        P(X ≤ k | p) = 1 − c (1 if k = n), X ~ Bin(n, p): p ≥ lower and p ≤ upper each hold
        with probability at least c.

    Notes
    -----
    Found by root finding on the binomial tails written as regularised incomplete Beta
    functions, P(X ≥ k | p) = I_p(k, n − k + 1) and P(X ≤ k | p) = 1 − I_p(k + 1, n − k)
    (``scipy.special.betainc``, whose arguments are floats: ``bdtr`` takes n as a C int
    and gave NaN from n = 2³¹ on, issue #36; evaluated at p, not 1 − p, so tiny bounds
    keep their digits). They equal the Beta quantiles B(1 − c; k, n − k + 1) and
    B(c; k + 1, n − k) (checked in ``tests/core/analysis/test_audit.py``, also against the
    Poisson and normal limits for n up to 10¹⁵). The brackets [0, k/n] and [k/n, 1] hold because
    k is a median of Bin(n, k/n).

    References
    ----------
    C. J. Clopper and E. S. Pearson, "The use of confidence or fiducial limits illustrated in
    the case of the binomial", Biometrika 26(4), 1934.

    Examples
    --------
    >>> lo, hi = clopper_pearson(0, 100, confidence=0.95)
    >>> lo, round(hi, 4)  # the "rule of three": about 3/n
    (0.0, 0.0295)
    """
    n = check_int(trials, "trials", low=1, high=MAX_COUNT)
    k = check_int(successes, "successes", low=0, high=n)
    c = _check_confidence(confidence)
    tol = {"xtol": 1e-300, "rtol": 1e-13}
    from scipy.optimize import brentq  # lazy: costs every process ~1 CPU-s (#35)

    lower = 0.0
    if k > 0:  # P(X ≥ k | p) = 1 − c
        lower = brentq(lambda p: betainc(k, n - k + 1, p) - (1 - c), 0.0, k / n, **tol)
    upper = 1.0
    if k < n:  # P(X ≤ k | p) = 1 − c
        upper = brentq(lambda p: betainc(k + 1, n - k, p) - c, k / n, 1.0, **tol)
    return float(lower), float(upper)


def _bound(
    fpr_upper: NDArray[np.float64] | float, fnr_upper: NDArray[np.float64] | float, delta: float
) -> NDArray[np.float64]:
    """max(ln((1 − δ − FNR)/FPR), ln((1 − δ − FPR)/FNR)), at least 0 (array-friendly)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        one = np.log(np.clip(1 - delta - fnr_upper, 0, None) / fpr_upper)
        two = np.log(np.clip(1 - delta - fpr_upper, 0, None) / fnr_upper)
    bound: NDArray[np.float64] = np.maximum(
        np.maximum(np.nan_to_num(one, nan=0.0, neginf=0.0), two), 0.0
    )
    return bound


def epsilon_lower_bound(
    false_positives: int,
    negatives: int,
    false_negatives: int,
    positives: int,
    *,
    delta: float,
    confidence: float = CONFIDENCE,
) -> tuple[float, float, float]:
    """A lower bound on ε, holding with probability ≥ ``confidence``, from a test's errors.

    Parameters
    ----------
    false_positives, negatives : int
        Trials on D the test called D', out of all trials on D (≥ 1).
    false_negatives, positives : int
        Trials on D' the test called D, out of all trials on D' (≥ 1).
    delta : float
        The δ at which ε is bounded, in (0, 1).
    confidence : float
        Overall confidence c in [0.5, 1): each rate gets a one-sided Clopper–Pearson upper
        bound at 1 − (1 − c)/2, so both hold at once with probability ≥ c (Bonferroni).

    Returns
    -------
    (epsilon_lower, fpr_upper, fnr_upper) : tuple of float
        ε ≥ max(ln((1 − δ − FNR⁺)/FPR⁺), ln((1 − δ − FPR⁺)/FNR⁺), 0).

    References
    ----------
    M. Jagielski, J. Ullman, A. Oprea, "Auditing differentially private machine learning:
    how private is private SGD?", NeurIPS 2020, Sec. 3 (Clopper–Pearson bounds on the rates);
    M. Nasr, S. Song, A. Thakurta, N. Papernot, N. Carlini, "Adversary instantiation: lower
    bounds for differentially private machine learning", IEEE S&P 2021, Sec. 3 (the
    two-sided (ε, δ) form); P. Kairouz, S. Oh, P. Viswanath, ICML 2015, Thm. 2.1.

    Examples
    --------
    >>> eps, _, _ = epsilon_lower_bound(10, 10_000, 9_000, 10_000, delta=1e-5)
    >>> round(eps, 3)
    3.936
    """
    negatives = check_int(negatives, "negatives", low=1, high=MAX_COUNT)
    positives = check_int(positives, "positives", low=1, high=MAX_COUNT)
    fp = check_int(false_positives, "false_positives", low=0, high=negatives)
    fn = check_int(false_negatives, "false_negatives", low=0, high=positives)
    delta = check_delta(delta)
    each = 1 - (1 - _check_confidence(confidence)) / 2
    fpr_upper = clopper_pearson(fp, negatives, confidence=each)[1]
    fnr_upper = clopper_pearson(fn, positives, confidence=each)[1]
    return float(_bound(fpr_upper, fnr_upper, delta)), fpr_upper, fnr_upper


# --- planning: the threshold (before any trial) and the trials a demonstration needs ----------


def _split(trials: int) -> tuple[int, int]:
    """Trials on D and on D': the first half and the rest."""
    return trials // 2, trials - trials // 2


# Remembered: the plan depends on the claim only, and a page asks again for every seed, every
# target and every bisection step of audit_trials_needed (about 10 ms a call: 4,000 betaincinv).
@lru_cache(maxsize=4096)
def _planned(mu: float, delta: float, trials: int, confidence: float) -> tuple[float, float]:
    """(expected bound, threshold): the bound at the expected error counts, best threshold.

    The statistic is N(0, 1) on D and N(μ, 1) on D'; the test calls D' when it exceeds t.
    Thresholds run over a grid of false-positive rates from 10⁻³/n to ½ (the bound's
    second term is the same test mirrored, equal by symmetry). Counts at their expectation
    make the bound close to its median, so a planned bound above a target is cleared in
    roughly half of the audits at these trials.
    """
    negatives, positives = _split(trials)
    each = 1 - (1 - confidence) / 2
    alpha = np.logspace(math.log10(1e-3 / negatives), math.log10(0.5), 2000)
    t = -ndtri(alpha)
    beta = ndtr(t - mu)
    k0, k1 = alpha * negatives, beta * positives
    fpr_upper = betaincinv(k0 + 1, np.maximum(negatives - k0, 1e-12), each)
    fnr_upper = betaincinv(k1 + 1, np.maximum(positives - k1, 1e-12), each)
    bound = _bound(fpr_upper, fnr_upper, delta)
    best = int(np.argmax(bound))
    return float(bound[best]), float(t[best])


def _check_noise_multiplier(noise_multiplier: object) -> float:
    return check_real(noise_multiplier, "noise_multiplier", low=1e-3, high=1e6)


def plan_threshold(
    noise_multiplier: float, *, delta: float, trials: int, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """The test's threshold, chosen from the claimed noise before any trial is drawn.

    Parameters
    ----------
    noise_multiplier : float
        σ/Δ the mechanism claims, in [0.001, 10⁶].
    delta : float
        In (0, 1).
    trials : int
        Total trials, half on each data set, in [2, 10⁷].
    confidence : float
        In [0.5, 1).

    Returns
    -------
    (threshold, expected_bound) : tuple of float
        The threshold t on the normalised statistic (N(0, 1) without the record) that
        maximises the bound at the expected error counts, and that bound.

    Notes
    -----
    Choosing t from the claim, not from the samples, keeps the Clopper–Pearson bounds valid:
    they hold for any test fixed in advance. Tuning t on the same samples would not.
    """
    nm = _check_noise_multiplier(noise_multiplier)
    delta = check_delta(delta)
    trials = check_int(trials, "trials", low=2, high=MAX_TRIALS)
    bound, t = _planned(1.0 / nm, delta, trials, _check_confidence(confidence))
    return t, bound


def audit_trials_needed(
    noise_multiplier: float,
    *,
    delta: float,
    target: float,
    confidence: float = CONFIDENCE,
    max_trials: int = 10**12,
) -> int | None:
    """Trials at which the planned (median-case) bound exceeds ``target``.

    Parameters
    ----------
    noise_multiplier : float
        σ/Δ of the view, in [0.001, 10⁶].
    delta : float
        In (0, 1).
    target : float
        The ε to demonstrate a break of (e.g. the promised ε_s), in [0, ∞).
    confidence : float
        In [0.5, 1).
    max_trials : int
        Give up beyond this many trials, in [2, 10¹⁵].

    Returns
    -------
    int or None
        The smallest even number of trials (to 1 %) whose bound at the expected error
        counts exceeds ``target``; None if the theory's ε is not above ``target`` (a sound
        bound then exceeds it only by chance, in at most 1 − ``confidence`` of the audits) or
        more than ``max_trials`` are needed.

    Notes
    -----
    The planned bound grows with the trials towards the theory's ε; doubling then bisection
    in log(trials). At the trials returned about half of the audits clear the target;
    four times as many give a comfortable margin (the Clopper–Pearson widths shrink like
    1/sqrt(trials)).
    """
    nm = _check_noise_multiplier(noise_multiplier)
    delta = check_delta(delta)
    target = check_real(target, "target", low=0.0)
    conf = _check_confidence(confidence)
    max_trials = check_int(max_trials, "max_trials", low=2, high=10**15)
    if gaussian_epsilon(nm, sensitivity=1.0, delta=delta) <= target:
        return None

    def clears(n: int) -> bool:
        return _planned(1.0 / nm, delta, n, conf)[0] > target

    lo, hi = 2, 2
    while not clears(hi):
        lo, hi = hi, hi * 2
        if hi > max_trials:
            return None
    while hi > lo * 1.01 and hi - lo > 2:
        mid = int(math.sqrt(lo * hi)) // 2 * 2
        if not lo < mid < hi:  # even trials only: nothing left between lo and hi
            break
        lo, hi = (lo, mid) if clears(mid) else (mid, hi)
    return hi


# --- results -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AuditResult:
    """One audit: the attacker's error counts and what they prove about ε.

    Attributes
    ----------
    epsilon_lower : float
        Lower bound on ε holding with probability ≥ ``confidence`` (:func:`epsilon_lower_bound`).
    epsilon : float
        The theory: exact ε of the Gaussian noise the attacker faces
        (:func:`dpcore.gaussian_epsilon`).
    noise_multiplier : float
        σ/Δ of that noise.
    delta, confidence : float
    trials, negatives, positives : int
        All trials; those on D (first half) and on D'.
    false_positives, false_negatives : int
    fpr, fnr : float
        Observed rates.
    fpr_upper, fnr_upper : float
        Their Clopper–Pearson upper bounds (each at 1 − (1 − confidence)/2).
    threshold : float
        t on the normalised statistic (N(0, 1) on D), planned before the trials.
    planned_lower : float
        The bound expected at these trials (:func:`plan_threshold`).
    """

    epsilon_lower: float
    epsilon: float
    noise_multiplier: float
    delta: float
    confidence: float
    trials: int
    negatives: int
    positives: int
    false_positives: int
    false_negatives: int
    fpr: float
    fnr: float
    fpr_upper: float
    fnr_upper: float
    threshold: float
    planned_lower: float

    def __post_init__(self) -> None:
        if self.negatives + self.positives != self.trials:
            raise ValueError("negatives + positives must equal trials")
        if not (0 <= self.false_positives <= self.negatives):
            raise ValueError("false_positives must be in [0, negatives]")
        if not (0 <= self.false_negatives <= self.positives):
            raise ValueError("false_negatives must be in [0, positives]")
        if not self.epsilon_lower >= 0:
            raise ValueError(f"epsilon_lower must be >= 0; got {self.epsilon_lower!r}")

    def proves_above(self, epsilon: float) -> bool:
        """Whether the attack proves ε > ``epsilon`` (at ``confidence``): a broken promise."""
        return self.epsilon_lower > epsilon


def _result(
    fp: int, fn: int, trials: int, nm: float, delta: float, confidence: float, t: float, plan: float
) -> AuditResult:
    negatives, positives = _split(trials)
    eps_lower, fpr_upper, fnr_upper = epsilon_lower_bound(
        fp, negatives, fn, positives, delta=delta, confidence=confidence
    )
    return AuditResult(
        epsilon_lower=eps_lower,
        epsilon=gaussian_epsilon(nm, sensitivity=1.0, delta=delta),
        noise_multiplier=nm,
        delta=delta,
        confidence=confidence,
        trials=trials,
        negatives=negatives,
        positives=positives,
        false_positives=fp,
        false_negatives=fn,
        fpr=fp / negatives,
        fnr=fn / positives,
        fpr_upper=fpr_upper,
        fnr_upper=fnr_upper,
        threshold=t,
        planned_lower=plan,
    )


def _chunks(
    trials: int, rng: np.random.Generator
) -> Iterator[tuple[int, int, np.random.Generator]]:
    """(start, stop, Generator) blocks of at most ``_CHUNK`` trials, one stream each."""
    starts = range(0, trials, _CHUNK)
    for start, stream in zip(starts, rng.spawn(len(starts)), strict=True):
        yield start, min(start + _CHUNK, trials), stream


def _count(z: NDArray[np.float64], start: int, negatives: int, t: float) -> tuple[int, int]:
    """False positives and false negatives of "D' iff z > t" on trials start, start + 1, …."""
    on_d = np.arange(start, start + z.size) < negatives
    return int(np.sum(z[on_d] > t)), int(np.sum(z[~on_d] <= t))


def audit_gaussian(
    noise_multiplier: float,
    *,
    delta: float,
    trials: int,
    confidence: float = CONFIDENCE,
    rng: RngLike = None,
) -> AuditResult:
    """Audit the Gaussian mechanism: a distinguishing game and an empirical lower bound on ε.

    The mechanism releases f + N(0, σ²) with f = 0 on D and f = Δ on D'; the attacker
    thresholds the release (the likelihood-ratio test) at a threshold planned from the
    claimed σ/Δ.

    Parameters
    ----------
    noise_multiplier : float
        σ/Δ, in [0.001, 10⁶].
    delta : float
        In (0, 1).
    trials : int
        Total trials, the first half on D, in [2, 10⁷].
    confidence : float
        Overall confidence of the bound, in [0.5, 1).
    rng : int, numpy.random.Generator or None
        Seed or generator (SPEC 7).

    Returns
    -------
    AuditResult
        ``epsilon_lower`` ≤ ``epsilon`` with probability ≥ ``confidence``.

    References
    ----------
    Jagielski, Ullman & Oprea, NeurIPS 2020; Nasr et al., IEEE S&P 2021 (see
    :func:`epsilon_lower_bound`); B. Balle and Y.-X. Wang, ICML 2018, Thm. 8 (the theory).

    Examples
    --------
    >>> r = audit_gaussian(1.0, delta=1e-5, trials=100_000, rng=0)
    >>> bool(0 < r.epsilon_lower <= r.epsilon), round(r.epsilon, 3)
    (True, 4.377)
    """
    nm = _check_noise_multiplier(noise_multiplier)
    delta = check_delta(delta)
    trials = check_int(trials, "trials", low=2, high=MAX_TRIALS)
    confidence = _check_confidence(confidence)
    rng = check_rng(rng)
    plan, t = _planned(1.0 / nm, delta, trials, confidence)
    negatives, _ = _split(trials)
    fp = fn = 0
    for start, stop, stream in _chunks(trials, rng):
        shift = (np.arange(start, stop) >= negatives).astype(float)  # f(D') − f(D) = Δ = 1
        release = shift + nm * stream.standard_normal(stop - start)  # in units of Δ
        a, b = _count(release / nm, start, negatives, t)
        fp, fn = fp + a, fn + b
    return _result(fp, fn, trials, nm, delta, confidence, t, plan)


# --- the protocol audit ----------------------------------------------------------------------


@dataclass(frozen=True)
class ProtocolAudit:
    """A distinguishing game played on CAPE's messages against one site.

    Attributes
    ----------
    view : str
        ``"release"`` (the aggregator looks at the site's release alone, as the paper's proof
        does), ``"joint"`` (the aggregator's view of every release) or ``"coalition"`` (the
        aggregator with colluding sites).
    site : int
        The target site (0-based): its data set gains one record in D'.
    colluding : tuple of int
        Sites colluding with the aggregator (``"coalition"`` only).
    method : str
        The design's ``method`` (``"cape"``: the paper's eq. (2); ``"joint"``: joint-view-safe).
    std : float
        Std of the noise the test faces: σ_release or σ_joint of :func:`dpcore.coalition_view`.
    sensitivity : float
        Δ_s: how far one record moves the site's value.
    audit : AuditResult
        The counts and the bound; ``audit.epsilon`` is the theory for this view.
    rounds : int
        T: independent protocol runs per trial (CAPE in every round of the power method,
        :func:`dpcore.factorization.iterative.cape_npm_pca`); ``std`` is then the composed
        σ_round/sqrt(T) (:mod:`dpcore.analysis.round_views`).
    """

    view: str
    site: int
    colluding: tuple[int, ...]
    method: str
    std: float
    sensitivity: float
    audit: AuditResult
    rounds: int = 1


def _sensitivity(sensitivity: object, design: CapeDesign, site: int) -> float:
    try:
        arr = np.broadcast_to(np.asarray(sensitivity, dtype=float), (design.n_sites,))
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"sensitivity must be a number or one per site ({design.n_sites}); got {sensitivity!r}"
        ) from err
    return check_real(float(arr[site]), "sensitivity", low=0.0, low_open=True, high=1e100)


@dataclass(frozen=True)
class _Attack:
    """What the attacker computes from the messages (all from the public design).

    The observed rows, the known-E correction and the likelihood-ratio weights.
    """

    honest: NDArray[np.intp]
    colluding: tuple[int, ...]
    correction: NDArray[np.float64]  # B: E[E_H | E_K] = B E_K
    weights: NDArray[np.float64]  # w with statistic wᵀ r, normalised to unit variance
    std: float


def _attack(design: CapeDesign, site: int, view: str, colluding: tuple[int, ...]) -> _Attack:
    coalition = coalition_view(design, colluding)  # the covariance each coalition faces
    honest = coalition.honest
    target = int(np.flatnonzero(honest == site)[0])
    cov = coalition.covariance
    if view == "release":  # the site's release alone: its own variance
        honest = honest[[target]]
        cov = cov[np.ix_([target], [target])]
        target = 0
    scale = np.sqrt(np.diag(cov))
    if scale[target] <= 0:
        raise ValueError(f"site {site} carries no noise in the {view} view: nothing to audit")
    scale = np.where(scale > 0, scale, 1.0)
    # w = C⁻¹ e_target in correlation form (well conditioned for τ's of any size)
    precision = np.linalg.pinv(cov / np.outer(scale, scale), rcond=1e-12, hermitian=True)
    w = precision[:, target] / (scale * scale[target])
    norm = math.sqrt(float(w @ cov @ w))  # = sqrt([C⁻¹]_tt) = 1/σ
    sigma_e = design.e_covariance
    known = np.array(colluding, dtype=np.intp)
    correction = np.zeros((honest.size, known.size))
    if known.size:
        correction = sigma_e[np.ix_(honest, known)] @ np.linalg.pinv(
            sigma_e[np.ix_(known, known)], rcond=1e-12, hermitian=True
        )
    return _Attack(honest, colluding, correction, w / norm, 1.0 / norm)


def _statistic(
    attack: _Attack,
    e: NDArray[np.float64],
    f: NDArray[np.float64],
    released: NDArray[np.float64],
    base: NDArray[np.float64],
) -> NDArray[np.float64]:
    """The normalised likelihood-ratio statistic per trial, from the messages.

    The aggregator subtracts its own F's and the data it assumes (D: ``base``), and with a
    coalition the conditional mean of the honest E's given the colluders' E's.
    """
    h = attack.honest
    residual = released[h] - f[h] - base[h]
    if attack.colluding:
        residual = residual - attack.correction @ e[list(attack.colluding)]
    statistic: NDArray[np.float64] = attack.weights @ residual
    return statistic


def _check_protocol(
    design: CapeDesign,
    sensitivity: ArrayLike,
    site: int,
    view: str,
    colluding: Sequence[int],
    delta: float,
    trials: int,
    rounds: int = 1,
) -> tuple[int, str, tuple[int, ...], float, float, int, _Attack]:
    """Validate an audit of the protocol (everything before any work); return the attack.

    The attack's ``std`` is the view's over all ``rounds`` (σ_round/sqrt(T)).
    """
    if not isinstance(design, CapeDesign):
        raise TypeError(f"design must be a CapeDesign; got {type(design).__name__}")
    design.tau_g  # noqa: B018 - raises ValueError if the design is infeasible
    site = check_int(site, "site", low=0, high=design.n_sites - 1)
    view = check_choice(view, "view", AUDIT_VIEWS)
    colluding = check_sites(colluding, design.n_sites, "colluding")
    if view == "coalition" and (not colluding or site in colluding):
        raise ValueError(
            f"colluding must name at least one site other than site {site} for the coalition "
            f"view; got {list(colluding)}"
        )
    if view != "coalition" and colluding:
        raise ValueError(f"colluding must be empty for the {view} view; got {list(colluding)}")
    sens = _sensitivity(sensitivity, design, site)
    delta = check_delta(delta)
    trials = check_int(trials, "trials", low=2, high=MAX_TRIALS)
    rounds = check_int(rounds, "rounds", low=1, high=MAX_ROUNDS)
    if trials * rounds > MAX_TRIALS:
        raise ValueError(
            f"trials × rounds must be at most {MAX_TRIALS} (protocol runs per audit); "
            f"got {trials} × {rounds}"
        )
    attack = _attack(design, site, view, colluding)
    if rounds > 1:
        attack = replace(attack, std=attack.std / math.sqrt(rounds))
    nm = attack.std / sens
    if not 1e-3 <= nm <= 1e6:
        raise ValueError(
            f"the view's noise std over sensitivity (σ/Δ) must be in [0.001, 1e6] to be "
            f"audited; got {nm:.3g} (σ = {attack.std:.3g}, sensitivity Δ = {sens:.3g})"
        )
    return site, view, colluding, sens, delta, trials, attack


def _protocol_scores(
    design: CapeDesign,
    attack: _Attack,
    site: int,
    sens: float,
    trials: int,
    rng: np.random.Generator,
    rounds: int = 1,
) -> Iterator[tuple[int, NDArray[np.float64]]]:
    """(start, statistic) per block of trials, played on the protocol's messages.

    With T = ``rounds`` > 1 a trial is T independent protocol runs (the block's stream
    spawned into one per round), D' moving site ``site``'s value by Δ_s in every round (the
    most one record can: :func:`dpcore.factorization.iterative.per_round_std`); the
    likelihood-ratio statistic of the T rounds is the sum of the rounds' normalised ones
    over sqrt(T), N(0, 1) on D and N(sqrt(T)·Δ_s/σ_round, 1) on D'.
    """
    negatives, _ = _split(trials)
    for start, stop, stream in _chunks(trials, rng):
        values = np.zeros((design.n_sites, stop - start))
        values[site] = np.where(np.arange(start, stop) >= negatives, sens, 0.0)  # D' adds one
        total = np.zeros(stop - start)  # the rounds' statistics summed (one round: itself)
        for each in [stream] if rounds == 1 else stream.spawn(rounds):
            e, f, _, released = site_releases(values, design, symmetric=False, rng=each)
            total += _statistic(attack, e, f, released, np.zeros_like(values))
        yield start, total if rounds == 1 else total / math.sqrt(rounds)


MAX_SCORES = 10**6  # statistics returned as arrays (a figure's histogram)


def attack_statistics(
    design: CapeDesign,
    *,
    sensitivity: ArrayLike,
    site: int,
    view: str,
    trials: int,
    colluding: Sequence[int] = (),
    rng: RngLike = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """The attacker's normalised likelihood-ratio statistic in each trial of the game.

    Parameters as in :func:`audit_protocol` (``trials`` at most 10⁶). The same arguments
    and seed give exactly the trials :func:`audit_protocol` counts.

    Returns
    -------
    on_d, on_d_prime : ndarray
        The statistic in the trials on D (N(0, 1) in theory) and on D' (N(μ, 1)).
    mu : float
        μ = Δ_s/σ of the view: the theory's separation.
    """
    site, view, colluding, sens, _, trials, attack = _check_protocol(
        design, sensitivity, site, view, colluding, 0.5, trials
    )
    if trials > MAX_SCORES:
        raise ValueError(f"trials must be an integer in [2, {MAX_SCORES}]; got {trials}")
    z = np.concatenate(
        [s for _, s in _protocol_scores(design, attack, site, sens, trials, check_rng(rng))]
    )
    negatives, _ = _split(trials)
    return z[:negatives], z[negatives:], sens / attack.std


def audit_protocol(
    design: CapeDesign,
    *,
    sensitivity: ArrayLike,
    site: int,
    view: str,
    delta: float,
    trials: int,
    colluding: Sequence[int] = (),
    confidence: float = CONFIDENCE,
    rounds: int = 1,
    rng: RngLike = None,
) -> ProtocolAudit:
    """Audit CAPE against one site: the distinguishing game on the protocol's actual messages.

    D: every site holds 0 (any values the attacker knows do the same); D': site ``site``
    gains one record, which moves its value by Δ_s (the app's add-one relation, a site's
    mean). Each trial is one entry of a protocol run on vectors: the noise generator sends
    the E's, the aggregator the F's, each site releases â_s = a_s + E_s + F_s + G_s
    (:func:`dpcore.protocol.cape.site_releases`); noise is independent across entries, so entries
    are independent trials. The attacker knows the design and the F's (and, in a coalition, the
    colluders' E's) and applies the likelihood-ratio test, thresholded as planned from the
    view's σ (:func:`plan_threshold`).

    Parameters
    ----------
    design : CapeDesign
        A feasible design (:func:`dpcore.cape_design`, :func:`dpcore.joint_safe_design`).
    sensitivity : float or array_like, shape (S,)
        Δ_s per site, in (0, ∞).
    site : int
        The target site, 0-based.
    view : {"release", "joint", "coalition"}
        What the attacker uses (:class:`ProtocolAudit`).
    delta : float
        The site's δ_s, in (0, 1).
    trials : int
        In [2, 10⁷]; the first half on D.
    colluding : sequence of int
        Colluding sites for ``"coalition"`` (at least one, not ``site``); empty otherwise.
    confidence : float
        In [0.5, 1).
    rounds : int
        T in [1, 1000], trials × T ≤ 10⁷: each trial plays T independent runs of ``design``
        (the per-round design of CAPE in every round of the power method,
        :func:`dpcore.factorization.iterative.cape_round_design`), the record in every round.
    rng : int, numpy.random.Generator or None
        Seed or generator (SPEC 7); spawned into one stream per block of trials (and, for
        T > 1, per round), and each run spawns streams per party as the protocol does.

    Returns
    -------
    ProtocolAudit
        Its ``audit.epsilon`` is the exact ε of the view at δ (the view's σ from
        :func:`dpcore.coalition_view`); ``audit.epsilon_lower`` ≤ it with probability ≥
        ``confidence``.

    References
    ----------
    Imtiaz & Sarwate, Sec. 3 and Alg. 5 (the protocol and its threat model); Jagielski et
    al., NeurIPS 2020 and Nasr et al., IEEE S&P 2021 (the audit); ``docs/audit.md``.
    """
    site, view, coalition, sens, delta, trials, attack = _check_protocol(
        design, sensitivity, site, view, colluding, delta, trials, rounds
    )
    confidence = _check_confidence(confidence)
    rng = check_rng(rng)
    nm = attack.std / sens
    plan, t = _planned(1.0 / nm, delta, trials, confidence)
    negatives, _ = _split(trials)
    fp = fn = 0
    for start, z in _protocol_scores(design, attack, site, sens, trials, rng, int(rounds)):
        a, b = _count(z, start, negatives, t)
        fp, fn = fp + a, fn + b
    return ProtocolAudit(
        view=view,
        site=site,
        colluding=coalition,
        method=design.method,
        std=attack.std,
        sensitivity=sens,
        audit=_result(fp, fn, trials, nm, delta, confidence, t, plan),
        rounds=int(rounds),
    )
