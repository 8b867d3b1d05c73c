"""The tensor-decomposition sweep.

Component recovery along one swept axis, and one run's recovered weights.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpcore.calibration import classic_warning_once, gaussian_sigmas
from dpcore.limits import check_budget, estimate_otd
from dpcore.metrics import matching
from dpcore.models import MixtureModel, make_model
from dpcore.moments import SiteMoments, moment_sensitivities, site_moments
from dpcore.otd import PowerOptions, WhitenedTensor, decompose_batch
from dpcore.parallel import parallel_map, single_blas
from dpcore.registry import NoiseScales, OtdInputs, SitePrivacy, names, otd_method, streams
from dpcore.secagg import DEFAULT_BITS
from dpcore.sweeps.scores import OTD_METRICS
from dpcore.sweeps.spec import (
    OtdPrivacy,
    OtdSpec,
    Runs,
    RunStreams,
    SiteLayout,
    SweepGrid,
    resolve_rng,
)
from dpcore.tensor import Recovery


@dataclass(frozen=True, eq=False)
class Outcome:
    """One algorithm's result in one (grid point, run).

    Attributes
    ----------
    point : dict
        ε, δ, N_s and S of the grid point.
    run : int
    algorithm : str
    recovery : Recovery
        Recovered components and weights.
    private_preprocessing : bool
        False where the data's scaling or σ² came from the data (not private).
    """

    point: dict[str, Any]
    run: int
    algorithm: str
    recovery: Recovery
    private_preprocessing: bool


@dataclass(frozen=True, eq=False)
class _Pending:
    """An algorithm's output before the batched power method.

    A whitened tensor (with the stream its power method uses) or, for a non-decomposing
    baseline, the final recovery.
    """

    point: dict[str, Any]
    run: int
    algorithm: str
    result: WhitenedTensor | Recovery
    power_rng: np.random.Generator
    decomposes: bool
    private_preprocessing: bool


def _noise_scales(
    spec: OtdSpec, planted: MixtureModel, point: dict[str, Any], sigma2: float
) -> NoiseScales:
    """Per-site noise for ε₁ = split·ε on M2 and ε₂ = (1 − split)·ε on M3 (same for δ)."""
    sizes, _ = spec.sites.layout(point)
    split, method = spec.privacy.budget_split, spec.privacy.calibration
    eps1, eps2 = split * point["epsilon"], (1 - split) * point["epsilon"]
    dlt1, dlt2 = split * point["delta"], (1 - split) * point["delta"]
    sens2, sens3 = moment_sensitivities(
        planted.kind, sizes, dim=planted.dim, sigma2=sigma2, relation=spec.privacy.sensitivity
    )

    def stage(sens: Any, eps: float, dlt: float) -> SitePrivacy:
        bits, scale = point["secagg_bits"], point["secagg_scale"]
        return SitePrivacy(np.asarray(sens, dtype=float), eps, dlt, method, bits, scale)

    return NoiseScales(
        tau2=gaussian_sigmas(sens2, epsilon=eps1, delta=dlt1, method=method),
        tau3=gaussian_sigmas(sens3, epsilon=eps2, delta=dlt2, method=method),
        tau2_avn=gaussian_sigmas(sens2, epsilon=eps1, delta=dlt1 + dlt2, method=method),
        beta=eps2 / sens3,
        privacy2=stage(sens2, eps1, dlt1),
        privacy3=stage(sens3, eps2, dlt2),
    )


@dataclass(frozen=True, eq=False)
class OtdRun:
    """A tensor sweep's outcomes and the planted model they are scored against."""

    model: MixtureModel
    outcomes: list[Outcome]


