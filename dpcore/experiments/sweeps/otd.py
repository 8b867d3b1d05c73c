"""The tensor-decomposition sweep.

Component recovery along one swept axis, and one run's recovered weights.
"""

from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pandas as pd

from dpcore._validation import RngLike, check_rng
from dpcore.experiments.limits import WorkBudget, check_budget, check_feasible
from dpcore.experiments.sweeps.provenance import Seed, frame_attrs, seed_of
from dpcore.experiments.sweeps.scores import OTD_METRICS
from dpcore.experiments.sweeps.spec import GridPoint, OtdSpec, RunStreams, keywords_of, resolve_rng
from dpcore.factorization.metrics import matching
from dpcore.factorization.models import MixtureModel, make_model
from dpcore.factorization.moments import SiteMoments, moment_sensitivities, site_moments
from dpcore.factorization.otd import WhitenedTensor, decompose_batch
from dpcore.factorization.registry import NoiseScales, OtdInputs, OtdMethod, SitePrivacy, streams
from dpcore.factorization.tensor import Recovery
from dpcore.mechanisms.calibration import classic_warning_once, gaussian_sigmas
from dpcore.parallel import parallel_map, planned_workers, single_blas


@dataclass(frozen=True, eq=False)
class Outcome:
    """One algorithm's result in one (grid point, run).

    Attributes
    ----------
    point : GridPoint
        ε, δ, N_s and S of the grid point.
    run : int
    algorithm : str
    recovery : Recovery
        Recovered components and weights.
    private_preprocessing : bool
        False where the data's scaling or σ² came from the data (not private).
    """

    point: GridPoint
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

    point: GridPoint
    run: int
    algorithm: str
    result: WhitenedTensor | Recovery
    power_rng: np.random.Generator
    decomposes: bool
    private_preprocessing: bool


def _noise_scales(
    spec: OtdSpec, planted: MixtureModel, point: GridPoint, sigma2: float
) -> NoiseScales:
    """Per-site noise for ε₁ = split·ε on M2 and ε₂ = (1 − split)·ε on M3 (same for δ)."""
    sizes, _ = spec.sites.layout(point)
    method = spec.privacy.gaussian
    (eps1, dlt1), (eps2, dlt2) = spec.privacy.stages(point.epsilon, point.delta)
    sens2, sens3 = moment_sensitivities(
        planted.kind, sizes, dim=planted.dim, sigma2=sigma2, relation=spec.privacy.sensitivity
    )

    def stage(sens: Any, eps: float, dlt: float) -> SitePrivacy:
        bits, scale = point.secagg_bits, point.secagg_scale
        return SitePrivacy(np.asarray(sens, dtype=float), eps, dlt, method, bits, scale)

    return NoiseScales(
        tau2=gaussian_sigmas(sens2, epsilon=eps1, delta=dlt1, calibration=method),
        tau3=gaussian_sigmas(sens3, epsilon=eps2, delta=dlt2, calibration=method),
        tau2_avn=gaussian_sigmas(sens2, epsilon=eps1, delta=dlt1 + dlt2, calibration=method),
        beta=eps2 / sens3,
        privacy2=stage(sens2, eps1, dlt1),
        privacy3=stage(sens3, eps2, dlt2),
    )


@dataclass(frozen=True, eq=False)
class OtdRun:
    """A tensor sweep's outcomes and the planted model they are scored against."""

    model: MixtureModel
    outcomes: list[Outcome]
    seed: Seed = None  # the rng it ran from (provenance.seed_of), for the frame's attrs


@single_blas
def run_otd_sweep(
    spec: OtdSpec,
    rng: RngLike,
    *,
    workers: int | None = None,
    executor: Executor | None = None,
    budget: WorkBudget | None = None,
) -> OtdRun:
    """Run a validated tensor sweep: one :class:`Outcome` per (grid point, run, algorithm).

    ``rng`` is spawned into the model stream (the planted model), the draw stream (the
    sites' samples) and the noise stream (one child per grid value, run and algorithm).

    Three phases: data draws (threads), calibration (this thread, so that its warnings
    collapse into one: ``warnings.catch_warnings`` is not thread-safe), whitening (threads);
    then the tensor power method runs batched over every whitened tensor, in this process.
    ``workers`` and ``executor`` say where the draws and whitenings run
    (:func:`dpcore.parallel.parallel_map`); the outcomes are identical for any choice.
    ``budget``: as in :func:`dpcore.run_pca_sweep` (default None, no bound).
    """
    if not isinstance(spec, OtdSpec):
        raise TypeError(f"spec must be an OtdSpec (OtdSpec.build); got {type(spec).__name__}")
    rng = check_rng(rng)
    grid = spec.grid
    check_feasible(spec, what="this tensor sweep")  # no budget but this machine's memory
    if budget is not None:
        estimate = spec.estimate(workers=planned_workers(workers, executor))
        check_budget(estimate, what="this tensor sweep", budget=budget)
    seed = seed_of(rng)  # before spawning (see run_pca_sweep)
    data_rng, draw_rng, noise_rng = rng.spawn(3)
    planted = make_model(spec.model, spec.dim, spec.k, sigma2=spec.sigma2, rng=data_rng)
    moment_opts = (
        {"scaling": spec.scaling, "sigma2_source": spec.sigma2_source}
        if spec.model == "mog"
        else {}
    )

    def draw(point: GridPoint, rng: np.random.Generator) -> SiteMoments:
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
            key = (r.point.value(grid.axis), mom.sigma2)
            if key not in cache:
                cache[key] = _noise_scales(spec, planted, r.point, mom.sigma2)
            noises.append(cache[key])

    # the spec's records, not names, travel to the tasks (see run_pca_sweep)
    methods = {r.name: cast(OtdMethod, r.method("otd")) for r in spec.records}

    def whiten(task: tuple[RunStreams, SiteMoments, NoiseScales]) -> list[_Pending]:
        r, mom, noise = task
        _, weights = spec.sites.layout(r.point)
        inputs = OtdInputs(
            moments=mom,
            k=spec.k,
            weights=weights,
            noise=noise,
            faithful=spec.faithful,
            model=planted,
        )
        alg_rngs = streams(methods, r.noise)  # keyed by name (registry.stream)
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
    return OtdRun(planted, outcomes, seed)


