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
from dataclasses import dataclass
from typing import Any

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

SCHEMES = ("central", "local", "conventional", "cape", "cape_joint", "secagg", "shuffle")
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


# --- the table -------------------------------------------------------------------------------


def _tolerated_cape(
    design: CapeDesign,
    sens: NDArray[np.float64],
    eps: NDArray[np.float64],
    dlt: NDArray[np.float64],
) -> int:
    """Largest k such that every coalition of ≤ k sites keeps every promise (−1: none).

    The aggregator's view of all honest releases (:func:`dpcore.collusion_curve`); a lower
    bound row that found no break counts as unknown and stops the count.
    """
    curve = collusion_curve(design, sensitivity=sens, epsilon=eps, delta=dlt)
    joint = curve[curve["view"] == "all releases"].sort_values("colluding")
    k = -1
    for size, meets in zip(joint["colluding"].tolist(), joint["meets"].tolist(), strict=True):
        if meets is pd.NA or not bool(meets):
            break
        k = int(size)
    return k


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
        One row per scheme in :data:`SCHEMES` order, columns:

        ``scheme``; ``noise_std`` (std of the estimate's noise per entry, data units) and
        ``std_ratio`` (over central's τ_pool); ``aggregator_epsilon`` and
        ``aggregator_promised`` (the worst site's ε in what the aggregator / server /
        curator sees, at its δ_s, against its ε_s: ∞ for the curator, who sees the data; 0
        where nothing is sent); ``trusted`` (who must be trusted, text);
        ``colluders_tolerated`` (largest k such that the aggregator with any k sites keeps
        every honest site's promise, whichever k collude; −1: broken with no colluder);
        ``aggregator_exact_epsilon`` and ``colluders_exact`` (the same by the refutation
        ε, the exact ε at δ_s of a move the data can make,
        :meth:`SecAggDesign.refutation_epsilons`, where secure aggregation's ε is the KLS
        certificate: the verdict is "certified" when the certificate is within ε_s,
        "refuted" when the refutation ε is above it, "open" between — the true ε lies in
        [``aggregator_exact_epsilon``, ``aggregator_epsilon``]; ``colluders_exact`` is the
        largest k not refuted; equal to ``aggregator_epsilon`` and ``colluders_tolerated``
        elsewhere, whose ε are exact); ``masks_tolerated``
        (secure aggregation: t − 1 colluders before an honest message can be unmasked;
        −1 elsewhere); ``dropout_site``, ``dropout_std_ratio``, ``dropout_epsilon`` and
        ``dropout_promised`` (one site drops, no remedy, the worst case over which site:
        each site whose survivors keep a positive weight is dropped in turn, and the row is
        the one whose worst survivor has the largest ε/ε_t, then the largest std ratio —
        the dropped site (1-based), the noise std over what the survivors' pooled estimate
        needs, and that survivor's ε in the final output at its δ_t and its ε_t; local:
        site 1, whose output is then gone, ε 0); ``remedy``, ``remedy_std_ratio`` and
        ``remedy_rounds`` (the scheme's usual remedy and what it costs, when that same site
        drops); ``messages`` (per run, all parties) and
        ``bits_per_site``, ``bits_total`` (float64 reals or b-bit integers, plus key
        material for secure aggregation); ``shuffle_epsilon`` (the amplified ε of
        site 1's release if it were pure ε_1-LDP, :func:`shuffle_epsilon`, NaN-free: ε_1
        when the bound does not apply; equal to ``aggregator_epsilon`` elsewhere) and
        ``source`` (the equation or theorem).

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
    record, n, eps, dlt, mu = _sites(
        n_per_site, epsilon, delta, weights, calibration, neighbouring
    )
    d = check_int(dim, "dim", low=1, high=MAX_TRUST_DIM)
    nbr = record.neighbouring
    sa_cal = check_choice(secagg_calibration, "secagg_calibration", SECAGG_CALIBRATIONS)
    s = n.size
    if s > MAX_COLLUSION_SITES:
        raise ValueError(
            f"n_per_site must list at most {MAX_COLLUSION_SITES} sites (the collusion search); "
            f"got {s}"
        )
    tau = _taus(record)
    sens = second_moment_sensitivity(n, neighbouring=nbr)
    paper, joint = _cape("cape", tau, mu), _cape("joint", tau, mu)
    central = paper.tau_pool
    sa = trust_secagg_design(record, dim=d, bits=bits, scale=scale, calibration=sa_cal)
    coords = symmetric_coordinates(d, 2)
    reals = {
        name: communication_cost(name, problem="pca", dim=d, k=1, sites=s)
        for name in ("cape", "conv")
    }
    # conventional: each release carries τ_s; the worst site's exact ε at δ_s
    conv_eps = effective_epsilons(tau, sens, delta=dlt)
    worst_conv = int(np.argmax(conv_eps / eps))
    rows: list[dict[str, object]] = []

    def add(scheme: str, **values: object) -> None:
        # Gaussian schemes' ε are exact: only secure aggregation's certificate is a bound
        exact = {
            "aggregator_exact_epsilon": values["aggregator_epsilon"],
            "colluders_exact": values["colluders_tolerated"],
        }
        rows.append({"scheme": scheme, **exact, **values})

    # One dropout, no remedy: every site that can drop (its survivors keep a positive weight)
    # is tried, and each row reports the site whose drop leaves the worst survivor's ε/ε_t
    # largest (then the largest std ratio), naming it (issue #52: site 1 only was tried).
    droppable = [d for d in range(s) if np.delete(mu, d).sum() > 0]

    def survivors(d: int) -> tuple[NDArray[np.intp], float]:
        rest = np.delete(np.arange(s), d)
        return rest, float(mu[rest].sum())

    def need(d: int) -> float:
        # what one curator adds for the survivors' renormalised mean
        rest, w = survivors(d)
        return float(np.max(mu[rest] * tau[rest]) / w)

    def conv_after(d: int) -> float:
        rest, w = survivors(d)
        return float(np.sqrt(np.sum(mu[rest] ** 2 * tau[rest] ** 2)) / w)

    def after_drop(d: int, std: float) -> tuple[float, float]:
        # the worst survivor's (ε, ε_t) in the final output Σ_R μ_t a_t / W + noise of this std
        rest, w = survivors(d)
        live = rest[mu[rest] > 0]
        if not math.isfinite(std):
            return 0.0, float(eps[live[0]])
        e = effective_epsilons(std, mu[live] * sens[live] / w, delta=dlt[live])
        at = int(np.argmax(e / eps[live]))
        return float(e[at]), float(eps[live[at]])

    def worst_drop(outcome: Callable[[int], dict[str, Any]]) -> dict[str, Any]:
        # outcome(d) -> dict with dropout_std_ratio, dropout_epsilon, dropout_promised, …
        cases = [{"dropout_site": d + 1, **outcome(d)} for d in droppable]
        for field in ("ratio", "dropout_std_ratio"):  # equal to 1e-9: the lowest-numbered site
            if field == "ratio":
                values = [c["dropout_epsilon"] / c["dropout_promised"] for c in cases]
            else:
                values = [c[field] for c in cases]
            top = max(values)
            cases = [c for c, v in zip(cases, values, strict=True) if v >= top * (1 - 1e-9)]
        return cases[0]

    def gaussian_drop(std_of: Callable[[int], float]) -> dict[str, Any]:
        def outcome(d: int) -> dict[str, Any]:
            std = std_of(d)
            e, promised = after_drop(d, std)
            return {
                "dropout_std_ratio": std / need(d),
                "dropout_epsilon": e,
                "dropout_promised": promised,
            }

        return worst_drop(outcome)

    shuffled = shuffle_epsilon(float(eps[0]), parties=s, delta=float(dlt[0]))
    add(
        "central",
        noise_std=central,
        std_ratio=1.0,
        aggregator_epsilon=math.inf,
        aggregator_promised=float(eps[int(np.argmax(mu * tau))]),
        trusted="a curator who holds every site's data",
        colluders_tolerated=s - 1,
        masks_tolerated=-1,
        **gaussian_drop(need),
        remedy="none needed (the curator holds the data)",
        remedy_std_ratio=1.0,
        remedy_rounds=1,
        messages=s,
        bits_per_site=int(FLOAT_BITS * d * int(n.max())),
        bits_total=int(FLOAT_BITS * d * int(n.sum())),
        source="τ_pool = max_s μ_s τ_s (Imtiaz & Sarwate Sec. 3.1)",
    )
    add(
        "local",
        noise_std=float(tau[0]),
        std_ratio=float(tau[0] / central),
        aggregator_epsilon=0.0,
        aggregator_promised=float(eps[0]),
        trusted="nobody",
        colluders_tolerated=s - 1,
        masks_tolerated=-1,
        dropout_site=1,
        dropout_std_ratio=1.0,
        dropout_epsilon=0.0,
        dropout_promised=float(eps[0]),
        remedy="none needed (nothing is combined)",
        remedy_std_ratio=1.0,
        remedy_rounds=1,
        messages=0,
        bits_per_site=0,
        bits_total=0,
        source="τ_1 = σ(Δ_1, ε_1, δ_1) (Dwork et al. 2014, Analyze Gauss)",
    )
    # Shuffling the conventional releases changes who must be trusted, nothing else here
    # (no amplification with so few sites: the shuffle row is a negative control).
    conv_drop = gaussian_drop(conv_after)
    conventional = dict(
        noise_std=paper.tau_conv,
        std_ratio=paper.tau_conv / central,
        aggregator_epsilon=float(conv_eps[worst_conv]),
        aggregator_promised=float(eps[worst_conv]),
        trusted="nobody",
        colluders_tolerated=s - 1,
        masks_tolerated=-1,
        **conv_drop,
        remedy="none needed (renormalise over the survivors)",
        remedy_std_ratio=conv_drop["dropout_std_ratio"],
        remedy_rounds=1,
        messages=s,
        bits_per_site=FLOAT_BITS * reals["conv"]["sites"] // s,
        bits_total=FLOAT_BITS * reals["conv"]["total"],
    )
    add(
        "conventional",
        **conventional,
        source="sqrt(Σ μ_s² τ_s²) (Imtiaz & Sarwate eq. (2))",
    )
    for scheme, made in (("cape", paper), ("cape_joint", joint)):
        views = party_views(made, sensitivity=sens, delta=dlt, epsilon=eps)
        agg = views[views["party"] == "aggregator"]
        joint_eps = agg["epsilon_joint"].to_numpy(float)
        promised = agg["promised_epsilon"].to_numpy(float)
        at = int(np.argmax(joint_eps / promised))
        analyses = {d: dropout_analysis(made, (d,)) for d in droppable}
        unremedied = {d: analyses[d].std["none"] for d in droppable}  # σ with no remedy
        cape_drop = gaussian_drop(unremedied.__getitem__)
        drop = analyses[cape_drop["dropout_site"] - 1]
        add(
            scheme,
            noise_std=made.tau_agg,
            std_ratio=made.tau_agg / central,
            aggregator_epsilon=float(joint_eps[at]),
            aggregator_promised=float(promised[at]),
            trusted="the noise generator (never to collude with the aggregator)",
            colluders_tolerated=_tolerated_cape(made, sens, eps, dlt),
            masks_tolerated=-1,
            **cape_drop,
            remedy="the noise generator sends Σ μ_d (E_d + H_d)",
            remedy_std_ratio=drop.noise_ratio["cape"],
            remedy_rounds=2,
            messages=3 * s + 1,
            bits_per_site=FLOAT_BITS * reals["cape"]["sites"] // s,
            bits_total=FLOAT_BITS * reals["cape"]["total"],
            source=(
                "τ_agg = τ_pool (Imtiaz & Sarwate Sec. 3.1, Prop. 1)"
                if scheme == "cape"
                else "τ_agg = 1.05 τ_pool (docs/privacy.md, joint-view-safe)"
            ),
        )
    server: dict[Any, Any] = secagg_views(sa).iloc[0].to_dict()
    by_site = {
        d: secagg_dropouts(sa, dropped=(d,)).set_index("remedy").to_dict("index") for d in droppable
    }

    def secagg_drop(d: int) -> dict[str, Any]:
        none = by_site[d]["none"]
        return {
            "dropout_std_ratio": float(none["std_ratio"]),
            "dropout_epsilon": float(none["epsilon"]),
            "dropout_promised": float(none["promised_epsilon"]),
        }

    sa_drop = worst_drop(secagg_drop)
    drops: dict[Any, dict[Any, Any]] = by_site[sa_drop["dropout_site"] - 1]
    certified, not_refuted = _tolerated_secagg(sa)
    over = drops["over-provisioned"]
    cost = secagg_cost(sites=s, coordinates=coords, bits=sa.bits)
    add(
        "secagg",
        noise_std=sa.tau_agg,
        std_ratio=sa.tau_agg / central,
        aggregator_epsilon=float(server["epsilon"]),
        aggregator_promised=float(server["promised_epsilon"]),
        trusted=f"fewer than t = {sa.threshold} sites colluding with the server",
        colluders_tolerated=certified,
        masks_tolerated=sa.threshold - 1,
        **sa_drop,
        remedy="over-provisioned shares (σ sized for one dropout)",
        remedy_std_ratio=float(over["std_ratio"]),
        remedy_rounds=int(over["rounds"]),
        messages=cost.rounds * s,
        bits_per_site=cost.bits_per_site,
        bits_total=cost.bits_per_site * s,
        source="KLS 2021 Prop. 14 eq. (17) + CKS 2020 Prop. 12; Bonawitz et al. 2017",
    )
    rows[-1]["aggregator_exact_epsilon"] = float(server["exact_epsilon"])
    rows[-1]["colluders_exact"] = not_refuted
    add(
        "shuffle",
        **{**conventional, "trusted": "the shuffler (never to collude with the analyst)"},
        source="Feldman, McMillan & Talwar 2021 Thm. 3.1 (needs n ≥ 16 ln(4/δ) e^ε₀)",
    )
    out = pd.DataFrame(rows)
    out["shuffle_epsilon"] = out["aggregator_epsilon"]
    out.loc[out["scheme"] == "shuffle", "shuffle_epsilon"] = shuffled
    return TrustOverview(
        table=out,
        secagg=sa,
        shuffle_parties=shuffle_min_parties(float(eps[0]), delta=float(dlt[0])),
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
    scheme's noise afresh from its own stream: central = the pooled Σ μ_s A_s plus
    symmetric noise τ_pool; local = site 1 alone; conventional, CAPE (both designs) as in
    :func:`dpcore.pca_sweep`; secure aggregation = one faithful round of
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
    reference = dataset.reference
    best = optimal_energy(reference, kk)
    tau = _taus(record)
    paper = _cape("cape", tau, mu)
    design = trust_secagg_design(
        record, dim=d, bits=bits, scale=scale, calibration=secagg_calibration
    )
    values = free_entries(moments, 2)
    exact = mu @ values  # Σ μ_s a_s, what the server is meant to learn (free entries)

    def ratio(basis: NDArray[np.float64]) -> float:
        return captured_energy(basis, reference) / best

    rows: list[dict[str, object]] = []
    zero = {
        "wraparounds": 0,
        "coordinates": 0,
        "quantisation_rms": 0.0,
        "quantisation_bound": 0.0,
        "error_ratio": 0.0,
        "range_used": 0.0,
    }
    half = 2.0 ** (design.bits - 1)
    for run, run_rng in enumerate(noise_rng.spawn(reps)):
        streams = dict(zip(SCHEMES, run_rng.spawn(len(SCHEMES)), strict=True))
        bases = {
            "nonprivate": nonprivate_pca(moments, kk, weights=mu),
            "central": top_k_eigvecs(
                pooled_plus_noise(moments, mu, paper.tau_pool, rng=streams["central"]), kk
            ),
            "local": local_pca(moments[0], kk, tau=float(tau[0]), rng=streams["local"]),
            "conventional": conv_pca(
                moments, kk, tau_site=tau, weights=mu, faithful=False,
                rng=streams["conventional"],
            ),
            "cape": cape_pca(
                moments, kk, tau_site=tau, weights=mu, faithful=False, rng=streams["cape"]
            ),
            "cape_joint": cape_pca(
                moments, kk, tau_site=tau, weights=mu, faithful=False, design="joint",
                rng=streams["cape_joint"],
            ),
            "shuffle": conv_pca(
                moments, kk, tau_site=tau, weights=mu, faithful=False, rng=streams["shuffle"]
            ),
        }  # fmt: skip
        sa = secagg_sum(values, design, faithful=True, rng=streams["secagg"])
        bases["secagg"] = top_k_eigvecs(expand_symmetric(sa.estimate, d, 2), kk)
        rounding = design.scale * sa.quantised.sum(axis=0) - exact
        for scheme in PCA_SCHEMES:
            extra = zero
            if scheme == "secagg":
                extra = {
                    "wraparounds": sa.wraparounds,
                    "coordinates": design.coordinates,
                    "quantisation_rms": float(np.sqrt(np.mean(rounding**2))),
                    "quantisation_bound": design.rounding_std,
                    "error_ratio": float(np.sqrt(np.mean((sa.estimate - exact) ** 2)))
                    / paper.tau_pool,
                    "range_used": max(float(sa.total.max()) + 1.0, -float(sa.total.min())) / half,
                }
            rows.append(
                {"scheme": scheme, "run": run, "captured_energy_ratio": ratio(bases[scheme])}
                | extra
            )
    return pd.DataFrame(rows)
