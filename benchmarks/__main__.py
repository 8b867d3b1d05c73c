"""Benchmark: dpcore against the straightforward reference, timed in one interleaved run.

Usage::

    .venv/bin/python -m benchmarks            # scenarios 1–7, prints a Markdown table
    .venv/bin/python -m benchmarks --only 2 4 # some of them
    .venv/bin/python -m benchmarks --quick    # small sizes: the agreement check CI runs

Each scenario runs ours and the reference alternately ``--repeat`` times (heavy scenarios
once) and reports the median wall time, the ratio reference/ours, and the peak memory
(tracemalloc, in a separate untimed call) of ours. Before timing, both are checked to give
the same means per (algorithm, ε) within Monte Carlo error, so speed is never bought with a
different answer. Scenario 7 times ours only, along D, and fits the exponent of D.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import platform
import statistics
import time
import tracemalloc
import warnings
from concurrent.futures import Executor
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

import dpcore
from benchmarks import scale
from benchmarks.reference import reference_otd_sweep, reference_pca_sweep
from dpcore import default_workers, public_bound, sample_mog, sample_stm

PAPER_EPS = dpcore.PAPER_EPSILONS
# What the reference implements (benchmarks/reference.py): the paper's algorithms.
PCA_ALGS = dpcore.PAPER_ALGORITHMS["pca"]
OTD_ALGS = dpcore.PAPER_ALGORITHMS["otd"]
SCALING_DIMS = (50, 100, 200, 400, 784)


@dataclass(frozen=True)
class Scenario:
    name: str
    task: str  # "pca", "mog" or "stm"
    dim: int
    k: int
    sites: int
    n_per_site: int
    epsilons: tuple[float, ...]
    runs: int
    repeat: int | None = None  # None: the command line's --repeat

    @property
    def algorithms(self) -> tuple[str, ...]:
        return PCA_ALGS if self.task == "pca" else OTD_ALGS

    @property
    def metric(self) -> str:
        return "captured_energy_ratio" if self.task == "pca" else "component_error"


SCENARIOS = [
    Scenario("1 app default PCA view", "pca", 50, 10, 10, 1000, PAPER_EPS, 5),
    Scenario("2 Fig. 2(a) synthetic", "pca", 200, 50, 10, 1000, PAPER_EPS, 10),
    Scenario("3 MNIST-scale D=784", "pca", 784, 50, 10, 1000, PAPER_EPS, 10, repeat=1),
    Scenario("4 MOG K=5, D=10, N_s=20k", "mog", 10, 5, 5, 20_000, PAPER_EPS, 10),
    Scenario("5 MOG K=10, D=50, N_s=160k", "mog", 50, 10, 5, 160_000, PAPER_EPS, 10, 1),
    Scenario("6 STM K=10, D=50, N_s=160k", "stm", 50, 10, 5, 160_000, PAPER_EPS, 10, 1),
]
QUICK = [
    Scenario(
        "quick PCA (D=30, K=5, S=5, N_s=200, 3 ε × 20 runs)",
        "pca",
        30,
        5,
        5,
        200,
        (0.05, 0.5, 5.0),
        20,
    ),
    Scenario(
        "quick MOG (D=6, K=3, S=3, N_s=5k, 3 ε × 20 runs)",
        "mog",
        6,
        3,
        3,
        5000,
        (0.5, 2.0, 10.0),
        20,
    ),
]


def prepare(s: Scenario, seed: int) -> dpcore.Dataset:
    """The synthetic pool a PCA scenario shares between ours and the reference."""
    n = max(6000, 2 * s.sites * s.n_per_site)
    return dpcore.synthetic_dataset(dim=s.dim, k=s.k, n_samples=n, rng=np.random.default_rng(seed))


def ours(
    s: Scenario,
    data,
    seed: int,
    workers: int | None = None,
    executor: Executor | None = None,
) -> pd.DataFrame:
    """Our sweep for scenario ``s`` (on ``workers`` threads or ``executor``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcore.ClassicGaussianWarning)
        common = {
            "k": s.k,
            "sites": s.sites,
            "n_per_site": s.n_per_site,
            "epsilon": list(s.epsilons),
            "runs": s.runs,
            "seed": seed,
            "algorithms": list(s.algorithms),
            "workers": workers,
            "executor": executor,
            # the reference (benchmarks/reference.py) is the paper's classic formula
            "calibration": dpcore.PAPER_CALIBRATION,
        }
        if s.task == "pca":
            return dpcore.pca_sweep(data=data, **common)
        # same planted model as the reference: otd_sweep plants it from the seed
        return dpcore.otd_sweep(model=s.task, dim=s.dim, **common)


