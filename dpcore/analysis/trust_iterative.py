"""The trust-models table's rows for the iterative methods (issue #38).

The noisy power method (central, distributed, CAPE in every round with either design;
:mod:`dpcore.factorization.iterative`), FedPower and one-shot federated PCA
(:mod:`dpcore.factorization.fedpca`), at the same sites and budgets as
:func:`dpcore.analysis.trust_models.trust_table`, every round charged against each site's
total (ε_s, δ_s). Where a quantity of the one-shot table does not apply, or is not analysed
for T rounds, the row says so in words (``None`` in the number columns, a sentence in
``not_applicable``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import cached_property, partial

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from dpcore._validation import check_choice, check_int
from dpcore.analysis.round_views import rounds_collusion_curve, rounds_party_views
from dpcore.analysis.trust_models import FLOAT_BITS, SiteArrays
from dpcore.analysis.views import MAX_COLLUSION_SITES, effective_epsilons
from dpcore.factorization.iterative import (
    DEFAULT_ROUNDS,
    cape_round_design,
    check_rounds,
    per_round_std,
    pooled_round_std,
)
from dpcore.factorization.registry import CostShape, pca_method
from dpcore.mechanisms.calibration import CalibrationLike, second_moment_sensitivity
from dpcore.protocol.sites import Sites, as_sites

NO_MASKS = "no masks: not secure aggregation"
NO_DROPOUT = "not analysed over T rounds: a dropped site leaves the rounds after it short"


@dataclass(frozen=True, kw_only=True)
class IterativeRow:
    """One iterative method's row of :func:`iterative_trust_table`; the fields are its columns.

    Attributes
    ----------
    scheme : str
        The method's name (:data:`ITERATIVE_SCHEMES`, a registered PCA algorithm).
    rounds : int
        T (1 for one-shot federated PCA).
    noise_std : float or None
        Std per entry of one round's pooled aggregate A X + noise; None where the method
        has no pooled noisy aggregate (``not_applicable`` says why).
    std_ratio : float or None
        ``noise_std`` over the one-shot central τ_pool = max_s μ_s τ_s.
    aggregator_epsilon : float
        The worst site's ε over all T rounds in what the aggregator or curator sees, exact
        at its δ_s (∞ for a curator).
    aggregator_promised : float
        That site's ε_s.
    aggregator_exact_epsilon : float
        The same: every view here is Gaussian, its ε exact.
    bits_per_site, bits_total : int
        float64 reals of one run: the registry's cost at D, K, T.
    trusted : str
        Who must be trusted, in words.
    colluders_tolerated : int
        As in the one-shot table, over all T rounds.
    not_applicable : str
        Which of the one-shot table's columns do not apply, in words.
    source : str
        The paper and figure or algorithm.
    """

    scheme: str
    rounds: int
    noise_std: float | None
    std_ratio: float | None
    aggregator_epsilon: float
    aggregator_promised: float
    aggregator_exact_epsilon: float
    bits_per_site: int
    bits_total: int
    trusted: str
    colluders_tolerated: int
    not_applicable: str
    source: str


@dataclass(frozen=True, eq=False, kw_only=True)
class _Rounds(SiteArrays):
    """What every row is computed from: the sites, D, K, T and each site's own releases."""

    dim: int
    k: int
    rounds: int

    @property
    def central(self) -> float:
        """The one-shot central τ_pool = max_s μ_s τ_s, the unit of every std ratio."""
        return float(np.max(self.mu * self.tau))

    @cached_property
    def own(self) -> tuple[float, int]:
        """The worst site's exact ε in its own releases, T rounds composed, and that site."""
        seen = effective_epsilons(self.tau, self.sens, delta=self.dlt)
        worst = int(np.argmax(seen / self.eps))
        return float(seen[worst]), worst


def _tolerated(curve: pd.DataFrame) -> int:
    """Largest k whose every coalition keeps every promise in the joint view (−1: none)."""
    joint = curve[curve["view"] == "all releases"].sort_values("colluding")
    k = -1
    for size, meets in zip(joint["colluding"].tolist(), joint["meets"].tolist(), strict=True):
        if meets is pd.NA or not bool(meets):
            break
        k = int(size)
    return k


def _row(
    scheme: IterativeScheme,
    at: _Rounds,
    *,
    noise_std: float | None,
    epsilon_seen: float,
    site: int,
    colluders_tolerated: int,
) -> IterativeRow:
    """A row: ``site`` (0-based) is the worst; cost from the registry; words from the record."""
    method = pca_method(scheme.name)
    if method.with_rounds is not None:
        method = method.with_rounds(at.rounds)
    cost = method.cost(CostShape(dim=at.dim, k=at.k, sites=at.sites, rank=min(2 * at.k, at.dim)))
    return IterativeRow(
        scheme=scheme.name,
        rounds=method.rounds,
        noise_std=noise_std,
        std_ratio=None if noise_std is None else noise_std / at.central,
        aggregator_epsilon=epsilon_seen,
        aggregator_promised=float(at.eps[site]),
        aggregator_exact_epsilon=epsilon_seen,  # Gaussian views: exact
        bits_per_site=FLOAT_BITS * cost.sites // at.sites,
        bits_total=FLOAT_BITS * (cost.noise_generator + cost.aggregator + cost.sites),
        trusted=scheme.trusted,
        colluders_tolerated=colluders_tolerated,
        not_applicable=scheme.not_applicable,
        source=scheme.source,
    )


