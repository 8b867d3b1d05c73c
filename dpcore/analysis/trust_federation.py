"""CAPE across real sites: what each way of running it trusts, and what a lying party learns.

The Trust models page compares schemes on what an honest-but-curious aggregator sees. Run
across real processes (``federated/``, docs/federated.md) an aggregator may do more: hold a
dropped site's late release, ask for the remedy again, or collude with one site. This module
puts those cases side by side for the two ways the lab runs CAPE — with a trusted noise
generator (Imtiaz & Sarwate, Alg. 1 and 5) and with pairwise noise instead of it
(:mod:`dpcore.protocol.pairwise`) — each as the worst site's exact ε against its promise:

* the helper scheme's dropout remedy, **open** (a late release readable: the paper-era
  remedy) and **sealed** (the lab's federation: a late release stays sealed, one answer per
  run), the worst over which site drops (:func:`dpcore.remedy_worst_case`);
* the aggregator's joint view and the aggregator with any one site, for the helper scheme
  (:func:`dpcore.coalition_view`) and the pairwise one
  (:func:`dpcore.protocol.pairwise.pairwise_coalition_covariance`: a colluding site knows
  every pair noise it shares, not only its own E);
* a dropout under the pairwise scheme: a refusal (no party knows the missing pair noises).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, partial

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from dpcore._validation import check_int
from dpcore.analysis.views import (
    EPS_TOL,
    RemedyWorstCase,
    coalition_view,
    effective_epsilons,
    joint_noise_std,
    remedy_worst_case,
)
from dpcore.mechanisms.calibration import (
    CalibrationLike,
    ClassicGaussianWarning,
    second_moment_sensitivity,
)
from dpcore.protocol.cape import CapeDesign
from dpcore.protocol.joint_safe import design_for
from dpcore.protocol.pairwise import pairwise_coalition_covariance
from dpcore.protocol.sites import Sites, as_sites

DESIGN_COLUMNS = {"cape": "paper's design", "joint": "joint-view-safe design"}
_HELPER = "noise generator"
_PAIRWISE = "nobody but the aggregator not colluding"


@dataclass(frozen=True)
class _Worst:
    """The site with the largest ε/ε_s in one case: its ε, its ε_s, it (1-based; 0: none)."""

    epsilon: float
    promised: float
    site: int


def _over_promise(worst: _Worst) -> float:
    """ε/ε_s, by which the worst site is chosen."""
    return worst.epsilon / worst.promised


@dataclass(frozen=True, eq=False)
class _Design:
    """One CAPE design at the sites' D×D second moments: what every case is computed from."""

    made: CapeDesign
    sens: NDArray[np.float64]
    eps: NDArray[np.float64]
    dlt: NDArray[np.float64]

    def worst(self, eps: NDArray[np.float64], sites: NDArray[np.intp]) -> _Worst:
        """(ε, ε_s, 1-based site) of the site of ``sites`` with the largest ε/ε_s."""
        at = int(np.argmax(eps / self.eps[sites]))
        return _Worst(float(eps[at]), float(self.eps[sites][at]), int(sites[at]) + 1)

    def worst_seen(self, std: NDArray[np.float64], sites: NDArray[np.intp]) -> _Worst:
        """The worst of ``sites`` (0-based) when their releases carry joint noise ``std``."""
        return self.worst(effective_epsilons(std, self.sens[sites], delta=self.dlt[sites]), sites)

    @property
    def everyone(self) -> NDArray[np.intp]:
        """Every site, 0-based."""
        return np.arange(self.made.n_sites)

    @cached_property
    def remedies(self) -> list[RemedyWorstCase]:
        """The remedy's views when each site that can drop (positive survivors) drops."""
        return [
            remedy_worst_case(self.made, [d], sensitivity=self.sens, epsilon=self.eps,
                              delta=self.dlt)
            for d in range(self.made.n_sites)
            if np.delete(self.made.weights, d).sum() > 0
        ]  # fmt: skip


def _remedy(at: _Design, *, view: str) -> _Worst:
    """The helper scheme's remedy seen as ``view``, the worst over which site drops."""
    return max((at.worst(r.epsilon[view], at.everyone) for r in at.remedies), key=_over_promise)


def _helper_joint(at: _Design) -> _Worst:
    """The aggregator's joint view of every release, no dropout (helper scheme)."""
    return at.worst_seen(coalition_view(at.made).joint_std, at.everyone)


def _pairwise_joint(at: _Design) -> _Worst:
    """The same with pairwise noise instead of the noise generator."""
    _, cov = pairwise_coalition_covariance(at.made, ())
    return at.worst_seen(joint_noise_std(cov), at.everyone)


def _helper_and_one_site(at: _Design) -> _Worst:
    """The aggregator with any one site (its E, F and G), the worst over which site."""
    seen = (coalition_view(at.made, (c,)) for c in range(at.made.n_sites))
    return max((at.worst_seen(v.joint_std, v.honest) for v in seen), key=_over_promise)


def _pairwise_and_one_site(at: _Design) -> _Worst:
    """The aggregator with any one site, which knows every pair noise it shares."""
    worst = []
    for c in range(at.made.n_sites):
        honest, cov = pairwise_coalition_covariance(at.made, (c,))
        worst.append(at.worst_seen(joint_noise_std(cov), honest))
    return max(worst, key=_over_promise)


def _refused(at: _Design) -> _Worst:
    """A pairwise run with a dropout is refused: nothing is released (site 0)."""
    return _Worst(0.0, float(at.eps[0]), 0)


