"""The precision question: CAPE's noise cancels only up to floating point; masks cancel exactly.

CAPE's noise generator draws E_s with Σ_s μ_s E_s = 0 (:func:`dpcore.cape_design`), but a
computer sums them in floating point; the aggregator's Σ μ_s (â_s − F_s) also rounds every
release. Secure aggregation's pairwise masks cancel modulo 2^b in integer arithmetic, with
no error at all. :func:`cancellation_table` measures both against the noise that remains.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpcore._validation import MAX_MAGNITUDE, RngLike, check_int, check_real, check_rng
from dpcore.protocol.cape import CapeDesign, cape_design
from dpcore.protocol.secagg import MAX_SITES, pair_masks, pair_seeds

DTYPES = ("float64", "float32")
MAX_ENTRIES = 2_000_000  # S·d per run: a few arrays of this size per dtype


def cancellation_table(
    *,
    sites: Sequence[int] = (2, 10, 100),
    tau: Sequence[float] = (1e-6, 1e-3, 1.0),
    value: float = 1.0,
    coordinates: int = 2000,
    rng: RngLike = None,
) -> pd.DataFrame:
    """How exactly CAPE's E_s cancel in floating point, next to the masks' exact cancellation.

    For S equal sites (μ_s = 1/S, τ_s = τ) each value a_s = ``value`` in every coordinate, the
    protocol of :func:`dpcore.cape_average` is run in each dtype: the noise generator's
    E = M z, the releases â_s = a_s + E_s + F_s + G_s and the aggregator's Σ μ_s (â_s − F_s).

    Parameters
    ----------
    sites : sequence of int
        S values, each in [2, 1000], with S·coordinates ≤ 2·10⁶.
    tau : sequence of float
        τ_s values (data units), each in (0, 1e100].
    value : float
        |a_s| per coordinate (second moments of unit-norm samples: at most 1).
    coordinates : int
        Entries per value, in [1, 10⁵].
    rng : int, Generator or None

    Returns
    -------
    pandas.DataFrame
        One row per (dtype, S, τ): ``tau_agg`` (the design's aggregate std, τ/S),
        ``zero_sum_error`` (RMS over coordinates of Σ μ_s E_s as computed),
        ``zero_sum_ratio`` (that over ``tau_agg``), ``estimate_error`` (RMS of the computed
        estimate minus Σ μ_s (a_s + G_s) evaluated in higher precision), ``estimate_ratio``
        (over ``tau_agg``: the share of the remaining noise that floating point adds or
        removes) and ``mask_residual`` (non-zero coordinates of Σ_s M_s mod 2^32 for the same
        S: always 0, integer arithmetic is exact).
    """
    if isinstance(sites, (str, bytes)) or not isinstance(sites, (Sequence, np.ndarray)):
        raise TypeError(f"sites must be a sequence of site counts; got {sites!r}")
    if isinstance(tau, (str, bytes)) or not isinstance(tau, (Sequence, np.ndarray)):
        raise TypeError(f"tau must be a sequence of noise std's; got {tau!r}")
    ss = [check_int(s, "sites", low=2, high=MAX_SITES) for s in sites]
    taus = [check_real(t, "tau", low=0.0, high=MAX_MAGNITUDE, low_open=True) for t in tau]
    if not ss or not taus:
        raise ValueError("sites and tau must each have at least one value; got an empty one")
    a = check_real(value, "value", low=-1e6, high=1e6)
    d = check_int(coordinates, "coordinates", low=1, high=100_000)
    pairs = max(ss) * (max(ss) - 1) // 2
    if max(ss) * d > MAX_ENTRIES or pairs * d > 20 * MAX_ENTRIES or len(ss) * len(taus) > 100:
        raise ValueError(
            f"sites × coordinates must be at most {MAX_ENTRIES:,} (pairs of sites × coordinates "
            f"{20 * MAX_ENTRIES:,}) and the table at most 100 (S, τ) rows per dtype; got S up "
            f"to {max(ss)}, coordinates {d}, {len(ss) * len(taus)} rows"
        )
    gen = check_rng(rng)
    rows = []
    for s in ss:
        mask_seeds = pair_seeds(s, rng=gen.spawn(1)[0])
        residual = int(
            np.count_nonzero(
                pair_masks(mask_seeds, s, d, 32).sum(axis=0, dtype=np.uint64) & np.uint64(2**32 - 1)
            )
        )
        for t in taus:
            design = cape_design(np.full(s, t))
            z = gen.standard_normal((3, s, d))
            for dtype in DTYPES:
                rows.append(
                    {"dtype": dtype, "sites": s, "tau_site": t, "tau_agg": design.tau_agg}
                    | _cancellation(design, z, a, np.dtype(dtype))
                    | {"mask_residual": residual}
                )
    out = pd.DataFrame(rows)
    out["zero_sum_ratio"] = out["zero_sum_error"] / out["tau_agg"]
    out["estimate_ratio"] = out["estimate_error"] / out["tau_agg"]
    return out[
        [
            "dtype",
            "sites",
            "tau_site",
            "tau_agg",
            "zero_sum_error",
            "zero_sum_ratio",
            "estimate_error",
            "estimate_ratio",
            "mask_residual",
        ]
    ]


def _cancellation(
    design: CapeDesign, z: NDArray[np.float64], value: float, dtype: np.dtype[Any]
) -> dict[str, float]:
    """One CAPE run in ``dtype``; errors against the same draws in extended precision."""
    mu = design.weights.astype(dtype)
    e = design.e_mixing.astype(dtype) @ z[0].astype(dtype)
    f = (design.tau_f.astype(dtype)[:, None] * z[1].astype(dtype)).astype(dtype)
    g = (design.tau_g.astype(dtype)[:, None] * z[2].astype(dtype)).astype(dtype)
    a = np.full(z.shape[1:], value, dtype=dtype)
    released = a + e + f + g
    estimate = mu @ (released - f)
    zero_sum = mu @ e
    wide = np.longdouble
    exact = design.weights.astype(wide) @ (a.astype(wide) + g.astype(wide))
    err = estimate.astype(wide) - exact
    return {
        "zero_sum_error": float(np.sqrt(np.mean(zero_sum.astype(float) ** 2))),
        "estimate_error": float(np.sqrt(np.mean(err.astype(float) ** 2))),
    }
