"""Composition: the ε of many Gaussian releases on the same data, and privacy profiles.

Every release of a CAPE run protects a site like a Gaussian mechanism with some noise
multiplier z = σ/Δ (:mod:`dpcore.analysis.views`: σ is the std left in the view, Δ the site's
sensitivity). Releasing again on the same data — a new noise draw, a re-run, another ε
queried on a page — composes. The accountants (records, :func:`accountants`) bound the
total; the built-in ones, from exact to loose:

* ``"exact"`` — T Gaussian releases are exactly one Gaussian release with
  μ = sqrt(Σ_t (Δ/σ_t)²) (Gaussian differential privacy: Dong, Roth & Su, "Gaussian
  differential privacy", JRSS-B 2022, Cor. 3.3), whose (ε, δ) the analytic profile gives
  exactly (Balle & Wang, ICML 2018, Thm. 8; :func:`dpcore.gaussian_epsilon`).
* ``"rdp"`` — Rényi DP of order α of the Gaussian mechanism, α/(2z²) (Mironov, "Rényi
  differential privacy", CSF 2017, Prop. 7), summed over releases and converted with the
  tight conversion ε = r(α) + log(1 − 1/α) − log(δα)/(α − 1) (Canonne, Kamath & Steinke,
  NeurIPS 2020, Prop. 12; Asoodeh et al. 2020, eq. (20)), minimised over the order grid of
  Google's ``dp_accounting`` (:data:`RDP_ORDERS`).
* ``"zcdp"`` — ρ = Σ_t 1/(2 z_t²) (Bun & Steinke, TCC 2016, Prop. 1.6 and Lemma 2.3),
  converted by their Prop. 1.3: ε = ρ + 2 sqrt(ρ log(1/δ)).
* ``"advanced"`` — each release is (ε_t, δ/(2T))-DP (exact analytic ε_t), and the
  heterogeneous advanced composition theorem (Kairouz, Oh & Viswanath, ICML 2015 / IEEE
  Trans. IT 2017, Thm. 3.5, third bound) gives
  ε = Σ_t ε_t (e^ε_t − 1)/(e^ε_t + 1) + sqrt(2 log(1/δ') Σ_t ε_t²) with slack δ' = δ/2;
  total δ ≤ δ' + Σ_t δ_t = δ. (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014, Thm. 3.20
  is the equal-ε case with the larger first term Σ ε_t (e^ε_t − 1).)
* ``"basic"`` — each release is (ε_t, δ/T)-DP and ε = Σ_t ε_t (Dwork & Roth 2014,
  Thm. 3.16); total δ = δ.

``docs/composition.md`` states the formulas and what the app's ledger counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from dpcore._validation import as_numbers, check_choice, check_delta, check_int, check_per_site
from dpcore.analysis.views import check_sites, coalition_view
from dpcore.mechanisms.calibration import delta_profile, gaussian_epsilon
from dpcore.protocol.cape import CapeDesign, check_design
from dpcore.protocol.joint_safe import DESIGN_KINDS, design_for

# The built-in accountants' names (the records below; :func:`accountant_names` adds any
# registered one).
ACCOUNTANTS = ("exact", "rdp", "zcdp", "advanced", "basic")
# dp_accounting's DEFAULT_RDP_ORDERS (rdp_privacy_accountant.py), so that "rdp" is its answer.
RDP_ORDERS = np.array(
    [1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024],
    dtype=float,
)
MAX_RELEASES = 10**6
MIN_DELTA = 1e-100  # below it the per-release δ of the advanced and basic splits underflows
MAX_SEQUENCE = 10**4
# Beyond μ = 1e4 the composed releases are as good as noiseless (ε ≈ μ²/2 ≈ 5e7): refused, so
# that every ε returned is finite.
MAX_MU = 1e4
VIEWS = ("own release", "aggregator's joint view", "coalition")


def check_multipliers(noise_multiplier: object) -> NDArray[np.float64]:
    """Check z = σ/Δ: a number or a 1-D sequence, each in (0, ∞] (∞: reveals nothing)."""
    z = as_numbers(noise_multiplier, "noise_multiplier", "a number or a sequence of numbers")
    if z.ndim > 1 or z.size == 0 or z.size > MAX_SEQUENCE:
        raise ValueError(
            f"noise_multiplier must be a number or a 1-D sequence of 1 to {MAX_SEQUENCE} numbers; "
            f"got shape {z.shape}"
        )
    z = np.atleast_1d(z)
    bad = np.isnan(z) | (z <= 0)
    if bad.any():
        raise ValueError(
            f"every noise_multiplier (σ/Δ) must be in (0, inf]; got {float(z[bad][0])!r}"
        )
    return z


def composed_mu(noise_multiplier: float | ArrayLike, *, releases: int = 1) -> float:
    """μ of the composition in Gaussian DP: sqrt(releases · Σ_t 1/z_t²).

    Parameters
    ----------
    noise_multiplier : float or sequence of float
        z_t = σ_t/Δ per release, each in (0, ∞] (∞: that release reveals nothing).
    releases : int
        How many times the whole sequence is released, in [1, 10⁶].

    Returns
    -------
    float
        μ ≥ 0: the composition is exactly as private as one Gaussian release with noise
        multiplier 1/μ.

    Raises
    ------
    ValueError
        If μ would exceed 10⁴ (ε ≈ μ²/2 ≈ 5·10⁷: no privacy worth the name).

    References
    ----------
    J. Dong, A. Roth and W. J. Su, "Gaussian differential privacy", JRSS-B 84(1), 2022,
    Corollary 3.3 (G_μ₁ ⊗ … ⊗ G_μT = G_μ, μ = sqrt(Σ μ_t²)) and Theorem 2.7 (a Gaussian
    mechanism with sensitivity Δ and std σ is Δ/σ-GDP).

    Examples
    --------
    >>> composed_mu(2.0, releases=4)
    1.0
    >>> round(composed_mu([1.0, 2.0]), 6)
    1.118034
    """
    z = check_multipliers(noise_multiplier)
    releases = check_int(releases, "releases", low=1, high=MAX_RELEASES)
    with np.errstate(over="ignore", divide="ignore"):
        mu = math.sqrt(releases * float(np.sum(1.0 / z**2)))
    if not mu <= MAX_MU:
        raise ValueError(
            f"noise_multiplier is too small for {releases} release(s): the composition has "
            f"μ = {mu:.3g} > {MAX_MU:g} (ε ≈ μ²/2, no privacy worth the name); got "
            f"noise_multiplier {noise_multiplier!r}"
        )
    return mu


def _rdp_epsilon(rho: float, delta: float) -> float:
    """Min over :data:`RDP_ORDERS` of the RDP → (ε, δ) conversion (CKS Prop. 12), r(α) = α ρ."""
    alpha = RDP_ORDERS
    r = alpha * rho
    eps = r + np.log1p(-1.0 / alpha) - np.log(delta * alpha) / (alpha - 1.0)
    # δ ≥ sqrt(1 − e^{−r(α)}) ≥ total variation already: (0, δ)-DP (dp_accounting does so too)
    eps = np.where(delta**2 + np.expm1(-r) > 0, 0.0, eps)
    return float(max(0.0, eps.min()))


def _per_release_epsilons(
    z: NDArray[np.float64], releases: int, delta: float
) -> NDArray[np.float64]:
    """Exact ε_t of each finite release at δ_t = ``delta``, one root per distinct z."""
    values, counts = np.unique(z[np.isfinite(z)], return_counts=True)
    eps = np.array([gaussian_epsilon(float(v), sensitivity=1.0, delta=delta) for v in values])
    return np.repeat(eps, counts * releases)


@dataclass(frozen=True)
class Composition:
    """What an accountant adds up: the releases of one site, already validated.

    Attributes
    ----------
    mu : float
        μ = sqrt(Σ_t z_t⁻²) over all releases (> 0: an accountant is not asked when μ = 0).
    noise_multipliers : ndarray of float
        z_t of one round (∞: that release reveals nothing).
    releases : int
        How many times the round is made.
    delta : float
        The total δ, in [MIN_DELTA, 1).
    """

    mu: float
    noise_multipliers: NDArray[np.float64]
    releases: int
    delta: float

    @property
    def rho(self) -> float:
        """ρ = μ²/2, the zCDP parameter of the composition."""
        return self.mu**2 / 2.0

    @property
    def count(self) -> int:
        """T: the releases with a finite z."""
        return int(np.isfinite(self.noise_multipliers).sum()) * self.releases


@dataclass(frozen=True)
class Accountant:
    """One accountant, as one record: what the ledger, its statement and the charts read.

    Attributes
    ----------
    name : str
        The key a caller passes (``accountant="rdp"``).
    label : str
        How charts, legends and buttons name it.
    citation : str
        The method and where it is proven, for the privacy statement.
    epsilon : callable
        ``epsilon(Composition) -> float``: the total ε at the composition's δ, an upper bound
        on the exact one (or the exact one).
    """

    name: str
    label: str
    citation: str
    epsilon: Callable[[Composition], float]

    def __post_init__(self) -> None:
        for field in ("name", "label", "citation"):
            value = getattr(self, field)
            if not isinstance(value, str) or not value.strip():
                raise TypeError(f"Accountant {field} must be a non-empty str; got {value!r}")
        if not callable(self.epsilon):
            raise TypeError(f"Accountant epsilon must be callable; got {self.epsilon!r}")


def _advanced(c: Composition) -> float:
    eps = _per_release_epsilons(c.noise_multipliers, c.releases, c.delta / (2.0 * c.count))
    drift = float(np.sum(eps * np.tanh(eps / 2.0)))  # (e^ε − 1)/(e^ε + 1) = tanh(ε/2)
    return drift + math.sqrt(2.0 * math.log(2.0 / c.delta) * float(np.sum(eps**2)))


# The accountants, exact first (module docstring). A new one is one record here (or
# :func:`register_accountant`): the ledger, the statement, the curves and the legend read it.
_ACCOUNTANTS: dict[str, Accountant] = {
    a.name: a
    for a in (
        Accountant(
            name="exact",
            label="exact (Gaussian DP)",
            citation="exact composition in Gaussian differential privacy (Dong, Roth & Su, "
            "JRSS-B 2022, Cor. 3.3) with the analytic Gaussian profile (Balle & Wang, ICML 2018, "
            "Thm. 8)",
            epsilon=lambda c: gaussian_epsilon(1.0 / c.mu, sensitivity=1.0, delta=c.delta),
        ),
        Accountant(
            name="rdp",
            label="Rényi DP",
            citation="Rényi DP (Mironov, CSF 2017, Prop. 7) with the conversion of Canonne, "
            "Kamath & Steinke (NeurIPS 2020, Prop. 12) over dp_accounting's order grid",
            epsilon=lambda c: _rdp_epsilon(c.rho, c.delta),
        ),
        Accountant(
            name="zcdp",
            label="zCDP",
            citation="zero-concentrated DP (Bun & Steinke, TCC 2016, Prop. 1.6, Lemma 2.3; "
            "conversion Prop. 1.3)",
            epsilon=lambda c: c.rho + 2.0 * math.sqrt(c.rho * math.log(1.0 / c.delta)),
        ),
        Accountant(
            name="advanced",
            label="advanced composition",
            citation="advanced composition (Kairouz, Oh & Viswanath, IEEE Trans. IT 2017, "
            "Thm. 3.5; δ/2 slack, δ/(2T) per release)",
            epsilon=_advanced,
        ),
        Accountant(
            name="basic",
            label="basic composition",
            citation="basic composition (Dwork & Roth 2014, Thm. 3.16; δ/T per release)",
            epsilon=lambda c: float(
                _per_release_epsilons(c.noise_multipliers, c.releases, c.delta / c.count).sum()
            ),
        ),
    )
}


def accountants() -> tuple[Accountant, ...]:
    """Every accountant's record, in order (the built-in ones of :data:`ACCOUNTANTS` first)."""
    return tuple(_ACCOUNTANTS.values())


