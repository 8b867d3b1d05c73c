"""Who sees what in CAPE: per-party views, colluding coalitions and site dropouts.

Every release is â_s = a_s + e_s + f_s + g_s (:mod:`dpcore.protocol.cape`). Noise is independent
across the entries of a value and has the same S×S site covariance in every entry, so one
entry tells the whole story: changing site s's data by v shifts release s by v and nothing
else, and a Gaussian observation with covariance C distinguishes the shift with Mahalanobis
distance ‖v‖·sqrt([C⁻¹]_ss). Site s is therefore protected exactly like a Gaussian mechanism
with sensitivity Δ_s and std

    σ_joint,s = 1 / sqrt([C⁻¹]_ss)       (what all the releases it sees tell an observer)

while the paper's argument looks at site s's own release only,

    σ_release,s = sqrt(C_ss)            (Imtiaz & Sarwate, Sec. 3, proof of Theorem 1).

σ_joint ≤ σ_release always; they are equal when the noise of different releases is
independent. ``docs/privacy.md`` explains why the aggregator's joint view is weaker than
τ_s even without collusion, and what that means.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from dpcore._validation import (
    RngLike,
    check_bool,
    check_choice,
    check_delta,
    check_int,
    check_per_site,
    check_rng,
)
from dpcore.mechanisms.calibration import gaussian_epsilon
from dpcore.protocol.cape import (
    CapeDesign,
    check_design,
    check_values,
    site_releases,
    standard_noise,
)

REMEDIES = ("none", "naive", "cape")


def check_sites(sites: Sequence[int], n_sites: int, name: str) -> tuple[int, ...]:
    """Distinct 0-based site indices in [0, S − 1], sorted."""
    if isinstance(sites, (str, bytes)) or not isinstance(sites, (Sequence, np.ndarray)):
        raise TypeError(f"{name} must be a sequence of site indices; got {type(sites).__name__}")
    out = tuple(check_int(s, name, low=0, high=n_sites - 1) for s in sites)
    if len(set(out)) != len(out):
        raise ValueError(f"{name} must not repeat a site; got {list(out)}")
    return tuple(sorted(out))


def _unit_scale(variances: NDArray[np.float64]) -> NDArray[np.float64]:
    """Standard deviations to divide by (1 where a variance is 0)."""
    scale = np.sqrt(np.clip(variances, 0.0, None))
    return np.where(scale > 0, scale, 1.0)


def _t(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """Transpose of the last two axes (a stack of matrices)."""
    return np.swapaxes(a, -1, -2)


def _outer(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """The outer product x xᵀ over the last axis (stacked)."""
    return x[..., :, None] * x[..., None, :]


def condition(
    cov: NDArray[np.float64], observe: NDArray[np.float64], noise: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Covariance of x ~ N(0, Σ) after observing y = A x + n, n ~ N(0, N) independent.

    Σ − Σ Aᵀ (A Σ Aᵀ + N)⁺ A Σ (Gaussian conditioning; the pseudo-inverse handles exactly
    known, linearly dependent observations such as the zero sum). Computed in correlation
    units, so that sites whose τ differ by orders of magnitude each keep their own relative
    accuracy and the pseudo-inverse's cut-off is scale-free; rounding-level negative
    eigenvalues (an E pinned down exactly by the zero sum) are clipped. Leading axes of
    ``observe`` (and ``noise``) are a stack of observations, conditioned on one by one.
    """
    if observe.shape[-2] == 0:
        shape = np.broadcast_shapes(cov.shape[:-2], observe.shape[:-2]) + cov.shape[-2:]
        return np.array(np.broadcast_to(cov, shape))
    scale = _unit_scale(np.diagonal(cov, axis1=-2, axis2=-1))
    gain = (cov @ _t(observe)) / scale[..., :, None]  # Σ_n A_nᵀ with Σ_n = S⁻¹ΣS⁻¹, A_n = AS
    inner = observe @ cov @ _t(observe) + noise
    iouter = _outer(_unit_scale(np.diagonal(inner, axis1=-2, axis2=-1)))
    inverse = np.linalg.pinv(inner / iouter, rcond=1e-12, hermitian=True) / iouter
    souter = _outer(scale)
    out = cov / souter - gain @ inverse @ _t(gain)
    return _psd((out + _t(out)) / 2) * souter


def _psd(cov: NDArray[np.float64]) -> NDArray[np.float64]:
    """Clip rounding-level negative eigenvalues of a covariance (stacked)."""
    vals, vecs = np.linalg.eigh(cov)
    clipped: NDArray[np.float64] = (vecs * np.clip(vals, 0.0, None)[..., None, :]) @ _t(vecs)
    return clipped


def _joint_std(cov: NDArray[np.float64]) -> NDArray[np.float64]:
    """1/sqrt([C⁻¹]_ss): the std of the best unbiased estimate of a_s from all releases.

    Stacked over leading axes. A site whose noise is exactly 0 gets 0 and no say in the
    others' (its row and column are left out of the inverse).
    """
    if cov.shape[-1] == 0:
        return np.zeros(cov.shape[:-1])
    scale = np.sqrt(np.clip(np.diagonal(cov, axis1=-2, axis2=-1), 0.0, None))
    ok = scale > 0
    # correlation form: well conditioned even for τ's of very different size
    both = ok[..., :, None] & ok[..., None, :]
    sub = np.where(both, cov / _outer(np.where(ok, scale, 1.0)), 0.0)
    precision = np.diagonal(np.linalg.pinv(sub, rcond=1e-12, hermitian=True), axis1=-2, axis2=-1)
    return np.where(ok, scale / np.sqrt(np.maximum(precision, 1.0)), 0.0)


