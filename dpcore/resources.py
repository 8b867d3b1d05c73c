"""Resource limits and cost constants: plain numbers, importing nothing of dpcore.

A leaf module, so that any module may read a limit without an import cycle (the resource
guard, :mod:`dpcore.experiments.limits`, imports the registry, which imports the algorithms, which
draw noise that checks :data:`MAX_MEMORY`). :mod:`dpcore.experiments.limits` re-exports every name.
The cost constants were measured on the benchmark machine (2 cores, ``benchmarks/``).
"""

from __future__ import annotations

import math

MAX_SECONDS = 600.0  # estimated wall time of one request
MAX_MEMORY = 2 * 2**30  # bytes
MAX_TASKS = 5_000  # grid points × runs
MAX_DIM_TENSOR = 100  # D³ doubles per site and per message
# ε_s at every door of the trust models (table, overview, secure-aggregation round, PCA, shuffle
# bound, iterative rows): one range, (0, 10⁶), checked over the whole of it by
# tests/core/analysis/test_trust_models.py (issue #52: the shuffle bound stopped at 700).
MAX_TRUST_EPSILON = 1e6
# N_s of a site record (dpcore.Sites, and so of every door that takes one): S·N_s stays far
# inside int64 and the synthetic pools of the trust models can hold it (issue #51: the record
# took 2·10⁹ that the trust table then refused).
MAX_SITE_SAMPLES = 10**9
# S of a CAPE noise design, which holds S×S matrices (the noise generator's mixing M, the
# covariance M Mᵀ the views condition on, a few temporaries; about six at once): each at
# most MAX_MEMORY/64 = 32 MiB, so 2048 sites (issue #36: 100,000 sites asked for 74 GiB).
# The paper goes to 50 sites; every design builder and sweep refuses more than this.
MAX_DESIGN_SITES = math.isqrt(MAX_MEMORY // 64 // 8)
TASK_BYTES = 4096  # one (grid point, run) task's streams and rows while it waits (upper bound)
EIGH_200 = 2.7e-3  # seconds for one 200×200 eigendecomposition (benchmarks/)
FLOPS = 1e10  # effective rate of the moment products
# The iterative methods' rounds (PcaMethod.steps): each step (a QR, a noise draw and product on
# a D×K block, one site's share of a protocol round) has a fixed overhead of validation and
# small numpy calls, and their products A_s X run through einsum; each run pays a fixed cost
# besides (its noise calibration, X₀). In seconds of the reference machine (calibration loop
# 16.6 ms, benchmarks/calibration.py), as are the constants that follow: RUN_SECONDS +
# steps · (STEP_SECONDS + 4DK²/ROUND_FLOPS) + products · 2D²K/ROUND_FLOPS, fitted to the
# process CPU of the PCA page's Baselines sweep (`python -m benchmarks.baselines_estimate`,
# 2026-12-07: estimate / CPU 0.99–1.22 at eight settings, D = 20–200, S = 2–50, 1–20 runs;
# docs/performance.md). The former 150 µs a step and 3·10⁹ flops/s were 2–4× high per run,
# while the fixed costs below went uncounted (issue #50: 0.69 s estimated, 1.89 CPU-s).
RUN_SECONDS = 4e-4
STEP_SECONDS = 4e-5
ROUND_FLOPS = 1e10
# A sweep's fixed costs that no per-task term counts, per pool element (pool_size · D): the
# synthetic pool's draw (about 24 ns) and, once per sweep, the frame's provenance digest that
# reads the whole pool (about 10 ns); and each (grid point, run) task's own overhead (its
# streams and rows) and each noisy basis's scores (same units; measured with the sweeps above).
POOL_DRAW_SECONDS = 2.4e-8
POOL_READ_SECONDS = 1e-8
TASK_SECONDS = 4e-4
SCORE_SECONDS = 3e-4
DRAW_SECONDS = 8e-8  # one rounding + one discrete Gaussian share (secure aggregation, ~1.3
# candidates of three exponentials each; benchmarks/ measures the sweep it adds to)
