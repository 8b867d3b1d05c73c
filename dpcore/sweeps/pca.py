"""The distributed-PCA sweep: captured energy of every algorithm along one swept axis."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Executor
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpcore.calibration import (
    classic_warning_once,
    second_moment_sensitivity,
    site_noise_std,
)
from dpcore.datasets import Dataset, draw_sites, second_moments, split_sizes, synthetic_dataset
from dpcore.limits import check_budget, estimate_pca
from dpcore.metrics import optimal_energy, top_k_eigvecs
from dpcore.parallel import parallel_map, single_blas
from dpcore.registry import PcaInputs, SitePrivacy, names, pca_method, streams
from dpcore.secagg import DEFAULT_BITS
from dpcore.sweeps.scores import PCA_METRICS, PcaTruth
from dpcore.sweeps.spec import (
    PcaPrivacy,
    PcaSpec,
    Runs,
    RunStreams,
    SiteLayout,
    SweepGrid,
    resolve_rng,
)


def _noise_std(spec: PcaSpec, point: dict[str, Any]) -> NDArray[np.float64]:
    sizes, _ = spec.sites.layout(point)
    return site_noise_std(
        sizes,
        epsilon=point["epsilon"],
        delta=point["delta"],
        method=spec.privacy.calibration,
        neighbouring=spec.privacy.neighbouring,
    )


def _privacy(spec: PcaSpec, point: dict[str, Any]) -> SitePrivacy:
    """Δ_s, (ε, δ) and the secure-aggregation settings of one grid point."""
    sizes, _ = spec.sites.layout(point)
    return SitePrivacy(
        sensitivity=second_moment_sensitivity(sizes, neighbouring=spec.privacy.neighbouring),
        epsilon=point["epsilon"],
        delta=point["delta"],
        calibration=spec.privacy.calibration,
        bits=point["secagg_bits"],
        scale=point["secagg_scale"],
    )


def run_pca_sweep(
    spec: PcaSpec,
    rng: np.random.Generator,
    *,
    workers: int | None = None,
    executor: Executor | None = None,
) -> pd.DataFrame:
    """Run a validated PCA sweep; see :func:`pca_sweep` for the frame it returns.

    ``rng`` is spawned into the data stream (synthetic pool), the draw stream (which rows
    each site holds) and the noise stream (one child per grid value, run and algorithm).
    ``workers`` and ``executor`` say where the (grid point, run) tasks run
    (:func:`dpcore.parallel.parallel_map`); the frame is identical for any choice.
    """
    grid = spec.grid
    check_budget(
        estimate_pca(
            dim=spec.dim,
            sites=int(grid.largest("sites")),
            n_max=int(grid.largest("n_per_site")),
            pool=spec.pool_size,
            points=len(grid.values),
            runs=spec.runs.count,
            algorithms=spec.algorithms,
        ),
        what="this PCA sweep",
    )
    data_rng, draw_rng, noise_rng = rng.spawn(3)
    if isinstance(spec.data, Dataset):
        dataset = spec.data
    else:
        dataset = synthetic_dataset(dim=spec.dim, k=spec.k, n_samples=spec.pool_size, rng=data_rng)
    truth = PcaTruth(
        dataset.reference,
        top_k_eigvecs(dataset.reference, spec.k),
        optimal_energy(dataset.reference, spec.k),
    )

    # What the tasks need, and no more: an executor in another process receives them
    # pickled (the pool only when the data are drawn per run; the records, not names, so a
    # runtime-registered algorithm runs there too).
    metrics, k, rank, faithful = spec.metrics, spec.k, spec.rank, spec.faithful
    # resolved by PcaSpec.__post_init__ (the fields also accept the friendly None)
    assert metrics is not None and rank is not None and spec.algorithms is not None
    layout, axis = spec.sites, grid.axis
    methods = {alg: pca_method(alg) for alg in spec.algorithms}
    pool = dataset if grid.resamples else None

    def evaluate(basis: NDArray[np.float64]) -> dict[str, float]:
        return {name: PCA_METRICS[name](basis, truth) for name in metrics}

    fixed_moments = None
    if not grid.resamples:
        sizes = split_sizes(grid.n_per_site, grid.sites, spec.sites.shares)
        fixed_moments = second_moments(draw_sites(dataset, sizes, rng=draw_rng))

    with classic_warning_once():  # calibration here, in this thread: its warnings collapse
        taus = {v: _noise_std(spec, grid.point(v)) for v in dict.fromkeys(grid.values)}
    privacy = {v: _privacy(spec, grid.point(v)) for v in dict.fromkeys(grid.values)}

    # A noiseless (non-private) basis is a deterministic function of the moments and
    # weights: with one data draw (ε and δ sweeps) it is computed once, not once per grid
    # point and run.
    fixed_noiseless: dict[str, dict[str, float]] = {}
    if fixed_moments is not None:
        first = grid.point(grid.values[0])
        _, weights = spec.sites.layout(first)
        inputs = PcaInputs(
            fixed_moments, k, taus[grid.values[0]], weights, rank, faithful, privacy[grid.values[0]]
        )
        for alg, method in methods.items():
            if method.noiseless:  # never draws from its stream
                fixed_noiseless[alg] = evaluate(method.run(inputs, np.random.default_rng(0)))

    family = names("pca")  # the stream order, fixed here (not in a worker's registry)

    def task(r: RunStreams) -> list[dict[str, Any]]:
        sizes, weights = layout.layout(r.point)
        if pool is not None:
            moments = second_moments(draw_sites(pool, sizes, rng=r.draw))
        else:
            assert fixed_moments is not None  # one draw for ε and δ sweeps
            moments = fixed_moments
        value = r.point[axis]
        inputs = PcaInputs(moments, k, taus[value], weights, rank, faithful, privacy[value])
        alg_rngs = streams(family, r.noise)
        out = []
        for alg, method in methods.items():
            if alg in fixed_noiseless:
                scores = fixed_noiseless[alg]
            else:
                scores = evaluate(method.run(inputs, alg_rngs[alg]))
            out.append({"algorithm": alg, **r.point, "run": r.run, **scores})
        return out

    tasks = list(spec.runs.streams(grid, noise_rng, draw_rng))
    chunks = parallel_map(task, tasks, workers, executor=executor)
    rows = [row for chunk in chunks for row in chunk]
    return pd.DataFrame(rows, columns=["algorithm", *grid.columns, "run", *metrics])


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
    algorithms: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    calibration: str = "classic",
    neighbouring: str = "add-remove",
    site_shares: Sequence[float] | None = None,
    weighting: str = "proportional",
    rank: int | None = None,
    faithful: bool = False,
    pool_size: int = 60_000,
    workers: int | None = None,
    executor: Executor | None = None,
    rng: int | np.random.Generator | None = 0,
    seed: int | None = None,
    secagg_bits: int | Sequence[int] = DEFAULT_BITS,
    secagg_scale: float | Sequence[float] | None = None,
) -> pd.DataFrame:
    """Captured energy of distributed PCA algorithms along one swept axis.

    A thin front: builds a validated :class:`~dpcore.sweeps.spec.PcaSpec` and runs it
    (:func:`run_pca_sweep`).

    Parameters
    ----------
    data : "synthetic" or Dataset
        The paper's synthetic set (generated from ``rng`` with ``dim``, ``k`` and
        ``pool_size``) or a prepared :class:`dpcore.Dataset`.
    dim, k : int
        D and K for synthetic data (1 ≤ K ≤ D); with a Dataset, D is its own.
    sites, n_per_site, epsilon, delta : scalar or list
        S ≥ 2, N_s ≥ 1 (average per site), ε in (0, ∞], δ in (0, 1). Exactly one may be a
        list: the swept axis.
    runs : int
        Repetitions per grid point, ≥ 1.
    algorithms : sequence of str, optional
        Names from :func:`dpcore.registry.names` ``("pca")`` (default: all but the opt-in
        ones, :func:`dpcore.registry.defaults`). Each algorithm has its own random stream,
        so choosing others does not change its numbers.
    metrics : sequence of str, optional
        Columns from :data:`dpcore.sweeps.scores.PCA_METRICS` (default: all, in that order).
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
    rng : int, Generator or None
        Everything random derives from it (SPEC 7): same seed, same frame. Default 0.
    seed : int, optional
        Older name of ``rng`` (an int seed); give one or the other.
    secagg_bits, secagg_scale : scalar or list
        Bit width b in [2, 64] and scale γ > 0 (``None``: automatic, rounding costs ≤ 1% of
        Δ) of the ``secagg`` baseline (:func:`dpcore.secagg_design`, calibrated like the
        others with ``calibration`` at the rounded sensitivity). Either may be the swept
        list instead of the four axes above; the frame then has its column.

    Returns
    -------
    pandas.DataFrame
        One row per (algorithm, grid point, run) with columns ``algorithm``, ``epsilon``,
        ``delta``, ``n_per_site``, ``sites``, ``run`` and one per metric (by default
        ``captured_energy``, ``captured_energy_ratio`` (of the optimum),
        ``subspace_distance`` and ``optimal_energy``).

    Notes
    -----
    The data subsample (N = S·N_s rows without replacement, centred, split into contiguous
    blocks) is drawn once for ε and δ sweeps and afresh per run for N_s and S sweeps, as in
    the authors' experiments. ``local`` uses site 1. Captured energy is tr(V̂ᵀAV̂) against the
    data set's reference matrix (Imtiaz & Sarwate, Sec. 6.1).
    """
    spec = PcaSpec(
        grid=SweepGrid.of(
            epsilon=epsilon,
            delta=delta,
            n_per_site=n_per_site,
            sites=sites,
            secagg_bits=secagg_bits,
            secagg_scale=secagg_scale,
        ),
        sites=SiteLayout(site_shares, weighting),
        privacy=PcaPrivacy(calibration, neighbouring),
        runs=Runs(runs),
        data=data,
        dim=dim,
        k=k,
        rank=rank,
        pool_size=pool_size,
        faithful=faithful,
        algorithms=algorithms,
        metrics=metrics,
    )
    return run_pca_sweep(spec, resolve_rng(rng, seed), workers=workers, executor=executor)