def joint_noise_std(cov: NDArray[np.float64]) -> NDArray[np.float64]:
    """σ_joint of every site from the noise covariance C of the releases an observer holds.

    1/sqrt([C⁻¹]_ss) (module docstring), 0 for a site without noise; stacked over leading axes.
    """
    return _joint_std(np.asarray(cov, dtype=np.float64))


@dataclass(frozen=True, eq=False)
class CoalitionView:
    """The noise a coalition cannot remove from the honest sites' releases.

    The coalition is the aggregator, optionally the noise generator, and some sites.

    Attributes
    ----------
    colluding : tuple of int
        Colluding sites (0-based).
    noise_generator : bool
        Whether the noise generator is in the coalition.
    honest : ndarray of int
        The other sites.
    covariance : ndarray, shape (H, H)
        Per-entry covariance of the noise left on the honest releases a_s + e_s + g_s once
        the coalition subtracts every F_s and everything it knows about the E's.
    release_std, joint_std, required_std : ndarray, shape (H,)
        σ_release, σ_joint (module docstring) and τ_s.
    """

    colluding: tuple[int, ...]
    noise_generator: bool
    honest: NDArray[np.intp]
    covariance: NDArray[np.float64]
    release_std: NDArray[np.float64]
    joint_std: NDArray[np.float64]
    required_std: NDArray[np.float64]


def coalition_view(
    design: CapeDesign, colluding: Sequence[int] = (), *, noise_generator: bool = False
) -> CoalitionView:
    """Noise protecting each honest site against the aggregator and its colluders.

    The coalition knows every F_s (the aggregator drew them), the E_j and G_j of colluding
    sites, and the zero-sum constraint Σ μ_s E_s = 0 (public). With the noise generator it
    knows every E_s. What remains on the honest releases is E_H conditioned on the known
    E's, plus the honest G's.

    Parameters
    ----------
    design : CapeDesign
        A feasible design (:func:`dpcore.cape_design`).
    colluding : sequence of int
        0-based indices of colluding sites.
    noise_generator : bool
        Include the noise generator.

    Returns
    -------
    CoalitionView

    References
    ----------
    Imtiaz & Sarwate, Sec. 3 (threat model); H. Imtiaz, J. Mohammadi, A. D. Sarwate,
    arXiv:1904.10059 (collusion bound S_C ≤ ⌈S/3⌉ − 1).
    """
    design = check_design(design)
    colluding = check_sites(colluding, design.n_sites, "colluding")
    if not isinstance(noise_generator, (bool, np.bool_)):
        raise TypeError(f"noise_generator must be a bool; got {type(noise_generator).__name__}")
    honest, cov = _views(design, np.array([colluding], dtype=np.intp), bool(noise_generator))
    return CoalitionView(
        colluding=colluding,
        noise_generator=bool(noise_generator),
        honest=honest[0],
        covariance=cov[0],
        release_std=_release_std(cov)[0],
        joint_std=_joint_std(cov)[0],
        required_std=design.tau_site[honest[0]].copy(),
    )


def _views(
    design: CapeDesign, coalitions: NDArray[np.intp], noise_generator: bool
) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """Honest sites and the noise covariance left on their releases, for a stack of coalitions.

    ``coalitions`` has shape (m, n): m coalitions of n distinct sites each. Returns the honest
    sites, shape (m, S − n), sorted, and the covariances, shape (m, S − n, S − n)
    (:func:`coalition_view`'s, one per coalition; all m conditionings in one batch).
    """
    m, n = coalitions.shape
    member = np.zeros((m, design.n_sites), dtype=bool)
    member[np.arange(m)[:, None], coalitions] = True
    honest = np.nonzero(~member)[1].reshape(m, design.n_sites - n)
    if noise_generator:
        left = np.zeros((m, honest.shape[1], honest.shape[1]))
    else:  # the coalition knows E_K exactly (and the public zero sum, already in Σ_E)
        known = np.eye(design.n_sites)[coalitions]  # (m, n, S) selection rows
        cond = condition(design.e_covariance, known, np.zeros((n, n)))
        left = cond[np.arange(m)[:, None, None], honest[:, :, None], honest[:, None, :]]
    return honest, left + _diag(design.var_g[honest])


