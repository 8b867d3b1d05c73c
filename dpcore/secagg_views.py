"""Secure aggregation's parties: what each sees, what a dropout costs, what a round sends.

The counterpart of :mod:`dpcore.privacy` (CAPE's views, coalitions and dropouts) for the
protocol of :mod:`dpcore.secagg`. Every ε here is the Kairouz–Liu–Steinke accounting of the
noise shares left in what a party sees (:meth:`dpcore.secagg.SecAggDesign.epsilons`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpcore._validation import check_int
from dpcore.calibration import gaussian_sigma
from dpcore.secagg import (
    DEFAULT_BITS,
    MAX_COORDINATES,
    MAX_SITES,
    SecAggDesign,
    secagg_design,
)

KEY_BITS = 256  # a public key, an encrypted Shamir share (the cost model of secagg_cost)


@dataclass(frozen=True)
class SecAggCost:
    """Communication of one round (Bonawitz et al., Sec. 4, honest-but-curious: 4 rounds).

    Attributes
    ----------
    rounds : int
        Round trips: advertise keys, share keys, masked input, unmasking.
    input_bits : int
        d·b: the masked message of one site.
    setup_bits : int
        Key agreement and Shamir shares of one site: 2 public keys and 2(S − 1) encrypted
        shares (of its mask-key secret and self-mask seed), KEY_BITS each.
    unmask_bits : int
        Shares one survivor sends in the unmasking round (worst case: S − 1 of them).
    bits_per_site : int
        input_bits + setup_bits + unmask_bits.
    pairs : int
        S(S − 1)/2 pairwise masks to expand (d·b pseudo-random bits each, per end).
    float_bits_per_site : int
        For comparison: d·64, the same message as float64 (what CAPE's sites send per
        released matrix).
    """

    rounds: int
    input_bits: int
    setup_bits: int
    unmask_bits: int
    bits_per_site: int
    pairs: int
    float_bits_per_site: int


def secagg_cost(*, sites: int, coordinates: int, bits: int = DEFAULT_BITS) -> SecAggCost:
    """Bits each site sends in one secure-aggregation round (:class:`SecAggCost`).

    Examples
    --------
    >>> c = secagg_cost(sites=10, coordinates=20100, bits=32)
    >>> c.rounds, c.input_bits, c.float_bits_per_site // c.input_bits
    (4, 643200, 2)
    """
    s = check_int(sites, "sites", low=2, high=MAX_SITES)
    d = check_int(coordinates, "coordinates", low=1, high=MAX_COORDINATES)
    b = check_int(bits, "bits", low=2, high=64)
    setup = 2 * KEY_BITS + 2 * (s - 1) * KEY_BITS
    unmask = (s - 1) * KEY_BITS
    return SecAggCost(
        rounds=4,
        input_bits=d * b,
        setup_bits=setup,
        unmask_bits=unmask,
        bits_per_site=d * b + setup + unmask,
        pairs=s * (s - 1) // 2,
        float_bits_per_site=d * 64,
    )


def _worst(design: SecAggDesign, eps: NDArray, honest: NDArray) -> tuple[float, float, bool]:
    """(ε, promised ε) of the honest site with the largest ε/ε_s, and whether all meet."""
    with np.errstate(invalid="ignore"):  # ∞/∞ where ε = ∞ was promised: it is met
        ratio = np.nan_to_num(eps[honest] / design.epsilon[honest], nan=0.0, posinf=np.inf)
    i = int(np.argmax(ratio))
    meets = bool(np.all(eps[honest] <= design.epsilon[honest] * (1 + 1e-9)))
    return float(eps[honest][i]), float(design.epsilon[honest][i]), meets


def secagg_views(design: SecAggDesign, *, colluding: int = 0) -> pd.DataFrame:
    """What each party sees, and the ε left for the honest sites (worst site, KLS accounting).

    Parameters
    ----------
    design : SecAggDesign
    colluding : int
        k in [0, S − 1]: sites colluding with the server (they subtract their own inputs and
        noise shares). Below the threshold t the coalition still sees only the sum of the
        honest sites' messages, with S − k shares of noise; from t on it can reconstruct any
        honest site's pair seeds and unmask it, which leaves that site its own share only.

    Returns
    -------
    pandas.DataFrame
        One row per party: ``party``, ``receives``, ``noise_shares`` (shares protecting an
        honest site), ``noise_std`` (data units; ∞ for one-time-padded messages),
        ``epsilon`` (worst honest site; 0 when nothing is learned), ``promised_epsilon``
        and ``meets``.
    """
    if not isinstance(design, SecAggDesign):
        raise TypeError(f"design must be a SecAggDesign; got {type(design).__name__}")
    s = design.n_sites
    k = check_int(colluding, "colluding", low=0, high=s - 1)
    everyone = np.arange(s)
    rows = []

    def add(party: str, receives: str, shares: int | None, honest: NDArray) -> None:
        if shares is None:  # one-time pads: the messages are uniform, independent of data
            eps = np.zeros(s)
            std = math.inf
        else:
            eps = design.epsilons(shares)
            std = design.noise_std(shares)
        worst, promised, meets = _worst(design, eps, honest)
        rows.append(
            {
                "party": party,
                "receives": receives,
                "noise_shares": 0 if shares is None else shares,
                "noise_std": std,
                "epsilon": worst,
                "promised_epsilon": promised,
                "meets": meets,
            }
        )

    add("server", "masked messages; decodes only their sum", s, everyone)
    add("a site", "nothing of the others (only its pair seeds)", None, everyone[1:])
    add("anyone (final output)", "the decoded sum Σ μ_s a_s + noise", s, everyone)
    if k:
        honest = everyone[k:]
        if k < design.threshold:
            add(
                f"server + {k} sites",
                "the honest sites' sum, minus their own shares",
                s - k,
                honest,
            )
        else:
            add(
                f"server + {k} sites",
                f"≥ t = {design.threshold} shares of every seed: each honest message unmasked",
                1,
                honest,
            )
    return pd.DataFrame(rows)


SECAGG_REMEDIES = ("none", "over-provisioned", "re-run")


def secagg_dropouts(design: SecAggDesign, *, dropped: int) -> pd.DataFrame:
    """The privacy and accuracy cost of k dropouts, and the usual remedies.

    Parameters
    ----------
    design : SecAggDesign
        Calibrated for ``design.noise_shares`` shares.
    dropped : int
        k in [0, S − 1]: sites that drop after the masks were set up.

    Returns
    -------
    pandas.DataFrame
        One row per remedy: ``"none"`` (the server unmasks, the sum has S − k shares: less
        noise, ε above the promise), ``"over-provisioned"`` (every share sized for k
        expected dropouts, KLS Sec. 4: the promise holds, at the price of more noise when
        fewer drop) and ``"re-run"`` (abort before unmasking and run again among the S − k
        survivors, recalibrated: one more round). Columns ``remedy``, ``noise_shares``,
        ``noise_std`` (data units, with the k dropouts), ``std_if_no_dropout``,
        ``std_ratio`` (over one curator's std for the survivors' mean), ``epsilon``,
        ``promised_epsilon`` (worst honest site), ``meets``, ``rounds`` and ``possible``
        (at least t survivors to unmask; a re-run is always possible).
    """
    if not isinstance(design, SecAggDesign):
        raise TypeError(f"design must be a SecAggDesign; got {type(design).__name__}")
    s = design.n_sites
    k = check_int(dropped, "dropped", low=0, high=s - 1)
    survivors = np.arange(k, s)  # the first k drop (their identity changes only W)
    central = _central(design, survivors)
    rows = []

    def add(name: str, made: SecAggDesign, honest: NDArray, rounds: int, possible: bool) -> None:
        shares = s - k
        eps = made.epsilons(shares)
        worst, promised, meets = _worst(made, eps, honest)
        # the estimate is renormalised by W (secagg_sum); a re-run's weights already are
        w = 1.0 if made.n_sites != s else float(made.weights[survivors].sum())
        std = made.noise_std(shares) / w
        rows.append(
            {
                "remedy": name,
                "noise_shares": shares,
                "noise_std": std,
                "std_if_no_dropout": made.noise_std(),
                "std_ratio": std / central if central > 0 else math.inf,
                "epsilon": worst,
                "promised_epsilon": promised,
                "meets": meets,
                "rounds": rounds,
                "possible": possible,
            }
        )

    unmaskable = s - k >= design.threshold
    add("none", design, survivors, 1, unmaskable)
    over = _redesign(design, sites=np.arange(s), expected_dropouts=k)
    add("over-provisioned", over, survivors, 1, unmaskable)
    if s - k >= 2:
        rerun = _redesign(design, sites=survivors, expected_dropouts=0)
        add("re-run", rerun, np.arange(s - k), 2, True)
    return pd.DataFrame(rows)


def _central(design: SecAggDesign, sites: NDArray) -> float:
    """One curator's noise std for the survivors' renormalised mean (analytic Gaussian)."""
    w = design.weights[sites] / design.weights[sites].sum()
    sig = [
        gaussian_sigma(float(x), epsilon=float(e), delta=float(d), method="analytic")
        for x, e, d in zip(
            design.sensitivity[sites], design.epsilon[sites], design.delta[sites], strict=True
        )
    ]
    return float(np.max(w * np.array(sig)))


def _redesign(design: SecAggDesign, *, sites: NDArray, expected_dropouts: int) -> SecAggDesign:
    """The same promises and γ, b for a subset of sites (weights renormalised)."""
    w = design.weights[sites]
    return secagg_design(
        design.sensitivity[sites],
        epsilon=design.epsilon[sites],
        delta=design.delta[sites],
        coordinates=design.coordinates,
        weights=w / w.sum(),
        bits=design.bits,
        scale=design.scale / float(w.sum()),  # μ_s/W over γ/W: the same integers
        calibration=design.calibration,
        expected_dropouts=expected_dropouts,
    )