def reference(s: Scenario, data, seed: int) -> pd.DataFrame:
    common = {
        "sites": s.sites,
        "n_per_site": s.n_per_site,
        "epsilons": s.epsilons,
        "delta": 0.01,
        "runs": s.runs,
        "seed": seed,
        "algorithms": s.algorithms,
    }
    if s.task == "pca":
        return reference_pca_sweep(
            np.asarray(data.samples), np.asarray(data.reference), k=s.k, **common
        )
    sample = sample_mog if s.task == "mog" else sample_stm
    return reference_otd_sweep(data, sample, public_bound, **common)


def _planted(s: Scenario, seed: int):
    """The model otd_sweep plants from ``seed`` (its first spawned stream)."""
    data_rng = np.random.default_rng(seed).spawn(3)[0]
    return dpcore.make_model(s.task, s.dim, s.k, rng=data_rng)


def agreement(a: pd.DataFrame, b: pd.DataFrame, metric: str = "captured_energy_ratio"):
    """Per (algorithm, ε): difference of means against its Monte Carlo tolerance.

    Tolerance: 4 standard errors of the difference of two independent means,
    4·sqrt(s_a²/n_a + s_b²/n_b), plus 0.01 (PCA) or 0.02 (tensors) for the data draw (each
    side draws its own data once, a variation the run-to-run spread does not show).
    """
    stats = [
        df.groupby(["algorithm", "epsilon"])[metric].agg(["mean", "var", "count"]) for df in (a, b)
    ]
    out = stats[0].merge(stats[1], left_index=True, right_index=True, suffixes=("_ours", "_ref"))
    out["diff"] = (out["mean_ours"] - out["mean_ref"]).abs()
    slack = 0.01 if metric == "captured_energy_ratio" else 0.02
    out["tol"] = (
        4 * np.sqrt(out["var_ours"] / out["count_ours"] + out["var_ref"] / out["count_ref"]) + slack
    )
    out["ok"] = out["diff"] <= out["tol"]
    return out


def inputs(s: Scenario, seed: int = 0) -> tuple:
    """(ours' input, the reference's input): a shared pool (PCA), or None and the model
    otd_sweep plants from ``seed`` (tensors)."""
    if s.task == "pca":
        data = prepare(s, seed)
        return data, data
    return None, _planted(s, seed)


def check(
    s: Scenario,
    seed: int = 0,
    timings: list | None = None,
    data: tuple | None = None,
    executor: Executor | None = None,
) -> pd.DataFrame:
    """Agreement of ours and the reference on scenario ``s`` (independent randomness).

    ``timings``, if given, receives the wall times (ours, reference) of these two calls;
    ``data`` is :func:`inputs` (computed if not given).
    """
    data, ref_data = data or inputs(s, seed)
    t0 = time.perf_counter()
    a = ours(s, data, seed, executor=executor)
    t1 = time.perf_counter()
    b = reference(s, ref_data, seed + 1)
    t2 = time.perf_counter()
    if timings is not None:
        timings.append((t1 - t0, t2 - t1))
    return agreement(a, b, s.metric)