@dataclass(frozen=True, kw_only=True)
class FederationCase:
    """One case of :func:`federation_trust`: what the aggregator holds, and its worst site.

    A new case is one record in :data:`REGISTRY` and its function here.

    Attributes
    ----------
    name : str
        The ``case`` column.
    trusted : str
        Who must be trusted.
    holds : str
        What the aggregator holds, in words.
    worst : callable
        ``worst(design) -> _Worst``: the site with the largest ε/ε_s, for one design.
    """

    name: str
    trusted: str
    holds: str
    worst: Callable[[_Design], _Worst]


REGISTRY = (
    FederationCase(
        name="helper, sealed remedy", trusted=_HELPER,
        holds="after one dropout, all it may hold: the remaining releases and one c",
        worst=partial(_remedy, view="sealed"),
    ),
    FederationCase(
        name="helper, open remedy", trusted=_HELPER,
        holds="after one dropout, also the dropped site's late release",
        worst=partial(_remedy, view="late"),
    ),
    FederationCase(
        name="helper, open remedy, repeated", trusted=_HELPER,
        holds="… and as many answers c as it asks for",
        worst=partial(_remedy, view="late, repeated"),
    ),
    FederationCase(
        name="helper, joint view", trusted=_HELPER, holds="every release, no dropout",
        worst=_helper_joint,
    ),
    FederationCase(
        name="helper, aggregator + one site", trusted=_HELPER,
        holds="every release and one site's E, F and G", worst=_helper_and_one_site,
    ),
    FederationCase(
        name="pairwise, joint view", trusted=_PAIRWISE, holds="every release, no dropout",
        worst=_pairwise_joint,
    ),
    FederationCase(
        name="pairwise, aggregator + one site", trusted=_PAIRWISE,
        holds="every release and every pair noise the site shares", worst=_pairwise_and_one_site,
    ),
    FederationCase(
        name="pairwise, one dropout", trusted=_PAIRWISE, holds="nothing: the run is refused",
        worst=_refused,
    ),
)  # fmt: skip
CASES = tuple((case.name, case.trusted, case.holds) for case in REGISTRY)


def federation_trust(
    n_per_site: Sites | ArrayLike,
    *,
    epsilon: ArrayLike | None = None,
    delta: ArrayLike | None = None,
    weights: ArrayLike | None = None,
    calibration: CalibrationLike = None,
    neighbouring: str | None = None,
) -> pd.DataFrame:
    """The worst site's exact ε in each case of :data:`CASES`, for both designs.

    The paper's design and the joint-view-safe one, on the sites' D×D second moments.

    Parameters
    ----------
    n_per_site : Sites, or sequence of int, length S in [2, 40]
        The sites (:class:`dpcore.Sites`), or N_s with the keywords below (the older form).
    epsilon, delta : float or array_like, shape (S,)
        ε_s in (0, 10⁶) and δ_s in (0, 1).
    weights : array_like, shape (S,), optional
        μ_s ≥ 0 summing to 1 (default 1/S).
    calibration : Calibration or {"analytic", "classic"}, optional
    neighbouring : {"add-remove", "replace"}, optional
        As :func:`dpcore.analysis.trust_models.trust_table` (D×D second moments; Δ_s from
        :func:`dpcore.second_moment_sensitivity`).

    Returns
    -------
    pandas.DataFrame
        One row per case (:data:`REGISTRY`): ``case``, ``trusted``, ``holds`` (what the
        aggregator holds), and per design ``<design> epsilon``, ``<design> promised``,
        ``<design> site`` (1-based; 0 where nothing is released) and ``<design> meets``
        (ε ≤ ε_s).

    Examples
    --------
    >>> t = federation_trust([500, 500, 500], epsilon=1.0, delta=1e-5).set_index("case")
    >>> bool(t.loc["helper, sealed remedy", "joint meets"])
    True
    >>> bool(t.loc["helper, open remedy", "joint meets"])
    False
    >>> bool(t.loc["pairwise, aggregator + one site", "joint meets"])
    False
    """
    if not isinstance(n_per_site, Sites):
        sizes = np.asarray(n_per_site)
        if sizes.ndim != 1 or sizes.dtype.kind not in "iuf":
            raise TypeError(f"n_per_site must be a sequence of integers; got {n_per_site!r}")
    record = as_sites(
        n_per_site, epsilon=epsilon, delta=delta, weights=weights, calibration=calibration,
        neighbouring=neighbouring,
    )  # fmt: skip
    n = np.array(record.n_per_site)
    check_int(n.size, "n_per_site (number of sites)", low=2, high=40)
    eps, dlt, mu = np.array(record.epsilon), np.array(record.delta), record.mu
    neighbouring = record.neighbouring
    with warnings.catch_warnings():  # the page warns about classic at ε ≥ 1 once
        warnings.simplefilter("ignore", ClassicGaussianWarning)
        tau = record.moment_taus
        designs = {kind: design_for(kind, tau, weights=mu) for kind in DESIGN_COLUMNS}
    sens = second_moment_sensitivity(n, neighbouring=neighbouring)
    views = {kind: _Design(designs[kind], sens, eps, dlt) for kind in DESIGN_COLUMNS}
    rows = []
    for case in REGISTRY:
        row: dict[str, object] = {"case": case.name, "trusted": case.trusted, "holds": case.holds}
        for kind, view in views.items():
            worst = case.worst(view)
            row[f"{kind} epsilon"] = worst.epsilon
            row[f"{kind} promised"] = worst.promised
            row[f"{kind} site"] = worst.site
            row[f"{kind} meets"] = bool(worst.epsilon <= worst.promised * (1 + EPS_TOL))
        rows.append(row)
    return pd.DataFrame(rows)