def _diag(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """Stacked diagonal matrices from the last axis."""
    return values[..., :, None] * np.eye(values.shape[-1])


def _release_std(cov: NDArray[np.float64]) -> NDArray[np.float64]:
    """sqrt(C_ss): the noise on each honest release on its own (stacked)."""
    return np.sqrt(np.clip(np.diagonal(cov, axis1=-2, axis2=-1), 0, None))


def effective_epsilons(
    std: ArrayLike, sensitivity: ArrayLike, *, delta: ArrayLike
) -> NDArray[np.float64]:
    """ε a Gaussian mechanism with these std's and sensitivities has at δ (analytic, exact)."""
    std, sens, dlt = np.broadcast_arrays(
        np.asarray(std, float), np.asarray(sensitivity, float), np.asarray(delta, float)
    )
    return np.array(
        [
            gaussian_epsilon(float(s), sensitivity=float(d), delta=float(t))
            for s, d, t in zip(std.ravel(), sens.ravel(), dlt.ravel(), strict=True)
        ]
    ).reshape(std.shape)


# ε computed by root finding to ~1e-13: a view meets its promise when ε ≤ ε_s up to this.
EPS_TOL = 1e-7
# A std from sums of variances: it meets a required std when σ ≥ required up to rounding.
STD_TOL = 1e-9


def coalition_report(
    design: CapeDesign,
    colluding: Sequence[int] = (),
    *,
    sensitivity: ArrayLike,
    epsilon: ArrayLike,
    delta: ArrayLike,
    noise_generator: bool = False,
    exact_design: CapeDesign | None = None,
) -> pd.DataFrame:
    """One row per honest site: its promise (ε_s, δ_s) against the ε each view gives.

    Parameters
    ----------
    design : CapeDesign
    sensitivity, delta : float or array_like, shape (S,)
        Δ_s and δ_s per site.
    colluding : sequence of int
        0-based colluding sites.
    epsilon : float or array_like, shape (S,)
        ε_s, what each site was promised (at its δ_s).
    noise_generator : bool
    exact_design : CapeDesign, optional
        The same design with every τ_s calibrated exactly (analytic; Balle & Wang 2018,
        Thm. 8), for a ``design`` calibrated with the classic formula. Given, three columns
        more: ``epsilon_release_exact``, ``epsilon_joint_exact`` and ``joint_meets_exact``,
        what the same views give with exact τ_s (where the classic formula's slack hides a
        break, ``joint_meets`` is True and ``joint_meets_exact`` False).

    Returns
    -------
    pandas.DataFrame
        ``promised_epsilon`` (ε_s); ``required_std`` (τ_s), ``release_std``, ``joint_std``;
        ``epsilon_at_required``: the exact ε of noise τ_s alone (below ε_s when the classic
        formula over-calibrated τ_s, above it where classic fails, ε ≳ 7);
        ``epsilon_release`` and ``epsilon_joint``: exact ε of the site's own release and of
        all releases together at δ_s; ``release_meets`` / ``joint_meets``: that ε ≤ ε_s —
        exactly the promise; ``release_ratio`` / ``joint_ratio``: σ/τ_s (< 1 means the
        design gives less noise than the site's own calibration asked for).
    """
    view = coalition_view(design, colluding, noise_generator=noise_generator)
    sens = check_per_site(sensitivity, design.n_sites, "sensitivity")[view.honest]
    dlt = np.array([check_delta(d) for d in check_per_site(delta, design.n_sites, "delta")])[
        view.honest
    ]
    promised = check_per_site(epsilon, design.n_sites, "epsilon")[view.honest]
    eps_release = effective_epsilons(view.release_std, sens, delta=dlt)
    eps_joint = effective_epsilons(view.joint_std, sens, delta=dlt)
    report = pd.DataFrame(
        {
            "site": view.honest + 1,
            "promised_epsilon": promised,
            "required_std": view.required_std,
            "release_std": view.release_std,
            "joint_std": view.joint_std,
            "epsilon_at_required": effective_epsilons(view.required_std, sens, delta=dlt),
            "epsilon_release": eps_release,
            "epsilon_joint": eps_joint,
            "release_meets": eps_release <= promised * (1 + EPS_TOL),
            "joint_meets": eps_joint <= promised * (1 + EPS_TOL),
            "release_ratio": _ratio(view.release_std, view.required_std),
            "joint_ratio": _ratio(view.joint_std, view.required_std),
        }
    )
    if exact_design is None:
        return report
    if not isinstance(exact_design, CapeDesign) or exact_design.n_sites != design.n_sites:
        raise TypeError(
            f"exact_design must be a CapeDesign with the design's {design.n_sites} sites; "
            f"got {type(exact_design).__name__}"
        )
    tight = coalition_report(
        exact_design,
        colluding,
        sensitivity=sensitivity,
        epsilon=epsilon,
        delta=delta,
        noise_generator=noise_generator,
    )
    return report.assign(
        epsilon_release_exact=tight["epsilon_release"].to_numpy(),
        epsilon_joint_exact=tight["epsilon_joint"].to_numpy(),
        joint_meets_exact=tight["joint_meets"].to_numpy(),
    )


MAX_COLLUSION_SITES = 40
# Every coalition of a size is tried when there are at most this many: C(12, 6) = 924, so
# every size is exact up to S = 12 (4,096 coalitions in all, 0.1 s); beyond, the sizes near
# 0 and S − 1 stay exact and the middle ones are lower bounds (issue #22).
MAX_EXACT_COALITIONS = 924
VIEWS = {"own release": _release_std, "all releases": _joint_std}


def collusion_curve(
    design: CapeDesign,
    *,
    sensitivity: ArrayLike,
    epsilon: ArrayLike,
    delta: ArrayLike,
    noise_generator: bool = False,
) -> pd.DataFrame:
    """The worst coalition of each size: effective ε of the most exposed honest site.

    For each number n = 0 … S−1 of sites colluding with the aggregator, and for each view
    (a site's own release; all honest releases together), the largest ε/ε_s of any honest
    site over the coalitions of n sites. A site's ε falls as the noise left on it grows, so
    its worst coalition is the one leaving it the least noise: the search keeps, per site,
    the least σ over the coalitions it tries, and computes ε only for that.

    Where a size has at most :data:`MAX_EXACT_COALITIONS` coalitions (every size for
    S ≤ 12) every coalition is tried and the row is the exact worst case. Otherwise the row
    is a **lower bound**: for each site, the worst coalition found for it one size smaller
    is grown by each other site in turn (a greedy search per site); the ε it reports is
    attained by a real coalition, but a worse one may exist. With the noise generator
    colluding only the G's are left whoever else colludes, so every size is exact.

    Parameters
    ----------
    design : CapeDesign
        A feasible design with S ≤ :data:`MAX_COLLUSION_SITES` sites.
    sensitivity, delta : float or array_like, shape (S,)
        Δ_s and δ_s per site.
    epsilon : float or array_like, shape (S,)
        ε_s, what each site was promised (at its δ_s).
    noise_generator : bool
        The noise generator colludes too.

    Returns
    -------
    pandas.DataFrame
        One row per (view, n): ``colluding`` (n), ``view`` ("own release" or "all
        releases"), ``epsilon`` (ε of the honest site with the largest ε/ε_s, in the worst
        coalition found), ``promised_epsilon`` (that site's ε_s), ``site`` (that site,
        1-based), ``coalition`` (that coalition, 1-based sites), ``exact`` (True: the worst
        case over every coalition of n sites; False: a lower bound), ``searched`` (how many
        coalitions were tried), ``meets`` (nullable boolean: True only for an exact row in
        which every honest site of every coalition has ε ≤ ε_s; False where a coalition
        found breaks a promise; <NA> for a lower bound that found no break — unknown) and
        ``std_ratio`` (smallest σ/τ_s found).

    References
    ----------
    Imtiaz & Sarwate, Sec. 3 (threat model: colluding sites); docs/privacy.md (the views).

    Examples
    --------
    >>> from dpcore.protocol.cape import cape_design
    >>> curve = collusion_curve(cape_design([1.0] * 4), sensitivity=0.2, epsilon=1.0, delta=1e-5)
    >>> bool(curve.exact.all()), int(curve.searched.sum())  # 2 views × (2⁴ − 1) coalitions
    (True, 30)
    """
    design = check_design(design)
    n_sites = design.n_sites
    if n_sites > MAX_COLLUSION_SITES:
        raise ValueError(
            f"design must have at most {MAX_COLLUSION_SITES} sites for collusion_curve (its "
            f"search over coalitions grows like S⁵); got S = {n_sites}"
        )
    if not isinstance(noise_generator, (bool, np.bool_)):
        raise TypeError(f"noise_generator must be a bool; got {type(noise_generator).__name__}")
    ng = bool(noise_generator)
    sens = check_per_site(sensitivity, design.n_sites, "sensitivity")
    dlt = np.array([check_delta(d) for d in check_per_site(delta, design.n_sites, "delta")])
    promised = check_per_site(epsilon, design.n_sites, "epsilon")
    rows = []
    worst_for: dict[str, NDArray[np.intp]] = {}  # per view: site s → its worst coalition
    for n in range(n_sites):
        exact = ng or math.comb(n_sites, n) <= MAX_EXACT_COALITIONS
        if exact:  # one batch for both views
            tried = _all_coalitions(n_sites, n, ng)
            honest, cov = _views(design, tried, ng)
        for view, std_of in VIEWS.items():
            if not exact:
                tried = _grow(worst_for[view], n_sites)
                honest, cov = _views(design, tried, ng)
            least, where = _least_per_site(honest, std_of(cov), n_sites)
            worst_for[view] = tried[where]
            eps = effective_epsilons(least, sens, delta=dlt)
            with np.errstate(invalid="ignore"):  # ε = ∞ against ε_s = ∞: the promise holds
                ratio = np.where(np.isinf(promised), 0.0, eps / promised)
            worst = int(np.argmax(ratio))
            broken = bool(np.any(eps > promised * (1 + EPS_TOL)))
            rows.append(
                {
                    "colluding": n,
                    "view": view,
                    "epsilon": float(eps[worst]),
                    "promised_epsilon": float(promised[worst]),
                    "site": worst + 1,
                    "coalition": tuple(int(k) + 1 for k in tried[where[worst]]),
                    "exact": exact,
                    "searched": len(tried),
                    "meets": (not broken) if exact else (False if broken else None),
                    "std_ratio": float(np.min(_ratio(least, design.tau_site))),
                }
            )
    out = pd.DataFrame(rows)
    out["meets"] = out["meets"].astype("boolean")
    return out


def _all_coalitions(n_sites: int, size: int, noise_generator: bool) -> NDArray[np.intp]:
    """Every coalition of ``size`` sites, shape (C(S, size), size).

    With the noise generator the coalition does not matter (only G's are left), so one
    coalition per site that leaves it honest is enough: site s with the next ``size`` sites.
    """
    if noise_generator:
        return np.array(
            [[(s + 1 + i) % n_sites for i in range(size)] for s in range(n_sites)], dtype=np.intp
        ).reshape(n_sites, size)
    every = list(itertools.combinations(range(n_sites), size))
    return np.array(every, dtype=np.intp).reshape(len(every), size)


def _grow(worst_for: NDArray[np.intp], n_sites: int) -> NDArray[np.intp]:
    """Each site's worst coalition (row s, without s) grown by each site not yet in it."""
    free = np.ones((n_sites, n_sites), dtype=bool)
    free[np.arange(n_sites)[:, None], worst_for] = False
    free[np.arange(n_sites), np.arange(n_sites)] = False  # the target stays honest
    owner, extra = np.nonzero(free)
    return np.column_stack([worst_for[owner], extra])


def _least_per_site(
    honest: NDArray[np.intp], stds: NDArray[np.float64], n_sites: int
) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """Per site: the least noise over a stack of coalitions, and which coalition leaves it.

    Every site must be honest in at least one coalition of the stack.
    """
    site, std = honest.ravel(), stds.ravel()
    order = np.lexsort((std, site))  # by site, then by noise: the first of each site is least
    first = order[np.r_[True, site[order][1:] != site[order][:-1]]]
    if not np.array_equal(site[first], np.arange(n_sites)):  # pragma: no cover - invariant
        raise AssertionError("every site must be honest in some coalition tried")
    return std[first], first // honest.shape[1]


def _ratio(std: NDArray[np.float64], required: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.where(required > 0, std / np.where(required > 0, required, 1.0), np.inf)


def collusion_bound(n_sites: int) -> int:
    """S_C ≤ ⌈S/3⌉ − 1: colluding sites tolerated by the follow-up CAPE analysis.

    Imtiaz, Mohammadi & Sarwate, arXiv:1904.10059.
    """
    n_sites = check_int(n_sites, "n_sites", low=2)
    return math.ceil(n_sites / 3) - 1


def party_views(
    design: CapeDesign, *, sensitivity: ArrayLike, delta: ArrayLike, epsilon: ArrayLike
) -> pd.DataFrame:
    """What each party receives, and the ε each site has in its view against its promise.

    Parameters
    ----------
    design : CapeDesign
    sensitivity, delta, epsilon : float or array_like, shape (S,)
        Δ_s, δ_s and the promised ε_s per site.

    Returns
    -------
    pandas.DataFrame
        One row per (party, site): ``party``, ``receives``, ``site`` (1-based),
        ``release_std``, ``joint_std``, ``required_std``, ``epsilon_release``,
        ``epsilon_joint`` (exact ε at δ_s of the site's own release / of everything the
        party sees), ``promised_epsilon`` and ``meets`` (ε_joint ≤ ε_s). A party that sees
        nothing of a site has σ = ∞ and ε = 0.

    Notes
    -----
    Noise generator: receives nothing, knows every E_s; were it to see the releases, F_s +
    G_s would be left (independent across sites). Aggregator: receives every â_s, knows
    every F_s (:func:`coalition_view` with no colluders). Site j: receives E_j and F_j and
    no other site's release. Anyone: the final estimate Σ μ_s a_s + Σ μ_s G_s, whose
    noise is τ_agg/μ_s relative to site s's contribution.
    """
    design = check_design(design)
    tau = design.tau_site
    n = design.n_sites
    sens = check_per_site(sensitivity, design.n_sites, "sensitivity")
    dlt = np.array([check_delta(d) for d in check_per_site(delta, design.n_sites, "delta")])
    promised = check_per_site(epsilon, design.n_sites, "epsilon")
    rows = []

    def eps(std: float, site: int) -> float:
        return (
            0.0 if math.isinf(std) else float(effective_epsilons(std, sens[site], delta=dlt[site]))
        )

    def add(party: str, receives: str, site: int, release: float, joint: float) -> None:
        eps_joint = eps(joint, site)
        rows.append(
            {
                "party": party,
                "receives": receives,
                "site": site + 1,
                "release_std": release,
                "joint_std": joint,
                "required_std": float(tau[site]),
                "epsilon_release": eps(release, site),
                "epsilon_joint": eps_joint,
                "promised_epsilon": float(promised[site]),
                "meets": bool(eps_joint <= promised[site] * (1 + EPS_TOL)),
            }
        )

    ng = np.sqrt(design.var_f + design.var_g)
    for s in range(n):
        add("noise generator", "nothing (it sends E_s; it knows every E_s)", s, ng[s], ng[s])
    agg = coalition_view(design)
    for i, s in enumerate(agg.honest):
        add(
            "aggregator",
            "every release â_s (it knows every F_s)",
            int(s),
            agg.release_std[i],
            agg.joint_std[i],
        )
    for j in range(n):
        for s in range(n):
            if s != j:
                add(f"site {j + 1}", f"E_{j + 1} and F_{j + 1} only", s, math.inf, math.inf)
    tau_agg = design.tau_agg
    with np.errstate(over="ignore"):  # a tiny μ_s: its contribution is buried (σ = ∞)
        final = np.where(design.weights > 0, tau_agg / np.maximum(design.weights, 1e-300), np.inf)
    for s in range(n):
        std = float(final[s])
        add("anyone (final output)", "the estimate Σ μ_s a_s + Σ μ_s G_s", s, std, std)
    return pd.DataFrame(rows)


# --- dropouts ---------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class DropoutAnalysis:
    """Aggregate noise when sites drop out after the noise generator sent the E's.

    All std's are of the renormalised estimate Σ_R μ_t (â_t − F_t) / W, W = Σ_R μ_t, over
    the remaining sites R.

    Attributes
    ----------
    dropped : tuple of int
    remaining_weights : ndarray, shape (S,)
        μ_t / W on R, 0 for dropped sites.
    required_std : float
        max_R μ_t τ_t / W: what the pooled estimate of the remaining data needs.
    std : dict
        Per remedy: ``"none"`` (the missing E's no longer cancel), ``"naive"`` (the noise
        generator sends Σ_D μ_d E_d: the E's cancel, but the dropped G's are missing too) and
        ``"cape"`` (it sends Σ_D μ_d (E_d + H_d), H_d ~ N(0, τ_gd²), standing in for the
        dropped sites' G's).
    release_std : dict
        Per remedy, the smallest σ_release / τ_t over remaining sites in the aggregator's
        view (the correction is something the aggregator learns).
    joint_std : dict
        The same for σ_joint.
    normal_joint_std : float
        For comparison, the smallest σ_joint / τ_s over all sites in a normal run (no
        dropout; :func:`coalition_view` of the design, no colluders).
    """

    dropped: tuple[int, ...]
    remaining_weights: NDArray[np.float64]
    required_std: float
    std: dict[str, float]
    release_std: dict[str, float]
    joint_std: dict[str, float]
    normal_joint_std: float

    def table(self) -> pd.DataFrame:
        """The remedies side by side.

        Returns
        -------
        pandas.DataFrame
            One row per remedy: ``aggregate_std``, ``joint_ratio`` (the worst remaining
            site's σ_joint / τ_s), ``meets_requirement``, ``verdict`` and ``noise_ratio``.
        """
        columns: dict[str, Mapping[str, object]] = {
            "aggregate_std": self.std,
            "joint_ratio": self.joint_std,
            "meets_requirement": self.meets,  # properties: each computed once here
            "verdict": self.verdict,
            "noise_ratio": self.noise_ratio,
        }
        remedies = list(self.std)
        return pd.DataFrame(
            {"remedy": remedies, **{k: [v[r] for r in remedies] for k, v in columns.items()}}
        )

    @property
    def meets(self) -> dict[str, bool]:
        """Per remedy: the aggregate std reaches ``required_std`` (to rounding, STD_TOL)."""
        return {r: s >= self.required_std * (1 - STD_TOL) for r, s in self.std.items()}

    @property
    def noise_ratio(self) -> dict[str, float]:
        """Per remedy: aggregate std / ``required_std`` (below 1: too little noise)."""
        need = self.required_std
        return {
            r: s / need if need > 0 else (1.0 if s == 0 else math.inf) for r, s in self.std.items()
        }

    @property
    def verdict(self) -> dict[str, str]:
        """Per remedy, the whole truth about its aggregate noise.

        ``"too little noise"`` (below ``required_std``: the pooled estimate is not as private
        as the remaining sites need), ``"excess noise"`` (private, but noisier than the
        ``"cape"`` remedy, which is private too: accuracy lost for nothing — no remedy, whose
        missing E's no longer cancel) or ``"meets"``.
        """
        least = self.std["cape"] * (1 + STD_TOL)
        return {
            r: "too little noise" if not ok else "excess noise" if self.std[r] > least else "meets"
            for r, ok in self.meets.items()
        }


def _remaining(
    design: CapeDesign, dropped: Sequence[int]
) -> tuple[tuple[int, ...], NDArray[np.intp], float]:
    """Validated dropped sites, the remaining ones and their total weight W > 0."""
    dropped = check_sites(dropped, design.n_sites, "dropped")
    remaining = np.array([s for s in range(design.n_sites) if s not in dropped], dtype=np.intp)
    total = float(design.weights[remaining].sum()) if remaining.size else 0.0
    if total <= 0:
        raise ValueError(
            f"dropped must leave at least one site with positive weight; got {list(dropped)}"
        )
    return dropped, remaining, total


def dropout_analysis(design: CapeDesign, dropped: Sequence[int]) -> DropoutAnalysis:
    """Extra noise from dropped sites, and what each remedy restores.

    Raises
    ------
    ValueError
        If no site with positive weight remains.
    """
    design = check_design(design)
    dropped, remaining, total = _remaining(design, dropped)
    mu = design.weights
    mu_d = np.zeros(design.n_sites)
    mu_d[list(dropped)] = mu[list(dropped)]
    cov_e = design.e_covariance
    # Var(Σ_D μ_d E_d) as the squared norm of μ_Dᵀ M (E = M z): never negative, and exact
    # where μ_Dᵀ Σ_E μ_D cancels catastrophically (all but a tiny site dropped).
    var_missing_e = float(np.sum((mu_d @ design.e_mixing) ** 2))
    var_g_remaining = float(np.sum(mu[remaining] ** 2 * design.var_g[remaining]))
    var_h = float(np.sum(mu_d**2 * design.var_g))
    std = {
        "none": math.sqrt(var_g_remaining + var_missing_e) / total,
        "naive": math.sqrt(var_g_remaining) / total,
        "cape": math.sqrt(var_g_remaining + var_h) / total,
    }
    # What the aggregator learns about the remaining E's: nothing extra without a
    # correction; Σ_D μ_d E_d exactly (naive); Σ_D μ_d (E_d + H_d) (cape).
    release, joint = {}, {}
    row = mu_d[None, :]
    for remedy, noise in (("none", None), ("naive", 0.0), ("cape", var_h)):
        cond = cov_e if noise is None else condition(cov_e, row, np.array([[noise]]))
        cov = cond[np.ix_(remaining, remaining)] + np.diag(design.var_g[remaining])
        tau = design.tau_site[remaining]
        release[remedy] = float(np.min(_ratio(np.sqrt(np.diag(cov)), tau)))
        joint[remedy] = float(np.min(_ratio(_joint_std(cov), tau)))
    weights = np.zeros(design.n_sites)
    weights[remaining] = mu[remaining] / total
    normal = coalition_view(design)
    return DropoutAnalysis(
        dropped=dropped,
        remaining_weights=weights,
        required_std=float(np.max(mu[remaining] * design.tau_site[remaining])) / total,
        std=std,
        release_std=release,
        joint_std=joint,
        normal_joint_std=float(np.min(_ratio(normal.joint_std, normal.required_std))),
    )


def dropout_run(
    values: NDArray[np.float64],
    design: CapeDesign,
    dropped: Sequence[int],
    *,
    remedy: str = "cape",
    symmetric: bool = False,
    rng: RngLike = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Run CAPE message by message with dropped sites and a remedy.

    The noise generator sends every E_s; the dropped sites release nothing; the aggregator
    forms Σ_R μ_t (â_t − F_t), adds the noise generator's correction (``"naive"``:
    Σ_D μ_d E_d; ``"cape"``: Σ_D μ_d (E_d + H_d) with fresh H_d ~ N(0, τ_gd²)) and divides
    by W = Σ_R μ_t.

    Returns
    -------
    estimate : ndarray
        The renormalised estimate.
    correction : ndarray
        What the noise generator sent the aggregator (zeros for ``"none"``).
    """
    remedy = check_choice(remedy, "remedy", REMEDIES)
    symmetric = check_bool(symmetric, "symmetric")
    dropped, keep, total = _remaining(check_design(design), dropped)
    values = check_values(values, design.n_sites, symmetric)  # finite, one per site
    protocol_rng, h_rng = check_rng(rng).spawn(2)
    e, f, _, released = site_releases(values, design, symmetric=symmetric, rng=protocol_rng)
    mu = design.weights
    partial = np.tensordot(mu[keep], released[keep] - f[keep], axes=1)
    correction = dropout_correction(
        e, design, dropped, remedy=remedy, symmetric=symmetric, rng=h_rng
    )
    return (partial + correction) / total, correction


def dropout_correction(
    e: NDArray[np.float64],
    design: CapeDesign,
    dropped: Sequence[int],
    *,
    remedy: str = "cape",
    symmetric: bool = False,
    rng: RngLike = None,
) -> NDArray[np.float64]:
    """The noise generator's correction for dropped sites: what it sends the aggregator.

    ``"naive"``: Σ_D μ_d E_d (the missing E's cancel again); ``"cape"``: Σ_D μ_d (E_d + H_d)
    with fresh H_d ~ N(0, τ_gd²) standing in for the dropped sites' G's, so the renormalised
    aggregate carries the pooled noise again (:func:`dropout_analysis`); ``"none"``: zeros.

    Parameters
    ----------
    e : ndarray, shape (S, ...)
        Every site's E_s, as the noise generator drew them.
    design : CapeDesign
    dropped : sequence of int
        0-based indices of the sites that released nothing.
    remedy : {"none", "naive", "cape"}
    symmetric : bool
        Whether the values are symmetric matrices (H_d symmetric too).
    rng : int, Generator or None
        The stream of the H_d (``"cape"`` only).

    Returns
    -------
    ndarray
        The correction, of one site's value shape.
    """
    remedy = check_choice(remedy, "remedy", REMEDIES)
    symmetric = check_bool(symmetric, "symmetric")
    dropped, _, _ = _remaining(check_design(design), dropped)
    e = np.asarray(e, dtype=np.float64)
    if e.shape[0] != design.n_sites:
        raise ValueError(f"e must hold one E_s per site ({design.n_sites}); got shape {e.shape}")
    mu = design.weights
    correction = np.zeros(e.shape[1:])
    if remedy != "none":
        idx = list(dropped)
        correction = np.tensordot(mu[idx], e[idx], axes=1)
        if remedy == "cape":
            h = standard_noise(
                e.shape[1:], symmetric=symmetric, size=(len(idx),), rng=check_rng(rng)
            )
            h *= np.sqrt(design.var_g[idx]).reshape(-1, *([1] * (h.ndim - 1)))
            correction = correction + np.tensordot(mu[idx], h, axes=1)
    return correction


# --- the remedy against a lying aggregator ---------------------------------------------------
# The remedy above is private when the aggregator holds exactly the remaining sites' releases
# and one correction c. An aggregator may hold more: a dropped site that was only slow still
# delivers its release late (or the aggregator claimed a drop it did not see), and a noise
# generator that answers every remedy request draws fresh H's each time, so k answers average
# H away. docs/privacy.md, "A remedy safe against a lying aggregator", derives the views below.

REMEDY_VIEWS = ("sealed", "late", "late, repeated")


def remedy_view_std(
    design: CapeDesign,
    dropped: Sequence[int],
    *,
    late: bool = False,
    answers: float = 1,
) -> NDArray[np.float64]:
    """σ_joint of every site in what the aggregator holds after a dropout remedy.

    The aggregator holds a_t + E_t + G_t (after subtracting F_t) for every remaining site,
    with ``late`` also for every dropped site (its release arrived after the drop was
    declared, or the drop was a lie), and ``answers`` corrections
    c_j = Σ_D μ_d (E_d + H_d^(j)) with independent H^(j) (``math.inf``: as many as it likes,
    which pins down Σ_D μ_d E_d exactly). A site whose release the aggregator does not hold
    gets ∞: nothing it holds depends on that site's data (c carries no data).

    Parameters
    ----------
    design : CapeDesign
    dropped : sequence of int
        0-based sites declared dropped; at least one site with positive weight must remain.
    late : bool
        Whether the aggregator also holds the dropped sites' releases.
    answers : int or math.inf
        How many independent corrections it holds, ≥ 1.

    Returns
    -------
    ndarray, shape (S,)
        1 / sqrt([C⁻¹]_ss) of the noise covariance C on the held releases once every
        correction is conditioned on (module docstring); ∞ for sites not held.

    Raises
    ------
    ValueError
        If ``answers`` is below 1 or no site with positive weight remains.

    Examples
    --------
    >>> import dpcore, numpy as np
    >>> made = dpcore.joint_safe_design([0.2, 0.1, 0.05], weights=[0.2, 0.3, 0.5])
    >>> sealed = remedy_view_std(made, [2])  # the aggregator cannot open site 3's release
    >>> bool(np.all(sealed[:2] >= made.tau_site[:2] * (1 - 1e-9))), bool(np.isinf(sealed[2]))
    (True, True)
    >>> late = remedy_view_std(made, [2], late=True)  # the open remedy with a late release
    >>> bool(late[2] < made.tau_site[2])
    True
    """
    design = check_design(design)
    dropped, remaining, _ = _remaining(design, dropped)
    if not dropped:
        raise ValueError("dropped must name at least one site (a remedy follows a dropout); got []")
    late = check_bool(late, "late")
    if isinstance(answers, bool) or not isinstance(answers, (int, float, np.integer, np.floating)):
        raise TypeError(f"answers must be a number; got {type(answers).__name__}")
    if not answers >= 1:
        raise ValueError(f"answers must be in [1, ∞]; got {answers!r}")
    mu = design.weights
    row = np.zeros((1, design.n_sites))
    row[0, list(dropped)] = mu[list(dropped)]
    # k corrections with independent H of variance v each tell exactly what their mean tells:
    # one observation of Σ_D μ_d E_d with noise variance v / k (k = ∞: none).
    var_h = float(np.sum(mu[list(dropped)] ** 2 * design.var_g[list(dropped)]))
    noise = np.array([[0.0 if math.isinf(answers) else var_h / float(answers)]])
    held = np.arange(design.n_sites) if late else remaining
    cond = condition(design.e_covariance, row, noise)
    cov = cond[np.ix_(held, held)] + np.diag(design.var_g[held])
    out = np.full(design.n_sites, math.inf)
    out[held] = _joint_std(cov)
    return out


@dataclass(frozen=True, eq=False)
class RemedyWorstCase:
    """Each site's ε in the three things an aggregator may hold after a dropout remedy.

    Attributes
    ----------
    dropped : tuple of int
        0-based sites declared dropped.
    answers : float
        How many corrections the ``"late, repeated"`` view holds (∞: any number).
    promised : ndarray, shape (S,)
        ε_s.
    epsilon : dict
        Per view (:data:`REMEDY_VIEWS`), ε of every site at its δ_s (0 where the aggregator
        holds nothing of the site): ``"sealed"`` — the remaining releases and one correction,
        all that the sealed remedy lets any aggregator hold (:mod:`federated` seals each
        release to a key the noise generator hands over only for the sites not declared
        dropped, and answers once per run); ``"late"`` — the open remedy (releases in the
        clear), plus the dropped sites' late releases; ``"late, repeated"`` — that and
        ``answers`` corrections.
    std_ratio : dict
        Per view, σ_joint / τ_s of every site (∞ where nothing is held).
    """

    dropped: tuple[int, ...]
    answers: float
    promised: NDArray[np.float64]
    epsilon: dict[str, NDArray[np.float64]]
    std_ratio: dict[str, NDArray[np.float64]]

    @property
    def meets(self) -> dict[str, bool]:
        """Per view: every site's ε ≤ ε_s (to EPS_TOL)."""
        return {
            v: bool(np.all(e <= self.promised * (1 + EPS_TOL))) for v, e in self.epsilon.items()
        }

    def table(self) -> pd.DataFrame:
        """One row per view: the worst site (1-based), its ε, ε_s and whether all meet."""
        rows = []
        for view, eps in self.epsilon.items():
            worst = int(np.argmax(eps / self.promised))
            rows.append(
                {
                    "view": view,
                    "worst site": worst + 1,
                    "epsilon": float(eps[worst]),
                    "promised": float(self.promised[worst]),
                    "std_ratio": float(self.std_ratio[view][worst]),
                    "meets": self.meets[view],
                }
            )
        return pd.DataFrame(rows)


def remedy_worst_case(
    design: CapeDesign,
    dropped: Sequence[int],
    *,
    sensitivity: ArrayLike,
    epsilon: ArrayLike,
    delta: ArrayLike,
    answers: float = math.inf,
) -> RemedyWorstCase:
    """ε of every site when the aggregator holds more than the remedy meant it to.

    Parameters
    ----------
    design : CapeDesign
    dropped : sequence of int
        0-based sites declared dropped (truly, or by a lying aggregator).
    sensitivity, epsilon, delta : float or array_like, shape (S,)
        Δ_s, the promised ε_s and δ_s of every site.
    answers : int or math.inf
        Corrections held in the ``"late, repeated"`` view (default ∞: a noise generator
        that answers every request).

    Returns
    -------
    RemedyWorstCase

    Examples
    --------
    >>> import dpcore, numpy as np
    >>> n = np.array([250, 350, 450]); tau = dpcore.site_noise_std(n, epsilon=1.0,
    ...     delta=1e-5, calibration="analytic")
    >>> made = dpcore.joint_safe_design(tau, weights=n / n.sum())
    >>> worst = remedy_worst_case(made, [1], sensitivity=1 / n, epsilon=1.0, delta=1e-5)
    >>> worst.meets
    {'sealed': True, 'late': False, 'late, repeated': False}
    """
    design = check_design(design)
    s = design.n_sites
    sens = check_per_site(sensitivity, s, "sensitivity")
    eps_s = check_per_site(epsilon, s, "epsilon")
    dlt = check_per_site(delta, s, "delta", high=1.0)
    cases = {
        "sealed": remedy_view_std(design, dropped),
        "late": remedy_view_std(design, dropped, late=True),
        "late, repeated": remedy_view_std(design, dropped, late=True, answers=answers),
    }
    eps, ratio = {}, {}
    for view, std in cases.items():
        held = np.isfinite(std)
        e = np.zeros(s)
        e[held] = effective_epsilons(std[held], sens[held], delta=dlt[held])
        eps[view] = e
        ratio[view] = np.where(held, std / design.tau_site, math.inf)
    return RemedyWorstCase(
        dropped=check_sites(dropped, s, "dropped"),
        answers=float(answers),
        promised=eps_s,
        epsilon=eps,
        std_ratio=ratio,
    )