def otd_frame(spec: OtdSpec, result: OtdRun) -> pd.DataFrame:
    """The tidy frame of a tensor sweep: one row per outcome, one column per metric."""
    if not isinstance(spec, OtdSpec):
        raise TypeError(f"spec must be an OtdSpec (OtdSpec.build); got {type(spec).__name__}")
    if not isinstance(result, OtdRun):
        raise TypeError(f"result must be an OtdRun (run_otd_sweep); got {type(result).__name__}")
    metrics = spec.metrics
    rows = [
        {
            "algorithm": o.algorithm,
            **o.point.row(),
            "run": o.run,
            **{name: OTD_METRICS[name](o.recovery, result.model) for name in metrics},
            "private_preprocessing": o.private_preprocessing,
        }
        for o in result.outcomes
    ]
    columns = ["algorithm", *spec.grid.columns, "run", *metrics, "private_preprocessing"]
    frame = pd.DataFrame(rows, columns=columns)
    frame.attrs.update(frame_attrs("otd", spec.keywords(), result.seed))  # see run_pca_sweep
    return frame


def example_table(result: OtdRun) -> pd.DataFrame:
    """True and recovered mixing weights per algorithm, from a sweep's first run.

    Recovered components are matched one-to-one to the truth
    (:func:`dpcore.factorization.metrics.matching`).
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


@keywords_of(OtdSpec.build)
def otd_spec(**keywords: Any) -> OtdSpec:
    """``OtdSpec.build(**keywords)``: see :meth:`dpcore.OtdSpec.build`."""
    return OtdSpec.build(**keywords)


@single_blas
@keywords_of(OtdSpec.build)
def otd_sweep(
    *,
    workers: int | None = None,
    executor: Executor | None = None,
    budget: WorkBudget | None = None,
    rng: int | np.random.Generator | None = 0,
    seed: int | None = None,
    **keywords: Any,
) -> pd.DataFrame:
    """Component recovery of distributed tensor decomposition along one swept axis.

    A thin front: ``OtdSpec.build(**keywords)`` (:meth:`~dpcore.OtdSpec.build` documents
    every keyword and the frame) run by :func:`run_otd_sweep` and scored by
    :func:`otd_frame`.

    Parameters
    ----------
    workers, executor
        Where the data draws and noisy moments run, as in :func:`dpcore.pca_sweep`; the
        batched power method runs in this process.
    budget : WorkBudget, optional
        As in :func:`dpcore.pca_sweep`: no bound unless given.
    rng : int, Generator or None
        Everything random derives from it (SPEC 7): same seed, same frame. Default 0.
    seed : int, optional
        Deprecated older name of ``rng`` (warns).
    **keywords
        Those of :meth:`dpcore.OtdSpec.build`.

    Returns
    -------
    pandas.DataFrame
        One row per (algorithm, grid point, run), one column per axis and metric, and
        ``private_preprocessing``; its ``attrs`` hold the spec, the seed and the code
        (:func:`dpcore.rerun` redoes it).
    """
    spec = OtdSpec.build(**keywords)
    generator = resolve_rng(rng, seed)
    result = run_otd_sweep(spec, generator, workers=workers, executor=executor, budget=budget)
    return otd_frame(spec, result)


def otd_example_of(
    spec: OtdSpec, rng: RngLike, *, workers: int | None = None, budget: WorkBudget | None = None
) -> pd.DataFrame:
    """True and recovered mixing weights of one run of ``spec`` (at one run), per algorithm.

    ``spec`` should hold one grid point (scalar ε, δ, N_s, S); with more, every point's first
    run is drawn and the first point's weights are shown. ``runs`` is taken as 1.

    Returns
    -------
    pandas.DataFrame
        Columns ``component``, ``true_weight`` and one column of recovered weights per
        algorithm, under the one-to-one matching of :func:`dpcore.factorization.metrics.matching`.
    """
    if not isinstance(spec, OtdSpec):
        raise TypeError(f"spec must be an OtdSpec (OtdSpec.build); got {type(spec).__name__}")
    if spec.runs.count != 1:
        spec = spec.replace(runs=1)
    return example_table(run_otd_sweep(spec, rng, workers=workers, budget=budget))


@single_blas
def otd_example(
    *,
    rng: int | np.random.Generator | None = 0,
    seed: int | None = None,
    workers: int | None = None,
    budget: WorkBudget | None = None,
    **params: Any,
) -> pd.DataFrame:
    """True and recovered mixing weights of one run, per algorithm (matched components).

    A thin front: ``otd_example_of(OtdSpec.build(**params), rng)``.

    Parameters
    ----------
    rng, seed, workers, budget
        As in :func:`otd_sweep`.
    **params
        The keywords of :meth:`dpcore.OtdSpec.build`, with scalar ε, δ, N_s and S; ``runs``
        is 1.

    Returns
    -------
    pandas.DataFrame
        Columns ``component``, ``true_weight`` and one column of recovered weights per
        algorithm, under the one-to-one matching of :func:`dpcore.factorization.metrics.matching`.
    """
    spec = OtdSpec.build(**{**params, "runs": 1})
    return otd_example_of(spec, resolve_rng(rng, seed), workers=workers, budget=budget)