def _timed(fn, *args) -> float:
    t0 = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t0


def _peak_mib(fn, *args) -> float:
    """Peak traced memory of one untimed call (tracemalloc slows Python-heavy code ~2×)."""
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def run(
    scenarios: list[Scenario], repeat: int, seed: int = 0, executor: Executor | None = None
) -> list[dict]:
    rows = []
    mine = functools.partial(ours, executor=executor)
    for s in scenarios:
        data, ref_data = inputs(s, seed)
        first: list = []
        same = bool(check(s, seed, first, (data, ref_data), executor)["ok"].all())
        times_ours, times_ref = [first[0][0]], [first[0][1]]  # the check is the first round
        for _ in range((s.repeat or repeat) - 1):  # interleaved: same machine state for both
            times_ours.append(_timed(mine, s, data, seed))
            times_ref.append(_timed(reference, s, ref_data, seed))
        ref_s, ours_s = statistics.median(times_ref), statistics.median(times_ours)
        rows.append(
            {
                "scenario": s.name,
                "reference s": ref_s,
                "ours s": ours_s,
                "ratio": ref_s / ours_s,
                "peak MiB": _peak_mib(mine, s, data, seed),
                "same answer": same,
            }
        )
        print(markdown(rows[-1:], header=len(rows) == 1), end="", flush=True)
    return rows


def scaling(seed: int = 0, executor: Executor | None = None) -> tuple[pd.DataFrame, float]:
    """Scenario 7: scenario 2's cost along D (ours, one run each) and the fitted exponent."""
    base = SCENARIOS[1]
    rows = []
    for dim in SCALING_DIMS:
        s = replace(base, dim=dim, name=f"D={dim}")
        data = prepare(s, seed)
        rows.append({"D": dim, "ours s": _timed(ours, s, data, seed, None, executor)})
    df = pd.DataFrame(rows)
    slope = float(np.polyfit(np.log(df["D"]), np.log(df["ours s"]), 1)[0])
    return df, slope


def markdown(rows: list[dict], header: bool = True) -> str:
    head = ""
    if header:
        head = "| scenario | reference s | ours s | ratio | peak MiB | same answer |\n"
        head += "| --- | ---: | ---: | ---: | ---: | --- |\n"
    body = "".join(
        f"| {r['scenario']} | {r['reference s']:.2f} | {r['ours s']:.2f} | {r['ratio']:.1f}× "
        f"| {r['peak MiB']:.0f} | {'yes' if r['same answer'] else 'NO'} |\n"
        for r in rows
    )
    return head + body


def table(df: pd.DataFrame) -> str:
    """A Markdown table (floats to 2 decimals, booleans as yes/NO)."""

    def cell(v) -> str:
        if isinstance(v, (bool, np.bool_)):
            return "yes" if v else "NO"
        if isinstance(v, float):
            return "n/a" if np.isnan(v) else f"{v:.2f}"
        return str(v)

    lines = ["| " + " | ".join(map(str, df.columns)) + " |", "|" + " --- |" * df.shape[1]]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(False)]
    return "\n".join(lines) + "\n"


def machine() -> str:
    load = f", load {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    return (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores{load}, "
        f"Python {platform.python_version()}, NumPy {np.__version__}, "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, "
        f"{default_workers()} worker threads"
    )