def run_otd_sweep(
    spec: OtdSpec,
    rng: np.random.Generator,
    *,
    workers: int | None = None,
    executor: Executor | None = None,
) -> OtdRun:
    """Run a validated tensor sweep: one :class:`Outcome` per (grid point, run, algorithm).

    ``rng`` is spawned into the model stream (the planted model), the draw stream (the
    sites' samples) and the noise stream (one child per grid value, run and algorithm).

    Three phases: data draws (threads), calibration (this thread, so that its warnings
    collapse into one: ``warnings.catch_warnings`` is not thread-safe), whitening (threads);
    then the tensor power method runs batched over every whitened tensor, in this process.
    ``workers`` and ``executor`` say where the draws and whitenings run
    (:func:`dpcore.parallel.parallel_map`); the outcomes are identical for any choice.
    """
    grid = spec.grid
    n_max = int(grid.largest("sites")) * int(grid.largest("n_per_site"))
    check_budget(
        estimate_otd(
            dim=spec.dim,
            k=spec.k,
            sites=int(grid.largest("sites")),
            n_total=n_max,
            draws=len(grid.values) * spec.runs.count if grid.resamples else 1,
            points=len(grid.values),
            runs=spec.runs.count,
            faithful=spec.faithful,
            algorithms=spec.algorithms,
            restarts=spec.power.restarts,
            max_iter=spec.power.max_iter,
        ),
        what="this tensor sweep",
    )
    data_rng, draw_rng, noise_rng = rng.spawn(3)
    planted = make_model(spec.model, spec.dim, spec.k, sigma2=spec.sigma2, rng=data_rng)
    moment_opts = (
        {"scaling": spec.scaling, "sigma2_source": spec.sigma2_source}
        if spec.model == "mog"
        else {}
    )

    def draw(point: dict[str, Any], rng: np.random.Generator) -> SiteMoments:
        sizes, _ = spec.sites.layout(point)
        return site_moments(planted, sizes, rng=rng, **moment_opts)

    # The one data draw of ε and δ sweeps comes first: drawing spawns site streams from
    # draw_rng, and the per-run streams are spawned after them.
    fixed = None if grid.resamples else draw(grid.point(grid.values[0]), draw_rng)
    points = list(spec.runs.streams(grid, noise_rng, draw_rng))
    if fixed is None:
        draws = parallel_map(lambda r: draw(r.point, r.draw), points, workers, executor=executor)
    else:
        draws = [fixed] * len(points)

    cache: dict[tuple[Any, float], NoiseScales] = {}  # noise depends on the grid value and σ²
    noises = []
    with classic_warning_once():
        for r, mom in zip(points, draws, strict=True):
            key = (r.point[grid.axis], mom.sigma2)
            if key not in cache:
                cache[key] = _noise_scales(spec, planted, r.point, mom.sigma2)
            noises.append(cache[key])

    # the records, not names, travel to the tasks (see run_pca_sweep)
    assert spec.algorithms is not None  # resolved by OtdSpec.__post_init__
    methods = {alg: otd_method(alg) for alg in spec.algorithms}
    family = names("otd")

    def whiten(task: tuple[RunStreams, SiteMoments, NoiseScales]) -> list[_Pending]:
        r, mom, noise = task
        _, weights = spec.sites.layout(r.point)
        inputs = OtdInputs(mom, spec.k, weights, noise, spec.faithful, planted)
        alg_rngs = streams(family, r.noise)
        out = []
        for alg, method in methods.items():
            power_rng, alg_noise_rng = alg_rngs[alg].spawn(2)
            # a decomposing method whitens (power method below, batched); others recover
            result = method.run(inputs, alg_noise_rng if method.decomposes else alg_rngs[alg])
            out.append(
                _Pending(
                    r.point,
                    r.run,
                    alg,
                    result,
                    power_rng,
                    method.decomposes,
                    mom.private_preprocessing,
                )
            )
        return out

    tasks = list(zip(points, draws, noises, strict=True))
    chunks = parallel_map(whiten, tasks, workers, executor=executor)
    pending = [p for chunk in chunks for p in chunk]
    tensors = [p for p in pending if p.decomposes]
    recovered = iter(
        decompose_batch(
            [p.result for p in tensors],  # type: ignore[misc]
            spec.k,
            kind=planted.kind,
            options=spec.power,
            rngs=[p.power_rng for p in tensors],
        )
    )
    outcomes = []
    for p in pending:
        rec = next(recovered) if p.decomposes else p.result
        assert isinstance(rec, Recovery)
        outcomes.append(Outcome(p.point, p.run, p.algorithm, rec, p.private_preprocessing))
    return OtdRun(planted, outcomes)


