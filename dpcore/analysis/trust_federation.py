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

import itertools
import warnings

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from dpcore._validation import check_int
from dpcore.analysis.views import (
    EPS_TOL,
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
CASES = (
    ("helper, sealed remedy",
     "noise generator", "after one dropout, all it may hold: the remaining releases and one c"),
    ("helper, open remedy",
     "noise generator", "after one dropout, also the dropped site's late release"),
    ("helper, open remedy, repeated",
     "noise generator", "… and as many answers c as it asks for"),
    ("helper, joint view",
     "noise generator", "every release, no dropout"),
    ("helper, aggregator + one site",
     "noise generator", "every release and one site's E, F and G"),
    ("pairwise, joint view",
     "nobody but the aggregator not colluding", "every release, no dropout"),
    ("pairwise, aggregator + one site",
     "nobody but the aggregator not colluding",
     "every release and every pair noise the site shares"),
    ("pairwise, one dropout",
     "nobody but the aggregator not colluding", "nothing: the run is refused"),
)  # fmt: skip


def _worst(
    eps: NDArray[np.float64], promised: NDArray[np.float64], sites: NDArray[np.intp]
) -> tuple[float, float, int]:
    """(ε, ε_s, 1-based site) of the site with the largest ε/ε_s."""
    at = int(np.argmax(eps / promised[sites]))
    return float(eps[at]), float(promised[sites][at]), int(sites[at]) + 1


def _design_cases(
    made: CapeDesign,
    sens: NDArray[np.float64],
    eps: NDArray[np.float64],
    dlt: NDArray[np.float64],
) -> dict[str, tuple[float, float, int]]:
    s = made.n_sites
    everyone = np.arange(s)
    out: dict[str, tuple[float, float, int]] = {}
    remedies = [
        remedy_worst_case(made, [d], sensitivity=sens, epsilon=eps, delta=dlt)
        for d in range(s)
        if np.delete(made.weights, d).sum() > 0
    ]
    for case, view in (
        ("helper, sealed remedy", "sealed"),
        ("helper, open remedy", "late"),
        ("helper, open remedy, repeated", "late, repeated"),
    ):
        worst = max(
            (_worst(r.epsilon[view], eps, everyone) for r in remedies),
            key=lambda w: w[0] / w[1],
        )
        out[case] = worst
    normal = coalition_view(made)
    out["helper, joint view"] = _worst(
        effective_epsilons(normal.joint_std, sens, delta=dlt), eps, everyone
    )
    _, cov = pairwise_coalition_covariance(made, ())
    out["pairwise, joint view"] = _worst(
        effective_epsilons(joint_noise_std(cov), sens, delta=dlt), eps, everyone
    )
    helper_one, pair_one = [], []
    for (c,) in itertools.combinations(range(s), 1):
        seen = coalition_view(made, (c,))
        h = seen.honest
        helper_one.append(_worst(effective_epsilons(seen.joint_std, sens[h], delta=dlt[h]), eps, h))
        honest, cov = pairwise_coalition_covariance(made, (c,))
        pair_one.append(
            _worst(
                effective_epsilons(joint_noise_std(cov), sens[honest], delta=dlt[honest]),
                eps,
                honest,
            )
        )
    out["helper, aggregator + one site"] = max(helper_one, key=lambda w: w[0] / w[1])
    out["pairwise, aggregator + one site"] = max(pair_one, key=lambda w: w[0] / w[1])
    out["pairwise, one dropout"] = (0.0, float(eps[0]), 0)
    return out


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
        One row per case: ``case``, ``trusted``, ``holds`` (what the aggregator holds), and
        per design ``<design> epsilon``, ``<design> promised``, ``<design> site`` (1-based;
        0 where nothing is released) and ``<design> meets`` (ε ≤ ε_s).

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
    per_design = {kind: _design_cases(designs[kind], sens, eps, dlt) for kind in DESIGN_COLUMNS}
    rows = []
    for case, trusted, holds in CASES:
        row: dict[str, object] = {"case": case, "trusted": trusted, "holds": holds}
        for kind in DESIGN_COLUMNS:
            e, promised, site = per_design[kind][case]
            row[f"{kind} epsilon"] = e
            row[f"{kind} promised"] = promised
            row[f"{kind} site"] = site
            row[f"{kind} meets"] = bool(e <= promised * (1 + EPS_TOL))
        rows.append(row)
    return pd.DataFrame(rows)