def _npm_row(scheme: IterativeScheme, at: _Rounds) -> IterativeRow:
    """A curator adds sqrt(T)·τ_pool to A X every round and sees the data."""
    return _row(
        scheme, at, noise_std=pooled_round_std(at.tau, weights=at.mu, rounds=at.rounds),
        epsilon_seen=math.inf, site=int(np.argmax(at.mu * at.tau)),
        colluders_tolerated=at.sites - 1,
    )  # fmt: skip


def _distributed_row(scheme: IterativeScheme, at: _Rounds) -> IterativeRow:
    """Each site adds sqrt(T)·τ_s to its own A_s X every round: sqrt(Σ μ_s² σ_s²) pooled."""
    pooled = np.sqrt(np.sum(at.mu**2 * per_round_std(at.tau, rounds=at.rounds) ** 2))
    epsilon_seen, site = at.own
    return _row(
        scheme, at, noise_std=float(pooled), epsilon_seen=epsilon_seen, site=site,
        colluders_tolerated=at.sites - 1,
    )  # fmt: skip


def _cape_rounds_row(scheme: IterativeScheme, at: _Rounds, *, design: str) -> IterativeRow:
    """CAPE in every round (``design`` ``"cape"`` or ``"joint"``), fresh E's each round."""
    views = rounds_party_views(
        at.tau, rounds=at.rounds, design=design, sensitivity=at.sens, delta=at.dlt,
        epsilon=at.eps, weights=at.mu,
    )  # fmt: skip
    agg = views[views.party == "aggregator"]
    worst = int(np.argmax(agg.epsilon_joint.to_numpy() / at.eps[agg.site.to_numpy() - 1]))
    curve = rounds_collusion_curve(
        at.tau, rounds=at.rounds, design=design, sensitivity=at.sens, delta=at.dlt,
        epsilon=at.eps, weights=at.mu,
    )  # fmt: skip
    made = cape_round_design(at.tau, weights=at.mu, rounds=at.rounds, design=design)
    return _row(
        scheme, at, noise_std=made.tau_agg, epsilon_seen=float(agg.epsilon_joint.iloc[worst]),
        site=int(agg.site.iloc[worst]) - 1, colluders_tolerated=_tolerated(curve),
    )  # fmt: skip


def _own_releases_row(scheme: IterativeScheme, at: _Rounds) -> IterativeRow:
    """No pooled noisy aggregate: the aggregator sees each site's own noisy releases."""
    epsilon_seen, site = at.own
    return _row(
        scheme, at, noise_std=None, epsilon_seen=epsilon_seen, site=site,
        colluders_tolerated=at.sites - 1,
    )  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class IterativeScheme:
    """One iterative method of :func:`iterative_trust_table`: its words and its row function.

    A new iterative method is a registered PCA algorithm (:mod:`dpcore.factorization.registry`,
    whose cost the row reads) and one record here.

    Attributes
    ----------
    name : str
        The registered algorithm's name, the ``scheme`` column.
    trusted, not_applicable, source : str
        The row's words (:class:`IterativeRow`).
    row : callable
        ``row(scheme, rounds) -> IterativeRow``: the method's numbers at one setting.
    """

    name: str
    trusted: str
    not_applicable: str
    source: str
    row: Callable[[IterativeScheme, _Rounds], IterativeRow]


