"""The CAPE correlated-noise protocol (Imtiaz & Sarwate, Sec. 3, Alg. 5 in Appendix A).

Parties: S sites, a trusted noise generator and an untrusted aggregator. Site s holds a
value a_s (scalar, vector, matrix or tensor) and must release it with (ε_s, δ_s)-DP, which
needs Gaussian noise of std τ_s. It releases

    â_s = a_s + e_s + f_s + g_s,

where the noise generator sends e_s with Σ_s μ_s e_s = 0, the aggregator sends f_s and the
site draws g_s itself. The aggregator computes Σ_s μ_s (â_s − f_s) = Σ_s μ_s a_s + Σ_s μ_s g_s:
the e's cancel, the f's are subtracted, and only the g's remain.

Design (our general solution, :func:`cape_design`)
---------------------------------------------------
Write u_s = μ_s τ_s. The weighted estimate Σ μ_s a_s changes by at most μ_s Δ_s when one
sample of site s changes, so the pooled (centralised) release needs aggregate noise std
τ_pool = max_s u_s; with μ_s = N_s/N and common (ε, δ) this is the paper's τ_c.

In the scaled variables y_s = μ_s e_s the noise generator draws independent
z_s ~ N(0, β_s²) and conditions them on summing to zero:

    y = z − (β² / Σβ²) · Σ_t z_t,      Var(y_s) = β_s² (1 − β_s² / Σβ²),

an exact zero sum (Σ_s y_s = 0 to rounding) with a rank S−1 covariance. With β_s = λ u_s,
U = Σ u_s² and λ² = (U − u_max²)/(U − Σ u_s⁴/U), each site keeps locally
μ_s² τ_gs² = u_s² − Var(y_s) > 0 and τ_es² = τ_fs² = τ_s² − τ_gs², so every site's release
has noise variance exactly τ_s² in the view of the aggregator (e + g) and of the noise
generator (f + g), and Σ μ_s² τ_gs² = U − λ²(U − Σu⁴/U) = u_max² = τ_pool². λ ≤ 1 because
Σ u⁴ ≤ u_max² U. With equal τ_s and μ_s = 1/S, λ = 1 and this is exactly eq. (2):
τ_e² = τ_f² = (1 − 1/S) τ_s², τ_g² = τ_s²/S.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpcore._validation import (
    MAX_MAGNITUDE,
    RngLike,
    as_float_array,
    check_bool,
    check_choice,
    check_design_sites,
    check_int,
    check_positive_array,
    check_real,
    check_rng,
    check_weights,
)
from dpcore.mechanisms.noise import expand_symmetric, n_free_entries

PARTIES = ("noise generator", "aggregator")
MAX_TOTAL = 10**15  # N in the gain curves: N²/S² stays a float, far beyond any data set
MAX_SITES = 10_000  # S of a drawn layout (one array entry per site), as in split_sizes


def _readonly(arr: ArrayLike, name: str = "value") -> NDArray[np.float64]:
    out = np.array(as_float_array(arr, name))
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class CapeDesign:
    """Per-site noise variances of a CAPE run and how the noise generator correlates e.

    Attributes
    ----------
    tau_site : ndarray, shape (S,)
        τ_s, the std each site's release needs on its own.
    weights : ndarray, shape (S,)
        μ_s ≥ 0, Σ μ_s = 1: the aggregator's combination weights.
    var_e, var_f, var_g : ndarray, shape (S,)
        τ_es², τ_fs², τ_gs². May be negative for an infeasible closed-form design
        (:func:`paper_design`); such a design cannot be run.
    e_mixing : ndarray, shape (S, S)
        M with e = M z, z ~ N(0, I): row s gives e_s from S independent standard normals.
        Its weighted column sums Σ_s μ_s M_st are zero, which is the zero-sum constraint.
    tau_pool : float
        Aggregate noise std a pooled (centralised) release would need: max_s μ_s τ_s.
    method : str
        ``"cape"`` (our general design) or ``"paper"`` (Sec. 3.1 closed form).
    """

    tau_site: NDArray[np.float64]
    weights: NDArray[np.float64]
    var_e: NDArray[np.float64]
    var_f: NDArray[np.float64]
    var_g: NDArray[np.float64]
    e_mixing: NDArray[np.float64]
    tau_pool: float
    method: str = "cape"
    feasible: bool = field(init=False)

    def __post_init__(self) -> None:
        for name in ("tau_site", "weights", "var_e", "var_f", "var_g", "e_mixing"):
            object.__setattr__(self, name, _readonly(getattr(self, name), name))
        s = self.tau_site.size
        if any(getattr(self, n).shape != (s,) for n in ("weights", "var_e", "var_f", "var_g")):
            raise ValueError("tau_site, weights, var_e, var_f and var_g must all have shape (S,)")
        if self.e_mixing.shape != (s, s):
            raise ValueError(f"e_mixing must have shape ({s}, {s}); got {self.e_mixing.shape}")
        variances = np.concatenate([self.var_e, self.var_f, self.var_g])
        feasible = bool(np.all(np.isfinite(variances)) and np.all(variances >= 0))
        object.__setattr__(self, "feasible", feasible)

    @property
    def n_sites(self) -> int:
        """S."""
        return int(self.tau_site.size)

    def _std(self, var: NDArray[np.float64]) -> NDArray[np.float64]:
        if not self.feasible:
            raise ValueError(
                f"this {self.method} design is infeasible (a variance is negative or not "
                f"finite: var_e={self.var_e}, var_g={self.var_g}); it cannot be used"
            )
        return np.sqrt(var)

    @property
    def tau_e(self) -> NDArray[np.float64]:
        """τ_es: std of the noise generator's e_s."""
        return self._std(self.var_e)

    @property
    def tau_f(self) -> NDArray[np.float64]:
        """τ_fs: std of the aggregator's f_s."""
        return self._std(self.var_f)

    @property
    def tau_g(self) -> NDArray[np.float64]:
        """τ_gs: std of site s's own g_s."""
        return self._std(self.var_g)

    @property
    def tau_agg(self) -> float:
        """Std of the aggregator's noise Σ μ_s g_s: sqrt(Σ μ_s² τ_gs²)."""
        return float(np.sqrt(np.sum(self.weights**2 * self._std(self.var_g) ** 2)))

    @property
    def tau_conv(self) -> float:
        """Aggregate noise std of conventional averaging: sqrt(Σ μ_s² τ_s²)."""
        return conventional_std(self.tau_site, self.weights)

    @property
    def gain_same_weights(self) -> float:
        """Conventional averaging with the same weights μ_s over this design: τ_conv²/τ_agg².

        Exactly S for μ_s = N_s/N and a common (ε, δ) with :func:`cape_design`.
        """
        return self.tau_conv**2 / self.tau_agg**2

    @property
    def gain_best_conventional(self) -> float:
        """The least-noise conventional estimator over this design: 1/(Σ_s τ_s⁻²) / τ_agg².

        Conventional averaging with inverse-variance weights ∝ 1/τ_s² (∝ N_s² for a common
        (ε, δ)) has the smallest aggregate variance of any weighting; against it CAPE gains
        N²/Σ N_s² at a common (ε, δ) — but that estimator weights the sites differently
        from μ, so it estimates Σ μ_s a_s only when the sites' values agree.
        """
        return best_conventional_std(self.tau_site) ** 2 / self.tau_agg**2

    @property
    def gain_equal_weights(self) -> float:
        """Conventional averaging with equal weights 1/S over this design: (Σ τ_s²/S²)/τ_agg².

        The comparison of Proposition 1 made on these sites' own τ_s and weights. The paper's
        formula G(n) = (N²/S²) Σ 1/N_s² (:func:`cape_gain`) equals it only when every site
        has the same (ε, δ) (τ_s ∝ 1/N_s) and μ_s = N_s/N; with other ε's or weights it can
        be far off (issue #22: 31.8 where this gain is 0.32, CAPE being the worse).
        """
        return conventional_std(self.tau_site, np.full(self.n_sites, 1.0 / self.n_sites)) ** 2 / (
            self.tau_agg**2
        )

    @property
    def e_covariance(self) -> NDArray[np.float64]:
        """Covariance of (e_1, …, e_S) per entry: M Mᵀ."""
        return self.e_mixing @ self.e_mixing.T


