"""CAPE without a trusted noise generator: pairwise antisymmetric noise (issue #37).

Every pair of sites s < t shares a seed (in a real run from X25519 key agreement,
:mod:`federated.sealing`) and draws the same standard-normal Z_st from it. Site s adds
+σ_st Z_st and site t adds −σ_st Z_st to its weighted value, so with n_st = −n_ts =
σ_st Z_st site s releases

    â_s = a_s + E_s + G_s,      μ_s E_s = Σ_{t≠s} n_st,

and Σ_s μ_s E_s = Σ_{s<t} (n_st + n_ts) = 0: the E's cancel in the aggregate with no noise
generator, as SecAgg's pairwise masks do, but the masks are Gaussian noise that also
protects each release. No F_s is needed (F only protects against the noise generator).

Covariance (docs/federated.md, "The pairwise scheme"): the weighted noises y_s = μ_s E_s
have Cov(y_s, y_s) = Σ_{t≠s} σ_st² and Cov(y_s, y_t) = −σ_st²: a graph Laplacian L with
edge weights σ_st². Every CAPE design (:func:`dpcore.cape_design`, the joint-view-safe one)
conditions independent z_s ~ N(0, β_s²) on a zero sum, whose covariance in y is
diag(β²) − β²β²ᵀ/Σβ², a Laplacian with σ_st² = β_s²β_t²/Σβ² ≥ 0. So
σ_st² = −μ_s μ_t [M Mᵀ]_st (:func:`pair_variances`) gives the pairwise E exactly the
covariance of the noise generator's, for unequal N_s, weights and (ε_s, δ_s): every
site's own release and the aggregator's joint view are those of the design. What changes
is what colluding sites know (:func:`pairwise_coalition_covariance`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpcore._validation import check_bool, check_int
from dpcore.protocol.cape import (
    AveragingRun,
    CapeDesign,
    aggregate_step,
    check_values,
    party_rng,
    site_step,
    standard_noise,
)

PAIR_KEY = 2**32 - 1  # first spawn-key word of the pair streams: apart from party_rng's (k,)
NEGATIVE_SLACK = 1e-12  # a positive off-diagonal of M Mᵀ above this (relative) is refused


def pair_variances(design: CapeDesign) -> NDArray[np.float64]:
    """σ_st² = −μ_s μ_t [M Mᵀ]_st: the pair variances that give E the design's covariance.

    Parameters
    ----------
    design : CapeDesign
        A feasible design whose weighted E covariance has no positive off-diagonal entry
        (every design :func:`dpcore.protocol.joint_safe.design_for` makes).

    Returns
    -------
    ndarray, shape (S, S)
        Symmetric, zero diagonal, entries ≥ 0.

    Raises
    ------
    ValueError
        If the design is infeasible or an off-diagonal covariance is positive (no pairwise
        antisymmetric noise has it).

    Examples
    --------
    >>> from dpcore import cape_design
    >>> pair_variances(cape_design([1.0, 1.0, 1.0])).round(4).tolist()
    [[0.0, 0.037, 0.037], [0.037, 0.0, 0.037], [0.037, 0.037, 0.0]]
    """
    design.tau_e  # noqa: B018 - raises if the design is infeasible
    mu = design.weights
    weighted = design.e_covariance * np.outer(mu, mu)  # Cov(μ_s E_s, μ_t E_t)
    off = ~np.eye(design.n_sites, dtype=bool)
    scale = float(np.max(np.abs(np.diag(weighted)))) or 1.0
    if np.any(weighted[off] > NEGATIVE_SLACK * scale):
        raise ValueError(
            "design must have Cov(μ_s E_s, μ_t E_t) ≤ 0 for s ≠ t to be made of pairwise "
            f"noise; got a largest off-diagonal {float(weighted[off].max()):.3g}"
        )
    out = np.where(off, np.clip(-weighted, 0.0, None), 0.0)
    return (out + out.T) / 2.0


def pairwise_covariance(design: CapeDesign) -> NDArray[np.float64]:
    """Cov(E_s, E_t) per entry of the pairwise scheme, derived from the pair variances.

    [Σ_{u≠s} σ_su²]/μ_s² on the diagonal and −σ_st²/(μ_s μ_t) off it (0 for μ_s = 0);
    equal to the design's ``e_covariance`` (docs/federated.md).
    """
    var = pair_variances(design)
    laplacian = np.diag(var.sum(axis=1)) - var
    mu = design.weights
    inv = np.divide(1.0, mu, out=np.zeros_like(mu), where=mu > 0)
    covariance: NDArray[np.float64] = laplacian * np.outer(inv, inv)
    return covariance


def pair_rng(seed: int, s: int, t: int) -> np.random.Generator:
    """The stream sites s and t share for seed ``seed`` (0-based; order does not matter).

    For reproduction only: in a real run the pair's seed comes from their key agreement.
    """
    seed = check_int(seed, "seed", low=0, high=2**128 - 1)
    lo, hi = sorted((check_int(s, "s", low=0), check_int(t, "t", low=0)))
    if lo == hi:
        raise ValueError(f"s and t must be two different sites; got {s} and {t}")
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(PAIR_KEY, lo, hi)))


def pair_noise_step(
    design: CapeDesign,
    site: int,
    shape: tuple[int, ...],
    *,
    symmetric: bool,
    streams: Mapping[int, np.random.Generator],
) -> NDArray[np.float64]:
    """Site s's E_s = (1/μ_s) Σ_{t≠s} ±σ_st Z_st, Z_st from the stream it shares with t.

    ``streams`` maps every other site t (0-based) to the shared stream; the lower-numbered
    site of a pair adds +σ_st Z_st, the other −σ_st Z_st. Both draw Z_st alike.
    """
    s = check_int(site, "site", low=0, high=design.n_sites - 1)
    var = pair_variances(design)
    total = np.zeros(shape)
    for t in range(design.n_sites):
        if t == s:
            continue
        z = standard_noise(shape, symmetric=symmetric, rng=streams[t])
        total += (1.0 if s < t else -1.0) * np.sqrt(var[s, t]) * z
    mu = float(design.weights[s])
    return total / mu if mu > 0 else np.zeros(shape)


def pairwise_average(
    values: ArrayLike, design: CapeDesign, *, seed: int, symmetric: bool = False
) -> AveragingRun:
    """The pairwise scheme in one process, with the streams a distributed run uses.

    Site s's G_s comes from ``party_rng(seed, "site", s)`` and Z_st from
    :func:`pair_rng`; the estimate is Σ μ_s â_s = Σ μ_s (a_s + G_s).

    Parameters
    ----------
    values : array_like, shape (S, ...)
    design : CapeDesign
        A feasible design (its var_f is not used: there is no F).
    seed : int
        ≥ 0.
    symmetric : bool
        Symmetric noise for second-moment matrices.

    Returns
    -------
    AveragingRun
        ``scheme="pairwise"``, f = 0.

    Examples
    --------
    >>> from dpcore import cape_design
    >>> run = pairwise_average([[1.0], [2.0], [3.0]], cape_design([0.1] * 3), seed=0)
    >>> bool(abs(run.e.T @ run.weights).max() < 1e-15)
    True
    """
    symmetric = check_bool(symmetric, "symmetric")
    arr = check_values(values, design.n_sites, symmetric)
    seed = check_int(seed, "seed", low=0, high=2**128 - 1)
    shape = arr.shape[1:]
    n = design.n_sites
    e = np.stack(
        [
            pair_noise_step(
                design,
                s,
                shape,
                symmetric=symmetric,
                streams={t: pair_rng(seed, s, t) for t in range(n) if t != s},
            )
            for s in range(n)
        ]
    )
    f = np.zeros_like(arr)
    g = np.empty_like(arr)
    released = np.empty_like(arr)
    for s in range(n):
        rng = party_rng(seed, "site", s)
        g[s], released[s] = site_step(
            arr[s], e[s], f[s], float(design.tau_g[s]), symmetric=symmetric, rng=rng
        )
    estimate = aggregate_step(released, f, design.weights)
    return AveragingRun("pairwise", arr, design.weights, e, f, g, released, estimate, design)


def pairwise_coalition_covariance(
    design: CapeDesign, colluding: tuple[int, ...] = ()
) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """The honest sites and the noise covariance left on their releases a_s + E_s + G_s.

    The aggregator with the colluding sites knows every Z_st a colluder shares, so only the
    pairs between honest sites stay hidden: in the weighted variables the honest sites'
    E covariance is the Laplacian of the honest pairs alone, plus their own G's
    (divided by μ_s μ_t back to the releases' scale). With no colluders this is the
    aggregator's view, :func:`dpcore.coalition_view`'s covariance.
    """
    n = design.n_sites
    member = np.zeros(n, dtype=bool)
    member[list(colluding)] = True
    honest = np.flatnonzero(~member)
    var = pair_variances(design)[np.ix_(honest, honest)]
    laplacian = np.diag(var.sum(axis=1)) - var
    mu = design.weights[honest]
    inv = np.divide(1.0, mu, out=np.zeros_like(mu), where=mu > 0)
    return honest, laplacian * np.outer(inv, inv) + np.diag(design.var_g[honest])
