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

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from dpcore._validation import (
    check_int,
)
from dpcore.analysis.round_views import rounds_collusion_curve, rounds_party_views
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

ITERATIVE_SCHEMES = ("npm", "npm_distributed", "npm_cape", "npm_cape_joint", "fedpower", "fedpca")
FLOAT_BITS = 64  # a real on the wire, as in dpcore.analysis.trust_models
NO_MASKS = "no masks: not secure aggregation"
NO_DROPOUT = "not analysed over T rounds: a dropped site leaves the rounds after it short"


def _tolerated(curve: pd.DataFrame) -> int:
    """Largest k whose every coalition keeps every promise in the joint view (−1: none)."""
    joint = curve[curve["view"] == "all releases"].sort_values("colluding")
    k = -1
    for size, meets in zip(joint["colluding"].tolist(), joint["meets"].tolist(), strict=True):
        if meets is pd.NA or not bool(meets):
            break
        k = int(size)
    return k


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
        One row per :data:`ITERATIVE_SCHEMES`: ``scheme``, ``rounds``; ``noise_std`` (std per
        entry of one round's pooled aggregate A X + noise) and ``std_ratio`` (over the
        one-shot central τ_pool = max_s μ_s τ_s); ``aggregator_epsilon`` (worst site's ε over
        all T rounds in what the aggregator or curator sees, exact at its δ_s; ∞ for a
        curator), ``aggregator_exact_epsilon`` (the same: every view here is Gaussian) and
        ``aggregator_promised`` (its ε_s); ``trusted``;
        ``colluders_tolerated`` (as in the one-shot table, over all T rounds);
        ``bits_per_site``, ``bits_total`` (float64 reals of one run, the registry's cost
        at D, K, T); ``not_applicable`` (which of the one-shot table's columns do not apply,
        in words); ``source``. ``noise_std``/``std_ratio`` are None where the method has no
        pooled noisy aggregate (FedPower, federated PCA), and ``not_applicable`` says why.

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
    s = check_int(n.size, "n_per_site (number of sites)", low=2, high=MAX_COLLUSION_SITES)
    eps, dlt, mu = np.array(record.epsilon), np.array(record.delta), record.mu
    d = check_int(dim, "dim", low=1, high=60)
    kk = check_int(k, "k", low=1, high=d)
    t = check_rounds(rounds)
    nbr = record.neighbouring
    tau = record.moment_taus
    sens = second_moment_sensitivity(n, neighbouring=nbr)
    central = float(np.max(mu * tau))
    own = effective_epsilons(tau, sens, delta=dlt)  # each site's releases, T rounds composed
    worst_own = int(np.argmax(own / eps))
    rows = []

    def add(
        scheme: str, noise_std: float | None, epsilon_seen: float, site: int, **rest: object
    ) -> None:
        method = pca_method(scheme)
        if method.with_rounds is not None:
            method = method.with_rounds(t)
        cost = method.cost(CostShape(dim=d, k=kk, sites=s, rank=min(2 * kk, d)))
        total = cost.noise_generator + cost.aggregator + cost.sites
        rows.append(
            {
                "scheme": scheme,
                "rounds": method.rounds,
                "noise_std": noise_std,
                "std_ratio": None if noise_std is None else noise_std / central,
                "aggregator_epsilon": epsilon_seen,
                "aggregator_promised": float(eps[site]),
                "aggregator_exact_epsilon": epsilon_seen,  # Gaussian views: exact
                "bits_per_site": FLOAT_BITS * cost.sites // s,
                "bits_total": FLOAT_BITS * total,
                **rest,
            }
        )

    add(
        "npm",
        pooled_round_std(tau, weights=mu, rounds=t),
        math.inf,
        int(np.argmax(mu * tau)),
        trusted="a curator who holds every site's data",
        colluders_tolerated=s - 1,
        not_applicable=f"masks: {NO_MASKS}; dropout: the curator holds the data",
        source="Hardt & Price 2014, Fig. 3; σ = sqrt(T)·max_s μ_s τ_s",
    )
    add(
        "npm_distributed",
        float(np.sqrt(np.sum(mu**2 * per_round_std(tau, rounds=t) ** 2))),
        float(own[worst_own]),
        worst_own,
        trusted="nobody (each site's every release carries sqrt(T)·τ_s)",
        colluders_tolerated=s - 1,
        not_applicable=f"masks: {NO_MASKS}; dropout: {NO_DROPOUT}",
        source="Balcan et al. 2016; σ_s = sqrt(T)·τ_s per round",
    )
    for scheme, design in (("npm_cape", "cape"), ("npm_cape_joint", "joint")):
        views = rounds_party_views(
            tau, rounds=t, design=design, sensitivity=sens, delta=dlt, epsilon=eps, weights=mu
        )
        agg = views[views.party == "aggregator"]
        worst = int(np.argmax(agg.epsilon_joint.to_numpy() / eps[agg.site.to_numpy() - 1]))
        curve = rounds_collusion_curve(
            tau, rounds=t, design=design, sensitivity=sens, delta=dlt, epsilon=eps, weights=mu
        )
        add(
            scheme,
            cape_round_design(tau, weights=mu, rounds=t, design=design).tau_agg,
            float(agg.epsilon_joint.iloc[worst]),
            int(agg.site.iloc[worst]) - 1,
            trusted="the noise generator (fresh zero-sum E's every round)",
            colluders_tolerated=_tolerated(curve),
            not_applicable=f"masks: {NO_MASKS}; dropout: {NO_DROPOUT}",
            source="Imtiaz & Sarwate Alg. 5 in every round of Hardt & Price Fig. 1 (new, #38)",
        )
    add(
        "fedpower",
        None,
        float(own[worst_own]),
        worst_own,
        trusted="nobody (each site perturbs its own local iterates)",
        colluders_tolerated=s - 1,
        not_applicable="noise std: no pooled noisy aggregate (sites average their own noisy "
        f"iterates every p rounds); masks: {NO_MASKS}; dropout: {NO_DROPOUT}",
        source="Guo et al. 2024, Alg. 1; every local iteration charged",
    )
    add(
        "fedpca",
        None,
        float(own[worst_own]),
        worst_own,
        trusted="nobody (each site releases its own private subspace once)",
        colluders_tolerated=s - 1,
        not_applicable="noise std: no pooled noisy aggregate (subspaces merged up a tree); "
        f"masks: {NO_MASKS}; dropout: the merge skips a missing site's subspace",
        source="Grammenos et al. 2020; one release per site",
    )
    return pd.DataFrame(rows)
