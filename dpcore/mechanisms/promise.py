"""What (ε, δ) promises one person, as a number a learner can read.

(ε, δ)-differential privacy (Dwork & Roth, *The Algorithmic Foundations of Differential
Privacy*, 2014, Definition 2.4): for data sets D, D' that differ in one person and every set
of outcomes O, P[M(D) ∈ O] ≤ e^ε · P[M(D') ∈ O] + δ, and the same with D and D' swapped. So
whatever a release shows, it is at most e^ε times as likely with that person's data as
without it (and the other way round), up to the additive slack δ. The Learn section and the
Overview quote this factor.
"""

from __future__ import annotations

import math

from dpcore._validation import check_epsilon


def likelihood_factor(*, epsilon: float) -> float:
    """The most any outcome's probability may change with one person in or out: e^ε.

    Parameters
    ----------
    epsilon : float
        Privacy ε, > 0 (``inf`` gives ``inf``: no promise).

    Returns
    -------
    float
        e^ε, the bound of Definition 2.4 of Dwork & Roth (2014) on
        P[M(D) ∈ O] / P[M(D') ∈ O] apart from the additive δ.

    Raises
    ------
    ValueError
        If ``epsilon`` is not > 0.

    Examples
    --------
    >>> round(likelihood_factor(epsilon=0.5), 3)
    1.649
    >>> round(likelihood_factor(epsilon=5.0), 1)
    148.4
    """
    epsilon = check_epsilon(epsilon)
    try:
        return math.exp(epsilon)
    except OverflowError:  # ε above ~709: beyond floating point, and no promise at all
        return math.inf