def check_design(design: CapeDesign) -> CapeDesign:
    """``design`` after checking it is a :class:`CapeDesign` whose τ_g is feasible.

    Raises TypeError for anything else, ValueError for an infeasible design.
    """
    if not isinstance(design, CapeDesign):
        raise TypeError(f"design must be a CapeDesign; got {type(design).__name__}")
    design.tau_g  # noqa: B018 - raises ValueError if the design is infeasible
    return design


def check_tau_site(tau_site: ArrayLike, *, design: bool = True) -> NDArray[np.float64]:
    """τ_s ≥ 0 per site, S ≥ 2; at most MAX_DESIGN_SITES when a design (S×S) is built."""
    tau = check_positive_array(tau_site, "tau_site", allow_zero=True)
    if design:
        check_design_sites(tau.size, "tau_site")
    elif tau.size < 2:
        raise ValueError(f"tau_site must have one entry per site, S >= 2; got S = {tau.size}")
    if tau.max() > MAX_MAGNITUDE:
        raise ValueError(
            f"every entry of tau_site must be in [0, {MAX_MAGNITUDE:g}]; got {tau.max()!r}"
        )
    return tau


def cape_design(tau_site: ArrayLike, *, weights: ArrayLike | None = None) -> CapeDesign:
    """Feasible CAPE noise design for any S ≥ 2, τ_s and weights μ_s.

    Parameters
    ----------
    tau_site : array_like, shape (S,)
        τ_s ≥ 0: the noise std site s's release needs on its own (from its N_s, ε_s, δ_s;
        see :func:`dpcore.site_noise_std`). S must be ≥ 2.
    weights : array_like, shape (S,), optional
        μ_s ≥ 0 with Σ μ_s = 1; default 1/S. μ_s = N_s/N reproduces the pooled estimate.

    Returns
    -------
    CapeDesign
        Satisfies, for every site, τ_es² + τ_gs² = τ_fs² + τ_gs² = τ_s², Σ μ_s e_s = 0
        exactly, and Σ μ_s² τ_gs² = max_s μ_s² τ_s² (the pooled requirement).

    Notes
    -----
    Construction in the module docstring: the noise generator conditions independent
    Gaussians z_s ~ N(0, λ²μ_s²τ_s²) on a zero sum, y = z − (β²/Σβ²)Σz, and sends
    e_s = y_s/μ_s. For equal τ_s and μ_s = 1/S this is eq. (2) of the paper. A site with
    μ_s = 0 does not enter the estimate: it adds only its own g_s with τ_gs = τ_s.

    References
    ----------
    Imtiaz & Sarwate, Sec. 3, eq. (2) and Sec. 3.1 (feasibility problem); H. Imtiaz,
    J. Mohammadi, A. D. Sarwate, "Distributed differentially private computation of
    functions with correlated noise", arXiv:1904.10059.

    Examples
    --------
    >>> d = cape_design([1.0, 1.0, 1.0, 1.0])
    >>> d.var_e.round(3).tolist(), d.var_g.round(3).tolist()
    ([0.75, 0.75, 0.75, 0.75], [0.25, 0.25, 0.25, 0.25])
    """
    tau = check_tau_site(tau_site)
    mu = check_weights(weights, tau.size)
    u = mu * tau
    u_max = float(u.max())
    var_e = np.zeros_like(tau)
    mixing = np.zeros((tau.size, tau.size))
    r = u / u_max if u_max > 0 else u  # scale-free: avoids under/overflow for tiny or huge τ
    big_u = float(np.sum(r**2))
    spread = big_u - float(np.sum(r**4)) / big_u if big_u > 0 else 0.0
    if big_u > 1.0 and spread > 0:  # else one site carries all weight: no e is needed
        lam2 = (big_u - 1.0) / spread
        beta = math.sqrt(lam2) * r  # β_s / u_max
        sq = beta**2
        # 1 − p_s = Σ_{t≠s} β_t² / Σβ², summed directly: 1 − p_s by subtraction cancels
        # catastrophically for a dominant site (p_s ≈ 1).
        one_minus_p = ((1.0 - np.eye(tau.size)) @ sq) / sq.sum()
        # In e-space (e_s = y_s/μ_s) without dividing by μ_s, which may underflow:
        # Var e_s = λ²τ_s²(1 − p_s); e = M z with M_ss = λτ_s(1 − p_s), M_st = −c_s β_t,
        # c_s = p_s u_max / μ_s = λ² μ_s τ_s² / (Σβ² u_max).
        var_e = lam2 * tau**2 * one_minus_p
        c = lam2 * mu * tau**2 / (sq.sum() * u_max)
        mixing = -np.outer(c, beta)
        mixing[np.diag_indices(tau.size)] = math.sqrt(lam2) * tau * one_minus_p
    zero = mu == 0  # sites outside the estimate get no e
    var_e[zero] = 0.0
    mixing[zero] = 0.0
    var_e = np.minimum(var_e, tau**2)  # rounding guard: var_e ≤ τ_s² holds exactly in theory
    var_g = tau**2 - var_e
    return CapeDesign(
        tau_site=tau,
        weights=mu,
        var_e=var_e,
        var_f=var_e.copy(),
        var_g=var_g,
        e_mixing=mixing,
        tau_pool=u_max,
    )


