"""Who sees what when CAPE runs in every round of the power method (issue #38).

:func:`dpcore.factorization.iterative.cape_npm_pca` runs one CAPE protocol per round t = 1 … T
on the values A_s X_{t−1}, with the design for the per-round stds sqrt(T)·τ_s
(:func:`dpcore.factorization.iterative.cape_round_design`) and fresh, independent E, F and G
every round. A party's view of one round is the one-shot view of that design
(:mod:`dpcore.analysis.views`): site s is protected as by a Gaussian mechanism with std
σ_round,s (σ_release or σ_joint of :func:`dpcore.coalition_view`).

**Over all T rounds.** The rounds' noises are independent, so the view of all T rounds has
block-diagonal covariance diag(C, …, C); one record of site s moves its value in every round
by at most Δ_s (:func:`dpcore.factorization.iterative.per_round_std`, Notes), and the
Mahalanobis distance of the worst shift Δ_s e_s in every block is

    sqrt(T·Δ_s²·[C⁻¹]_ss) = sqrt(T)·Δ_s/σ_round,s.

X_{t−1} depends on earlier rounds only, so by adaptive composition of Gaussian mechanisms
(Dong, Roth & Su, JRSS-B 2022, Cor. 3.3 with Thm. 3.2) the T rounds are exactly one Gaussian
release of std σ_round,s/sqrt(T), equivalently one release of std σ_round,s with
sensitivity sqrt(T)·Δ_s. The functions here evaluate the one-shot views of the per-round
design at that sensitivity, so every view of the one-shot analysis (each party's, every
coalition's, the aggregator's joint view over all rounds) carries over unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from dpcore.analysis.views import coalition_report, collusion_curve, party_views
from dpcore.factorization.iterative import cape_round_design, check_rounds
from dpcore.protocol.cape import CapeDesign


def _per_round(
    tau_site: ArrayLike, weights: ArrayLike | None, rounds: object, design: str
) -> tuple[CapeDesign, int]:
    rounds = check_rounds(rounds)
    return cape_round_design(tau_site, weights=weights, rounds=rounds, design=design), rounds


def _scaled(sensitivity: ArrayLike, rounds: int) -> NDArray[np.float64]:
    """sqrt(T)·Δ_s: T independent rounds with std σ spend what one with this Δ spends."""
    return math.sqrt(rounds) * np.asarray(sensitivity, dtype=float)


def rounds_party_views(
    tau_site: ArrayLike,
    *,
    rounds: int,
    sensitivity: ArrayLike,
    delta: ArrayLike,
    epsilon: ArrayLike,
    weights: ArrayLike | None = None,
    design: str = "cape",
) -> pd.DataFrame:
    """Each party's view of all T rounds of CAPE per round, against each site's promise.

    Parameters
    ----------
    tau_site : array_like, shape (S,)
        τ_s, each site's one-release std at its total (ε_s, δ_s) (S ≥ 2).
    rounds : int
        T in [1, 1000].
    sensitivity, delta, epsilon : float or array_like, shape (S,)
        Δ_s of one round's value, δ_s and the promised total ε_s per site.
    weights : array_like, shape (S,), optional
        μ_s (default 1/S).
    design : {"cape", "joint"}
        The per-round design (:func:`dpcore.factorization.iterative.cape_round_design`).

    Returns
    -------
    pandas.DataFrame
        :func:`dpcore.party_views`' columns for the T rounds together: ``release_std`` and
        ``joint_std`` are the composed σ_round/sqrt(T) (one release with these std's is
        exactly as private as the T rounds), ``required_std`` is τ_s, and the ε's are of all T
        rounds at δ_s; plus ``rounds`` (T) and ``round_joint_std`` (σ_joint of one round).
        The aggregator's rows are its joint view over all T rounds.

    Examples
    --------
    >>> views = rounds_party_views([1.0] * 4, rounds=9, sensitivity=0.2, delta=1e-5, epsilon=1.0)
    >>> agg = views[views.party == "aggregator"]
    >>> bool(np.allclose(agg.round_joint_std / agg.joint_std, 3.0))  # sqrt(T)
    True
    """
    made, rounds = _per_round(tau_site, weights, rounds, design)
    out = party_views(made, sensitivity=_scaled(sensitivity, rounds), delta=delta, epsilon=epsilon)
    return _composed(out.assign(round_joint_std=out["joint_std"]), rounds)


def _composed(frame: pd.DataFrame, rounds: int) -> pd.DataFrame:
    """One round's views as one release: the std columns over sqrt(T), plus ``rounds``.

    One release with these std's spends exactly what the T rounds spend.
    """
    root = math.sqrt(rounds)
    return frame.assign(
        **{c: frame[c] / root for c in ("release_std", "joint_std", "required_std")},
        rounds=rounds,
    )


def rounds_coalition_report(
    tau_site: ArrayLike,
    colluding: Sequence[int] = (),
    *,
    rounds: int,
    sensitivity: ArrayLike,
    epsilon: ArrayLike,
    delta: ArrayLike,
    weights: ArrayLike | None = None,
    design: str = "cape",
    noise_generator: bool = False,
    exact_tau_site: ArrayLike | None = None,
) -> pd.DataFrame:
    """One coalition's view of all T rounds of CAPE per round, per honest site.

    Parameters as in :func:`rounds_party_views`; ``colluding`` (0-based sites) and
    ``noise_generator`` as in :func:`dpcore.coalition_report`, which knows the colluders'
    E_j and G_j of every round. ``exact_tau_site``: τ_s calibrated exactly (analytic), for a
    ``tau_site`` from the classic formula; given, the per-round design built from it gives
    :func:`dpcore.coalition_report`'s ``*_exact`` columns.

    Returns
    -------
    pandas.DataFrame
        :func:`dpcore.coalition_report`'s columns for the T rounds together: the ε's are of
        all T rounds at δ_s, ``release_std``, ``joint_std`` and ``required_std`` the composed
        σ/sqrt(T) (the ratios σ/τ_s are the same per round and composed); plus ``rounds``.

    Examples
    --------
    >>> kw = dict(sensitivity=0.2, delta=1e-5, epsilon=1.0)
    >>> one = rounds_coalition_report([1.0] * 4, rounds=1, **kw)
    >>> many = rounds_coalition_report([1.0] * 4, rounds=9, **kw)
    >>> bool(np.allclose(many.epsilon_joint, one.epsilon_joint))  # CAPE is linear in τ
    True
    """
    made, rounds = _per_round(tau_site, weights, rounds, design)
    exact = None
    if exact_tau_site is not None:
        exact = _per_round(exact_tau_site, weights, rounds, design)[0]
    out = coalition_report(
        made,
        colluding,
        sensitivity=_scaled(sensitivity, rounds),
        epsilon=epsilon,
        delta=delta,
        noise_generator=noise_generator,
        exact_design=exact,
    )
    return _composed(out, rounds)


def rounds_collusion_curve(
    tau_site: ArrayLike,
    *,
    rounds: int,
    sensitivity: ArrayLike,
    epsilon: ArrayLike,
    delta: ArrayLike,
    weights: ArrayLike | None = None,
    design: str = "cape",
    noise_generator: bool = False,
) -> pd.DataFrame:
    """The worst coalition of each size over all T rounds of CAPE per round.

    Parameters as in :func:`rounds_party_views`; ``noise_generator`` as in
    :func:`dpcore.collusion_curve`.

    Returns
    -------
    pandas.DataFrame
        :func:`dpcore.collusion_curve`'s rows for the T rounds together (``epsilon`` is the
        total over T rounds; ``std_ratio`` is σ/τ_s, the same per round and composed), plus
        ``rounds``.
    """
    made, rounds = _per_round(tau_site, weights, rounds, design)
    curve = collusion_curve(
        made,
        sensitivity=_scaled(sensitivity, rounds),
        epsilon=epsilon,
        delta=delta,
        noise_generator=noise_generator,
    )
    return curve.assign(rounds=rounds)