def otd_frame(spec: OtdSpec, result: OtdRun) -> pd.DataFrame:
    """The tidy frame of a tensor sweep: one row per outcome, one column per metric."""
    metrics = spec.metrics
    assert metrics is not None  # resolved by OtdSpec.__post_init__
    rows = [
        {
            "algorithm": o.algorithm,
            **o.point,
            "run": o.run,
            **{name: OTD_METRICS[name](o.recovery, result.model) for name in metrics},
            "private_preprocessing": o.private_preprocessing,
        }
        for o in result.outcomes
    ]
    columns = ["algorithm", *spec.grid.columns, "run", *metrics, "private_preprocessing"]
    return pd.DataFrame(rows, columns=columns)


def example_table(result: OtdRun) -> pd.DataFrame:
    """True and recovered mixing weights per algorithm, from a sweep's first run.

    Recovered components are matched one-to-one to the truth
    (:func:`dpcore.metrics.matching`).
    """
    model = result.model
    table: dict[str, Any] = {
        "component": np.arange(1, model.k + 1),
        "true_weight": model.weights,
    }
    for o in result.outcomes:
        if o.run == 0 and o.algorithm not in table:
            recovered = np.empty(model.k)
            recovered[matching(o.recovery.components, model.components)] = o.recovery.weights
            table[o.algorithm] = recovered
    return pd.DataFrame(table)


