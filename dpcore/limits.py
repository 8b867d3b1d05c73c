"""Resource guard: estimate a request's work and memory before running it, refuse past limits.

The estimates are deliberately simple cost models, calibrated on the benchmark machine
(2 cores, ``benchmarks/``): a symmetric D×D eigendecomposition takes about 2.7 ms·(D/200)³,
the third-moment accumulation about N·D³/10¹⁰ s, and runs are spread over the workers of
:func:`dpcore.parallel.default_workers`. They
only need to be right within a small factor: their job is to stop a request that would take
the server down (a classroom of thirty shares two cores), not to predict to the second.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dpcore.parallel import default_workers
from dpcore.registry import otd_method, pca_method

MAX_SECONDS = 600.0  # estimated wall time of one request
MAX_MEMORY = 2 * 2**30  # bytes
MAX_TASKS = 5_000  # grid points × runs
MAX_DIM_TENSOR = 100  # D³ doubles per site and per message
EIGH_200 = 2.7e-3  # seconds for one 200×200 eigendecomposition (benchmarks/)
FLOPS = 1e10  # effective rate of the moment products
DRAW_SECONDS = 8e-8  # one rounding + one discrete Gaussian share (secure aggregation, ~1.3
# candidates of three exponentials each; benchmarks/ measures the sweep it adds to)


@dataclass(frozen=True)
class WorkEstimate:
    """Estimated cost of one request."""

    seconds: float
    memory_bytes: float
    tasks: int


def _eigh_seconds(dim: int) -> float:
    return max(1e-4, EIGH_200 * (dim / 200) ** 3)


def estimate_pca(
    *, dim: int, sites: int, n_max: int, pool: int, points: int, runs: int, algorithms
) -> WorkEstimate:
    """Cost of :func:`dpcore.pca_sweep`: eigendecompositions per run, data draws, the pool.

    Each algorithm's eigendecompositions and extra random draws per run come from its
    registry record.
    """
    workers = default_workers()
    methods = [pca_method(a, param="algorithms") for a in algorithms]
    per_run = sum(m.eighs(sites) for m in methods)
    draws = sum(m.draws(sites, dim) for m in methods)
    tasks = points * runs
    seconds = tasks * (per_run * _eigh_seconds(dim) + draws * DRAW_SECONDS) / workers
    seconds += tasks * sites * n_max * dim**2 / FLOPS  # second moments, when resampled
    memory = 8.0 * (pool * dim + workers * (sites + 4) * dim**2 + 3 * sites * n_max * dim)
    return WorkEstimate(seconds, memory, tasks)


def estimate_otd(
    *,
    dim: int,
    k: int,
    sites: int,
    n_total: int,
    draws: int,
    points: int,
    runs: int,
    faithful: bool,
    algorithms: Sequence[str] | None = None,
    restarts: int = 10,
    max_iter: int = 100,
) -> WorkEstimate:
    """Cost of :func:`dpcore.otd_sweep`: moments, noisy tensors, power method per run.

    The power method is counted at its iteration bound (batched over every tensor: ~20 µs
    a step). Each algorithm whose registry record decomposes a tensor costs one noisy tensor and
    one power method per run; without ``algorithms``, the paper's six.
    """
    workers = default_workers()
    tasks = points * runs
    methods = [] if algorithms is None else [otd_method(a, param="algorithms") for a in algorithms]
    per_run = 6 if algorithms is None else sum(m.decomposes for m in methods)
    extra = sum(m.draws(sites, dim) for m in methods)  # secure aggregation's integers
    seconds = draws * n_total * dim**3 / FLOPS / workers
    seconds += tasks * extra * DRAW_SECONDS / workers
    seconds += tasks * per_run * (dim**3 * (sites if faithful else 1) * 3e-8 + 2e-4 * k)
    seconds += k * restarts * max_iter * (2e-5 + tasks * per_run * k**3 / FLOPS)
    tensors = sites * dim**3 * (4 if faithful else 2)
    memory = 8.0 * (workers * tensors + 4096 * dim**2 * 3 + tasks * per_run * k**3)
    return WorkEstimate(seconds, memory, tasks)


def check_budget(estimate: WorkEstimate, *, what: str) -> WorkEstimate:
    """Raise ValueError, saying what to reduce, if the estimate passes a limit."""
    if estimate.tasks > MAX_TASKS:
        raise ValueError(
            f"{what} asks for {estimate.tasks:,} grid points × runs; the limit is "
            f"{MAX_TASKS:,}. Use fewer runs or a shorter grid."
        )
    if estimate.memory_bytes > MAX_MEMORY:
        raise ValueError(
            f"{what} needs about {estimate.memory_bytes / 2**30:.1f} GiB of memory; the limit "
            f"is {MAX_MEMORY / 2**30:.0f} GiB. Use a smaller D or fewer samples."
        )
    if estimate.seconds > MAX_SECONDS:
        raise ValueError(
            f"{what} would take about {estimate.seconds / 60:.0f} minutes; the limit is "
            f"{MAX_SECONDS / 60:.0f} minutes. Use fewer runs, a shorter grid, a smaller D, "
            f"fewer samples or fewer power-method iterations (tensors)."
        )
    return estimate
