"""capePCA under site dropout: captured energy with and without a remedy."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from concurrent.futures import Executor

import numpy as np
import pandas as pd

from dpcore._validation import check_int, show
from dpcore.analysis.views import check_sites, dropout_run
from dpcore.experiments.limits import WorkBudget, check_budget, estimate_pca, machine
from dpcore.experiments.sweeps.spec import resolve_rng
from dpcore.factorization.datasets import draw_sites, second_moments, synthetic_dataset
from dpcore.factorization.metrics import captured_energy, optimal_energy, top_k_eigvecs
from dpcore.mechanisms.calibration import CalibrationLike
from dpcore.parallel import parallel_map, planned_workers, single_blas
from dpcore.protocol.cape import cape_design
from dpcore.protocol.sites import Sites, as_sites

DROPOUT_CASES = ("no dropout", "none", "naive", "cape")


@single_blas
def dropout_pca(
    sites: Sites | None = None,
    *,
    dropped: Sequence[int],
    n_per_site: Sequence[int] | None = None,
    epsilon: Sequence[float] | None = None,
    delta: Sequence[float] | None = None,
    weights: Sequence[float] | None = None,
    calibration: CalibrationLike = None,
    dim: int = 50,
    k: int = 10,
    runs: int = 20,
    pool_size: int = 60_000,
    workers: int | None = None,
    executor: Executor | None = None,
    budget: WorkBudget | None = None,
    rng: int | np.random.Generator | None = 0,
    seed: int | None = None,
) -> pd.DataFrame:
    """Captured energy of capePCA when sites drop out, with and without a remedy.

    Parameters
    ----------
    sites : Sites
        The sites (:class:`dpcore.Sites`: N_s, ε_s, δ_s, μ_s and the calibration, whose
        relation gives Δ_s of the second moments).
    dropped : sequence of int
        0-based sites that drop out after the noise generator has sent the E's.
    n_per_site, epsilon, delta, weights, calibration : optional
        The older exploded form of ``sites`` (:func:`dpcore.protocol.sites.as_sites`).
    dim, k, runs, pool_size
        Synthetic data (:func:`dpcore.synthetic_dataset`) and repetitions.
    workers, executor
        Where the runs go, as in :func:`dpcore.pca_sweep`; the frame is identical for any
        choice.
    budget : WorkBudget, optional
        Refuse the study before any work past it (as in :func:`dpcore.pca_sweep`); no bound
        unless given.
    rng, seed
        As in :func:`dpcore.pca_sweep` (SPEC 7; ``seed`` is the older name).

    Returns
    -------
    pandas.DataFrame
        ``case`` ("no dropout", then the remedies "none", "naive", "cape" of
        :func:`dpcore.analysis.views.dropout_run`), ``run`` and ``captured_energy_ratio`` (of the
        optimum for the pool's reference matrix).
    """
    # everything is validated before any data are made
    given: Sites | Sequence[int] | np.ndarray
    if sites is not None or n_per_site is None:
        if not isinstance(sites, Sites):
            raise TypeError(
                f"sites must be a dpcore.Sites (or give n_per_site=, epsilon=, ...); "
                f"got {show(sites)}"
            )
        if n_per_site is not None:
            raise ValueError("n_per_site must not be given with sites (the record holds N_s)")
        given = sites
    elif isinstance(n_per_site, (str, bytes)) or not isinstance(
        n_per_site, (Sequence, np.ndarray)
    ):
        raise TypeError(
            f"n_per_site must be a sequence of integers, one per site; got {show(n_per_site)}"
        )
    else:
        given = [check_int(n, "n_per_site", low=1) for n in n_per_site]
    record = as_sites(
        given,
        epsilon=epsilon, delta=delta, weights=weights, calibration=calibration,
    )  # fmt: skip
    sizes = np.array(record.n_per_site, dtype=int)
    design = cape_design(record.moment_taus, weights=record.weights)
    dim = check_int(dim, "dim", low=1)
    k = check_int(k, "k", low=1, high=dim)
    runs = check_int(runs, "runs", low=1)
    pool_size = check_int(pool_size, "pool_size", low=int(sizes.sum()))
    # four capePCA runs (no dropout, three remedies) per run, one data draw
    cost = functools.partial(
        estimate_pca,
        dim=dim,
        sites=sizes.size,
        n_max=int(sizes.max()),
        pool=pool_size,
        points=len(DROPOUT_CASES),
        runs=runs,
        algorithms=("cape",),
    )
    check_budget(cost(workers=1), what="this dropout study", budget=machine())
    if budget is not None:
        estimate = cost(workers=planned_workers(workers, executor))
        check_budget(estimate, what="this dropout study", budget=budget)
    dropped = check_sites(dropped, design.n_sites, "dropped")
    data_rng, draw_rng, noise_rng = resolve_rng(rng, seed).spawn(3)
    dataset = synthetic_dataset(dim=dim, k=k, n_samples=pool_size, rng=data_rng)
    moments = second_moments(draw_sites(dataset, sizes, rng=draw_rng))
    reference = dataset.reference
    optimum = optimal_energy(reference, k)

    def one_run(item: tuple[int, np.random.Generator]) -> list[dict[str, object]]:
        run, run_rng = item
        rows: list[dict[str, object]] = []
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