def paper_design(tau_site: ArrayLike, *, weights: ArrayLike, tau_pool: float) -> CapeDesign:
    """The paper's closed-form solution of the unequal-privacy feasibility problem.

    Parameters
    ----------
    tau_site : array_like, shape (S,)
        τ_s ≥ 0 per site, S ≥ 2.
    weights : array_like, shape (S,)
        μ_s ≥ 0 with Σ μ_s = 1.
    tau_pool : float
        τ_c, the aggregate noise std to reach, must be in [0, ∞).

    Returns
    -------
    CapeDesign
        With ``method="paper"`` and ``feasible`` telling whether every variance is ≥ 0.
        An infeasible design refuses to report standard deviations or to be run.

    Notes
    -----
    Sec. 3.1 / Appendix A.2: with R = τ_c² − Σ_{s<S} μ_s² τ_s²,
    τ_eS² = τ_fS² = τ_S²/2 − R/(2μ_S²), τ_gS² = τ_S²/2 + R/(2μ_S²) and, for s < S,
    τ_es² = τ_fs² = (μ_S² τ_S²/2 − R/2)/(μ_s²(S−1)), τ_gs² = τ_s² − τ_es². The e_s for s < S
    are independent and e_S = −Σ_{s<S} μ_s e_s/μ_S.

    The closed form is infeasible in common cases: with S equal sites and μ_s = 1/S,
    τ_c = τ_s/S gives τ_gS² = τ_s²(3 − S)/2, negative for every S > 3. See
    ``docs/cape-design.md``.
    """
    tau = check_tau_site(tau_site)
    mu = check_weights(weights, tau.size)
    tau_c = check_real(tau_pool, "tau_pool", low=0.0, high=MAX_MAGNITUDE)
    s = tau.size
    with np.errstate(divide="ignore", invalid="ignore"):
        rem = tau_c**2 - np.sum(mu[:-1] ** 2 * tau[:-1] ** 2)
        var_e = np.empty(s)
        var_e[-1] = tau[-1] ** 2 / 2 - rem / (2 * mu[-1] ** 2)
        var_e[:-1] = (mu[-1] ** 2 * tau[-1] ** 2 / 2 - rem / 2) / (mu[:-1] ** 2 * (s - 1))
        var_g = tau**2 - var_e
        var_g[-1] = tau[-1] ** 2 / 2 + rem / (2 * mu[-1] ** 2)
        # The closed form hits 0 exactly at its boundary (e.g. S = 3 equal sites); snap
        # rounding residue there to 0 so that boundary cases are not declared infeasible.
        tiny = 1e-12 * float(np.max(tau)) ** 2
        var_e[np.abs(var_e) < tiny] = 0.0
        var_g[np.abs(var_g) < tiny] = 0.0
        mixing = np.zeros((s, s))
        std_e = np.sqrt(np.clip(var_e[:-1], 0, None))
        mixing[np.arange(s - 1), np.arange(s - 1)] = std_e
        mixing[-1, :-1] = -mu[:-1] * std_e / mu[-1]
    return CapeDesign(
        tau_site=tau,
        weights=mu,
        var_e=var_e,
        var_f=var_e.copy(),
        var_g=var_g,
        e_mixing=mixing,
        tau_pool=tau_c,
        method="paper",
    )


