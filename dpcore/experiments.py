"""Experiment drivers: sweeps over one axis that return tidy data frames."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from concurrent.futures import Executor
from typing import Any

import numpy as np
import pandas as pd

from dpcore._validation import check_choice, check_delta, check_epsilon, check_int, check_real
from dpcore.calibration import (
    CALIBRATIONS,
    NEIGHBOURING,
    classic_warning_once,
    gaussian_sigmas,
    site_noise_std,
)
from dpcore.cape import cape_design
from dpcore.datasets import Dataset, draw_sites, second_moments, split_sizes, synthetic_dataset
from dpcore.limits import MAX_DIM_TENSOR, check_budget, estimate_otd, estimate_pca
from dpcore.metrics import (
    captured_energy,
    component_error,
    component_error_matched,
    matching,
    optimal_energy,
    subspace_distance,
    top_k_eigvecs,
    weight_error,
)
from dpcore.models import make_model
from dpcore.moments import moment_sensitivities, site_moments
from dpcore.otd import PowerOptions, decompose_batch
from dpcore.parallel import parallel_map, single_blas
from dpcore.privacy import dropout_run
from dpcore.registry import NoiseScales, OtdInputs, PcaInputs, get, names, streams

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


def _grid_runs(axis, grid, fixed, runs, noise_rng, draw_rng):
    """Yield (config, run, noise stream, data stream) for every grid point and run.

    Streams are spawned per grid point and then per run, so a point's numbers do not
    depend on how many other points the grid has after it.
    """
    for point_rng, point_draw_rng, value in zip(
        noise_rng.spawn(len(grid)), draw_rng.spawn(len(grid)), grid, strict=True
    ):
        cfg = {**fixed, axis: value}
        for run, (run_rng, run_draw_rng) in enumerate(
            zip(point_rng.spawn(runs), point_draw_rng.spawn(runs), strict=True)
        ):
            yield cfg, run, run_rng, run_draw_rng


def _largest(axis: str, grid, fixed: dict[str, Any], name: str):
    """The largest value a sweep uses for one axis (the grid's max if it is the swept one)."""
    return max(grid) if axis == name else fixed[name]


def site_layout(cfg: dict[str, Any], shares, weighting: str) -> tuple[np.ndarray, np.ndarray]:
    """Site sizes N_s and aggregator weights μ_s (N_s/N or 1/S) for one grid point."""
    sizes = split_sizes(cfg["n_per_site"], cfg["sites"], shares)
    if weighting == "proportional":
        return sizes, sizes / sizes.sum()
    return sizes, np.full(sizes.size, 1.0 / sizes.size)


def _check_common(runs, seed, weighting, site_shares, axis, algorithms, family):
    runs = check_int(runs, "runs", low=1)
    check_choice(weighting, "weighting", WEIGHTINGS)
    if algorithms is None:
        algorithms = names(family)
    if isinstance(algorithms, str):
        raise TypeError(f"algorithms must be a sequence of names; got the string {algorithms!r}")
    algorithms = [get(a, family, param="algorithms").name for a in algorithms]
    if not algorithms:
        raise ValueError(f"algorithms must name at least one of {list(names(family))}; got []")
    if site_shares is not None and axis == "sites":
        raise ValueError("site_shares fixes S, so sites cannot be the swept axis")
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise TypeError(f"seed must be an integer; got {type(seed).__name__}")
    return runs, algorithms


@single_blas
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
    algorithms: Sequence[str] | None = None,
    calibration: str = "classic",
    neighbouring: str = "add-remove",
    site_shares: Sequence[float] | None = None,
    weighting: str = "proportional",
    rank: int | None = None,
    faithful: bool = False,
    pool_size: int = 60_000,
    workers: int | None = None,
    executor: Executor | None = None,
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
    algorithms : sequence of str, optional
        Names from :func:`dpcore.registry.names` ``("pca")`` (default: all of them). Each
        algorithm has its own random stream, so choosing others does not change its numbers.
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
    workers : int, optional
        Threads for the (grid point, run) tasks (:func:`dpcore.parallel.parallel_map`);
        the frame is identical for any value.
    executor : concurrent.futures.Executor, optional
        Run the tasks there instead (a process pool, Dask's ``Client.get_executor()``); the
        frame is identical whichever runs them.

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
    runs, algorithms = _check_common(
        runs, seed, weighting, site_shares, axis, algorithms, "pca"
    )
    calibration = check_choice(calibration, "calibration", CALIBRATIONS)
    neighbouring = check_choice(neighbouring, "neighbouring", NEIGHBOURING)

    data_rng, draw_rng, noise_rng = np.random.default_rng(seed).spawn(3)
    if not isinstance(data, Dataset):
        check_choice(data, "data", ("synthetic",))
        dim = check_int(dim, "dim", low=1)
        pool_size = check_int(pool_size, "pool_size", low=2)
    check_budget(
        estimate_pca(
            dim=data.dim if isinstance(data, Dataset) else dim,
            sites=_largest(axis, grid, fixed, "sites"),
            n_max=_largest(axis, grid, fixed, "n_per_site"),
            pool=data.n_samples if isinstance(data, Dataset) else pool_size,
            points=len(grid),
            runs=runs,
            algorithms=algorithms,
        ),
        what="this PCA sweep",
    )
    if isinstance(data, Dataset):
        dataset = data
    else:
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

    def noise_std(cfg):
        sizes, _ = site_layout(cfg, site_shares, weighting)
        return site_noise_std(
            sizes, cfg["epsilon"], cfg["delta"], method=calibration, neighbouring=neighbouring
        )

    reference = dataset.reference
    pool = dataset if resample else None  # tasks on other processes carry the pool only if used

    def evaluate(basis):
        energy = captured_energy(basis, reference)
        return {
            "captured_energy": energy,
            "captured_energy_ratio": energy / optimum,
            "subspace_distance": subspace_distance(basis, truth),
            "optimal_energy": optimum,
        }

    with classic_warning_once():  # calibration here, in this thread: its warnings collapse
        taus = {value: noise_std({**fixed, axis: value}) for value in dict.fromkeys(grid)}

    # A noiseless (non-private) basis is a deterministic function of the moments and
    # weights: with one data draw (ε and δ sweeps) it is computed once, not once per grid
    # point and run.
    fixed_noiseless = {}
    if not resample:
        _, weights = site_layout(fixed | {axis: grid[0]}, site_shares, weighting)
        inputs = PcaInputs(fixed_moments, k, taus[grid[0]], weights, rank, faithful)
        for alg in algorithms:
            method = get(alg, "pca").pca
            if method.noiseless:  # never draws from its stream
                fixed_noiseless[alg] = evaluate(method.run(inputs, np.random.default_rng(0)))

    def task(item):
        cfg, run, run_rng, run_draw_rng, tau = item
        sizes, weights = site_layout(cfg, site_shares, weighting)
        moments = (
            second_moments(draw_sites(pool, sizes, rng=run_draw_rng)) if resample else fixed_moments
        )
        inputs = PcaInputs(moments, k, tau, weights, rank, faithful)
        alg_rngs = streams("pca", run_rng)
        out = []
        for alg in algorithms:
            if alg in fixed_noiseless:
                scores = fixed_noiseless[alg]
            else:
                scores = evaluate(get(alg, "pca").pca.run(inputs, alg_rngs[alg]))
            out.append({"algorithm": alg, **cfg, "run": run, **scores})
        return out

    tasks = [
        (cfg, run, run_rng, run_draw_rng, taus[cfg[axis]])
        for cfg, run, run_rng, run_draw_rng in _grid_runs(
            axis, grid, fixed, runs, noise_rng, draw_rng
        )
    ]
    rows = [row for chunk in parallel_map(task, tasks, workers, executor=executor) for row in chunk]
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


@single_blas
def otd_sweep(
    *,
    model: str = "mog",
    dim: int = 10,
    k: int = 5,
    sites: int | Sequence[int] = 5,
    n_per_site: int | Sequence[int] = 20_000,
    epsilon: float | Sequence[float],
    delta: float | Sequence[float] = 0.01,
    runs: int = 10,
    seed: int = 0,
    algorithms: Sequence[str] | None = None,
    calibration: str = "classic",
    sensitivity: str = "paper",
    budget_split: float = 0.5,
    sigma2: float = 0.05,
    scaling: str = "public",
    sigma2_source: str = "model",
    restarts: int = 10,
    max_iter: int = 100,
    tol: float = 1e-8,
    site_shares: Sequence[float] | None = None,
    weighting: str = "proportional",
    faithful: bool = False,
    workers: int | None = None,
    executor: Executor | None = None,
) -> pd.DataFrame:
    """Component recovery of distributed tensor decomposition along one swept axis.

    Parameters
    ----------
    model : {"mog", "stm"}
        Mixture of Gaussians or single topic model, planted from ``seed``.
    dim, k : int
        D and K (1 ≤ K ≤ D).
    sites, n_per_site, epsilon, delta : scalar or list
        As in :func:`pca_sweep`; ε, δ are the totals, split between M2 and M3.
    runs, seed, algorithms, site_shares, weighting, faithful, calibration
        As in :func:`pca_sweep`; algorithms from :func:`dpcore.registry.names` ``("otd")``.
    sensitivity : {"paper", "add-remove", "replace"}
        Sensitivities of M2, M3 (:func:`dpcore.moments.moment_sensitivities`).
    budget_split : float
        Fraction in (0, 1) of ε and δ given to M2: ε₁ = split·ε, ε₂ = (1 − split)·ε
        (paper: 1/2). capeAGN is (ε₁ + ε₂, δ₁ + δ₂)-DP (Theorem 2).
    sigma2, scaling, sigma2_source : MOG preprocessing
        σ² of the model; ``scaling`` "public" (clip to a public bound, private) or
        "max-norm" (paper, non-private); ``sigma2_source`` "model" or "data" (paper,
        non-private). See :func:`dpcore.moments.mog_site_moments`.
    restarts, max_iter, tol : tensor power method settings (``restarts=1, max_iter=1000,
        tol=1e-6`` is the authors' variant).
    workers : int, optional
        Threads for data draws and noisy moments (:func:`dpcore.parallel.parallel_map`); the
        frame is identical for any value.
    executor : concurrent.futures.Executor, optional
        Run the draws and noisy moments there instead (as in :func:`pca_sweep`); the batched
        power method runs in this process.

    Returns
    -------
    pandas.DataFrame
        One row per (algorithm, grid point, run): ``algorithm``, ``epsilon``, ``delta``,
        ``n_per_site``, ``sites``, ``run``, ``component_error`` (q_comp),
        ``component_error_matched``, ``weight_error``, ``invalid_components`` (STM columns
        with no positive entry),
        ``iterations`` and ``private_preprocessing``.

    Notes
    -----
    Moments are computed once per data draw and reused across grid points and runs: once
    for ε and δ sweeps, afresh per run for N_s and S sweeps. ``local_*`` use site 1.
    AVN uses (ε₁, δ₁ + δ₂) for M2 and pure ε₂ for M3 (Algorithm 4).
    """
    params = dict(locals())  # exactly otd_sweep's parameters
    rows = [
        {
            "algorithm": alg,
            **cfg,
            "run": run,
            "component_error": component_error(rec.components, truth),
            "component_error_matched": component_error_matched(rec.components, truth),
            "weight_error": weight_error(rec.weights, weights, rec.components, truth),
            "invalid_components": int(rec.invalid.sum()),
            "iterations": rec.iterations,
            "private_preprocessing": private,
        }
        for cfg, run, alg, rec, truth, weights, private in _otd_iter(**params)
    ]
    columns = [
        "algorithm",
        *SWEEP_AXES,
        "run",
        "component_error",
        "component_error_matched",
        "weight_error",
        "invalid_components",
        "iterations",
        "private_preprocessing",
    ]
    return pd.DataFrame(rows, columns=columns)


@single_blas
def otd_example(**params: Any) -> pd.DataFrame:
    """True and recovered mixing weights of one run, per algorithm (matched components).

    Takes :func:`otd_sweep`'s parameters with scalar ε, δ, N_s and S; ``runs`` is 1.

    Returns
    -------
    pandas.DataFrame
        Columns ``component``, ``true_weight`` and one column of recovered weights per
        algorithm, under the one-to-one matching of :func:`dpcore.metrics.matching`.
    """
    kwargs = {
        name: p.default
        for name, p in inspect.signature(otd_sweep).parameters.items()
        if p.default is not inspect.Parameter.empty
    }
    kwargs.update(params, runs=1)
    table: dict[str, Any] = {}
    for _, _, alg, rec, truth, weights, _ in _otd_iter(**kwargs):
        table.setdefault("component", np.arange(1, weights.size + 1))
        table.setdefault("true_weight", weights)
        recovered = np.empty(weights.size)
        recovered[matching(rec.components, truth)] = rec.weights
        table[alg] = recovered
    return pd.DataFrame(table)


def _otd_iter(
    *,
    model,
    dim,
    k,
    sites,
    n_per_site,
    epsilon,
    delta,
    runs,
    seed,
    algorithms,
    calibration,
    sensitivity,
    budget_split,
    sigma2,
    scaling,
    sigma2_source,
    restarts,
    max_iter,
    tol,
    site_shares,
    weighting,
    faithful,
    workers,
    executor,
):
    """Validate :func:`otd_sweep`'s parameters, then yield one recovery per (grid point, run,
    algorithm): (config, run, algorithm, Recovery, true components, true weights,
    private_preprocessing)."""
    axis, grid, fixed = sweep_grid(epsilon=epsilon, delta=delta, n_per_site=n_per_site, sites=sites)
    runs, algorithms = _check_common(
        runs, seed, weighting, site_shares, axis, algorithms, "otd"
    )
    calibration = check_choice(calibration, "calibration", CALIBRATIONS)
    split = check_real(
        budget_split, "budget_split", low=0.0, high=1.0, low_open=True, high_open=True
    )
    options = PowerOptions(restarts, max_iter, tol)
    check_int(options.restarts, "restarts", low=1)
    check_int(options.max_iter, "max_iter", low=1)
    check_real(options.tol, "tol", low=0.0, low_open=True)
    dim = check_int(dim, "dim", low=1, high=MAX_DIM_TENSOR)
    k = check_int(k, "k", low=1, high=dim)  # before the estimate, which computes with k
    resample = axis in ("n_per_site", "sites")
    check_budget(
        estimate_otd(
            dim=dim,
            k=k,
            sites=_largest(axis, grid, fixed, "sites"),
            n_total=_largest(axis, grid, fixed, "sites")
            * _largest(axis, grid, fixed, "n_per_site"),
            draws=len(grid) * runs if resample else 1,
            points=len(grid),
            runs=runs,
            faithful=bool(faithful),
        ),
        what="this tensor sweep",
    )
    data_rng, draw_rng, noise_rng = np.random.default_rng(seed).spawn(3)
    planted = make_model(model, dim, k, sigma2=sigma2, rng=data_rng)
    moment_opts = {"scaling": scaling, "sigma2_source": sigma2_source} if model == "mog" else {}

    def draw(cfg, rng):
        sizes, _ = site_layout(cfg, site_shares, weighting)
        return site_moments(planted, sizes, rng=rng, **moment_opts)

    fixed_moments = None if resample else draw(fixed | {axis: grid[0]}, draw_rng)

    def noise_scales(cfg, sigma2_used):
        sizes, _ = site_layout(cfg, site_shares, weighting)
        eps1, eps2 = split * cfg["epsilon"], (1 - split) * cfg["epsilon"]
        dlt1, dlt2 = split * cfg["delta"], (1 - split) * cfg["delta"]
        sens2, sens3 = moment_sensitivities(
            planted.kind, sizes, dim=planted.dim, sigma2=sigma2_used, relation=sensitivity
        )
        return NoiseScales(
            tau2=gaussian_sigmas(sens2, eps1, dlt1, method=calibration),
            tau3=gaussian_sigmas(sens3, eps2, dlt2, method=calibration),
            tau2_avn=gaussian_sigmas(sens2, eps1, dlt1 + dlt2, method=calibration),
            beta=eps2 / sens3,
        )

    def task(item):
        """Everything up to the whitened tensors of one (grid point, run)."""
        cfg, run, run_rng, mom, noise = item
        _, weights = site_layout(cfg, site_shares, weighting)
        inputs = OtdInputs(mom, k, weights, noise, faithful, planted)
        alg_rngs = streams("otd", run_rng)
        out = []
        for alg in algorithms:
            method = get(alg, "otd").otd
            tpm_rng, noise_rng = alg_rngs[alg].spawn(2)
            # a decomposing method whitens (power method later, batched); others recover
            result = method.run(inputs, noise_rng if method.decomposes else alg_rngs[alg])
            private = mom.private_preprocessing
            out.append((cfg, run, alg, result, tpm_rng, method.decomposes, private))
        return out

    # Three phases: data draws (threads), calibration (this thread, so that its warnings
    # collapse into one: warnings.catch_warnings is not thread-safe), whitening (threads).
    points = list(_grid_runs(axis, grid, fixed, runs, noise_rng, draw_rng))
    if resample:
        draws = parallel_map(lambda p: draw(p[0], p[3]), points, workers, executor=executor)
    else:
        draws = [fixed_moments] * len(points)
    cache: dict[tuple, NoiseScales] = {}  # the noise depends only on the grid value and σ²
    tasks = []
    with classic_warning_once():
        for (cfg, run, run_rng, _), mom in zip(points, draws, strict=True):
            key = (cfg[axis], mom.sigma2)
            if key not in cache:
                cache[key] = noise_scales(cfg, mom.sigma2)
            tasks.append((cfg, run, run_rng, mom, cache[key]))
    items = [
        item for chunk in parallel_map(task, tasks, workers, executor=executor) for item in chunk
    ]
    # the power method runs batched over every whitened tensor (dpcore.tensor)
    tensors = [item for item in items if item[5]]
    recovered = decompose_batch(
        [item[3] for item in tensors],
        k,
        kind=planted.kind,
        options=options,
        rngs=[item[4] for item in tensors],
    )
    recovered_iter = iter(recovered)
    for cfg, run, alg, result, _, decomposes, private in items:
        rec = next(recovered_iter) if decomposes else result
        yield cfg, run, alg, rec, planted.components, planted.weights, private


DROPOUT_CASES = ("no dropout", "none", "naive", "cape")


@single_blas
def dropout_pca(
    *,
    n_per_site: Sequence[int],
    epsilon: Sequence[float],
    delta: Sequence[float],
    weights: Sequence[float],
    dropped: Sequence[int],
    calibration: str = "classic",
    dim: int = 50,
    k: int = 10,
    runs: int = 20,
    seed: int = 0,
    pool_size: int = 60_000,
    workers: int | None = None,
    executor: Executor | None = None,
) -> pd.DataFrame:
    """Captured energy of capePCA when sites drop out, with and without a remedy.

    Parameters
    ----------
    n_per_site, epsilon, delta, weights : sequence, one entry per site
        N_s, ε_s, δ_s and the aggregator's μ_s.
    dropped : sequence of int
        0-based sites that drop out after the noise generator has sent the E's.
    calibration : {"classic", "analytic"}
    dim, k, runs, seed, pool_size
        Synthetic data (:func:`dpcore.synthetic_dataset`), repetitions and seed.
    workers, executor
        Where the runs go, as in :func:`pca_sweep`; the frame is identical for any choice.

    Returns
    -------
    pandas.DataFrame
        ``case`` ("no dropout", then the remedies "none", "naive", "cape" of
        :func:`dpcore.privacy.dropout_run`), ``run`` and ``captured_energy_ratio`` (of the
        optimum for the pool's reference matrix).
    """
    sizes = np.array([check_int(n, "n_per_site", low=1) for n in n_per_site])
    calibration = check_choice(calibration, "calibration", CALIBRATIONS)
    tau = site_noise_std(sizes, epsilon, delta, method=calibration)
    design = cape_design(tau, weights=weights)
    data_rng, draw_rng, noise_rng = np.random.default_rng(seed).spawn(3)
    dim = check_int(dim, "dim", low=1)
    k = check_int(k, "k", low=1, high=dim)
    runs = check_int(runs, "runs", low=1)
    dataset = synthetic_dataset(dim=dim, k=k, n_samples=pool_size, rng=data_rng)
    moments = second_moments(draw_sites(dataset, sizes, rng=draw_rng))
    reference = dataset.reference
    optimum = optimal_energy(reference, k)

    def one_run(item):
        run, run_rng = item
        rows = []
        for case, rng in zip(DROPOUT_CASES, run_rng.spawn(len(DROPOUT_CASES)), strict=True):
            if case == "no dropout":
                est, _ = dropout_run(moments, design, (), remedy="none", symmetric=True, rng=rng)
            else:
                est, _ = dropout_run(moments, design, dropped, remedy=case, symmetric=True, rng=rng)
            energy = captured_energy(top_k_eigvecs(est, k), reference)
            rows.append({"case": case, "run": run, "captured_energy_ratio": energy / optimum})
        return rows

    runs_out = parallel_map(one_run, enumerate(noise_rng.spawn(runs)), workers, executor=executor)
    return pd.DataFrame([row for rows in runs_out for row in rows])