def sections(args, rows: list[dict], executor: Executor | None) -> None:
    """Sections 8–12: BLAS threads, workers, executors, targets (benchmarks/scale.py) and the
    secure-aggregation baseline's cost in the Fig. 2(a) sweep."""
    wanted = set(args.only or ALL)
    fig2a = SCENARIOS[1]
    data, _ = inputs(fig2a)
    run_fig2a = scale.scenario_runner(fig2a, data, ours)
    if "8" in wanted:
        df = scale.blas_variable(args.repeat)
        with_s, without_s = df["wall s"].iloc[0], df["wall s"].iloc[1]
        print(f"\n8 Fig. 2(a) through the API in fresh processes (median s):\n\n{table(df)}")
        print(f"time ratio with/without the variable: {with_s / without_s:.2f} (goal ≥ 0.9)")
    if "9" in wanted:
        df = scale.worker_scaling(run_fig2a, args.repeat)
        print(f"\n9 Fig. 2(a) on 1, 2, 4 worker threads:\n\n{table(df)}")
    if "10" in wanted:
        df = scale.executors(run_fig2a, args.repeat, args.scheduler)
        print(f"\n10 Fig. 2(a) on each executor (median s after a warm-up):\n\n{table(df)}")
    if "11" in wanted:
        timed = []
        for s in (fig2a, SCENARIOS[2]):
            s_data = data if s is fig2a else inputs(s)[0]
            wall, cpu, _ = scale.timed(lambda s=s, d=s_data: ours(s, d, 0, executor=executor))
            timed.append((wall, cpu))
        print("\n11 Figure 3 panels (paper settings, 10 runs):")
        fig3 = scale.figure3(executor)
        print(f"\nTargets of issue #16:\n\n{table(scale.targets(*timed, fig3))}")
    if "12" in wanted:
        df = secagg_overhead(data, args.repeat)
        ratio = df["with secagg s"].median() / df["without s"].median()
        print(f"\n12 Fig. 2(a) with the secure-aggregation baseline (issue #24):\n\n{table(df)}")
        print(f"time ratio with/without secagg (medians): {ratio:.2f} (goal ≤ 1.2)")


def secagg_overhead(data, repeat: int, seed: int = 0) -> pd.DataFrame:
    """Section 12: the Fig. 2(a) sweep with and without ``secagg``, interleaved."""
    s = SCENARIOS[1]

    def sweep(algorithms: tuple[str, ...]) -> pd.DataFrame:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dpcore.ClassicGaussianWarning)
            return dpcore.pca_sweep(
                data=data,
                k=s.k,
                sites=s.sites,
                n_per_site=s.n_per_site,
                epsilon=list(s.epsilons),
                runs=s.runs,
                rng=seed,
                algorithms=list(algorithms),
            )

    rows = []
    for i in range(max(repeat, 1)):
        without = _timed(sweep, PCA_ALGS)
        with_ = _timed(sweep, (*PCA_ALGS, "secagg"))
        rows.append({"repeat": i + 1, "without s": without, "with secagg s": with_})
    return pd.DataFrame(rows)


ALL = [str(i) for i in range(1, 13)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (the CI check)")
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions (median)")
    parser.add_argument("--only", nargs="*", help="sections to run, e.g. 1 2 7 10 (1–12)")
    parser.add_argument("--scheduler", help="run our sweeps on this Dask scheduler")
    args = parser.parse_args()
    wanted = set(args.only or ALL)
    chosen = QUICK if args.quick else [s for s in SCENARIOS if s.name.split()[0] in wanted]
    print(f"Machine: {machine()}\n")
    with (
        dpcore.dask_executor(args.scheduler) if args.scheduler else contextlib.nullcontext()
    ) as executor:
        rows = run(chosen, args.repeat, executor=executor)
        if not args.quick:
            main_sections(args, wanted, rows, executor)
    if not all(r["same answer"] for r in rows):
        raise SystemExit("ours and the reference disagree beyond Monte Carlo error")


def main_sections(args, wanted: set[str], rows: list[dict], executor) -> None:
    if "7" in wanted:
        df, slope = scaling(executor=executor)
        print("\n7 scaling of scenario 2 along D (ours):\n")
        print("| D | ours s |\n| ---: | ---: |")
        print("".join(f"| {r.D} | {r._2:.2f} |\n" for r in df.itertuples()), end="")
        print(f"\nFitted cost ∝ D^{slope:.2f}")
    sections(args, rows, executor)


if __name__ == "__main__":
    main()
