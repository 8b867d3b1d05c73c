"""ε in an attacker's words: trade-off curves, where a view dips under its promise, posteriors.

A hypothesis test that looks at a release and guesses whether one person's record is in the
data (D′) or not (D) has a false-alarm rate α (guesses D′ on D) and a miss rate β (guesses D
on D′). A mechanism's **trade-off curve** f(α) is the least β any test reaches at false-alarm
rate α (Dong, Roth & Su, "Gaussian differential privacy", JRSS-B 84(1), 2022, Def. 2.1):

* A view of a site whose remaining noise is Gaussian with std σ, for a record that moves the
  site's value by Δ, is μ-GDP with μ = Δ/σ, and its curve is exactly
  G_μ(α) = Φ(Φ⁻¹(1 − α) − μ)  (DRS Def. 2.6; :func:`gaussian_tradeoff`).
* The promise (ε, δ) is the curve f_{ε,δ}(α) = max(0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α))
  (Kairouz, Oh & Viswanath, ICML 2015, Thm. 2.1; DRS Prop. 2.5; :func:`dp_tradeoff`): a
  mechanism is (ε, δ)-DP exactly when its curve is nowhere below this one.

**Where a view breaks its promise.** G_μ is convex and f_{ε,δ} is the maximum of two lines
(and 0), so the gap f_{ε,δ} − G_μ on the first line is concave and peaks where G_μ′(α) = −e^ε;
G_μ′(α) = −exp(μt − μ²/2) with t = Φ⁻¹(1 − α), so at α* = Φ(−ε/μ − μ/2). There the gap is

    1 − δ − e^ε Φ(−ε/μ − μ/2) − Φ(ε/μ − μ/2) = δ_μ(ε) − δ,

with δ_μ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) the Gaussian's exact privacy profile (Balle &
Wang, ICML 2018, Thm. 8; DRS Cor. 2.13). Both curves are symmetric about β = α, so the second
line gives the same peak mirrored. Hence the view's curve dips under the promise's exactly when
δ_μ(ε_s) > δ_s, i.e. exactly when the view's ε at δ_s exceeds ε_s, and by at most that much
(:func:`largest_dip`).

**Posterior.** An attacker who believes with prior p that the person is in the data, and sees
an event S of the output (its test fires), holds posterior P(in | S). Writing the (ε, δ)
inequality P_D′(S) ≤ e^ε P_D(S) + δ for the joint probabilities a = p·P_D′(S),
b = (1 − p)·P_D(S), P(S) = a + b:

    a ≤ (q/(1 − q))·b + p·δ   ⟺   P(in | S) ≤ q + (1 − q)·p·δ/P(S),
    q = p e^ε / (p e^ε + 1 − p),

an equivalence, for every S (:func:`posterior_bound`). A Gaussian view is (ε_v, δ_s)-DP with
ε_v its exact ε at δ_s, and the event S = {privacy loss > ε_v} attains the hockey-stick
divergence δ_s, so equality holds there: q(ε_v) is the largest posterior the view allows once
the δ_s term is set aside (a term that matters only for events of probability comparable to
δ_s). On a trade-off curve f this is sup_α p(1 − δ − f(α)) / (p(1 − δ − f(α)) + (1 − p)α)
(:func:`posterior_curve`): the posterior of a test at false-alarm rate α with δ of its
catches set aside. The Gaussian's posterior without that allowance reaches 1 (its likelihood
ratio is unbounded), as does the promise's for δ > 0; so every such reading states its δ.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.special import ndtr, ndtri

from dpcore._validation import check_delta, check_int, check_real
from dpcore.analysis.audit import CONFIDENCE, clopper_pearson
from dpcore.mechanisms.calibration import gaussian_delta, gaussian_epsilon, gaussian_sigma

PROMISE = "promise"  # the promise's rows in :func:`tradeoff_curves`
PRIORS = (0.01, 0.1, 0.5)  # the priors the page and the lesson read a view's posterior at
MAX_MU = 1e4  # as the accountant's: ε ≈ μ²/2 beyond, no privacy worth the name
MAX_EPSILON = 700.0  # e^ε stays finite in float64


def _alpha(alpha: ArrayLike, name: str = "alpha") -> NDArray[np.float64]:
    """Rates in [0, 1] as a float array (a probability: α, β or a power)."""
    try:
        a = np.asarray(alpha, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be numbers in [0, 1]; got {alpha!r}") from err
    bad = ~((a >= 0) & (a <= 1))  # NaN included
    if bad.any():
        raise ValueError(f"every {name} must be in [0, 1]; got {a[bad].ravel()[0]!r}")
    return a


def _mu(mu: object) -> float:
    return check_real(mu, "mu", low=0.0, high=MAX_MU)


def _epsilon(epsilon: object) -> float:
    return check_real(epsilon, "epsilon", low=0.0, high=MAX_EPSILON)


def _prior(prior: object) -> float:
    return check_real(prior, "prior", low=0.0, high=1.0, low_open=True, high_open=True)


def gaussian_tradeoff(alpha: ArrayLike, mu: float) -> NDArray[np.float64]:
    """The exact trade-off curve of μ-GDP: G_μ(α) = Φ(Φ⁻¹(1 − α) − μ).

    Parameters
    ----------
    alpha : array_like of float
        False-alarm rates, each in [0, 1].
    mu : float
        Δ/σ, in [0, 10⁴].

    Returns
    -------
    ndarray
        The least miss rate β of any test at each α; computed as Φ(−Φ⁻¹(α) − μ) (no
        cancellation in 1 − α).

    References
    ----------
    Dong, Roth & Su, JRSS-B 2022, Def. 2.6.

    Examples
    --------
    >>> float(gaussian_tradeoff(0.5, 0.0))  # μ = 0: a coin, β = 1 − α
    0.5
    """
    a = _alpha(alpha)
    return np.asarray(ndtr(-ndtri(a) - _mu(mu)), dtype=float)


def gaussian_power(alpha: ArrayLike, mu: float) -> NDArray[np.float64]:
    """1 − G_μ(α) = Φ(Φ⁻¹(α) + μ): the most a test at false-alarm rate α catches.

    To full relative precision where it is tiny (the chart's log axis); parameters as
    :func:`gaussian_tradeoff`.
    """
    a = _alpha(alpha)
    return np.asarray(ndtr(ndtri(a) + _mu(mu)), dtype=float)


def dp_tradeoff(alpha: ArrayLike, *, epsilon: float, delta: float) -> NDArray[np.float64]:
    """The trade-off curve of the promise (ε, δ): max(0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)).

    Parameters
    ----------
    alpha : array_like of float
        Each in [0, 1].
    epsilon : float
        In [0, 700].
    delta : float
        In (0, 1).

    References
    ----------
    Kairouz, Oh & Viswanath, ICML 2015, Thm. 2.1; Dong, Roth & Su, JRSS-B 2022, Prop. 2.5.

    Examples
    --------
    >>> float(dp_tradeoff(0.0, epsilon=1.0, delta=0.01))  # never alarming still misses 1 − δ
    0.99
    """
    a = _alpha(alpha)
    eps, d = _epsilon(epsilon), check_delta(delta)
    return np.maximum(0.0, np.maximum(1 - d - math.exp(eps) * a, math.exp(-eps) * (1 - d - a)))


def dp_power(alpha: ArrayLike, epsilon: float, delta: float) -> NDArray[np.float64]:
    """1 − f_{ε,δ}(α) = min(1, δ + e^ε α, 1 − e^{−ε}(1 − δ − α)), as :func:`dp_tradeoff`."""
    a = _alpha(alpha)
    eps, d = _epsilon(epsilon), check_delta(delta)
    return np.minimum(1.0, np.minimum(d + math.exp(eps) * a, 1 - math.exp(-eps) * (1 - d - a)))


def gdp_mu(*, epsilon: float, delta: float) -> float:
    """The μ whose Gaussian curve is (ε, δ)-DP with no slack: δ_μ(ε) = δ.

    The exact conversion, the analytic Gaussian calibration read as μ = Δ/σ
    (:func:`dpcore.gaussian_sigma`, ``calibration="analytic"``; Balle & Wang, ICML 2018, Thm. 8).

    Parameters
    ----------
    epsilon : float
        In (0, 700].
    delta : float
        In (0, 1).

    Examples
    --------
    >>> mu = gdp_mu(epsilon=0.5, delta=1e-3)
    >>> round(gaussian_delta(1 / mu, sensitivity=1.0, epsilon=0.5), 12)
    0.001
    """
    eps = check_real(epsilon, "epsilon", low=0.0, high=MAX_EPSILON, low_open=True)
    return 1.0 / gaussian_sigma(1.0, epsilon=eps, delta=check_delta(delta), calibration="analytic")


def gdp_epsilon(mu: float, delta: float) -> float:
    """The ε of μ-GDP at δ: the least ε with δ_μ(ε) ≤ δ (inverse of :func:`gdp_mu`)."""
    mu = _mu(mu)
    if mu == 0.0:
        return 0.0
    return gaussian_epsilon(1.0 / mu, sensitivity=1.0, delta=check_delta(delta))


@dataclass(frozen=True)
class Dip:
    """Where a Gaussian view's curve is furthest under (or closest above) the promise's.

    Attributes
    ----------
    alpha : float
        α* = Φ(−ε/μ − μ/2), the false-alarm rate of the largest gap (and 1 − G_μ(α*) its
        mirror image: the curves are symmetric).
    beta_view, beta_promise : float
        G_μ(α*) and f_{ε,δ}(α*).
    depth : float
        δ_μ(ε) − δ, the gap f_{ε,δ} − G_μ at its interior peak α*: positive exactly when the
        view breaks the promise (its ε at δ exceeds ε), and then the largest gap; ≤ 0 when it
        keeps it (the curves then meet only at α = 1, where both are 0).
    """

    alpha: float
    beta_view: float
    beta_promise: float
    depth: float

    @property
    def breaks(self) -> bool:
        """Whether the view's curve dips under the promise's anywhere."""
        return self.depth > 0


def largest_dip(mu: float, epsilon: float, delta: float) -> Dip:
    """How far a μ-GDP view's curve dips under the promise (ε, δ), and where (module notes).

    Parameters
    ----------
    mu : float
        The view's Δ/σ, in (0, 10⁴].
    epsilon, delta : float
        The promise: ε in (0, 700], δ in (0, 1).

    Returns
    -------
    Dip
        ``depth`` = δ_μ(ε) − δ (exact: the gap f_{ε,δ} − G_μ is concave on each line of
        f_{ε,δ} and peaks where G_μ′ = −e^ε).

    Examples
    --------
    >>> d = largest_dip(gdp_mu(epsilon=0.5, delta=1e-3), 0.5, 1e-3)  # exactly at the promise
    >>> abs(d.depth) < 1e-12
    True
    """
    mu = check_real(mu, "mu", low=0.0, high=MAX_MU, low_open=True)
    eps = check_real(epsilon, "epsilon", low=0.0, high=MAX_EPSILON, low_open=True)
    d = check_delta(delta)
    alpha = float(ndtr(-eps / mu - mu / 2))
    view = float(gaussian_tradeoff(alpha, mu))
    depth = gaussian_delta(1.0 / mu, sensitivity=1.0, epsilon=eps) - d
    return Dip(alpha, view, float(dp_tradeoff(alpha, epsilon=eps, delta=d)), depth)


def posterior_bound(*, epsilon: float, prior: float) -> float:
    """The largest posterior that (ε, δ)-DP allows an attacker with prior p, δ set aside.

    q = p e^ε / (p e^ε + 1 − p): for every event S the attacker may see,
    P(in | S) ≤ q + (1 − q)·p·δ/P(S), with equality on the likelihood-ratio test's event
    when ε is a Gaussian view's exact ε at δ (module notes).

    Parameters
    ----------
    epsilon : float
        In [0, 700].
    prior : float
        p, the attacker's belief that the person is in the data before the release, in (0, 1).

    Examples
    --------
    >>> round(posterior_bound(epsilon=math.log(9.0), prior=0.1), 12)  # odds 1:9, times e^ε = 9: 1:1
    0.5
    """
    eps, p = _epsilon(epsilon), _prior(prior)
    return 1.0 / (1.0 + (1.0 - p) / p * math.exp(-eps))


def posterior_curve(
    alpha: ArrayLike, power: ArrayLike, *, prior: float, delta: float
) -> NDArray[np.float64]:
    """The posterior of a test at false-alarm rate α and power 1 − β, δ of its catches aside.

    OpenDP's posterior curve with δ removed: p(1 − β − δ) / (p(1 − β − δ) + (1 − p)α), 0 where
    1 − β ≤ δ.

    Its supremum over a trade-off curve is :func:`posterior_bound` at the curve's ε at δ.

    Parameters
    ----------
    alpha, power : array_like of float
        A test's false-alarm rate α and power 1 − β, each in [0, 1] (broadcast together);
        pass the power itself (:func:`gaussian_power`, :func:`dp_power`), not 1 − β rounded.
    prior : float
        In (0, 1).
    delta : float
        In (0, 1).
    """
    a, caught = np.broadcast_arrays(_alpha(alpha), _alpha(power, "power"))
    p, d = _prior(prior), check_delta(delta)
    caught = p * np.clip(caught - d, 0.0, None)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = caught / (caught + (1 - p) * a)
    return np.where(caught > 0, out, 0.0)


@dataclass(frozen=True)
class AttackBox:
    """An audit's measured error rates and their Clopper–Pearson box.

    Attributes
    ----------
    fpr, fnr : float
        Observed false-alarm and miss rates.
    fpr_low, fpr_high, fnr_low, fnr_high : float
        One-sided Clopper–Pearson bounds, each at 1 − (1 − c)/2 (the audit's own upper
        bounds are ``fpr_high`` and ``fnr_high``): each side is a c two-sided interval, and
        the corner (``fpr_high``, ``fnr_high``) lies under the promise's curve exactly when
        the audit proves ε > ε_s (:func:`dpcore.epsilon_lower_bound`).
    confidence : float
    """

    fpr: float
    fnr: float
    fpr_low: float
    fpr_high: float
    fnr_low: float
    fnr_high: float
    confidence: float


def attack_box(
    false_positives: int,
    negatives: int,
    false_negatives: int,
    positives: int,
    *,
    confidence: float = CONFIDENCE,
) -> AttackBox:
    """The box of an audit's (FPR, FNR), as :func:`dpcore.epsilon_lower_bound` bounds them.

    Parameters
    ----------
    false_positives, negatives, false_negatives, positives : int
        The audit's counts (:class:`dpcore.analysis.audit.AuditResult`).
    confidence : float
        c, in [0.5, 1).

    Examples
    --------
    >>> box = attack_box(0, 100, 100, 100)
    >>> box.fpr_low, round(box.fpr_high, 4), round(box.fnr_low, 4), box.fnr_high
    (0.0, 0.0362, 0.9638, 1.0)
    """
    negatives = check_int(negatives, "negatives", low=1)
    positives = check_int(positives, "positives", low=1)
    c = check_real(confidence, "confidence", low=0.5, high=1.0, high_open=True)
    each = 1 - (1 - c) / 2
    fp_lo, fp_hi = clopper_pearson(false_positives, negatives, confidence=each)
    fn_lo, fn_hi = clopper_pearson(false_negatives, positives, confidence=each)
    return AttackBox(
        false_positives / negatives, false_negatives / positives, fp_lo, fp_hi, fn_lo, fn_hi, c
    )


@dataclass(frozen=True)
class ViewReading:
    """One view of one site in an attacker's words.

    Attributes
    ----------
    mu : float
        Δ_s/σ of the view.
    epsilon : float
        Its exact ε at the promise's δ (:func:`gdp_epsilon`).
    dip : Dip
        Against the promise (:func:`largest_dip`).
    priors, posteriors : tuple of float
        The largest posterior (δ set aside) at each prior (:func:`posterior_bound`).
    """

    mu: float
    epsilon: float
    dip: Dip
    priors: tuple[float, ...]
    posteriors: tuple[float, ...]


def read_view(
    mu: float, *, epsilon: float, delta: float, priors: Sequence[float] = PRIORS
) -> ViewReading:
    """A view's ε, its dip under the promise (ε, δ) and its posteriors at ``priors``.

    Parameters
    ----------
    mu : float
        The view's Δ/σ, in (0, 10⁴].
    epsilon, delta : float
        The site's promise ε_s in (0, 700], δ_s in (0, 1).
    priors : sequence of float
        Each in (0, 1).
    """
    mu = check_real(mu, "mu", low=0.0, high=MAX_MU, low_open=True)
    eps_view = gdp_epsilon(mu, delta)
    ps = tuple(_prior(p) for p in priors)
    return ViewReading(
        mu,
        eps_view,
        largest_dip(mu, epsilon, delta),
        ps,
        tuple(posterior_bound(epsilon=min(eps_view, MAX_EPSILON), prior=p) for p in ps),
    )


def tradeoff_curves(
    views: Mapping[str, float],
    *,
    epsilon: float,
    delta: float,
    smallest: float = 1e-6,
    points: int = 400,
) -> pd.DataFrame:
    """The curves a chart draws: each view's G_μ and the promise's f_{ε,δ} on one α grid.

    Parameters
    ----------
    views : mapping of str to float
        Name → μ = Δ/σ of the view, each in [0, 10⁴].
    epsilon, delta : float
        The promise, ε in [0, 700], δ in (0, 1).
    smallest : float
        Least α of the log-spaced grid, in [1e-12, 0.1].
    points : int
        Grid points, in [10, 10⁴].

    Returns
    -------
    pandas.DataFrame
        Tidy: ``view`` (the names, then :data:`PROMISE`), ``mu`` (NaN for the promise),
        ``alpha``, ``beta`` (the curve), ``power`` (1 − β, to full relative precision) and
        ``under`` (f_{ε,δ}(α) − β: how far the curve lies under the promise's; positive
        exactly where the view breaks it, 0 on the promise's own rows).
    """
    lo = check_real(smallest, "smallest", low=1e-12, high=0.1)
    n = check_int(points, "points", low=10, high=10_000)
    alpha = np.logspace(math.log10(lo), 0.0, n)
    promise = dp_tradeoff(alpha, epsilon=epsilon, delta=delta)
    frames = []
    for name, mu in views.items():
        mu = _mu(mu)
        frames.append(
            pd.DataFrame(
                {
                    "view": name,
                    "mu": mu,
                    "alpha": alpha,
                    "beta": gaussian_tradeoff(alpha, mu),
                    "power": gaussian_power(alpha, mu),
                    "under": promise - gaussian_tradeoff(alpha, mu),
                }
            )
        )
    frames.append(
        pd.DataFrame(
            {
                "view": PROMISE,
                "mu": np.nan,
                "alpha": alpha,
                "beta": promise,
                "power": dp_power(alpha, epsilon, delta),
                "under": 0.0,
            }
        )
    )
    return pd.concat(frames, ignore_index=True)