REGISTRY = (
    IterativeScheme(
        name="npm",
        trusted="a curator who holds every site's data",
        not_applicable=f"masks: {NO_MASKS}; dropout: the curator holds the data",
        source="Hardt & Price 2014, Fig. 3; σ = sqrt(T)·max_s μ_s τ_s",
        row=_npm_row,
    ),
    IterativeScheme(
        name="npm_distributed",
        trusted="nobody (each site's every release carries sqrt(T)·τ_s)",
        not_applicable=f"masks: {NO_MASKS}; dropout: {NO_DROPOUT}",
        source="Balcan et al. 2016; σ_s = sqrt(T)·τ_s per round",
        row=_distributed_row,
    ),
    IterativeScheme(
        name="npm_cape",
        trusted="the noise generator (fresh zero-sum E's every round)",
        not_applicable=f"masks: {NO_MASKS}; dropout: {NO_DROPOUT}",
        source="Imtiaz & Sarwate Alg. 5 in every round of Hardt & Price Fig. 1 (new, #38)",
        row=partial(_cape_rounds_row, design="cape"),
    ),
    IterativeScheme(
        name="npm_cape_joint",
        trusted="the noise generator (fresh zero-sum E's every round)",
        not_applicable=f"masks: {NO_MASKS}; dropout: {NO_DROPOUT}",
        source="Imtiaz & Sarwate Alg. 5 in every round of Hardt & Price Fig. 1 (new, #38)",
        row=partial(_cape_rounds_row, design="joint"),
    ),
    IterativeScheme(
        name="fedpower",
        trusted="nobody (each site perturbs its own local iterates)",
        not_applicable="noise std: no pooled noisy aggregate (sites average their own noisy "
        f"iterates every p rounds); masks: {NO_MASKS}; dropout: {NO_DROPOUT}",
        source="Guo et al. 2024, Alg. 1; every local iteration charged",
        row=_own_releases_row,
    ),
    IterativeScheme(
        name="fedpca",
        trusted="nobody (each site releases its own private subspace once)",
        not_applicable="noise std: no pooled noisy aggregate (subspaces merged up a tree); "
        f"masks: {NO_MASKS}; dropout: the merge skips a missing site's subspace",
        source="Grammenos et al. 2020; one release per site",
        row=_own_releases_row,
    ),
)
ITERATIVE_SCHEMES = tuple(scheme.name for scheme in REGISTRY)


def iterative_scheme(name: object) -> IterativeScheme:
    """The record of the iterative method ``name``; ValueError naming the choices if not one.

    Examples
    --------
    >>> iterative_scheme("fedpca").source
    'Grammenos et al. 2020; one release per site'
    >>> iterative_scheme("cape")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: scheme must be one of ['npm', 'npm_distributed', ...]; got 'cape'
    """
    return REGISTRY[ITERATIVE_SCHEMES.index(check_choice(name, "scheme", ITERATIVE_SCHEMES))]


def iterative_trust_table(
    n_per_site: Sites | ArrayLike,
    *,
    epsilon: ArrayLike | None = None,
    delta: ArrayLike | None = None,
    weights: ArrayLike | None = None,
    dim: int = 20,
    k: int = 1,
    rounds: int = DEFAULT_ROUNDS,
    calibration: CalibrationLike = None,
    neighbouring: str | None = None,
) -> pd.DataFrame:
    """One row per iterative method: noise per round, trust, collusion and communication.

    Parameters
    ----------
    n_per_site : Sites, or sequence of int, length S in [2, 40]
        The sites (:class:`dpcore.Sites`), or N_s with ``epsilon``, ``delta``, ``weights``,
        ``calibration`` and ``neighbouring`` (the older form,
        :func:`dpcore.protocol.sites.as_sites`).
    epsilon, delta : float or array_like, shape (S,)
        ε_s in (0, 10⁶) (:data:`~dpcore.resources.MAX_TRUST_EPSILON`) and δ_s in
        (0, 1), each site's total over all rounds.
    weights : array_like, shape (S,), optional
        μ_s (default 1/S).
    dim, k : int
        D in [1, 60] and K in [1, D] (communication only).
    rounds : int
        T in [1, 1000] for the power methods and FedPower (federated PCA is one-shot).
    calibration : Calibration or {"analytic", "classic"}, optional
    neighbouring : {"add-remove", "replace"}, optional

    Returns
    -------
    pandas.DataFrame
        One row per :data:`ITERATIVE_SCHEMES` (:data:`REGISTRY`); the columns are the fields
        of :class:`IterativeRow`, in order, each documented there: ``scheme``, ``rounds``,
        the noise per round and its ratio to the one-shot central τ_pool (None where the
        method has no pooled noisy aggregate: FedPower, federated PCA), the worst site's ε
        over all T rounds in what the aggregator sees, the bits, who is trusted, the
        colluders tolerated, what does not apply (in words) and the source.

    Notes
    -----
    The CAPE rows' views are those of :mod:`dpcore.analysis.round_views` (independent E's per
    round); distributed, FedPower and federated PCA show the aggregator each site's own
    noisy releases, whose T rounds compose to exactly the one-release std τ_s.
    """
    record = as_sites(
        n_per_site, epsilon=epsilon, delta=delta, weights=weights, calibration=calibration,
        neighbouring=neighbouring,
    )  # fmt: skip
    n = np.array(record.n_per_site)
    check_int(n.size, "n_per_site (number of sites)", low=2, high=MAX_COLLUSION_SITES)
    eps, dlt, mu = np.array(record.epsilon), np.array(record.delta), record.mu
    d = check_int(dim, "dim", low=1, high=60)
    kk = check_int(k, "k", low=1, high=d)
    t = check_rounds(rounds)
    at = _Rounds(
        n=n, eps=eps, dlt=dlt, mu=mu, tau=record.moment_taus,
        sens=second_moment_sensitivity(n, neighbouring=record.neighbouring), dim=d, k=kk,
        rounds=t,
    )  # fmt: skip
    return pd.DataFrame([asdict(scheme.row(scheme, at)) for scheme in REGISTRY])