def otd_spec(
    *,
    model: str = "mog",
    dim: int = 10,
    k: int = 5,
    sites: int | Sequence[int] = 5,
    n_per_site: int | Sequence[int] = 20_000,
    epsilon: float | Sequence[float],
    delta: float | Sequence[float] = 0.01,
    runs: int = 10,
    algorithms: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
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
    secagg_bits: int | Sequence[int] = DEFAULT_BITS,
    secagg_scale: float | Sequence[float] | None = None,
) -> OtdSpec:
    """The validated :class:`~dpcore.sweeps.spec.OtdSpec` of :func:`otd_sweep`'s keywords."""
    return OtdSpec(
        grid=SweepGrid.of(
            epsilon=epsilon,
            delta=delta,
            n_per_site=n_per_site,
            sites=sites,
            secagg_bits=secagg_bits,
            secagg_scale=secagg_scale,
        ),
        sites=SiteLayout(site_shares, weighting),
        privacy=OtdPrivacy(calibration, sensitivity, budget_split),
        runs=Runs(runs),
        model=model,
        dim=dim,
        k=k,
        sigma2=sigma2,
        scaling=scaling,
        sigma2_source=sigma2_source,
        power=PowerOptions(restarts, max_iter, tol),
        faithful=faithful,
        algorithms=algorithms,
        metrics=metrics,
    )


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
    algorithms: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
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
    rng: int | np.random.Generator | None = 0,
    seed: int | None = None,
    secagg_bits: int | Sequence[int] = DEFAULT_BITS,
    secagg_scale: float | Sequence[float] | None = None,
) -> pd.DataFrame:
    """Component recovery of distributed tensor decomposition along one swept axis.

    A thin front: builds a validated :class:`~dpcore.sweeps.spec.OtdSpec`
    (:func:`otd_spec`) and runs it (:func:`run_otd_sweep`).

    Parameters
    ----------
    model : {"mog", "stm"}
        Mixture of Gaussians or single topic model, planted from ``rng``.
    dim, k : int
        D ≤ 100 and K (1 ≤ K ≤ D).
    sites, n_per_site, epsilon, delta : scalar or list
        As in :func:`dpcore.pca_sweep`; ε, δ are the totals, split between M2 and M3.
    runs, site_shares, weighting, faithful, calibration, rng, seed
        As in :func:`dpcore.pca_sweep`.
    secagg_bits, secagg_scale
        As in :func:`dpcore.pca_sweep`: the ``secagg`` baseline sends M2 at (ε₁, δ₁) and M3
        at (ε₂, δ₂) through one round each, with these b and γ (one may be swept).
    workers, executor
        Where the data draws and noisy moments run, as in :func:`dpcore.pca_sweep`; the
        batched power method runs in this process.
    algorithms : sequence of str, optional
        Names from :func:`dpcore.registry.names` ``("otd")`` (default: all but the opt-in
        ones, :func:`dpcore.registry.defaults`).
    metrics : sequence of str, optional
        Columns from :data:`dpcore.sweeps.scores.OTD_METRICS` (default: all, in that order).
    sensitivity : {"paper", "add-remove", "replace"}
        Sensitivities of M2, M3 (:func:`dpcore.moments.moment_sensitivities`).
    budget_split : float
        Fraction in (0, 1) of ε and δ given to M2: ε₁ = split·ε, ε₂ = (1 − split)·ε
        (paper: 1/2). capeAGN is (ε₁ + ε₂, δ₁ + δ₂)-DP (Theorem 2).
    sigma2, scaling, sigma2_source : MOG preprocessing
        σ² of the model; ``scaling`` "public" (clip to a public bound, private) or
        "max-norm" (paper, non-private); ``sigma2_source`` "model" or "data" (paper,
        non-private). See :func:`dpcore.moments.mog_site_moments`.
    restarts, max_iter, tol : tensor power method settings
        ``restarts=1, max_iter=1000, tol=1e-6`` is the authors' variant.

    Returns
    -------
    pandas.DataFrame
        One row per (algorithm, grid point, run): ``algorithm``, ``epsilon``, ``delta``,
        ``n_per_site``, ``sites``, ``run``, one column per metric (by default
        ``component_error`` (q_comp), ``component_error_matched``, ``weight_error``,
        ``invalid_components`` (STM columns with no positive entry), ``iterations``) and
        ``private_preprocessing``.

    Notes
    -----
    Moments are computed once per data draw and reused across grid points and runs: once
    for ε and δ sweeps, afresh per run for N_s and S sweeps. ``local_*`` use site 1.
    AVN uses (ε₁, δ₁ + δ₂) for M2 and pure ε₂ for M3 (Algorithm 4).
    """
    spec = otd_spec(
        model=model,
        dim=dim,
        k=k,
        sites=sites,
        n_per_site=n_per_site,
        epsilon=epsilon,
        delta=delta,
        runs=runs,
        algorithms=algorithms,
        metrics=metrics,
        calibration=calibration,
        sensitivity=sensitivity,
        budget_split=budget_split,
        sigma2=sigma2,
        scaling=scaling,
        sigma2_source=sigma2_source,
        restarts=restarts,
        max_iter=max_iter,
        tol=tol,
        site_shares=site_shares,
        weighting=weighting,
        faithful=faithful,
        secagg_bits=secagg_bits,
        secagg_scale=secagg_scale,
    )
    result = run_otd_sweep(spec, resolve_rng(rng, seed), workers=workers, executor=executor)
    return otd_frame(spec, result)


@single_blas
def otd_example(
    *,
    rng: int | np.random.Generator | None = 0,
    seed: int | None = None,
    workers: int | None = None,
    **params: Any,
) -> pd.DataFrame:
    """True and recovered mixing weights of one run, per algorithm (matched components).

    Parameters
    ----------
    rng, seed, workers
        As in :func:`otd_sweep`.
    **params
        The keywords of :func:`otd_spec` (those of :func:`otd_sweep`), with scalar ε, δ,
        N_s and S; ``runs`` is 1.

    Returns
    -------
    pandas.DataFrame
        Columns ``component``, ``true_weight`` and one column of recovered weights per
        algorithm, under the one-to-one matching of :func:`dpcore.metrics.matching`.
    """
    spec = otd_spec(**{**params, "runs": 1})
    return example_table(run_otd_sweep(spec, resolve_rng(rng, seed), workers=workers))
