"""A CAPE design whose aggregator's *joint* view of all releases meets every site's τ_s.

The paper (Imtiaz & Sarwate, Sec. 3, eq. (2); :func:`dpcore.cape_design`) makes each release
on its own carry noise τ_s against the aggregator. The aggregator, however, holds every
release minus its F's at once, y_s = a_s + E_s + G_s, and the E's sum to zero: combining all
releases estimates a_s with std σ_joint,s = 1/sqrt([C⁻¹]_ss) < τ_s (:mod:`dpcore.analysis.views`).

Derivation (``docs/privacy.md``)
-------------------------------
Work in the weighted variables μ_s y_s, where site s needs joint std u_s = μ_s τ_s, and
write γ_s = μ_s² τ_gs² for the site's own noise, T = Σ γ_s for the aggregate variance. Let
the noise generator draw z_s ~ N(0, a γ_s) and condition on a zero sum (as in
:func:`dpcore.cape_design`, with β_s² = a γ_s). The aggregator's noise covariance is then

    C = Γ + a (Γ − γγᵀ/T) = (1 + a) Γ − a γγᵀ/T,     Γ = diag(γ),

and by Sherman–Morrison  C⁻¹ = Γ⁻¹/(1 + a) + (a/(1 + a)) 11ᵀ/T,  so

    [C⁻¹]_ss = 1/((1 + a) γ_s) + a/((1 + a) T).

Joint safety, [C⁻¹]_ss ≤ 1/u_s², holds with equality for

    γ_s = u_s² T / (T + a (T − u_s²)),

and these γ's sum to T exactly when  Σ_s u_s² / (T + a (T − u_s²)) = 1.  For a = 0 (no E)
this is T = Σ u_s², conventional averaging; as a → ∞, T → max_s u_s², the pooled
requirement. Along the all-sites direction 1 only the G's protect a site (the E's vanish
there), which is why T can never drop below the pooled level; the E's cost no accuracy
however large, so choosing a large a buys joint safety for an aggregate std only slightly
above pooled. Given the accepted price p = sqrt(T)/max u_s > 1 we solve for a (the left side
is decreasing in a). With S equal sites: a = (S − p²)/(p² − 1), τ_g² = p² τ_s²/S and
τ_e² = a (p²/S)(1 − 1/S) τ_s² → p²/(p² − 1) · τ_s² for large S.

The F's keep the noise generator's view at τ_s: τ_fs² = max(τ_s² − τ_gs², 0) (τ_gs ≤ τ_s
always, since T ≥ u_s²).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpcore._validation import check_choice, check_real, check_weights
from dpcore.protocol.cape import CapeDesign, cape_design, check_tau_site

DEFAULT_PRICE = 1.05  # aggregate std over the pooled requirement: 5% more noise std
DESIGN_KINDS = ("cape", "joint")  # the paper's design (eq. (2)) and the joint-view-safe one


def design_for(kind: str, tau_site: ArrayLike, *, weights: ArrayLike | None = None) -> CapeDesign:
    """The CAPE design of a kind.

    ``"cape"`` (:func:`dpcore.cape_design`, the paper's guarantee per release) or ``"joint"``
    (:func:`joint_safe_design`, default price).
    """
    kind = check_choice(kind, "design", DESIGN_KINDS)
    make = joint_safe_design if kind == "joint" else cape_design
    return make(tau_site, weights=weights)


def _e_scale(r2: NDArray[np.float64], total: float) -> float:
    """A ≥ 0 with Σ r_s² / (T + a (T − r_s²)) = 1 at T = ``total`` (r² ≤ 1 < T)."""
    if r2.sum() <= total:
        return 0.0  # conventional averaging is already within the price

    def excess(a: float) -> float:
        return float(np.sum(r2 / (total + a * (total - r2)))) - 1.0

    hi = 1.0
    while excess(hi) > 0:
        hi *= 2.0
    from scipy.optimize import brentq  # lazy: costs every process ~1 CPU-s (#35)
    return float(brentq(excess, 0.0, hi, xtol=1e-12, rtol=1e-14))


def joint_safe_design(
    tau_site: ArrayLike, *, weights: ArrayLike | None = None, price: float = DEFAULT_PRICE
) -> CapeDesign:
    """CAPE design in which every site's noise in the aggregator's joint view is τ_s.

    Parameters
    ----------
    tau_site : array_like, shape (S,)
        τ_s ≥ 0 per site (S ≥ 2), as for :func:`dpcore.cape_design`.
    weights : array_like, shape (S,), optional
        μ_s ≥ 0 with Σ μ_s = 1; default 1/S.
    price : float
        Accepted aggregate noise std as a multiple of the pooled requirement max_s μ_s τ_s,
        in (1, 100]. The aggregate std is ``price`` × pooled, or the conventional
        sqrt(Σ μ_s² τ_s²) if that is smaller already (then no E is needed).

    Returns
    -------
    CapeDesign
        ``method="joint"``: 1/sqrt([C⁻¹]_ss) = τ_s for every site with μ_s τ_s > 0 in the
        aggregator's view (C = Σ_E + diag(τ_g²)), hence also τ_es² + τ_gs² ≥ τ_s²;
        τ_fs² + τ_gs² ≥ τ_s² (noise generator's view); Σ μ_s e_s = 0 exactly.

    Notes
    -----
    Derivation in the module docstring and ``docs/privacy.md``. A site with μ_s = 0 does not
    enter the estimate: it adds only its own g_s with τ_gs = τ_s.

    References
    ----------
    Imtiaz & Sarwate, Sec. 3, eq. (2) and Algorithm 1 (the protocol is unchanged; only the
    variances the noise generator, aggregator and sites use differ).

    Examples
    --------
    >>> d = joint_safe_design([1.0] * 10, price=1.05)
    >>> round(d.tau_agg / d.tau_pool, 6), round(float(d.tau_g[0]) ** 2, 4)
    (1.05, 0.1103)
    """
    tau = check_tau_site(tau_site)
    mu = check_weights(weights, tau.size)
    price = check_real(price, "price", low=1.0, low_open=True, high=100.0)
    # The design is homogeneous in τ (stds scale with it, variances with its square): work
    # with τ/max τ so that tiny or huge τ_s neither underflow nor overflow on the way.
    c = float(tau.max())
    t = tau / c if c > 0 else tau
    u = mu * t
    u_max = float(u.max())
    n = tau.size
    var_g = t**2
    var_e = np.zeros(n)
    mixing = np.zeros((n, n))
    if u_max > 0:
        r2 = (u / u_max) ** 2  # scale-free: T in units of u_max²
        total = min(price**2, float(r2.sum()))
        a = _e_scale(r2, price**2)
        share = r2 / (total + a * (total - r2))  # γ_s / T
        var_g = t**2 * total / (total + a * (total - r2))
        var_e = a * var_g * (1.0 - share)
        # e = M z: M_st = (δ_st − γ_s/T) sqrt(a γ_t) / μ_s, written without dividing by μ_s.
        tau_g = np.sqrt(var_g)
        mixing = -math.sqrt(a) * np.outer(mu * var_g, mu * tau_g) / (total * u_max**2)
        mixing[np.diag_indices(n)] = math.sqrt(a) * tau_g * (1.0 - share)
    zero = mu == 0
    var_g = np.where(zero, t**2, var_g)
    var_e[zero] = 0.0
    mixing[zero] = 0.0
    scale = c if c > 0 else 1.0
    return CapeDesign(
        tau_site=tau,
        weights=mu,
        var_e=var_e * scale**2,
        var_f=np.clip(t**2 - var_g, 0.0, None) * scale**2,
        var_g=var_g * scale**2,
        e_mixing=mixing * scale,
        tau_pool=u_max * scale,
        method="joint",
    )