# --- drawing noise for values of any shape --------------------------------------------------


def check_values(values: ArrayLike, n_sites: int | None, symmetric: bool) -> NDArray[np.float64]:
    """Per-site values (S, ...): finite, one entry per site, square/cubic if ``symmetric``."""
    arr = as_float_array(values, "values")
    if arr.ndim < 1:
        raise ValueError("values must have a leading site axis, shape (S, ...)")
    if n_sites is not None and arr.shape[0] != n_sites:
        raise ValueError(f"values must have one entry per site ({n_sites}); got {arr.shape[0]}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("values must be finite; got NaN or inf")
    if symmetric and (arr.ndim not in (3, 4) or len(set(arr.shape[1:])) != 1):
        raise ValueError(
            "with symmetric=True, values must be one square matrix or cubic 3-tensor per "
            f"site, shape (S, D, D) or (S, D, D, D); got shape {arr.shape}"
        )
    return arr


def _check_symmetric_shape(shape: tuple[int, ...], symmetric: bool) -> None:
    if symmetric and (len(shape) not in (2, 3) or len(set(shape)) != 1):
        raise ValueError(
            f"symmetric noise needs a square matrix or cubic 3-tensor value; got shape {shape}"
        )


def standard_noise(
    shape: tuple[int, ...],
    *,
    symmetric: bool,
    size: tuple[int, ...] = (),
    mixing: NDArray[np.float64] | None = None,
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    """Standard-normal noise of ``size + shape``, optionally symmetric and mixed.

    Parameters
    ----------
    shape : tuple of int
        Shape of one value.
    symmetric : bool
        Draw one value per multiset of indices and mirror it (``shape`` must be (D, D) or
        (D, D, D)); otherwise i.i.d. entries.
    size : tuple of int
        Leading batch shape.
    mixing : ndarray, shape (S, S), optional
        If given, ``size`` must be (S,) and the S independent draws z are replaced by M z
        (per entry): this is how correlated e_s are made.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray, shape size + shape
    """
    _check_symmetric_shape(shape, symmetric)
    n = n_free_entries(shape[0], len(shape)) if symmetric else math.prod(shape)
    free = rng.standard_normal((*size, n))
    if mixing is not None:
        free = mixing @ free
    if symmetric:
        return expand_symmetric(free, shape[0], len(shape))
    noise: NDArray[np.float64] = free.reshape((*size, *shape))
    return noise


def add_symmetric_noise(
    value: NDArray[np.float64], std: float, *, rng: np.random.Generator
) -> NDArray[np.float64]:
    """Value + symmetric N(0, std²) noise (one draw per multiset of indices)."""
    return value + std * standard_noise(value.shape, symmetric=True, rng=rng)


def pooled_plus_noise(
    values: NDArray[np.float64],
    weights: NDArray[np.float64],
    std: float,
    *,
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    """Σ μ_s a_s plus symmetric noise of the aggregate's std, drawn directly.

    The fast path for sweeps: equal in distribution to running the protocol, because the
    E_s cancel exactly, the F_s are subtracted, and Σ μ_s G_s is Gaussian with the design's
    aggregate variance (tested in ``tests/core/factorization/test_pca.py``).
    """
    return add_symmetric_noise(np.tensordot(weights, values, axes=1), std, rng=rng)


def best_conventional_std(tau_site: ArrayLike) -> float:
    """Aggregate noise std of conventional averaging with inverse-variance weights ∝ 1/τ_s².

    1/sqrt(Σ_s 1/τ_s²), the smallest over all weightings (0 if some τ_s = 0).

    Raises
    ------
    ValueError
        If a τ_s is negative or not finite, or there are fewer than two sites.
    """
    tau = check_tau_site(tau_site, design=False)
    if np.any(tau == 0):
        return 0.0
    return float(1.0 / np.sqrt(np.sum(1.0 / tau**2)))


def conventional_std(tau_site: ArrayLike, weights: ArrayLike) -> float:
    """Aggregate noise std of conventional averaging: sqrt(Σ μ_s² τ_s²)."""
    mu, tau = np.asarray(weights, dtype=float), np.asarray(tau_site, dtype=float)
    return float(np.sqrt(np.sum(mu**2 * tau**2)))


def _scaled(std: NDArray[np.float64], noise: NDArray[np.float64]) -> NDArray[np.float64]:
    return noise * std.reshape(-1, *([1] * (noise.ndim - 1)))


# --- the protocol, one step per party ----------------------------------------------------------


def noise_generator_step(
    design: CapeDesign, shape: tuple[int, ...], *, symmetric: bool, rng: RngLike
) -> NDArray[np.float64]:
    """Noise generator: draw E_s for every site with Σ_s μ_s E_s = 0 (Alg. 5 step 2).

    ``rng`` (here and in each step): the party's stream, a Generator or a seed.
    """
    rng = check_rng(rng)
    design.tau_e  # noqa: B018 - raises if the design is infeasible
    return standard_noise(
        shape, symmetric=symmetric, size=(design.n_sites,), mixing=design.e_mixing, rng=rng
    )


def aggregator_step(
    design: CapeDesign, shape: tuple[int, ...], *, symmetric: bool, rng: RngLike
) -> NDArray[np.float64]:
    """Aggregator: draw F_s ~ N(0, τ_fs²) for every site (Alg. 5 step 3)."""
    rng = check_rng(rng)
    z = standard_noise(shape, symmetric=symmetric, size=(design.n_sites,), rng=rng)
    return _scaled(design.tau_f, z)


def site_step(
    value: NDArray[np.float64],
    e: NDArray[np.float64],
    f: NDArray[np.float64],
    tau_g: float,
    *,
    symmetric: bool,
    rng: RngLike,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Site s: draw its own G_s ~ N(0, τ_gs²) and release â_s = a_s + E_s + F_s + G_s.

    Returns
    -------
    g, released : ndarray
    """
    g = tau_g * standard_noise(value.shape, symmetric=symmetric, rng=check_rng(rng))
    return g, value + e + f + g


def aggregate_step(
    released: NDArray[np.float64], f: NDArray[np.float64], weights: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Aggregator: Σ_s μ_s (â_s − F_s) (Alg. 5 step 10, Alg. 1 step 8)."""
    return np.tensordot(weights, released - f, axes=1)


PARTY_STREAMS = ("noise generator", "aggregator", "site")  # the order site_releases spawns


def party_rng(seed: int, party: str, site: int = 0) -> np.random.Generator:
    """One party's noise stream of ``cape_average(..., rng=seed)``, made by that party alone.

    :func:`site_releases` spawns a fresh ``default_rng(seed)`` into the streams of the noise
    generator, the aggregator and sites 1, …, S, in that order; child k is
    ``default_rng(SeedSequence(seed, spawn_key=(k,)))``. Each party can therefore make its
    own stream from (seed, party, site) without the others', and a run whose parties are
    separate processes draws exactly the numbers of the in-process run.

    Parameters
    ----------
    seed : int
        The run's seed, ≥ 0 (the ``rng`` given to :func:`cape_average` as an int).
    party : {"noise generator", "aggregator", "site"}
    site : int
        For ``party="site"``: the site's 0-based index s, in [0, 10⁴); ignored otherwise.

    Returns
    -------
    numpy.random.Generator

    Examples
    --------
    >>> gen, agg, s0, s1 = np.random.default_rng(7).spawn(4)
    >>> bool(party_rng(7, "site", 1).random() == s1.random())
    True
    """
    seed = check_int(seed, "seed", low=0, high=2**128 - 1)
    party = check_choice(party, "party", PARTY_STREAMS)
    index = PARTY_STREAMS.index(party)
    if party == "site":
        index += check_int(site, "site", low=0, high=MAX_SITES - 1)
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index,)))


def site_releases(
    values: NDArray[np.float64], design: CapeDesign, *, symmetric: bool, rng: RngLike
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Protocol up to the sites' releases: E_s, F_s, G_s and â_s = a_s + E_s + F_s + G_s.

    ``rng`` is spawned into streams for the noise generator, the aggregator and each site
    (for a fresh ``default_rng(seed)`` these are :func:`party_rng`'s).
    """
    gen_rng, agg_rng, *site_rngs = check_rng(rng).spawn(design.n_sites + 2)
    shape = values.shape[1:]
    e = noise_generator_step(design, shape, symmetric=symmetric, rng=gen_rng)
    f = aggregator_step(design, shape, symmetric=symmetric, rng=agg_rng)
    g = np.empty_like(values)
    released = np.empty_like(values)
    for s in range(design.n_sites):
        g[s], released[s] = site_step(
            values[s], e[s], f[s], float(design.tau_g[s]), symmetric=symmetric, rng=site_rngs[s]
        )
    return e, f, g, released


@dataclass(frozen=True, eq=False)
class Message:
    """One message of a protocol run: who sends what to whom."""

    sender: str
    receiver: str
    name: str
    value: NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class AveragingRun:
    """Everything one run of distributed averaging produced.

    Attributes
    ----------
    scheme : {"cape", "conv"}
    values : ndarray, shape (S, ...)
        The sites' private values a_s.
    weights : ndarray, shape (S,)
    e, f, g : ndarray, shape (S, ...)
        Noise from the noise generator, the aggregator and the sites (e = f = 0 for conv).
    released : ndarray, shape (S, ...)
        What each site sends to the aggregator.
    estimate : ndarray, shape (...)
        The aggregator's output.
    design : CapeDesign or None
    """

    scheme: str
    values: NDArray[np.float64]
    weights: NDArray[np.float64]
    e: NDArray[np.float64]
    f: NDArray[np.float64]
    g: NDArray[np.float64]
    released: NDArray[np.float64]
    estimate: NDArray[np.float64]
    design: CapeDesign | None = None

    @property
    def messages(self) -> list[Message]:
        """Every message of the run, in protocol order."""
        out: list[Message] = []
        for s in range(self.values.shape[0]):
            site = f"site {s + 1}"
            if self.scheme == "cape":
                out.append(Message("noise generator", site, f"E_{s + 1}", self.e[s]))
                out.append(Message("aggregator", site, f"F_{s + 1}", self.f[s]))
            out.append(Message(site, "aggregator", f"Â_{s + 1}", self.released[s]))
        return out


def cape_average(
    values: ArrayLike,
    tau_site: ArrayLike,
    *,
    weights: ArrayLike | None = None,
    symmetric: bool = False,
    design: CapeDesign | None = None,
    rng: RngLike = None,
) -> AveragingRun:
    """Run the CAPE protocol faithfully on per-site values.

    Parameters
    ----------
    values : array_like, shape (S, ...)
        a_s for each site: scalars, vectors, matrices or tensors.
    tau_site : array_like, shape (S,)
        τ_s per site.
    weights : array_like, shape (S,), optional
        μ_s; default 1/S.
    symmetric : bool
        Use symmetric noise (one draw per multiset of indices) — for second-moment
        matrices and moment tensors; values must then be (D, D) or (D, D, D).
    design : CapeDesign, optional
        A design to run (e.g. :func:`paper_design`); default :func:`cape_design`. It must
        match ``tau_site`` and ``weights`` and be feasible.
    rng : int, numpy.random.Generator or None
        Seed or generator (SPEC 7).
        Spawned into independent streams for the noise generator, the aggregator and each site.

    Returns
    -------
    AveragingRun
        With ``estimate = Σ μ_s (â_s − F_s) = Σ μ_s (a_s + G_s)`` up to rounding.

    References
    ----------
    Imtiaz & Sarwate, Alg. 5 (CAPE, Appendix A.1) and Alg. 1 steps 1–8 (capePCA).
    """
    rng = check_rng(rng)
    symmetric = check_bool(symmetric, "symmetric")
    tau = check_tau_site(tau_site)
    if design is None:
        design = cape_design(tau, weights=weights)
    elif not isinstance(design, CapeDesign):
        raise TypeError(f"design must be a CapeDesign or None; got {type(design).__name__}")
    elif design.n_sites != tau.size or not np.allclose(design.tau_site, tau):
        raise ValueError("design must have been made for the same tau_site")
    arr = check_values(values, design.n_sites, symmetric)
    e, f, g, released = site_releases(arr, design, symmetric=symmetric, rng=rng)
    estimate = aggregate_step(released, f, design.weights)
    return AveragingRun("cape", arr, design.weights, e, f, g, released, estimate, design)


def conventional_average(
    values: ArrayLike,
    tau_site: ArrayLike,
    *,
    weights: ArrayLike | None = None,
    symmetric: bool = False,
    rng: RngLike = None,
) -> AveragingRun:
    """Conventional distributed averaging: each site adds its own N(0, τ_s²) noise.

    Every site uses its full (ε_s, δ_s) — not ε/S — and the aggregator takes Σ μ_s â_s,
    whose noise has variance Σ μ_s² τ_s² (τ_s²/S for equal sites and μ_s = 1/S).

    References
    ----------
    Imtiaz & Sarwate, Sec. 2, "Distributed Privacy-preserving Computation".
    """
    rng = check_rng(rng)
    symmetric = check_bool(symmetric, "symmetric")
    tau = check_tau_site(tau_site, design=False)
    mu = check_weights(weights, tau.size)
    arr = check_values(values, tau.size, symmetric)
    site_rngs = rng.spawn(tau.size)
    g = np.stack(
        [
            tau[s] * standard_noise(arr.shape[1:], symmetric=symmetric, rng=site_rngs[s])
            for s in range(tau.size)
        ]
    )
    released = arr + g
    zeros = np.zeros_like(arr)
    estimate = aggregate_step(released, zeros, mu)
    return AveragingRun("conv", arr, mu, zeros, zeros, g, released, estimate)


def normalise_weights(weights: ArrayLike) -> NDArray[np.float64]:
    """μ_s / Σ μ_t for non-negative weights with a positive sum.

    Raises
    ------
    ValueError
        If a weight is negative or not finite, or all are zero (nothing to normalise).
    """
    w = check_positive_array(weights, "weights", allow_zero=True)
    if w.sum() <= 0:
        raise ValueError("weights must have a positive sum to be normalised; got all zeros")
    return w / float(w.sum())


def cape_gain(n_per_site: ArrayLike) -> float:
    """CAPE's gain over conventional averaging, G(n) = (N²/S²) Σ_s 1/N_s² (Proposition 1).

    Parameters
    ----------
    n_per_site : array_like of int, shape (S,)
        N_s ≥ 1 per site, S ≥ 2.

    Returns
    -------
    float
        τ_ag²/τ_imp²: the variance of conventional averaging with weights 1/S over the
        variance of CAPE (= pooled) with weights N_s/N. It mixes two gains: reweighting
        (1/S → N_s/N) and correlated noise (exactly S with the same weights); see
        :func:`best_conventional_gain` for the like-for-like comparison. Minimum S at equal
        sizes; maximum
        (N²/S²)(1/(N−S+1)² + S − 1) at sizes [1, …, 1, N−S+1] (:func:`cape_gain_bounds`).

    References
    ----------
    Imtiaz & Sarwate, Proposition 1 (from Imtiaz et al., arXiv:1904.10059).
    """
    n = check_sizes(n_per_site)
    total = n.sum()
    return float(total**2 / n.size**2 * np.sum(1.0 / n**2))


def best_conventional_gain(n_per_site: ArrayLike) -> float:
    """CAPE's gain over the least-noise conventional estimator at a common (ε, δ): N²/Σ N_s².

    Conventional averaging with inverse-variance weights ∝ N_s² has variance c²/Σ N_s²
    (τ_s = c/N_s); CAPE at the pooled level has c²/N². 1 for one site holding everything,
    S for equal sizes. Compare :func:`cape_gain` (the paper's G(n), against weights 1/S: it
    also counts the gain of reweighting) and :attr:`CapeDesign.gain_same_weights` (exactly S).

    Examples
    --------
    >>> round(best_conventional_gain([100, 100, 100, 1000]), 4)
    1.6408
    """
    n = check_sizes(n_per_site)
    return float(n.sum() ** 2 / np.sum(n**2))


def one_large_site(total: int, sites: int, share: float) -> NDArray[np.int64]:
    """Sizes N_s of S sites holding N samples when the first holds ``share`` of them.

    The others share the rest equally (the first ``rest mod (S − 1)`` get one more); every
    site keeps at least one sample. The layout of the gain curves as one site grows from
    N/S to N − S + 1.

    Examples
    --------
    >>> one_large_site(100, 4, 0.5).tolist()
    [50, 17, 17, 16]
    """
    total = check_int(total, "total", low=2, high=MAX_TOTAL)
    sites = check_int(sites, "sites", low=2, high=MAX_SITES)
    if sites > total:
        raise ValueError(f"sites must be at most total ({total}); got sites {sites}")
    share = check_real(share, "share", low=0.0, high=1.0)
    big = round(share * total)
    rest = total - big
    small = np.full(sites - 1, rest // (sites - 1))
    small[: rest - small.sum()] += 1
    return np.concatenate([[big], np.maximum(small, 1)]).astype(np.int64)


def cape_gain_bounds(total: int, sites: int) -> tuple[float, float]:
    """(minimum, maximum) of :func:`cape_gain` over all splits of N samples into S sites.

    Parameters
    ----------
    total : int
        N, must be ≥ S.
    sites : int
        S, must be ≥ 2.
    """
    n = check_int(total, "total", low=2, high=MAX_TOTAL)
    s = check_int(sites, "sites", low=2, high=MAX_TOTAL)
    if s > n:  # the relation of the two: blame sites, the one that is counted
        raise ValueError(f"sites must be at most total ({n}); got sites {s}")
    return float(s), float(n**2 / s**2 * (1.0 / (n - s + 1) ** 2 + s - 1))


def check_sizes(n_per_site: ArrayLike) -> NDArray[np.float64]:
    """N_s as floats: S ≥ 2 whole numbers in [1, MAX_MAGNITUDE]."""
    n = check_positive_array(n_per_site, "n_per_site")
    if n.size < 2 or np.any(n < 1) or np.any(n != np.round(n)) or np.any(n > MAX_MAGNITUDE):
        raise ValueError(
            f"n_per_site must be S >= 2 integers in [1, {MAX_MAGNITUDE:g}]; got {n_per_site!r}"
        )
    return n
