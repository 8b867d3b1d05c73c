"""Privacy calibration: how much Gaussian noise a release needs.

One :class:`Calibration` value — the Gaussian calibration's kind and the neighbouring
relation — is what every function, spec and record of the core takes as ``calibration=``
(a kind's name, ``"classic"`` or ``"analytic"``, is accepted for it). Its one default,
:data:`DEFAULT_CALIBRATION`, is the analytic Gaussian mechanism under add/remove
neighbours: it is a proof of (ε, δ)-DP at every ε and the least noise that is; the paper's
reproduction (:mod:`dpcore.experiments.paper`) asks for ``"classic"`` explicitly.

Two calibrations of the Gaussian mechanism are offered:

* ``"classic"`` — σ = Δ·sqrt(2 ln(1.25/δ))/ε, the formula the paper uses throughout
  (Imtiaz & Sarwate, Sec. 2, "Differential Privacy"; Dwork & Roth 2014, Thm. A.1). It is a
  proof of (ε, δ)-DP **only for ε < 1**; the paper's grids go to ε = 10, so for ε ≥ 1 we
  still return the formula's value (to reproduce the paper) but emit
  :class:`ClassicGaussianWarning`.
* ``"analytic"`` — the exact analytic Gaussian mechanism of Balle & Wang (ICML 2018,
  Thm. 8): the smallest σ for which N(0, σ²) noise gives (ε, δ)-DP, valid for every ε > 0.

Sensitivities follow an explicit neighbouring relation (see :func:`second_moment_sensitivity`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.special import log_ndtr

from dpcore._validation import (
    MAX_MAGNITUDE,
    as_float_array,
    caller_stacklevel,
    check_broadcast,
    check_choice,
    check_delta,
    check_epsilon,
    check_real,
    show,
)

CALIBRATIONS = ("classic", "analytic")
CLASSIC_PROOF_LIMIT = 1.0  # the classic bound is a proof of (ε, δ)-DP only for ε below this
NEIGHBOURING = ("add-remove", "replace")


class ClassicGaussianWarning(UserWarning):
    """The classic Gaussian bound was used with ε ≥ 1, where it is not a proof of privacy."""


@dataclass(frozen=True)
class Calibration:
    """How a Gaussian release's σ follows from its sensitivity and (ε, δ).

    Parameters
    ----------
    kind : {"analytic", "classic"}
        ``"analytic"`` (the default): the exact analytic Gaussian mechanism of Balle & Wang
        (ICML 2018, Thm. 8), a proof at every ε > 0 and the least σ that is one.
        ``"classic"``: σ = Δ·sqrt(2 ln(1.25/δ))/ε, the paper's formula (Imtiaz & Sarwate,
        Sec. 2; Dwork & Roth 2014, Thm. A.1), a proof only for ε < 1 (it warns with
        :class:`ClassicGaussianWarning` above); the paper's reproduction asks for it.
    neighbouring : {"add-remove", "replace"}
        The neighbouring relation of a site's second-moment release
        (:func:`second_moment_sensitivity`); a mean in [0, 1] has Δ = 1/N under either.

    Examples
    --------
    >>> Calibration()
    Calibration(kind='analytic', neighbouring='add-remove')
    >>> round(Calibration("classic").sigma(1.0, epsilon=0.5, delta=1e-5), 4)
    9.6896
    >>> Calibration.of("classic", neighbouring="replace")
    Calibration(kind='classic', neighbouring='replace')
    """

    kind: str = "analytic"
    neighbouring: str = "add-remove"

    def __post_init__(self) -> None:
        check_choice(self.kind, "kind", CALIBRATIONS)
        check_choice(self.neighbouring, "neighbouring", NEIGHBOURING)

    def __str__(self) -> str:
        default = self.neighbouring == NEIGHBOURING[0]
        return self.kind if default else f"{self.kind}/{self.neighbouring}"

    @classmethod
    def of(cls, value: CalibrationLike = None, *, neighbouring: str | None = None) -> Calibration:
        """The calibration ``value`` names: a :class:`Calibration`, a kind's name or ``None``.

        ``None`` is :data:`DEFAULT_CALIBRATION`; a name keeps the default relation unless
        ``neighbouring`` is given; ``neighbouring`` replaces a value's relation.
        """
        if value is None:
            value = DEFAULT_CALIBRATION
        elif isinstance(value, str):
            value = cls(check_choice(value, "calibration", CALIBRATIONS))
        elif not isinstance(value, Calibration):
            raise ValueError(
                f"calibration must be a Calibration or one of {list(CALIBRATIONS)}; "
                f"got {show(value)}"
            )
        if neighbouring is not None:
            relation = check_choice(neighbouring, "neighbouring", NEIGHBOURING)
            if relation != value.neighbouring:
                value = cls(value.kind, relation)
        return value

    def sigma(self, sensitivity: float, *, epsilon: float, delta: float) -> float:
        """σ of a Δ-sensitive release at (ε, δ) (:func:`gaussian_sigma`)."""
        return gaussian_sigma(sensitivity, epsilon=epsilon, delta=delta, calibration=self)

    def sigmas(
        self, sensitivity: ArrayLike, *, epsilon: ArrayLike, delta: ArrayLike
    ) -> NDArray[np.float64]:
        """:meth:`sigma` element-wise over broadcast arrays (:func:`gaussian_sigmas`)."""
        return gaussian_sigmas(sensitivity, epsilon=epsilon, delta=delta, calibration=self)


CalibrationLike = Calibration | str | None  # a name stands for Calibration(name)
DEFAULT_CALIBRATION = Calibration()


def _resolve(calibration: CalibrationLike, method: str | None) -> Calibration:
    """``calibration``, or the deprecated ``method=`` (the older name of the same keyword)."""
    if method is not None:
        warnings.warn(
            "method= is deprecated; pass calibration= (a dpcore.Calibration or its kind's name)",
            DeprecationWarning,
            stacklevel=caller_stacklevel(),
        )
        if calibration is not None:
            raise ValueError("give calibration= or its deprecated name method=, not both")
        calibration = check_choice(method, "method", CALIBRATIONS)
    return Calibration.of(calibration)


def gaussian_delta(sigma: float, *, sensitivity: float, epsilon: float) -> float:
    """Exact δ attained by the Gaussian mechanism N(0, σ²) at a given ε.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, must be in (0, ∞).
    sensitivity : float
        L2 sensitivity Δ, must be in (0, ∞).
    epsilon : float
        Privacy parameter ε, must be in (0, ∞).

    Returns
    -------
    float
        δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ), the mechanism's privacy profile.

    References
    ----------
    B. Balle and Y.-X. Wang, "Improving the Gaussian mechanism for differential privacy:
    analytical calibration and optimal denoising", ICML 2018, Theorem 8.
    """
    sigma = check_real(sigma, "sigma", low=0.0, low_open=True, high_open=True)
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_open=True, high_open=True)
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_open=True, high_open=True)
    return delta_profile(sigma / sensitivity, epsilon)


def delta_profile(s: float, epsilon: float) -> float:
    """δ(ε) of N(0, s²) noise on a sensitivity-1 query, in log space for stability."""
    a = 0.5 / s - epsilon * s
    b = -0.5 / s - epsilon * s
    return float(math.exp(log_ndtr(a)) - math.exp(epsilon + log_ndtr(b)))


def gaussian_epsilon(sigma: float, *, sensitivity: float, delta: float) -> float:
    """The smallest ε for which N(0, σ²) noise on a Δ-sensitive query is (ε, δ)-DP.

    The inverse of the analytic calibration: the exact privacy profile δ(ε) of
    :func:`gaussian_delta` is decreasing in ε, so ε is its root at the target δ (0 when even
    ε = 0 meets δ; ∞ for σ = 0).

    Parameters
    ----------
    sigma : float
        Noise standard deviation, must be in [0, ∞).
    sensitivity : float
        L2 sensitivity Δ, must be in (0, ∞).
    delta : float
        Target δ, must be in (0, 1).

    References
    ----------
    B. Balle and Y.-X. Wang, ICML 2018, Theorem 8.

    Examples
    --------
    >>> s = gaussian_sigma(1.0, epsilon=0.5, delta=1e-5, calibration="analytic")
    >>> round(gaussian_epsilon(s, sensitivity=1.0, delta=1e-5), 6)
    0.5
    """
    sigma = check_real(sigma, "sigma", low=0.0, high_open=True)
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_open=True, high_open=True)
    delta = check_delta(delta)
    if sigma == 0.0:
        return math.inf
    s = sigma / sensitivity
    if math.isinf(s) or delta_profile(s, 0.0) <= delta:  # σ/Δ overflowed: no information
        return 0.0
    hi = 1.0
    while delta_profile(s, hi) > delta:
        hi *= 2.0
        if hi > 1e12:  # pragma: no cover - only for σ/Δ below ~1e-12
            return math.inf
    from scipy.optimize import brentq  # lazy: costs every process ~1 CPU-s (#35)
    return float(brentq(lambda e: delta_profile(s, e) - delta, 0.0, hi, xtol=1e-13, rtol=1e-13))


@lru_cache(maxsize=4096)
def _analytic_unit_sigma(epsilon: float, delta: float) -> float:
    """σ/Δ of the analytic Gaussian mechanism: the root of δ(σ/Δ) = δ (δ(·) is decreasing)."""
    lo, hi = 1e-12, 1.0
    while delta_profile(hi, epsilon) > delta:
        hi *= 2.0
    while delta_profile(lo, epsilon) < delta:  # pragma: no cover - lo is always tiny enough
        lo /= 2.0
    from scipy.optimize import brentq  # lazy: costs every process ~1 CPU-s (#35)
    log_s = brentq(
        lambda t: delta_profile(math.exp(t), epsilon) - delta,
        math.log(lo),
        math.log(hi),
        xtol=1e-14,
        rtol=1e-14,
        maxiter=500,
    )
    return math.exp(log_s)


def gaussian_sigma(
    sensitivity: float,
    *,
    epsilon: float,
    delta: float,
    calibration: CalibrationLike = None,
    method: str | None = None,
) -> float:
    """Standard deviation of Gaussian noise giving (ε, δ)-differential privacy.

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity Δ of the released statistic, must be in (0, ∞).
    epsilon : float
        Privacy parameter ε, must be in (0, ∞]. ``inf`` means no privacy and returns 0.
    delta : float
        Privacy parameter δ, must be in (0, 1).
    calibration : Calibration or {"analytic", "classic"}, optional
        Default :data:`DEFAULT_CALIBRATION` (analytic). ``"classic"``: Δ·sqrt(2 ln(1.25/δ))/ε
        (warns with :class:`ClassicGaussianWarning` for ε ≥ 1, where the bound is not
        proven). ``"analytic"``: the exact calibration of Balle & Wang, valid for all ε > 0
        and never larger than the classic value for ε < 1.
    method : str, optional
        Deprecated name of ``calibration``.

    Returns
    -------
    float
        The noise standard deviation σ ≥ 0.

    Notes
    -----
    The classic formula is the one used by the paper for every τ (Sec. 2; eq. (2) builds
    on it). For ε ≥ 1 it is still returned so that the paper's figures can be reproduced.

    References
    ----------
    H. Imtiaz and A. D. Sarwate, "Distributed Differentially-Private Algorithms for Matrix
    and Tensor Factorization", Sec. 2 (Gaussian mechanism).
    C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy", 2014, Thm. A.1.
    B. Balle and Y.-X. Wang, ICML 2018, Theorem 8 and Algorithm 1.

    Examples
    --------
    >>> round(gaussian_sigma(1.0, epsilon=0.5, delta=1e-5, calibration="classic"), 4)
    9.6896
    >>> round(gaussian_sigma(1.0, epsilon=0.5, delta=1e-5), 4)  # analytic
    7.0318
    """
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_open=True, high_open=True)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    kind = _resolve(calibration, method).kind
    if math.isinf(epsilon):
        return 0.0
    if kind == "classic":
        if epsilon >= CLASSIC_PROOF_LIMIT:
            warnings.warn(
                f"the classic Gaussian bound sqrt(2 ln(1.25/delta))/epsilon is proven only for "
                f"epsilon < 1; got epsilon = {epsilon:g}. The value is returned to reproduce the "
                f"paper; use calibration='analytic' for a calibration that is a proof.",
                ClassicGaussianWarning,
                stacklevel=caller_stacklevel(),  # the user's line, not the core's
            )
        sigma = _classic_sigma(sensitivity, epsilon, delta)
    else:
        sigma = sensitivity * _analytic_unit_sigma(epsilon, delta)
    if not sigma <= MAX_MAGNITUDE:  # also catches inf (Δ = 1e308) and NaN
        raise ValueError(
            f"sensitivity / epsilon is too large: the noise std would be {sigma:.3g}, beyond "
            f"{MAX_MAGNITUDE:g} (sensitivity {sensitivity:g}, epsilon {epsilon:g}, delta "
            f"{delta:g}); use a larger epsilon or delta, or a smaller sensitivity"
        )
    return sigma


def _classic_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    # ln(1.25/δ) as a difference: 1.25/δ overflows to inf for a subnormal δ
    return sensitivity * math.sqrt(2.0 * (math.log(1.25) - math.log(delta))) / epsilon


def calibration_comparison(
    epsilons: ArrayLike, *, delta: float, sensitivity: float = 1.0
) -> pd.DataFrame:
    """Classic and analytic Gaussian σ side by side over a grid of ε.

    Parameters
    ----------
    epsilons : sequence of float
        ε values in (0, ∞).
    delta : float
        δ in (0, 1).
    sensitivity : float
        Δ in (0, ∞).

    Returns
    -------
    pandas.DataFrame
        ``epsilon``, ``classic``, ``analytic`` (σ), ``saving`` (1 − analytic/classic: the
        fraction of noise std the analytic calibration saves) and ``classic_is_proof``
        (ε < 1, where Dwork & Roth's Theorem A.1 holds; no warning is raised here).
    """
    delta = check_delta(delta)
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_open=True, high=MAX_MAGNITUDE)
    grid = as_float_array(epsilons, "epsilons")
    if grid.ndim != 1 or grid.size == 0:
        raise ValueError(f"epsilons must be a non-empty 1-D sequence; got shape {grid.shape}")
    eps = [check_real(float(e), "epsilons", low=1e-100, high_open=True) for e in grid]
    classic = np.array([_classic_sigma(sensitivity, e, delta) for e in eps])
    analytic = np.array([sensitivity * _analytic_unit_sigma(e, delta) for e in eps])
    return pd.DataFrame(
        {
            "epsilon": eps,
            "classic": classic,
            "analytic": analytic,
            "saving": 1.0 - analytic / classic,
            "classic_is_proof": np.array(eps) < CLASSIC_PROOF_LIMIT,
        }
    )


def agn_budget(*, epsilon: float, delta: float, split: float = 0.5) -> dict[str, float]:
    """How capeAGN spends (ε, δ): M2 gets (ε₁, δ₁), M3 gets (ε₂, δ₂).

    ε₁ = split·ε, ε₂ = (1 − split)·ε and likewise for δ; by basic composition the whole
    algorithm is (ε₁ + ε₂, δ₁ + δ₂) = (ε, δ)-DP (Imtiaz & Sarwate, Theorem 2; the paper
    uses split = 1/2).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    split = check_real(split, "split", low=0.0, high=1.0, low_open=True, high_open=True)
    return {
        "epsilon1": split * epsilon,
        "epsilon2": (1 - split) * epsilon,
        "delta1": split * delta,
        "delta2": (1 - split) * delta,
    }


def second_moment_sensitivity(
    n_samples: ArrayLike, *, neighbouring: str = "add-remove"
) -> NDArray[np.float64]:
    """L2 sensitivity of A_s = X_s X_sᵀ / N_s for samples with ‖x‖₂ ≤ 1.

    Parameters
    ----------
    n_samples : int or array_like of int
        Number of samples N_s (per site), each must be ≥ 1.
    neighbouring : {"add-remove", "replace"}
        ``"add-remove"``: neighbours differ by one sample added or removed (N_s treated as
        public), Δ = ‖xxᵀ‖_F / N_s ≤ 1/N_s — the paper's Δ₂ˢ = 1/N_s (Sec. 4).
        ``"replace"``: one sample replaced by another, Δ = ‖xxᵀ − x'x'ᵀ‖_F / N_s ≤ √2/N_s
        (attained by orthogonal unit vectors).

    Returns
    -------
    ndarray of float
        Δ per entry of ``n_samples`` (shape of the input).

    Notes
    -----
    The symmetric noise of the AG algorithm perturbs the D(D+1)/2 upper-triangular entries
    independently; the L2 norm of that vector is at most the Frobenius norm used above.
    """
    neighbouring = check_choice(neighbouring, "neighbouring", NEIGHBOURING)
    n = as_float_array(n_samples, "n_samples")
    if np.any(~np.isfinite(n)) or np.any(n < 1) or np.any(n != np.round(n)):
        raise ValueError(f"n_samples must be integers in [1, inf); got {show(n_samples)}")
    scale = 1.0 if neighbouring == "add-remove" else math.sqrt(2.0)
    return scale / n


def mean_sensitivity(n_samples: ArrayLike) -> NDArray[np.float64]:
    """L2 sensitivity 1/N_s of a site's mean of N_s values in [0, 1] (add/remove neighbours).

    Parameters
    ----------
    n_samples : int or array_like of int
        N_s per site, each an integer ≥ 1.

    Returns
    -------
    ndarray of float
        Δ_s = 1/N_s, shape of the input.

    Examples
    --------
    >>> mean_sensitivity([4, 10])
    array([0.25, 0.1 ])
    """
    n = as_float_array(n_samples, "n_samples")
    if n.size == 0 or np.any(~np.isfinite(n)) or np.any(n < 1) or np.any(n != np.round(n)):
        raise ValueError(f"n_samples must be integers in [1, inf); got {show(n_samples)}")
    return 1.0 / n


def mean_noise_std(
    n_samples: ArrayLike,
    *,
    epsilon: ArrayLike,
    delta: ArrayLike,
    calibration: CalibrationLike = None,
    method: str | None = None,
) -> NDArray[np.float64]:
    """τ_s for each site releasing its mean of N_s values in [0, 1] at its own (ε_s, δ_s).

    The Gaussian mechanism (:func:`gaussian_sigmas`) with Δ_s = 1/N_s
    (:func:`mean_sensitivity`): the scalar statistic of the CAPE averaging pages.
    ``calibration`` as in :func:`gaussian_sigma` (``method``: its deprecated name).

    Examples
    --------
    >>> float(mean_noise_std([100], epsilon=0.5, delta=0.01)[0]) == gaussian_sigma(
    ...     0.01, epsilon=0.5, delta=0.01
    ... )
    True
    """
    cal = _resolve(calibration, method)
    sens = mean_sensitivity(n_samples)
    return gaussian_sigmas(sens, epsilon=epsilon, delta=delta, calibration=cal)


def site_noise_std(
    n_samples: ArrayLike,
    *,
    epsilon: ArrayLike,
    delta: ArrayLike,
    calibration: CalibrationLike = None,
    neighbouring: str | None = None,
    method: str | None = None,
) -> NDArray[np.float64]:
    """τ_s for each site: the noise std its second-moment release needs on its own.

    Parameters
    ----------
    n_samples, epsilon, delta : array_like
        Per-site N_s, ε_s, δ_s (broadcast against each other).
    calibration : Calibration or str, optional
        As in :func:`gaussian_sigma`; its relation gives Δ_s
        (:func:`second_moment_sensitivity`).
    neighbouring : {"add-remove", "replace"}, optional
        Replaces the calibration's relation.
    method : str, optional
        Deprecated name of ``calibration``.

    Returns
    -------
    ndarray of float
        τ_s = σ(Δ_s, ε_s, δ_s), shape of the broadcast inputs.

    References
    ----------
    Imtiaz & Sarwate, Sec. 3.1: τ_s = (1/(N_s ε_s)) sqrt(2 log(1.25/δ_s)).
    """
    cal = Calibration.of(_resolve(calibration, method), neighbouring=neighbouring)
    sens = second_moment_sensitivity(n_samples, neighbouring=cal.neighbouring)
    return gaussian_sigmas(sens, epsilon=epsilon, delta=delta, calibration=cal)


def gaussian_sigmas(
    sensitivity: ArrayLike,
    *,
    epsilon: ArrayLike,
    delta: ArrayLike,
    calibration: CalibrationLike = None,
    method: str | None = None,
) -> NDArray[np.float64]:
    """:func:`gaussian_sigma` element-wise over broadcast arrays, warning at most once."""
    cal = _resolve(calibration, method)
    sens, eps, dlt = check_broadcast(
        sensitivity=as_float_array(sensitivity, "sensitivity"),
        epsilon=as_float_array(epsilon, "epsilon"),
        delta=as_float_array(delta, "delta"),
    )
    out = np.empty(sens.shape)
    with classic_warning_once():
        for idx in np.ndindex(sens.shape):
            out[idx] = gaussian_sigma(
                float(sens[idx]), epsilon=float(eps[idx]), delta=float(dlt[idx]), calibration=cal
            )
    return out


@contextmanager
def classic_warning_once(stacklevel: int | None = None) -> Iterator[None]:
    """Collapse the ClassicGaussianWarnings raised inside into one; re-emit all others.

    The one warning names the first line outside dpcore (:func:`caller_stacklevel`) unless
    ``stacklevel`` is given.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    classic = [w for w in caught if issubclass(w.category, ClassicGaussianWarning)]
    if classic:
        level = caller_stacklevel() if stacklevel is None else stacklevel
        warnings.warn(classic[0].message, ClassicGaussianWarning, stacklevel=level)
    for w in caught:
        if not issubclass(w.category, ClassicGaussianWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