def accountant_names() -> tuple[str, ...]:
    """The names of :func:`accountants`, read live (a registered one included)."""
    return tuple(_ACCOUNTANTS)


def get_accountant(name: object, param: str = "accountant") -> Accountant:
    """The record of accountant ``name``; ValueError naming ``param`` for an unknown one."""
    return _ACCOUNTANTS[check_choice(name, param, accountant_names())]


def register_accountant(record: Accountant) -> Accountant:
    """Add an accountant: every reader of the records (ledger, statement, curves) has it.

    Raises ValueError if the name is taken, TypeError for anything but an :class:`Accountant`.
    """
    if not isinstance(record, Accountant):
        raise TypeError(f"record must be an Accountant; got {type(record).__name__}")
    if record.name in _ACCOUNTANTS:
        raise ValueError(f"accountant {record.name!r} is already registered")
    _ACCOUNTANTS[record.name] = record
    return record


def unregister_accountant(name: str) -> None:
    """Remove a registered accountant (the built-in ones stay: ValueError)."""
    if name in ACCOUNTANTS or name not in _ACCOUNTANTS:
        raise ValueError(f"name must be a registered, not built-in, accountant; got {name!r}")
    del _ACCOUNTANTS[name]


def composed_epsilon(
    noise_multiplier: float | ArrayLike,
    *,
    releases: int,
    delta: float,
    accountant: str = "exact",
) -> float:
    """Total ε of repeated Gaussian releases on the same data, at a total δ.

    Parameters
    ----------
    noise_multiplier : float or sequence of float
        z_t = σ_t/Δ of each release (noise std over the L2 sensitivity), each in (0, ∞];
        ∞ means the release tells nothing about this individual. A sequence lists releases
        with different noise.
    releases : int
        How many times the release (or the whole sequence) is made, in [1, 10⁶]: a scalar z
        with ``releases=T`` is T releases; a sequence of m values with ``releases=T`` is
        T·m releases.
    delta : float
        The total δ of the composition, in (0, 1).
    accountant : str
        How the releases are added up: one of :func:`accountant_names` (module docstring).
        Every accountant but ``"exact"`` is an upper bound on the exact ε.

    Returns
    -------
    float
        ε ≥ 0 such that the composition is (ε, δ)-DP under the accountant.

    Notes
    -----
    With μ = sqrt(Σ_t z_t⁻²) and ρ = μ²/2 (sums over all releases):

    * exact: ε solves Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) = δ;
    * rdp: ε = min_α [αρ + log(1 − 1/α) − log(δα)/(α − 1)], α ∈ :data:`RDP_ORDERS`;
    * zcdp: ε = ρ + 2 sqrt(ρ log(1/δ));
    * advanced: ε = Σ ε_t (e^ε_t − 1)/(e^ε_t + 1) + sqrt(2 log(2/δ) Σ ε_t²), ε_t at δ/(2T);
    * basic: ε = Σ ε_t, ε_t at δ/T.

    T counts the releases with finite z. With no information at all (every z = ∞) every
    accountant returns 0.

    References
    ----------
    Dong, Roth & Su, JRSS-B 2022, Cor. 3.3; Balle & Wang, ICML 2018, Thm. 8; Mironov, CSF 2017,
    Prop. 7; Canonne, Kamath & Steinke, NeurIPS 2020, Prop. 12; Bun & Steinke, TCC 2016,
    Prop. 1.3 and 1.6, Lemma 2.3; Kairouz, Oh & Viswanath, IEEE Trans. IT 63(6), 2017,
    Thm. 3.5; Dwork & Roth 2014, Thms. 3.16 and 3.20.

    Examples
    --------
    >>> from dpcore.mechanisms.calibration import gaussian_epsilon
    >>> composed_epsilon(4.0, releases=1, delta=1e-5) == gaussian_epsilon(
    ...     4.0, sensitivity=1.0, delta=1e-5)
    True
    >>> exact = composed_epsilon(4.0, releases=16, delta=1e-5)
    >>> exact == composed_epsilon(1.0, releases=1, delta=1e-5)  # 16 × z = 4 is one z = 1
    True
    >>> exact < composed_epsilon(4.0, releases=16, delta=1e-5, accountant="basic")
    True
    """
    z = check_multipliers(noise_multiplier)
    releases = check_int(releases, "releases", low=1, high=MAX_RELEASES)
    delta = check_delta(delta)
    if delta < MIN_DELTA:  # advanced/basic split δ over up to 10⁶ releases: keep it a normal float
        raise ValueError(f"delta must be in [{MIN_DELTA:g}, 1) for composition; got {delta!r}")
    record = get_accountant(accountant)
    mu = composed_mu(z, releases=releases)
    if mu == 0.0:
        return 0.0
    return float(record.epsilon(Composition(mu, z, releases, delta)))


