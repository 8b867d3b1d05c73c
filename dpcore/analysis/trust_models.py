"""Trust models side by side: who must be trusted, and what each scheme pays for it.

One set of sites (N_s, ε_s, δ_s, μ_s) releasing their D×D second-moment matrices A_s, and the
schemes a practitioner could choose to estimate Σ μ_s A_s privately:

* **central** — a trusted curator pools the data and adds τ_pool = max_s μ_s τ_s (the pooled
  requirement of :func:`dpcore.cape_design`, Imtiaz & Sarwate Sec. 3.1);
* **local** — each site alone (site 1 shown, as in the sweeps), noise τ_1;
* **conventional** — every site adds its own full τ_s, std sqrt(Σ μ_s² τ_s²) (paper eq. (2));
* **CAPE** — the paper's design (each release on its own carries τ_s) and the
  joint-view-safe one (:mod:`dpcore.protocol.joint_safe`), trusting the noise generator;
* **secure aggregation** with distributed discrete Gaussian noise (:mod:`dpcore.protocol.secagg`):
  no trusted party, fewer than t colluding sites;
* **shuffle** — a labelled negative control: locally private releases through a trusted
  shuffler. Its amplification bound (Feldman, McMillan & Talwar 2021, Thm. 3.1) needs
  n ≥ 16 ln(4/δ) e^{ε₀} parties, so with a handful of sites it gives nothing.

:func:`trust_table` computes every column analytically (each from the scheme's own core
function); :func:`trust_pca` measures the PCA captured energy of each scheme on a small
synthetic pool, and secure aggregation's wrap-arounds and quantisation error.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from functools import partial

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from dpcore._validation import (
    RngLike,
    check_choice,
    check_delta,
    check_int,
    check_real,
    check_rng,
)
from dpcore.analysis.secagg_views import secagg_cost, secagg_dropouts, secagg_views
from dpcore.analysis.views import (
    MAX_COLLUSION_SITES,
    collusion_curve,
    dropout_analysis,
    effective_epsilons,
    party_views,
)
from dpcore.factorization.costs import communication_cost
from dpcore.factorization.datasets import draw_sites, second_moments, synthetic_dataset
from dpcore.factorization.metrics import captured_energy, optimal_energy, top_k_eigvecs
from dpcore.factorization.pca import cape_pca, conv_pca, local_pca, nonprivate_pca
from dpcore.factorization.registry import streams
from dpcore.mechanisms.calibration import (
    CalibrationLike,
    ClassicGaussianWarning,
    second_moment_sensitivity,
)
from dpcore.mechanisms.noise import expand_symmetric
from dpcore.protocol.cape import CapeDesign, pooled_plus_noise
from dpcore.protocol.joint_safe import design_for
from dpcore.protocol.secagg import (
    DEFAULT_BITS,
    MAX_SITES,
    SECAGG_CALIBRATIONS,
    SecAggDesign,
    free_entries,
    secagg_design,
    secagg_sum,
    symmetric_coordinates,
)
from dpcore.protocol.sites import Sites, as_sites
from dpcore.resources import MAX_TRUST_EPSILON

FLOAT_BITS = 64  # a real number on the wire (float64), as in dpcore.analysis.secagg_views
MAX_TRUST_DIM = 60  # D for the table and the PCA pool: d = D(D+1)/2 integers per message
MAX_POOL = 400_000  # Σ N_s rows of the synthetic pool (× D float64: ≤ 200 MB at D = 60)
MAX_RUNS = 200


# --- the shuffle model: a negative control ------------------------------------------------


def shuffle_epsilon(epsilon0: float, *, parties: int, delta: float) -> float:
    """ε after shuffling n ε₀-DP local reports (Feldman, McMillan & Talwar 2021, Thm. 3.1).

    Parameters
    ----------
    epsilon0 : float
        ε₀ in (0, 10⁶) of each party's local randomiser (pure DP).
    parties : int
        n ≥ 1 reports shuffled together.
    delta : float
        δ in (0, 1) of the shuffled output.

    Returns
    -------
    float
        min(ε₀, ε) with ε = log(1 + (1 − e^{−ε₀})/(1 + e^{−ε₀−e₁}) · (a + c)),
        a = 8 sqrt(e^{ε₀} ln(4/δ)/n), c = 8 e^{ε₀}/n, e₁ = log(1 + a + c), when
        ε₀ ≤ ln(n/(16 ln(4/δ))); otherwise ε₀ (the theorem does not apply, and shuffling
        ε₀-DP reports is post-processing: never worse than ε₀).

    Notes
    -----
    The form and the validity condition are those of the authors' reference implementation
    (``closedformanalysis`` in apple/ml-shuffling-amplification), slightly more conservative
    than the statement printed in the paper (factor (e^{ε₀} − 1)/(e^{ε₀} + 1), condition with
    ln(2/δ)).

    References
    ----------
    V. Feldman, A. McMillan, K. Talwar, "Hiding Among the Clones: A Simple and Nearly Optimal
    Analysis of Privacy Amplification by Shuffling", FOCS 2021, arXiv:2012.12803, Thm. 3.1.

    Examples
    --------
    >>> shuffle_epsilon(1.0, parties=5, delta=1e-3)  # 5 parties: no amplification
    1.0
    >>> round(shuffle_epsilon(1.0, parties=100_000, delta=1e-6), 3)
    0.075
    """
    eps0 = check_real(epsilon0, "epsilon0", low=0.0, high=MAX_TRUST_EPSILON, low_open=True,
                      high_open=True)  # fmt: skip
    n = check_int(parties, "parties", low=1)
    dlt = check_delta(delta)
    log_4_delta = math.log(4) - math.log(dlt)  # ln(4/δ) without overflow at δ = 1e-308
    if eps0 > math.log(n) - math.log(16 * log_4_delta):
        return eps0
    # from here e^{ε₀} ≤ n/(16 ln(4/δ)): a and c below 1, formed from logs (n may pass 1e308)
    a = 8 * math.exp((eps0 + math.log(log_4_delta) - math.log(n)) / 2)
    c = 8 * math.exp(eps0 - math.log(n))
    e1 = math.log(1 + a + c)
    factor = (1 - math.exp(-eps0)) / (1 + math.exp(-eps0 - e1))
    return min(eps0, math.log(1 + factor * (a + c)))


def shuffle_min_parties(epsilon0: float, *, delta: float) -> int:
    """The fewest parties n for which Thm. 3.1 applies at ε₀: n ≥ 16 ln(4/δ) e^{ε₀}.

    ε₀ in (0, 10⁶), δ in (0, 1). Past float64's range (ε₀ ≳ 700) the count is the integer
    m·2^e (m < 2^53) just above e^{ln(16 ln(4/δ)) + ε₀}, float64's precision (it has up to
    434,300 digits: print it with :func:`count_text`).

    Examples
    --------
    >>> shuffle_min_parties(0.5, delta=1e-3)
    219
    >>> count_text(shuffle_min_parties(1000.0, delta=1e-3))
    'about 10^436.4'
    """
    eps0 = check_real(epsilon0, "epsilon0", low=0.0, high=MAX_TRUST_EPSILON, low_open=True,
                      high_open=True)  # fmt: skip
    dlt = check_delta(delta)
    log_count = math.log(16 * (math.log(4) - math.log(dlt))) + eps0
    if log_count < 700.0:
        return math.ceil(math.exp(log_count))
    # the integer m·2^e with m < 2^53 nearest above e^{log_count} (float64's precision)
    log2 = log_count / math.log(2)
    shift = math.floor(log2) - 52
    return math.ceil(math.pow(2.0, log2 - shift)) << shift


def count_text(count: int) -> str:
    """A count as text: with thousands separators below 10¹⁵, else "about 10^x" (x to 0.1).

    Examples
    --------
    >>> count_text(219), count_text(10**20)
    ('219', 'about 10^20.0')
    """
    if count < 10**15:
        return f"{count:,}"
    return f"about 10^{math.log10(count):.1f}"  # math.log10 takes ints of any size


# --- the sites -------------------------------------------------------------------------------


def _sites(
    sites: Sites | ArrayLike,
    epsilon: ArrayLike | None,
    delta: ArrayLike | None,
    weights: ArrayLike | None,
    calibration: CalibrationLike = None,
    neighbouring: str | None = None,
) -> tuple[
    Sites, NDArray[np.int64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]
]:
    """The record (:func:`dpcore.protocol.sites.as_sites`) and its fields as arrays.

    The record is the one validation of sites; S is also at most secure aggregation's 1,000.
    """
    if not isinstance(sites, Sites):
        try:
            sizes = np.asarray(sites)
            if sizes.ndim != 1 or sizes.dtype.kind not in "iuf":
                raise TypeError
        except TypeError as err:
            raise TypeError(f"n_per_site must be a sequence of integers; got {sites!r}") from err
    record = as_sites(
        sites, epsilon=epsilon, delta=delta, weights=weights, calibration=calibration,
        neighbouring=neighbouring,
    )  # fmt: skip
    check_int(record.count, "n_per_site (number of sites)", low=2, high=MAX_SITES)
    n = np.array(record.n_per_site, dtype=np.int64)
    eps = np.array(record.epsilon, dtype=np.float64)
    return record, n, eps, np.array(record.delta, dtype=np.float64), record.mu


def _cape(kind: str, tau: NDArray[np.float64], mu: NDArray[np.float64]) -> CapeDesign:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClassicGaussianWarning)
        return design_for(kind, tau, weights=mu)


def _taus(record: Sites) -> NDArray[np.float64]:
    with warnings.catch_warnings():  # the page warns about classic at ε ≥ 1 once
        warnings.simplefilter("ignore", ClassicGaussianWarning)
        return record.moment_taus


def trust_secagg_design(
    n_per_site: Sites | ArrayLike,
    *,
    epsilon: ArrayLike | None = None,
    delta: ArrayLike | None = None,
    weights: ArrayLike | None = None,
    dim: int = 20,
    bits: int = DEFAULT_BITS,
    scale: float | None = None,
    calibration: str = "ddg",
    neighbouring: str | None = None,
) -> SecAggDesign:
    """The secure-aggregation round for these sites' D×D second moments.

    :func:`dpcore.secagg_design` with Δ_s = :func:`dpcore.second_moment_sensitivity` (N_s),
    d = D(D+1)/2 integers per message (the free entries), ε_s, δ_s and μ_s as given, and a
    largest one-coordinate move of 1/N_s (the (1, 1) entry when x = e_1 is added, removed
    or replaced by 0; an entry of xxᵀ/N_s moves by at most 1/N_s for ‖x‖ ≤ 1).
    ``n_per_site`` is a :class:`dpcore.Sites` (its relation gives Δ_s) or N_s with the
    keywords; ``calibration`` is secure aggregation's own (:func:`dpcore.secagg_design`).
    """
    record, n, eps, dlt, mu = _sites(n_per_site, epsilon, delta, weights, None, neighbouring)
    neighbouring = record.neighbouring
    d = check_int(dim, "dim", low=1, high=MAX_TRUST_DIM)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClassicGaussianWarning)
        return secagg_design(
            second_moment_sensitivity(n, neighbouring=neighbouring),
            epsilon=eps,
            delta=dlt,
            coordinates=symmetric_coordinates(d, 2),
            weights=mu,
            bits=bits,
            scale=scale,
            calibration=calibration,
            # one coordinate moves by at most 1/N_s under either relation (x = e_1 added,
            # removed or replaced by 0 moves the (1, 1) entry by exactly 1/N_s; replace's
            # √2/N_s needs two coordinates): the move the refutation ε realises
            coordinate_sensitivity=second_moment_sensitivity(n, neighbouring="add-remove"),
        )


# --- the rows --------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class TrustRow:
    """One scheme's row of :func:`trust_table`: its noise, trust, collusion, dropout and cost.

    The fields are the table's columns, in its order.

    Attributes
    ----------
    scheme : str
        The scheme's name (:data:`SCHEMES`).
    aggregator_exact_epsilon : float
        Secure aggregation: the refutation ε, the exact ε at δ_s of a move the data can
        make (:meth:`SecAggDesign.refutation_epsilons`), where ``aggregator_epsilon`` is the
        KLS certificate: the verdict is "certified" when the certificate is within ε_s,
        "refuted" when the refutation ε is above it, "open" between — the true ε lies in
        [``aggregator_exact_epsilon``, ``aggregator_epsilon``]. Elsewhere equal to
        ``aggregator_epsilon``, which is exact.
    colluders_exact : int
        Secure aggregation: the largest k not refuted; elsewhere ``colluders_tolerated``.
    noise_std : float
        Std of the estimate's noise per entry, in data units.
    std_ratio : float
        ``noise_std`` over central's τ_pool.
    aggregator_epsilon : float
        The worst site's ε in what the aggregator / server / curator sees, at its δ_s: ∞
        for the curator, who sees the data; 0 where nothing is sent.
    aggregator_promised : float
        That site's ε_s.
    trusted : str
        Who must be trusted, in words.
    colluders_tolerated : int
        Largest k such that the aggregator with any k sites keeps every honest site's
        promise, whichever k collude (−1: broken with no colluder; secure aggregation:
        certified by the KLS accountant).
    masks_tolerated : int
        Secure aggregation: t − 1 colluders before an honest message can be unmasked; −1
        elsewhere.
    dropout_site : int
        One site drops, no remedy, the worst case over which: each site whose survivors keep
        a positive weight is dropped in turn, and the row is the one whose worst survivor
        has the largest ε/ε_t, then the largest std ratio. The dropped site, 1-based (local:
        site 1, whose output is then gone).
    dropout_std_ratio : float
        The noise std after that drop over what the survivors' pooled estimate needs.
    dropout_epsilon, dropout_promised : float
        That worst survivor's ε in the final output at its δ_t, and its ε_t (local: 0 and
        ε_1).
    remedy : str
        The scheme's usual dropout remedy, in words.
    remedy_std_ratio : float
        The std ratio with the remedy, when the same site drops.
    remedy_rounds : int
        Rounds the remedy takes.
    messages : int
        Messages per run, all parties.
    bits_per_site, bits_total : int
        Bits sent: float64 reals or b-bit integers, plus key material for secure
        aggregation.
    source : str
        The equation or theorem.
    shuffle_epsilon : float
        Shuffle: the amplified ε of site 1's release if it were pure ε_1-LDP
        (:func:`shuffle_epsilon`, NaN-free: ε_1 when the bound does not apply); elsewhere
        ``aggregator_epsilon``.
    """

    scheme: str
    aggregator_exact_epsilon: float
    colluders_exact: int
    noise_std: float
    std_ratio: float
    aggregator_epsilon: float
    aggregator_promised: float
    trusted: str
    colluders_tolerated: int
    masks_tolerated: int
    dropout_site: int
    dropout_std_ratio: float
    dropout_epsilon: float
    dropout_promised: float
    remedy: str
    remedy_std_ratio: float
    remedy_rounds: int
    messages: int
    bits_per_site: int
    bits_total: int
    source: str
    shuffle_epsilon: float


@dataclass(frozen=True)
class _Drop:
    """One site dropped, no remedy: the dropout columns of :class:`TrustRow`."""

    site: int  # 1-based
    std_ratio: float
    epsilon: float
    promised: float


@dataclass(frozen=True, eq=False, kw_only=True)
class SiteArrays:
    """The sites as the trust tables read them, one entry per site.

    Attributes
    ----------
    n : ndarray of int, shape (S,)
        N_s.
    eps, dlt, mu : ndarray, shape (S,)
        ε_s, δ_s and the normalised weights μ_s.
    tau : ndarray, shape (S,)
        τ_s of each site's D×D second moment (:attr:`dpcore.Sites.moment_taus`).
    sens : ndarray, shape (S,)
        Its Δ_s (:func:`dpcore.second_moment_sensitivity` under the sites' relation).
    """

    n: NDArray[np.int64]
    eps: NDArray[np.float64]
    dlt: NDArray[np.float64]
    mu: NDArray[np.float64]
    tau: NDArray[np.float64]
    sens: NDArray[np.float64]

    @property
    def sites(self) -> int:
        """S."""
        return int(self.n.size)


@dataclass(frozen=True, eq=False, kw_only=True)
class _Setting(SiteArrays):
    """What every row is computed from: the sites, D, the designs and the secure round."""

    dim: int
    paper: CapeDesign
    joint: CapeDesign
    secagg: SecAggDesign

    @property
    def central(self) -> float:
        """Central's τ_pool, the unit of every std ratio."""
        return self.paper.tau_pool

    @property
    def droppable(self) -> list[int]:
        """Sites (0-based) that can drop: their survivors keep a positive weight."""
        return [d for d in range(self.sites) if np.delete(self.mu, d).sum() > 0]

    def reals(self, algorithm: str) -> dict[str, int]:
        """Reals one run of a registered PCA algorithm sends (:func:`communication_cost`)."""
        return communication_cost(algorithm, problem="pca", dim=self.dim, k=1, sites=self.sites)


def _setting(
    n_per_site: Sites | ArrayLike,
    epsilon: ArrayLike | None,
    delta: ArrayLike | None,
    weights: ArrayLike | None,
    *,
    dim: int,
    calibration: CalibrationLike,
    neighbouring: str | None,
    bits: int,
    scale: float | None,
    secagg_calibration: str,
) -> _Setting:
    """Validate the table's arguments (S ≤ MAX_COLLUSION_SITES); compute the shared parts."""
    record, n, eps, dlt, mu = _sites(
        n_per_site, epsilon, delta, weights, calibration, neighbouring
    )
    d = check_int(dim, "dim", low=1, high=MAX_TRUST_DIM)
    sa_cal = check_choice(secagg_calibration, "secagg_calibration", SECAGG_CALIBRATIONS)
    if n.size > MAX_COLLUSION_SITES:
        raise ValueError(
            f"n_per_site must list at most {MAX_COLLUSION_SITES} sites (the collusion search); "
            f"got {n.size}"
        )
    tau = _taus(record)
    return _Setting(
        n=n, eps=eps, dlt=dlt, mu=mu, tau=tau,
        sens=second_moment_sensitivity(n, neighbouring=record.neighbouring), dim=d,
        paper=_cape("cape", tau, mu), joint=_cape("joint", tau, mu),
        secagg=trust_secagg_design(record, dim=d, bits=bits, scale=scale, calibration=sa_cal),
    )  # fmt: skip


# --- one dropout, no remedy ------------------------------------------------------------------
# Every site that can drop is tried, and each row reports the site whose drop leaves the worst
# survivor's ε/ε_t largest (then the largest std ratio), naming it (issue #52: site 1 only was
# tried).


def _survivors(at: _Setting, dropped: int) -> tuple[NDArray[np.intp], float]:
    """The sites left after ``dropped`` (0-based) drops, and their weight W = Σ_R μ_t."""
    rest = np.delete(np.arange(at.sites), dropped)
    return rest, float(at.mu[rest].sum())


def _need(at: _Setting, dropped: int) -> float:
    """What one curator adds for the survivors' renormalised mean: max_R μ_t τ_t / W."""
    rest, w = _survivors(at, dropped)
    return float(np.max(at.mu[rest] * at.tau[rest]) / w)


def _conventional_after(at: _Setting, dropped: int) -> float:
    """Conventional's std over the survivors: sqrt(Σ_R μ_t² τ_t²) / W."""
    rest, w = _survivors(at, dropped)
    return float(np.sqrt(np.sum(at.mu[rest] ** 2 * at.tau[rest] ** 2)) / w)


def _after_drop(at: _Setting, dropped: int, std: float) -> tuple[float, float]:
    """The worst survivor's (ε, ε_t) in the output Σ_R μ_t a_t / W + noise of this std."""
    rest, w = _survivors(at, dropped)
    live = rest[at.mu[rest] > 0]
    if not math.isfinite(std):
        return 0.0, float(at.eps[live[0]])
    e = effective_epsilons(std, at.mu[live] * at.sens[live] / w, delta=at.dlt[live])
    worst = int(np.argmax(e / at.eps[live]))
    return float(e[worst]), float(at.eps[live[worst]])


def _worst_drop(at: _Setting, outcome: Callable[[int], _Drop]) -> _Drop:
    """The droppable site with the largest ε/ε_t, then std ratio (to 1e-9: the lowest site)."""
    cases = [outcome(d) for d in at.droppable]
    keys: tuple[Callable[[_Drop], float], ...] = (
        lambda c: c.epsilon / c.promised,
        lambda c: c.std_ratio,
    )
    for key in keys:
        values = [key(c) for c in cases]
        top = max(values)
        cases = [c for c, v in zip(cases, values, strict=True) if v >= top * (1 - 1e-9)]
    return cases[0]


def _gaussian_drop(at: _Setting, std_of: Callable[[int], float]) -> _Drop:
    """The worst drop of a scheme whose output after dropping d has Gaussian noise std_of(d)."""

    def outcome(d: int) -> _Drop:
        std = std_of(d)
        e, promised = _after_drop(at, d, std)
        return _Drop(d + 1, std / _need(at, d), e, promised)

    return _worst_drop(at, outcome)


# --- each scheme's row -----------------------------------------------------------------------


def _gaussian_row(
    scheme: TrustScheme,
    at: _Setting,
    *,
    noise_std: float,
    aggregator_epsilon: float,
    aggregator_promised: float,
    colluders_tolerated: int,
    drop: _Drop,
    remedy_std_ratio: float,
    remedy_rounds: int,
    messages: int,
    bits_per_site: int,
    bits_total: int,
) -> TrustRow:
    """A row whose ε are exact (Gaussian views) and with no masks; its words from its record."""
    return TrustRow(
        scheme=scheme.name,
        aggregator_exact_epsilon=aggregator_epsilon,
        colluders_exact=colluders_tolerated,
        noise_std=noise_std,
        std_ratio=noise_std / at.central,
        aggregator_epsilon=aggregator_epsilon,
        aggregator_promised=aggregator_promised,
        trusted=scheme.trusted,
        colluders_tolerated=colluders_tolerated,
        masks_tolerated=-1,
        dropout_site=drop.site,
        dropout_std_ratio=drop.std_ratio,
        dropout_epsilon=drop.epsilon,
        dropout_promised=drop.promised,
        remedy=scheme.remedy,
        remedy_std_ratio=remedy_std_ratio,
        remedy_rounds=remedy_rounds,
        messages=messages,
        bits_per_site=bits_per_site,
        bits_total=bits_total,
        source=scheme.source,
        shuffle_epsilon=aggregator_epsilon,
    )


def _central_row(scheme: TrustScheme, at: _Setting) -> TrustRow:
    """A curator sees the data (ε ∞) and adds τ_pool; each site sends its N_s rows as float64."""
    bits = FLOAT_BITS * at.dim  # one row of D reals
    return _gaussian_row(
        scheme, at, noise_std=at.central, aggregator_epsilon=math.inf,
        aggregator_promised=float(at.eps[int(np.argmax(at.mu * at.tau))]),
        colluders_tolerated=at.sites - 1, drop=_gaussian_drop(at, partial(_need, at)),
        remedy_std_ratio=1.0, remedy_rounds=1, messages=at.sites,
        bits_per_site=bits * int(at.n.max()), bits_total=bits * int(at.n.sum()),
    )  # fmt: skip


def _local_row(scheme: TrustScheme, at: _Setting) -> TrustRow:
    """Site 1 alone with its own τ_1: nothing is sent, so nothing is seen or lost but site 1."""
    return _gaussian_row(
        scheme, at, noise_std=float(at.tau[0]), aggregator_epsilon=0.0,
        aggregator_promised=float(at.eps[0]), colluders_tolerated=at.sites - 1,
        drop=_Drop(1, 1.0, 0.0, float(at.eps[0])), remedy_std_ratio=1.0, remedy_rounds=1,
        messages=0, bits_per_site=0, bits_total=0,
    )  # fmt: skip


def _conventional_row(scheme: TrustScheme, at: _Setting) -> TrustRow:
    """Each release carries its full τ_s (the worst site's exact ε at δ_s); a drop renormalises."""
    seen = effective_epsilons(at.tau, at.sens, delta=at.dlt)
    worst = int(np.argmax(seen / at.eps))
    drop = _gaussian_drop(at, partial(_conventional_after, at))
    reals = at.reals("conv")
    return _gaussian_row(
        scheme, at, noise_std=at.paper.tau_conv, aggregator_epsilon=float(seen[worst]),
        aggregator_promised=float(at.eps[worst]), colluders_tolerated=at.sites - 1, drop=drop,
        remedy_std_ratio=drop.std_ratio, remedy_rounds=1, messages=at.sites,
        bits_per_site=FLOAT_BITS * reals["sites"] // at.sites,
        bits_total=FLOAT_BITS * reals["total"],
    )  # fmt: skip


def _tolerated_cape(design: CapeDesign, at: _Setting) -> int:
    """Largest k such that every coalition of ≤ k sites keeps every promise (−1: none).

    The aggregator's view of all honest releases (:func:`dpcore.collusion_curve`); a lower
    bound row that found no break counts as unknown and stops the count.
    """
    curve = collusion_curve(design, sensitivity=at.sens, epsilon=at.eps, delta=at.dlt)
    joint = curve[curve["view"] == "all releases"].sort_values("colluding")
    k = -1
    for size, meets in zip(joint["colluding"].tolist(), joint["meets"].tolist(), strict=True):
        if meets is pd.NA or not bool(meets):
            break
        k = int(size)
    return k


def _cape_row(scheme: TrustScheme, at: _Setting, *, design: str) -> TrustRow:
    """A CAPE design (``"cape"`` or ``"joint"``): the aggregator's joint view, the generator's fix.

    With no remedy a dropped site's E_d no longer cancels (:func:`dpcore.dropout_analysis`);
    the remedy is the noise generator's correction, one more round.
    """
    made = at.paper if design == "cape" else at.joint
    views = party_views(made, sensitivity=at.sens, delta=at.dlt, epsilon=at.eps)
    agg = views[views["party"] == "aggregator"]
    joint_eps = agg["epsilon_joint"].to_numpy(float)
    promised = agg["promised_epsilon"].to_numpy(float)
    worst = int(np.argmax(joint_eps / promised))
    analyses = {d: dropout_analysis(made, (d,)) for d in at.droppable}
    drop = _gaussian_drop(at, lambda d: analyses[d].std["none"])  # σ with no remedy
    reals = at.reals("cape")
    return _gaussian_row(
        scheme, at, noise_std=made.tau_agg, aggregator_epsilon=float(joint_eps[worst]),
        aggregator_promised=float(promised[worst]),
        colluders_tolerated=_tolerated_cape(made, at), drop=drop,
        remedy_std_ratio=analyses[drop.site - 1].noise_ratio["cape"], remedy_rounds=2,
        messages=3 * at.sites + 1, bits_per_site=FLOAT_BITS * reals["sites"] // at.sites,
        bits_total=FLOAT_BITS * reals["total"],
    )  # fmt: skip


def _tolerated_secagg(design: SecAggDesign) -> tuple[int, int]:
    """Largest k: the server with any k sites keeps every promise — certified, and not refuted.

    (certified, not refuted): by the KLS certificate (the ✓), and by the refutation ε, the
    exact ε at δ_s of a move the data can make (a lower bound: above the promise, the
    promise fails, :meth:`SecAggDesign.refutation_epsilons`). −1: none.
    Every site is a possible victim of every coalition (:func:`secagg_views` with a count).
    """
    certified = refuted = -1
    for c in range(design.n_sites):
        view = secagg_views(design, colluding=c).iloc[-1 if c else 0]
        if view["verdict"] == "refuted":
            break
        refuted = c
        if certified == c - 1 and bool(view["meets"]):
            certified = c
    return certified, refuted


def _secagg_row(scheme: TrustScheme, at: _Setting) -> TrustRow:
    """The server's view (KLS certificate and refutation ε), t, over-provisioned shares."""
    sa = at.secagg
    server = secagg_views(sa).iloc[0].to_dict()
    by_site = {d: secagg_dropouts(sa, dropped=(d,)).set_index("remedy") for d in at.droppable}

    def outcome(d: int) -> _Drop:
        none = by_site[d].loc["none"].to_dict()
        return _Drop(
            d + 1, float(none["std_ratio"]), float(none["epsilon"]),
            float(none["promised_epsilon"]),
        )  # fmt: skip

    drop = _worst_drop(at, outcome)
    over = by_site[drop.site - 1].loc["over-provisioned"].to_dict()
    certified, not_refuted = _tolerated_secagg(sa)
    cost = secagg_cost(sites=at.sites, coordinates=symmetric_coordinates(at.dim, 2), bits=sa.bits)
    row = _gaussian_row(
        scheme, at, noise_std=sa.tau_agg, aggregator_epsilon=float(server["epsilon"]),
        aggregator_promised=float(server["promised_epsilon"]), colluders_tolerated=certified,
        drop=drop, remedy_std_ratio=float(over["std_ratio"]), remedy_rounds=int(over["rounds"]),
        messages=cost.rounds * at.sites, bits_per_site=cost.bits_per_site,
        bits_total=cost.bits_per_site * at.sites,
    )  # fmt: skip
    return replace(
        row,
        aggregator_exact_epsilon=float(server["exact_epsilon"]),
        colluders_exact=not_refuted,
        trusted=f"fewer than t = {sa.threshold} sites colluding with the server",
        masks_tolerated=sa.threshold - 1,
    )


def _shuffle_row(scheme: TrustScheme, at: _Setting) -> TrustRow:
    """The conventional releases through a shuffler: who is trusted changes, nothing else here.

    No amplification with so few sites (a negative control); ``shuffle_epsilon`` is the
    bound at site 1's ε_1 and δ_1 for S parties.
    """
    row = _conventional_row(scheme, at)
    shuffled = shuffle_epsilon(float(at.eps[0]), parties=at.sites, delta=float(at.dlt[0]))
    return replace(row, shuffle_epsilon=shuffled)


# --- each scheme's PCA estimate (trust_pca) -------------------------------------------------


@dataclass(frozen=True, eq=False, kw_only=True)
class _Pool:
    """What every scheme's PCA estimate is drawn from in :func:`trust_pca`: the sites' A_s."""

    moments: NDArray[np.float64]  # (S, D, D)
    k: int
    mu: NDArray[np.float64]
    tau: NDArray[np.float64]
    paper: CapeDesign
    secagg: SecAggDesign
    values: NDArray[np.float64]  # (S, d): the free entries of each A_s
    exact: NDArray[np.float64]  # (d,): Σ μ_s a_s, what the server is meant to learn


@dataclass(frozen=True)
class _Arithmetic:
    """Secure aggregation's arithmetic in one run (:func:`trust_pca`'s last six columns)."""

    wraparounds: int
    coordinates: int
    quantisation_rms: float
    quantisation_bound: float
    error_ratio: float
    range_used: float


_NO_ARITHMETIC = _Arithmetic(0, 0, 0.0, 0.0, 0.0, 0.0)  # the other schemes' (no integers)
_Estimate = tuple[NDArray[np.float64], _Arithmetic]  # the top-K basis, the arithmetic


def _central_pca(pool: _Pool, rng: np.random.Generator) -> _Estimate:
    noisy = pooled_plus_noise(pool.moments, pool.mu, pool.paper.tau_pool, rng=rng)
    return top_k_eigvecs(noisy, pool.k), _NO_ARITHMETIC


def _local_pca(pool: _Pool, rng: np.random.Generator) -> _Estimate:
    return local_pca(pool.moments[0], pool.k, tau=float(pool.tau[0]), rng=rng), _NO_ARITHMETIC


def _conventional_pca(pool: _Pool, rng: np.random.Generator) -> _Estimate:
    basis = conv_pca(
        pool.moments, pool.k, tau_site=pool.tau, weights=pool.mu, faithful=False, rng=rng
    )
    return basis, _NO_ARITHMETIC


def _cape_pca(pool: _Pool, rng: np.random.Generator, *, design: str) -> _Estimate:
    basis = cape_pca(
        pool.moments, pool.k, tau_site=pool.tau, weights=pool.mu, faithful=False,
        design=design, rng=rng,
    )  # fmt: skip
    return basis, _NO_ARITHMETIC


def _secagg_pca(pool: _Pool, rng: np.random.Generator) -> _Estimate:
    """One faithful round of :func:`secagg_sum` (every share, every mask) on the free entries."""
    design = pool.secagg
    sa = secagg_sum(pool.values, design, faithful=True, rng=rng)
    dim = pool.moments.shape[-1]
    basis = top_k_eigvecs(expand_symmetric(sa.estimate, dim, 2), pool.k)
    rounding = design.scale * sa.quantised.sum(axis=0) - pool.exact
    half = 2.0 ** (design.bits - 1)
    return basis, _Arithmetic(
        wraparounds=sa.wraparounds,
        coordinates=design.coordinates,
        quantisation_rms=float(np.sqrt(np.mean(rounding**2))),
        quantisation_bound=design.rounding_std,
        error_ratio=float(np.sqrt(np.mean((sa.estimate - pool.exact) ** 2)))
        / pool.paper.tau_pool,
        range_used=max(float(sa.total.max()) + 1.0, -float(sa.total.min())) / half,
    )


# --- the registry ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class TrustScheme:
    """One trust scheme of :func:`trust_table`: who is trusted, its source, its remedy, its row.

    A new scheme is one record in :data:`REGISTRY` (its place there is its row's place in the
    table), with its row and PCA functions here, and its tests.

    Attributes
    ----------
    name : str
        The ``scheme`` column.
    label : str
        Its name as a reader sees it: its row of the Trust models page's table, its bar in the
        chart (:data:`LABELS`).
    trusted : str
        Who must be trusted, in words (secure aggregation's row names its t).
    remedy : str
        Its usual remedy when a site drops, in words.
    source : str
        The equation or theorem its noise and views come from.
    row : callable
        ``row(scheme, setting) -> TrustRow``: the scheme's numbers at one setting.
    pca : callable
        ``pca(pool, rng) -> (basis, arithmetic)``: its top-K estimate in one run of
        :func:`trust_pca`, and secure aggregation's arithmetic (zeros for the others).
    """

    name: str
    label: str
    trusted: str
    remedy: str
    source: str
    row: Callable[[TrustScheme, _Setting], TrustRow]
    pca: Callable[[_Pool, np.random.Generator], _Estimate]


REGISTRY = (
    TrustScheme(
        name="central",
        label="Central (trusted curator)",
        trusted="a curator who holds every site's data",
        remedy="none needed (the curator holds the data)",
        source="τ_pool = max_s μ_s τ_s (Imtiaz & Sarwate Sec. 3.1)",
        row=_central_row,
        pca=_central_pca,
    ),
    TrustScheme(
        name="local",
        label="Local (site 1 alone)",
        trusted="nobody",
        remedy="none needed (nothing is combined)",
        source="τ_1 = σ(Δ_1, ε_1, δ_1) (Dwork et al. 2014, Analyze Gauss)",
        row=_local_row,
        pca=_local_pca,
    ),
    TrustScheme(
        name="conventional",
        label="Conventional",
        trusted="nobody",
        remedy="none needed (renormalise over the survivors)",
        source="sqrt(Σ μ_s² τ_s²) (Imtiaz & Sarwate eq. (2))",
        row=_conventional_row,
        pca=_conventional_pca,
    ),
    TrustScheme(
        name="cape",
        label="CAPE, paper's design",
        trusted="the noise generator (never to collude with the aggregator)",
        remedy="the noise generator sends Σ μ_d (E_d + H_d)",
        source="τ_agg = τ_pool (Imtiaz & Sarwate Sec. 3.1, Prop. 1)",
        row=partial(_cape_row, design="cape"),
        pca=partial(_cape_pca, design="cape"),
    ),
    TrustScheme(
        name="cape_joint",
        label="CAPE, joint-view-safe",
        trusted="the noise generator (never to collude with the aggregator)",
        remedy="the noise generator sends Σ μ_d (E_d + H_d)",
        source="τ_agg = 1.05 τ_pool (docs/privacy.md, joint-view-safe)",
        row=partial(_cape_row, design="joint"),
        pca=partial(_cape_pca, design="joint"),
    ),
    TrustScheme(
        name="secagg",
        label="Secure aggregation",
        trusted="fewer than t sites colluding with the server",
        remedy="over-provisioned shares (σ sized for one dropout)",
        source="KLS 2021 Prop. 14 eq. (17) + CKS 2020 Prop. 12; Bonawitz et al. 2017",
        row=_secagg_row,
        pca=_secagg_pca,
    ),
    TrustScheme(
        name="shuffle",
        label="Shuffle (negative control)",
        trusted="the shuffler (never to collude with the analyst)",
        remedy="none needed (renormalise over the survivors)",
        source="Feldman, McMillan & Talwar 2021 Thm. 3.1 (needs n ≥ 16 ln(4/δ) e^ε₀)",
        row=_shuffle_row,
        pca=_conventional_pca,
    ),
)
SCHEMES = tuple(scheme.name for scheme in REGISTRY)
LABELS = {scheme.name: scheme.label for scheme in REGISTRY}  # scheme → its name on the pages


def trust_scheme(name: object) -> TrustScheme:
    """The record of the scheme ``name``; ValueError naming the choices if it is not one.

    Examples
    --------
    >>> trust_scheme("secagg").remedy
    'over-provisioned shares (σ sized for one dropout)'
    >>> trust_scheme("helper")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: scheme must be one of ['central', 'local', ...]; got 'helper'
    """
    return REGISTRY[SCHEMES.index(check_choice(name, "scheme", SCHEMES))]


# --- the table -------------------------------------------------------------------------------


def trust_table(
    n_per_site: Sites | ArrayLike,
    *,
    epsilon: ArrayLike | None = None,
    delta: ArrayLike | None = None,
    weights: ArrayLike | None = None,
    dim: int = 20,
    calibration: CalibrationLike = None,
    neighbouring: str | None = None,
    bits: int = DEFAULT_BITS,
    scale: float | None = None,
    secagg_calibration: str = "ddg",
) -> pd.DataFrame:
    """Every scheme's noise, trust, collusion, dropout and communication, from its own core.

    Parameters
    ----------
    n_per_site : Sites, or sequence of int, length S ≥ 2
        The sites (:class:`dpcore.Sites`: N_s, ε_s, δ_s, μ_s, the calibration), or N_s
        with the keywords below (the older form, :func:`dpcore.protocol.sites.as_sites`).
    epsilon, delta : float or array_like, shape (S,)
        With N_s only: ε_s in (0, 10⁶) and δ_s in (0, 1), what each site is promised.
    weights : array_like, shape (S,), optional
        With N_s only: μ_s ≥ 0 with a positive sum (default 1/S).
    dim : int
        D in [1, 60]: the sites release their D×D second-moment matrices
        (Δ_s = :func:`dpcore.second_moment_sensitivity`).
    calibration : Calibration or {"analytic", "classic"}, optional
        With N_s only: Gaussian calibration of τ_s (central, local, conventional, CAPE,
        shuffle; :class:`dpcore.Calibration`, default analytic).
    neighbouring : {"add-remove", "replace"}, optional
        With N_s only: replaces the calibration's relation.
    bits, scale : int and float or None
        Secure aggregation's b in [2, 64] and γ > 0 (None: automatic).
    secagg_calibration : {"ddg", "classic", "analytic"}
        Its share σ: the KLS accountant (a proof) or the Gaussian calibration of the others.

    Returns
    -------
    pandas.DataFrame
        One row per scheme in :data:`SCHEMES` order (:data:`REGISTRY`); the columns are the
        fields of :class:`TrustRow`, in order, each documented there: the noise
        (``noise_std``, ``std_ratio``), the worst site's ε in what the aggregator sees, who is
        trusted and how many colluders are tolerated, the worst single dropout and its
        remedy, the messages and bits, the source, and the shuffle bound.

    Notes
    -----
    Local is site 1 (as :func:`dpcore.pca_sweep`); its std is of site 1's own estimate.
    Dropouts (the worst dropped site, each scheme its own): central and local lose nothing
    but the dropped data; conventional and
    shuffle renormalise over the survivors (their own τ_t stays); CAPE's missing E_1 no
    longer cancels (remedy: the noise generator's correction, :func:`dpcore.dropout_analysis`);
    secure aggregation's sum misses one noise share (remedy: over-provisioned shares,
    :func:`dpcore.secagg_dropouts`).
    """
    return trust_overview(
        n_per_site, epsilon=epsilon, delta=delta, weights=weights, dim=dim,
        calibration=calibration, neighbouring=neighbouring, bits=bits, scale=scale,
        secagg_calibration=secagg_calibration,
    ).table  # fmt: skip


@dataclass(frozen=True, eq=False)
class TrustOverview:
    """The trust-models table and the secure-aggregation round behind its row.

    Attributes
    ----------
    table : pandas.DataFrame
        :func:`trust_table`.
    secagg : SecAggDesign
        :func:`trust_secagg_design` at the same settings: its share σ, scale γ,
        representable range, threshold t, coordinates d and rounding inflation.
    shuffle_parties : int
        :func:`shuffle_min_parties` at site 1's ε₀ and δ: the fewest parties for which the
        shuffle row's amplification bound applies.
    """

    table: pd.DataFrame
    secagg: SecAggDesign
    shuffle_parties: int

    @property
    def accounted_epsilon(self) -> float:
        """The worst site's KLS-accounted ε of the secure-aggregation sum."""
        return float(self.secagg.epsilons().max())


def trust_overview(
    n_per_site: Sites | ArrayLike,
    *,
    epsilon: ArrayLike | None = None,
    delta: ArrayLike | None = None,
    weights: ArrayLike | None = None,
    dim: int = 20,
    calibration: CalibrationLike = None,
    neighbouring: str | None = None,
    bits: int = DEFAULT_BITS,
    scale: float | None = None,
    secagg_calibration: str = "ddg",
) -> TrustOverview:
    """:func:`trust_table` with the secure-aggregation round behind its row.

    The table is built from that one round, and the shuffle row's threshold is added.
    Parameters are those of :func:`trust_table`.

    Returns
    -------
    TrustOverview
    """
    at = _setting(
        n_per_site, epsilon, delta, weights, dim=dim, calibration=calibration,
        neighbouring=neighbouring, bits=bits, scale=scale, secagg_calibration=secagg_calibration,
    )  # fmt: skip
    return TrustOverview(
        table=pd.DataFrame([asdict(scheme.row(scheme, at)) for scheme in REGISTRY]),
        secagg=at.secagg,
        shuffle_parties=shuffle_min_parties(float(at.eps[0]), delta=float(at.dlt[0])),
    )


# --- PCA on a small synthetic pool -----------------------------------------------------------

PCA_SCHEMES = ("nonprivate", *SCHEMES)


def trust_pca(
    n_per_site: Sites | ArrayLike,
    *,
    epsilon: ArrayLike | None = None,
    delta: ArrayLike | None = None,
    weights: ArrayLike | None = None,
    dim: int = 20,
    k: int = 5,
    calibration: CalibrationLike = None,
    neighbouring: str | None = None,
    bits: int = DEFAULT_BITS,
    scale: float | None = None,
    secagg_calibration: str = "ddg",
    runs: int = 10,
    rng: RngLike = None,
) -> pd.DataFrame:
    """Captured energy of every scheme's top-K subspace, and secure aggregation's arithmetic.

    A synthetic pool of Σ N_s samples in D dimensions (:func:`dpcore.synthetic_dataset`, the
    paper's model) is split into the sites (:func:`dpcore.draw_sites`); each run draws every
    scheme's noise afresh from its own stream (keyed by its name): central = the pooled
    Σ μ_s A_s plus symmetric noise τ_pool; local = site 1 alone; conventional, CAPE (both
    designs) as in :func:`dpcore.pca_sweep`; secure aggregation = one faithful round of
    :func:`dpcore.secagg_sum` (every share, every mask) on the free entries; shuffle = the
    conventional releases (no amplification with few parties, :func:`shuffle_epsilon`).

    Parameters
    ----------
    n_per_site, epsilon, delta, weights, dim, calibration, neighbouring, bits, scale,
    secagg_calibration
        As in :func:`trust_table` (Σ N_s at most 400,000).
    k : int
        K in [1, D]: the subspace dimension.
    runs : int
        Repetitions in [1, 200].
    rng : int, Generator or None
        Seed (SPEC 7): same seed, same frame.

    Returns
    -------
    pandas.DataFrame
        One row per (scheme, run): ``scheme`` (:data:`PCA_SCHEMES`), ``run``,
        ``captured_energy_ratio`` (tr(V̂ᵀAV̂) over the optimum, A the pool's second moment,
        Imtiaz & Sarwate Sec. 6.1), and for ``secagg`` rows ``wraparounds`` (coordinates
        whose sum left [−2^{b−1}, 2^{b−1})), ``coordinates`` (d), ``quantisation_rms``
        (RMS over coordinates of γ Σ_s r_s − Σ μ_s a_s, data units),
        ``quantisation_bound`` (γ sqrt(S/4), the largest rounding std), ``error_ratio``
        (RMS over coordinates of the decoded estimate − Σ μ_s a_s, over central's noise std
        τ_pool: what noise, rounding and wrap-around do together; the designed
        ``std_ratio`` of :func:`trust_table` until the sum wraps) and ``range_used``
        (max(max Σ_s(r_s + Z_s) + 1, −min Σ_s(r_s + Z_s)) / 2^{b−1} over coordinates: above
        1 exactly when a coordinate wraps); 0 elsewhere.
    """
    record, n, _, _, mu = _sites(
        n_per_site, epsilon, delta, weights, calibration, neighbouring
    )
    d = check_int(dim, "dim", low=1, high=MAX_TRUST_DIM)
    kk = check_int(k, "k", low=1, high=d)
    check_choice(secagg_calibration, "secagg_calibration", SECAGG_CALIBRATIONS)
    reps = check_int(runs, "runs", low=1, high=MAX_RUNS)
    total = int(n.sum())
    if total > MAX_POOL:
        raise ValueError(
            f"n_per_site must sum to at most {MAX_POOL:,} samples (the synthetic pool); "
            f"got {total:,}"
        )
    data_rng, draw_rng, noise_rng = check_rng(rng).spawn(3)
    dataset = synthetic_dataset(dim=d, k=kk, n_samples=max(total, 2), rng=data_rng)
    moments = second_moments(draw_sites(dataset, n, rng=draw_rng))
    best = optimal_energy(dataset.reference, kk)
    tau = _taus(record)
    values = free_entries(moments, 2)
    pool = _Pool(
        moments=moments, k=kk, mu=mu, tau=tau, paper=_cape("cape", tau, mu),
        secagg=trust_secagg_design(
            record, dim=d, bits=bits, scale=scale, calibration=secagg_calibration
        ),
        values=values, exact=mu @ values,
    )  # fmt: skip
    rows: list[dict[str, object]] = []
    for run, run_rng in enumerate(noise_rng.spawn(reps)):
        # each scheme's stream is keyed by its name, not its place in the registry (issue #51)
        keyed = streams([s.name for s in REGISTRY], run_rng)
        estimates = {"nonprivate": (nonprivate_pca(moments, kk, weights=mu), _NO_ARITHMETIC)}
        estimates |= {s.name: s.pca(pool, keyed[s.name]) for s in REGISTRY}
        for scheme in PCA_SCHEMES:
            basis, arithmetic = estimates[scheme]
            ratio = captured_energy(basis, dataset.reference) / best
            rows.append(
                {"scheme": scheme, "run": run, "captured_energy_ratio": ratio}
                | asdict(arithmetic)
            )
    return pd.DataFrame(rows)
