"""Experiment drivers: sweeps over one axis that return tidy data frames."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from dpcore._validation import (
    check_choice,
    check_delta,
    check_epsilon,
    check_int,
)
from dpcore.calibration import CALIBRATIONS, NEIGHBOURING, ClassicGaussianWarning, site_noise_std
from dpcore.datasets import Dataset, draw_sites, second_moments, split_sizes, synthetic_dataset
from dpcore.metrics import captured_energy, optimal_energy, subspace_distance, top_k_eigvecs
from dpcore.pca import PCA_ALGORITHMS, cape_pca, conv_pca, dpdis_pca, local_pca, nonprivate_pca

SWEEP_AXES = ("epsilon", "delta", "n_per_site", "sites")
WEIGHTINGS = ("proportional", "equal")
_CHECKS = {
    "epsilon": check_epsilon,
    "delta": check_delta,
    "n_per_site": lambda v: check_int(v, "n_per_site", low=1),
    "sites": lambda v: check_int(v, "sites", low=2),
}


def _is_grid(value: Any) -> bool:
    return isinstance(value, (list, tuple, np.ndarray))


def sweep_grid(**axes: Any) -> tuple[str, list[Any], dict[str, Any]]:
    """Find the one swept axis among ε, δ, N_s and S, and validate every value.

    Parameters
    ----------
    **axes
        ``epsilon``, ``delta``, ``n_per_site`` and ``sites``; at most one may be a
        list/tuple/array (the swept axis).

    Returns
    -------
    axis : str
        The swept axis (``"epsilon"`` when none is a list: a one-point grid).
    grid : list
        Validated values along it, in the order given.
    fixed : dict
        The validated values of the other axes.
    """
    swept = [name for name in SWEEP_AXES if _is_grid(axes[name])]
    if len(swept) > 1:
        raise ValueError(f"at most one of {list(SWEEP_AXES)} may be a list; got lists for {swept}")
    axis = swept[0] if swept else "epsilon"
    fixed = {n: _CHECKS[n](axes[n]) for n in SWEEP_AXES if n != axis}
    values = axes[axis] if swept else [axes[axis]]
    if len(values) == 0:
        raise ValueError(f"{axis} must have at least one value to sweep; got an empty list")
    grid = [_CHECKS[axis](v.item() if isinstance(v, np.generic) else v) for v in values]
    return axis, grid, fixed


def pca_sweep(
    *,
    data: str | Dataset = "synthetic",
    dim: int = 200,
    k: int = 50,
    sites: int | Sequence[int] = 10,
    n_per_site: int | Sequence[int] = 1000,
    epsilon: float | Sequence[float],
    delta: float | Sequence[float] = 0.01,
    runs: int = 10,
    seed: int = 0,
    algorithms: Sequence[str] = PCA_ALGORITHMS,
    calibration: str = "classic",
    neighbouring: str = "add-remove",
    site_shares: Sequence[float] | None = None,
    weighting: str = "proportional",
    rank: int | None = None,
    faithful: bool = False,
    pool_size: int = 60_000,
) -> pd.DataFrame:
    """Captured energy of distributed PCA algorithms along one swept axis.

    Parameters
    ----------
    data : "synthetic" or Dataset
        The paper's synthetic set (generated from ``seed`` with ``dim``, ``k`` and
        ``pool_size``) or a prepared :class:`dpcore.Dataset`.
    dim, k : int
        D and K for synthetic data (1 ≤ K ≤ D); with a Dataset, D is its own.
    sites, n_per_site, epsilon, delta : scalar or list
        S ≥ 2, N_s ≥ 1 (average per site), ε in (0, ∞], δ in (0, 1). Exactly one may be a
        list: the swept axis.
    runs : int
        Repetitions per grid point, ≥ 1.
    seed : int
        Everything random derives from it: same seed, same frame.
    algorithms : sequence of str
        Subset of ``("nonprivate", "cape", "conv", "local", "dpdis")``. Each algorithm has
        its own random stream, so choosing others does not change its numbers.
    calibration : {"classic", "analytic"}
        Gaussian mechanism calibration (:func:`dpcore.gaussian_sigma`).
    neighbouring : {"add-remove", "replace"}
        Neighbouring relation for Δ (:func:`dpcore.second_moment_sensitivity`).
    site_shares : sequence of float, optional
        Relative site sizes for unequal N_s (not with a swept S).
    weighting : {"proportional", "equal"}
        Aggregator weights μ_s = N_s/N (the pooled estimate) or 1/S.
    rank : int, optional
        R for DPdisPCA, K ≤ R ≤ D; default min(2K, D).
    faithful : bool
        Run capePCA and conv message by message (slow) instead of drawing their aggregate
        noise directly (same distribution, see :func:`dpcore.pca.cape_pca`).
    pool_size : int
        Synthetic pool size (paper: 60,000).

    Returns
    -------
    pandas.DataFrame
        One row per (algorithm, grid point, run) with columns ``algorithm``, ``epsilon``,
        ``delta``, ``n_per_site``, ``sites``, ``run``, ``captured_energy``,
        ``captured_energy_ratio`` (of the optimum), ``subspace_distance`` and
        ``optimal_energy``.

    Notes
    -----
    The data subsample (N = S·N_s rows without replacement, centred, split into contiguous
    blocks) is drawn once for ε and δ sweeps and afresh per run for N_s and S sweeps, as in
    the authors' experiments. ``local`` uses site 1. Captured energy is tr(V̂ᵀAV̂) against the
    data set's reference matrix (Imtiaz & Sarwate, Sec. 6.1).
    """
    axis, grid, fixed = sweep_grid(epsilon=epsilon, delta=delta, n_per_site=n_per_site, sites=sites)
    runs = check_int(runs, "runs", low=1)
    calibration = check_choice(calibration, "calibration", CALIBRATIONS)
    neighbouring = check_choice(neighbouring, "neighbouring", NEIGHBOURING)
    weighting = check_choice(weighting, "weighting", WEIGHTINGS)
    algorithms = [check_choice(a, "algorithms", PCA_ALGORITHMS) for a in algorithms]
    if not algorithms:
        raise ValueError(f"algorithms must name at least one of {list(PCA_ALGORITHMS)}; got []")
    if site_shares is not None and axis == "sites":
        raise ValueError("site_shares fixes S, so sites cannot be the swept axis")
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise TypeError(f"seed must be an integer; got {type(seed).__name__}")

    data_rng, draw_rng, noise_rng = np.random.default_rng(seed).spawn(3)
    if isinstance(data, Dataset):
        dataset = data
    else:
        check_choice(data, "data", ("synthetic",))
        dim = check_int(dim, "dim", low=1)
        dataset = synthetic_dataset(
            dim=dim, k=check_int(k, "k", low=1, high=dim), n_samples=pool_size, rng=data_rng
        )
    k = check_int(k, "k", low=1, high=dataset.dim)
    rank = (
        min(2 * k, dataset.dim)
        if rank is None
        else check_int(rank, "rank", low=k, high=dataset.dim)
    )
    truth = top_k_eigvecs(dataset.reference, k)
    optimum = optimal_energy(dataset.reference, k)

    resample = axis in ("n_per_site", "sites")
    fixed_moments = None
    if not resample:
        sizes = split_sizes(fixed["n_per_site"], fixed["sites"], site_shares)
        fixed_moments = second_moments(draw_sites(dataset, sizes, rng=draw_rng))

    rows: list[dict[str, Any]] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ClassicGaussianWarning)
        for point_rng, point_draw_rng, value in zip(
            noise_rng.spawn(len(grid)), draw_rng.spawn(len(grid)), grid, strict=True
        ):
            cfg = {**fixed, axis: value}
            sizes = split_sizes(cfg["n_per_site"], cfg["sites"], site_shares)
            weights = sizes / sizes.sum() if weighting == "proportional" else None
            weights = np.full(sizes.size, 1 / sizes.size) if weights is None else weights
            tau = site_noise_std(
                sizes, cfg["epsilon"], cfg["delta"], method=calibration, neighbouring=neighbouring
            )
            draws = point_draw_rng.spawn(runs)
            for run, run_rng in enumerate(point_rng.spawn(runs)):
                moments = (
                    second_moments(draw_sites(dataset, sizes, rng=draws[run]))
                    if resample
                    else fixed_moments
                )
                alg_rngs = dict(
                    zip(PCA_ALGORITHMS, run_rng.spawn(len(PCA_ALGORITHMS)), strict=True)
                )
                for alg in algorithms:
                    basis = _run_pca(alg, moments, k, tau, weights, rank, faithful, alg_rngs[alg])
                    energy = captured_energy(basis, dataset.reference)
                    rows.append(
                        {
                            "algorithm": alg,
                            **cfg,
                            "run": run,
                            "captured_energy": energy,
                            "captured_energy_ratio": energy / optimum,
                            "subspace_distance": subspace_distance(basis, truth),
                            "optimal_energy": optimum,
                        }
                    )
    if caught:
        warnings.warn(caught[0].message, ClassicGaussianWarning, stacklevel=2)
    columns = [
        "algorithm",
        *SWEEP_AXES,
        "run",
        "captured_energy",
        "captured_energy_ratio",
        "subspace_distance",
        "optimal_energy",
    ]
    return pd.DataFrame(rows, columns=columns)


def _run_pca(alg, moments, k, tau, weights, rank, faithful, rng):
    if alg == "nonprivate":
        return nonprivate_pca(moments, k, weights=weights)
    if alg == "cape":
        return cape_pca(moments, k, tau_site=tau, weights=weights, faithful=faithful, rng=rng)
    if alg == "conv":
        return conv_pca(moments, k, tau_site=tau, weights=weights, faithful=faithful, rng=rng)
    if alg == "local":
        return local_pca(moments[0], k, tau=float(tau[0]), rng=rng)
    return dpdis_pca(moments, k, tau_site=tau, weights=weights, rank=rank, rng=rng)