def epsilon_curve(
    noise_multiplier: float | ArrayLike,
    *,
    max_releases: int,
    delta: float,
    accountants: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Total ε against the number of releases T = 1 … ``max_releases``, per accountant.

    Parameters
    ----------
    noise_multiplier : float or sequence of float
        As in :func:`composed_epsilon` (a sequence is one release round).
    max_releases : int
        Largest T, in [1, 1000].
    delta : float
        Total δ in (0, 1).
    accountants : sequence of str
        Which accountants (default: every one of :func:`accountant_names`).

    Returns
    -------
    pandas.DataFrame
        Columns ``releases`` (T), ``accountant`` and ``epsilon`` (ε at the total δ).
    """
    max_releases = check_int(max_releases, "max_releases", low=1, high=1000)
    if accountants is None:
        accountants = accountant_names()
    if isinstance(accountants, str) or not isinstance(accountants, Sequence) or not accountants:
        raise TypeError(f"accountants must be a non-empty sequence of names; got {accountants!r}")
    names = [get_accountant(a, "accountants").name for a in accountants]
    composed_mu(noise_multiplier, releases=max_releases)  # validates once, before any work
    rows = []
    for t in range(1, max_releases + 1):
        for name in names:
            eps = composed_epsilon(noise_multiplier, releases=t, delta=delta, accountant=name)
            rows.append({"releases": t, "accountant": name, "epsilon": eps})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class CompositionGrowth:
    """How the exact ε of T release rounds compares with one round's (:func:`composition_growth`).

    Attributes
    ----------
    releases : int
        T, the number of rounds.
    delta : float
        The total δ at which every ε is read.
    epsilon_one, epsilon_total : float
        Exact ε of one round and of T rounds.
    crossover : float
        T* = 8 ln(1/δ)/μ₁² (= 8 z² ln(1/δ) for one z): below it the √T term μ√(2 ln(1/δ)) of
        the zCDP approximation ε ≈ μ²/2 + μ√(2 ln(1/δ)), μ = √T·μ₁, is the larger one, above
        it the linear term μ²/2. ∞ when a round reveals nothing.
    """

    releases: int
    delta: float
    epsilon_one: float
    epsilon_total: float
    crossover: float

    @property
    def ratio(self) -> float | None:
        """ε of T rounds over ε of one (None when one round has ε = 0)."""
        return self.epsilon_total / self.epsilon_one if self.epsilon_one > 0 else None

    @property
    def linear(self) -> bool:
        """Whether T is past the crossover T*: the μ²/2 term (linear in T) leads."""
        return self.releases > self.crossover


def composition_growth(
    noise_multiplier: float | ArrayLike, *, releases: int, delta: float
) -> CompositionGrowth:
    """The exact ε of ``releases`` rounds against one round's, and where growth turns linear.

    Parameters
    ----------
    noise_multiplier : float or sequence of float
        As in :func:`composed_epsilon` (a sequence is one round).
    releases : int
        T in [1, 10⁶].
    delta : float
        Total δ in (0, 1).

    Returns
    -------
    CompositionGrowth

    Notes
    -----
    zCDP's conversion (Bun & Steinke, TCC 2016, Prop. 1.3) with ρ = μ²/2 reads
    ε ≈ μ²/2 + μ√(2 ln(1/δ)), an upper bound on the exact ε. With μ = √T·μ₁ its first term grows
    like T, its second like √T; they are equal at T* = 8 ln(1/δ)/μ₁². Even below T* the exact
    ratio ε_T/ε₁ is not √T but more: the exact ε of one Gaussian release over its μ grows with
    μ (``tests/core/analysis/test_accounting.py`` checks it), so T rounds, one release of
    √T·μ₁, cost at least √T times one round, and towards T times once T passes T*.

    Examples
    --------
    >>> g = composition_growth(5.0, releases=50, delta=1e-3)
    >>> round(g.crossover, 1), g.linear
    (1381.6, False)
    >>> g.ratio > 50**0.5
    True
    """
    z = check_multipliers(noise_multiplier)
    releases = check_int(releases, "releases", low=1, high=MAX_RELEASES)
    delta = check_delta(delta)
    mu_one = composed_mu(z, releases=1)
    one = composed_epsilon(z, releases=1, delta=delta)
    total = composed_epsilon(z, releases=releases, delta=delta)
    crossover = 8.0 * math.log(1.0 / delta) / mu_one**2 if mu_one > 0 else math.inf
    return CompositionGrowth(releases, delta, one, total, crossover)


def gaussian_profile(
    noise_multiplier: float | ArrayLike, epsilons: ArrayLike, *, releases: int = 1
) -> NDArray[np.float64]:
    """Privacy profile δ(ε) of (repeated) Gaussian releases, exactly.

    Parameters
    ----------
    noise_multiplier : float or sequence of float
        z_t = σ_t/Δ, as in :func:`composed_epsilon`.
    epsilons : array_like of float
        ε values, each in [0, 10⁴].
    releases : int
        Repetitions, as in :func:`composed_epsilon`.

    Returns
    -------
    ndarray of float
        δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) with μ = :func:`composed_mu`, shape of
        ``epsilons``: the smallest δ for which the releases are (ε, δ)-DP; decreasing in ε.

    References
    ----------
    Balle & Wang, ICML 2018, Thm. 8; Dong, Roth & Su, JRSS-B 2022, Cor. 2.13 and 3.3.

    Examples
    --------
    >>> from dpcore.mechanisms.calibration import gaussian_delta
    >>> float(gaussian_profile(2.0, [1.0])[0]) == gaussian_delta(2.0, sensitivity=1.0, epsilon=1.0)
    True
    """
    eps = _check_epsilons(epsilons)
    mu = composed_mu(noise_multiplier, releases=releases)
    if mu == 0.0:
        return np.zeros(eps.shape)
    out = np.array([delta_profile(1.0 / mu, float(e)) for e in eps.ravel()]).reshape(eps.shape)
    clipped: NDArray[np.float64] = np.clip(out, 0.0, 1.0)
    return clipped


def _check_epsilons(epsilons: ArrayLike) -> NDArray[np.float64]:
    try:
        eps = np.asarray(epsilons, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"epsilons must be a sequence of numbers; got {epsilons!r}") from err
    if eps.ndim > 1 or eps.size == 0 or eps.size > MAX_SEQUENCE:
        raise ValueError(
            f"epsilons must be a number or a 1-D sequence of 1 to {MAX_SEQUENCE} numbers; "
            f"got shape {eps.shape}"
        )
    bad = ~np.isfinite(eps) | (eps < 0) | (eps > MAX_MU)
    if bad.any():
        raise ValueError(f"every entry of epsilons must be in [0, {MAX_MU:g}]; got {eps[bad][0]!r}")
    return np.atleast_1d(eps)


def view_noise_multipliers(
    design: CapeDesign, *, sensitivity: float | ArrayLike, view: str, colluding: Sequence[int] = ()
) -> NDArray[np.float64]:
    """z_s = σ_s/Δ_s that protects each site in one view of one CAPE release.

    Parameters
    ----------
    design : CapeDesign
    sensitivity : float or array_like, shape (S,)
        Δ_s per site.
    view : {"own release", "aggregator's joint view", "coalition"}
        The site's own release against the aggregator (σ_own = sqrt(C_ss), the paper's proof
        of Thm. 1); everything the aggregator holds (σ_joint = 1/sqrt([C⁻¹]_ss)); everything
        the aggregator and the ``colluding`` sites hold together (σ_joint of
        :func:`dpcore.coalition_view`).
    colluding : sequence of int
        0-based colluding sites (``view="coalition"`` only).

    Returns
    -------
    ndarray, shape (S,)
        z_s per site; ∞ for a colluding site (a member of the coalition is not protected
        against it and is not counted).
    """
    design = check_design(design)
    view = check_choice(view, "view", VIEWS)
    colluding = check_sites(colluding, design.n_sites, "colluding") if view == "coalition" else ()
    sens = check_per_site(sensitivity, design.n_sites, "sensitivity")
    if np.any(np.isinf(sens)):
        raise ValueError(f"every sensitivity must be finite; got {sensitivity!r}")
    seen = coalition_view(design, colluding)
    std = seen.release_std if view == "own release" else seen.joint_std
    out = np.full(design.n_sites, math.inf)
    out[seen.honest] = std / sens[seen.honest]
    if np.any(out == 0):
        raise ValueError("design gives a site no noise in this view (σ = 0): its ε is infinite")
    return out


def view_profiles(
    tau_site: ArrayLike,
    *,
    sensitivity: float | ArrayLike,
    weights: ArrayLike | None = None,
    site: int = 0,
    colluding: Sequence[int] = (),
    epsilons: ArrayLike,
    releases: int = 1,
) -> pd.DataFrame:
    """δ(ε) of every party's view of one site, for the paper's and the joint-view-safe design.

    Parameters
    ----------
    tau_site : array_like, shape (S,)
        τ_s, each site's calibrated noise std (the promise: τ_s at sensitivity Δ_s is
        (ε_s, δ_s)-DP).
    sensitivity : float or array_like, shape (S,)
        Δ_s per site.
    weights : array_like, shape (S,), optional
        μ_s (default 1/S).
    site : int
        The 0-based site whose privacy is drawn.
    colluding : sequence of int
        0-based sites colluding with the aggregator; the ``"coalition"`` view is included only
        when this is not empty (and must not contain ``site``).
    epsilons : array_like of float
        The ε grid, each in [0, 10⁴].
    releases : int
        Identical releases composed (exactly: μ grows as sqrt(T)).

    Returns
    -------
    pandas.DataFrame
        Tidy: ``design`` ("cape" = the paper's, eq. (2); "joint" = joint-view-safe),
        ``view`` ("calibration τ_s" — the site's own promise —, "own release",
        "aggregator's joint view", "coalition"), ``noise_multiplier`` (σ/Δ of one release),
        ``epsilon`` and ``delta``. The calibration rows are the same for both designs.

    References
    ----------
    Imtiaz & Sarwate, Sec. 3, eq. (2) and Thm. 1; ``docs/privacy.md`` (the joint view);
    Balle & Wang, ICML 2018, Thm. 8.
    """
    eps = _check_epsilons(epsilons)
    releases = check_int(releases, "releases", low=1, high=MAX_RELEASES)
    frames = []
    for kind in DESIGN_KINDS:
        design = design_for(kind, tau_site, weights=weights)
        site = check_int(site, "site", low=0, high=design.n_sites - 1)
        sites = check_sites(colluding, design.n_sites, "colluding")
        if site in sites:
            raise ValueError(f"colluding must not contain the site drawn ({site}); got {sites}")
        sens = check_per_site(sensitivity, design.n_sites, "sensitivity")
        views = {"calibration τ_s": design.tau_site[site] / sens[site]}
        try:
            for view in VIEWS[:2]:
                views[view] = view_noise_multipliers(design, sensitivity=sens, view=view)[site]
            if sites:
                views["coalition"] = view_noise_multipliers(
                    design, sensitivity=sens, view="coalition", colluding=sites
                )[site]
        except ValueError as err:  # the design is built here: blame the input it came from
            raise ValueError(
                f"tau_site gives a {kind} design that cannot be profiled: {err}"
            ) from None
        for view, z in views.items():
            if z == 0:
                raise ValueError(f"tau_site gives site {site} no noise (τ_s = 0): its δ(ε) is 1")
            if not math.isfinite(z):
                raise ValueError(
                    f"sensitivity of site {site} is too small for its noise: σ/Δ = inf in the "
                    f"{view} view; got sensitivity {sens[site]:.3g}"
                )
            try:
                delta = gaussian_profile(z, eps, releases=releases)
            except ValueError as err:  # z out of the accountant's range: say which inputs
                raise ValueError(
                    f"tau_site and sensitivity give site {site} σ/Δ = {z:.3g} in the {view} "
                    f"view: {err}"
                ) from None
            frames.append(
                pd.DataFrame(
                    {
                        "design": kind,
                        "view": view,
                        "noise_multiplier": float(z),
                        "epsilon": eps,
                        "delta": delta,
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)
