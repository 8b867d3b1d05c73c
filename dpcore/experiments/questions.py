"""Questions the app answers from a sweep: where a curve crosses a target, and how many sites.

A sweep gives, per algorithm and grid point, the mean of a quality measure over runs and its
standard error. The question "what ε gives 90 % of the non-private captured energy?" is the
first grid interval where the mean curve reaches the target, interpolated linearly in log ε
(the sweeps' grids are log-spaced; the curves are smooth there). Its uncertainty is where the
curves mean ± one standard error reach the same target: the optimistic and the pessimistic
crossing. A target outside the swept range is reported as such, never extrapolated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from dpcore._validation import check_choice, check_real

STATUSES = ("crossed", "from the start", "not reached")


@dataclass(frozen=True)
class Crossing:
    """Where one curve reaches a target on the swept grid.

    Attributes
    ----------
    value : float
        The interpolated crossing of the mean curve; ``nan`` unless ``status == "crossed"``.
    low, high : float
        Range of the crossings of the curves mean ± 1 standard error (``nan`` where that
        curve does not cross inside the grid).
    status : {"crossed", "from the start", "not reached"}
        ``"from the start"``: the target is met already at the first grid point (the crossing
        is at or below it); ``"not reached"``: not met anywhere on the grid.
    """

    value: float
    low: float
    high: float
    status: str


def _first_crossing(x: np.ndarray, y: np.ndarray, target: float, log_x: bool) -> tuple[float, str]:
    """First x where increasing-is-good ``y`` reaches ``target``, interpolated."""
    hit = np.flatnonzero(y >= target)
    if hit.size == 0:
        return math.nan, "not reached"
    i = int(hit[0])
    if i == 0:
        return math.nan, "from the start"
    t = (target - y[i - 1]) / (y[i] - y[i - 1])  # y[i-1] < target <= y[i]: t in (0, 1]
    u = np.log(x) if log_x else x
    at = u[i - 1] + t * (u[i] - u[i - 1])
    return float(np.exp(at) if log_x else at), "crossed"


def target_crossing(
    x: ArrayLike,
    mean: ArrayLike,
    stderr: ArrayLike,
    target: float,
    *,
    higher_is_better: bool = True,
    log_x: bool = True,
) -> Crossing:
    """Where a swept mean curve first reaches a target, with a ±1 standard-error range.

    Parameters
    ----------
    x : array_like, shape (n,)
        The grid, strictly increasing (and > 0 when ``log_x``).
    mean, stderr : array_like, shape (n,)
        Mean of the measure at each grid point and its standard error (std/√runs, ≥ 0).
    target : float
        The level to reach.
    higher_is_better : bool
        True: reach means ``mean ≥ target`` (captured energy); False: ``mean ≤ target``
        (an error).
    log_x : bool
        Interpolate linearly in log x (ε, δ, N_s grids) rather than in x.

    Returns
    -------
    Crossing
        ``low`` ≤ ``value`` ≤ ``high`` when all three cross: the curve one standard error
        better crosses first.

    Examples
    --------
    >>> c = target_crossing([0.1, 1.0, 10.0], [0.0, 1.0, 2.0], [0, 0, 0], 1.5)
    >>> round(c.value, 6), c.status
    (3.162278, 'crossed')
    """
    xs = np.asarray(x, dtype=float)
    m = np.asarray(mean, dtype=float)
    se = np.asarray(stderr, dtype=float)
    if xs.ndim != 1 or xs.size < 2 or m.shape != xs.shape or se.shape != xs.shape:
        raise ValueError(
            f"x, mean and stderr must be 1-d of one length >= 2; got shapes "
            f"{xs.shape}, {m.shape}, {se.shape}"
        )
    if not (np.all(np.isfinite(xs)) and np.all(np.isfinite(m)) and np.all(np.isfinite(se))):
        raise ValueError("x, mean and stderr must be finite")
    if np.any(np.diff(xs) <= 0) or (log_x and xs[0] <= 0):
        raise ValueError(f"x must be strictly increasing (and > 0 for log_x); got {xs.tolist()}")
    if np.any(se < 0):
        raise ValueError(f"stderr must be >= 0; got {se.tolist()}")
    target = check_real(target, "target")
    sign = 1.0 if higher_is_better else -1.0
    value, status = _first_crossing(xs, sign * m, sign * target, log_x)
    early, _ = _first_crossing(xs, sign * m + se, sign * target, log_x)
    late, _ = _first_crossing(xs, sign * m - se, sign * target, log_x)
    return Crossing(value=value, low=early, high=late, status=status)


def sweep_crossings(
    df: pd.DataFrame,
    *,
    axis: str,
    metric: str,
    target: float,
    higher_is_better: bool = True,
    log_x: bool = True,
) -> pd.DataFrame:
    """:func:`target_crossing` for every algorithm of a tidy sweep.

    Parameters
    ----------
    df : DataFrame
        One row per (algorithm, grid point, run), with columns ``algorithm``, ``axis`` and
        ``metric`` (the output of :func:`dpcore.pca_sweep` or :func:`dpcore.otd_sweep`).
    axis, metric : str
        Swept column and measured column.
    target, higher_is_better, log_x
        As in :func:`target_crossing`.

    Returns
    -------
    DataFrame
        One row per algorithm (in order of appearance): ``algorithm``, ``crossing``,
        ``low``, ``high``, ``status`` and ``runs``. With one run per point the standard
        error is 0 and the range collapses to the crossing.
    """
    for col in ("algorithm", axis, metric):
        if col not in df.columns:
            raise ValueError(f"df must have a column {col!r}; got {list(df.columns)}")
    rows = []
    for alg in dict.fromkeys(df["algorithm"]):
        stats = (
            df[df["algorithm"] == alg]
            .groupby(axis)[metric]
            .agg(["mean", "std", "count"])
            .sort_index()
        )
        se = (stats["std"].fillna(0.0) / np.sqrt(stats["count"])).to_numpy()
        c = target_crossing(
            stats.index.to_numpy(dtype=float),
            stats["mean"].to_numpy(),
            se,
            target,
            higher_is_better=higher_is_better,
            log_x=log_x,
        )
        rows.append(
            {
                "algorithm": alg,
                "crossing": c.value,
                "low": c.low,
                "high": c.high,
                "status": c.status,
                "runs": int(stats["count"].min()),
            }
        )
    return pd.DataFrame(rows, columns=["algorithm", "crossing", "low", "high", "status", "runs"])


ADVANTAGE_MEASURES = ("variance", "std")


def sites_for_advantage(target: float, *, measure: str = "variance") -> int:
    """Fewest sites S ≥ 2 for which CAPE's advantage over conventional averaging is ≥ target.

    With S sites, the same weights for both schemes and each site's own (ε_s, δ_s), CAPE's
    aggregate noise variance is the pooled one, max_s μ_s²τ_s², and conventional averaging's
    is Σ_s μ_s²τ_s². For equal sites — or any sizes with μ_s = N_s/N and a common (ε, δ),
    where every μ_s τ_s is the same — the ratio is exactly S (eq. (2): τ_s²/S against
    τ_s²/S²). So the variance advantage reaches ``target`` at S = ⌈target⌉ and the std
    advantage (√S) at S = ⌈target²⌉.

    Parameters
    ----------
    target : float
        Advantage wanted, in [1, 1e6].
    measure : {"variance", "std"}
        Ratio of variances or of standard deviations.

    Returns
    -------
    int

    References
    ----------
    Imtiaz & Sarwate, Sec. 3, eq. (2) and Lemma 1 (Appendix A.1).

    Examples
    --------
    >>> sites_for_advantage(10.0), sites_for_advantage(10.0, measure="std")
    (10, 100)
    """
    target = check_real(target, "target", low=1.0, high=1e6)
    measure = check_choice(measure, "measure", ADVANTAGE_MEASURES)
    need = target if measure == "variance" else target**2
    # ceil with a rounding guard: 10.000000000000002 must not become 11
    return max(2, math.ceil(need - 1e-9 * need))
