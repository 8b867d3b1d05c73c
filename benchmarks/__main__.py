"""Benchmark: dpcore against the straightforward reference, timed in one interleaved run.

Usage::

    .venv/bin/python -m benchmarks            # full PCA scenarios, prints a Markdown table
    .venv/bin/python -m benchmarks --quick    # small sizes: the agreement check CI runs

Each scenario runs ours and the reference alternately ``--repeat`` times and reports the
median wall time, the ratio reference/ours, and the peak memory (tracemalloc) of ours. Before
timing, both are checked to give the same mean captured energy per (algorithm, ε) within
Monte Carlo error, so speed is never bought with a different answer.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
import tracemalloc
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

import dpcore
from benchmarks.reference import reference_pca_sweep

PAPER_EPS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0]
ALGS = ["nonprivate", "cape", "conv", "local", "dpdis"]


@dataclass(frozen=True)
class Scenario:
    name: str
    dim: int
    k: int
    sites: int
    n_per_site: int
    epsilons: tuple[float, ...]
    runs: int
    algorithms: tuple[str, ...] = tuple(ALGS)


SCENARIOS = {
    "1 app default PCA view": Scenario(
        "1 app default PCA view", 50, 10, 10, 1000, tuple(PAPER_EPS), 5
    ),
    "2 Fig. 2(a) synthetic": Scenario(
        "2 Fig. 2(a) synthetic", 200, 50, 10, 1000, tuple(PAPER_EPS), 10
    ),
    "3 MNIST-scale D=784": Scenario("3 MNIST-scale D=784", 784, 50, 10, 1000, tuple(PAPER_EPS), 10),
}
QUICK = Scenario("quick", 30, 5, 5, 200, (0.05, 0.5, 5.0), 20)


def _pool(s: Scenario, seed: int) -> dpcore.Dataset:
    n = max(6000, 2 * s.sites * s.n_per_site)
    return dpcore.synthetic_dataset(dim=s.dim, k=s.k, n_samples=n, rng=np.random.default_rng(seed))


def ours(s: Scenario, data: dpcore.Dataset, seed: int) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcore.ClassicGaussianWarning)
        return dpcore.pca_sweep(
            data=data,
            k=s.k,
            sites=s.sites,
            n_per_site=s.n_per_site,
            epsilon=list(s.epsilons),
            runs=s.runs,
            seed=seed,
            algorithms=list(s.algorithms),
        )


def reference(s: Scenario, data: dpcore.Dataset, seed: int) -> pd.DataFrame:
    return reference_pca_sweep(
        np.asarray(data.samples),
        np.asarray(data.reference),
        k=s.k,
        sites=s.sites,
        n_per_site=s.n_per_site,
        epsilons=s.epsilons,
        delta=0.01,
        runs=s.runs,
        seed=seed,
        algorithms=s.algorithms,
    )


def agreement(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Per (algorithm, ε): difference of means against its Monte Carlo tolerance.

    Tolerance: 4 standard errors of the difference of two independent means,
    4·sqrt(s_a²/n_a + s_b²/n_b), plus 0.01 for the data subsample (each side draws its own
    N rows once, a variation the run-to-run spread does not show).
    """
    stats = [
        df.groupby(["algorithm", "epsilon"]).captured_energy_ratio.agg(["mean", "var", "count"])
        for df in (a, b)
    ]
    out = stats[0].merge(stats[1], left_index=True, right_index=True, suffixes=("_ours", "_ref"))
    out["diff"] = (out["mean_ours"] - out["mean_ref"]).abs()
    out["tol"] = (
        4 * np.sqrt(out["var_ours"] / out["count_ours"] + out["var_ref"] / out["count_ref"]) + 0.01
    )
    out["ok"] = out["diff"] <= out["tol"]
    return out


def _timed(fn, *args) -> tuple[float, float, pd.DataFrame]:
    tracemalloc.start()
    t0 = time.perf_counter()
    out = fn(*args)
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return elapsed, peak / 2**20, out


def run(scenarios: list[Scenario], repeat: int, seed: int = 0) -> list[dict]:
    rows = []
    for s in scenarios:
        data = _pool(s, seed)
        check = agreement(ours(s, data, seed), reference(s, data, seed + 1))
        times_ours, times_ref, peaks = [], [], []
        for _ in range(repeat):  # interleaved: both see the same machine state
            t, peak, _ = _timed(ours, s, data, seed)
            times_ours.append(t)
            peaks.append(peak)
            t, _, _ = _timed(reference, s, data, seed)
            times_ref.append(t)
        ref_s, ours_s = statistics.median(times_ref), statistics.median(times_ours)
        rows.append(
            {
                "scenario": s.name,
                "reference s": ref_s,
                "ours s": ours_s,
                "ratio": ref_s / ours_s,
                "peak MiB": max(peaks),
                "same answer": bool(check["ok"].all()),
            }
        )
    return rows


def markdown(rows: list[dict]) -> str:
    head = "| scenario | reference s | ours s | ratio | peak MiB | same answer |\n"
    head += "| --- | ---: | ---: | ---: | ---: | --- |\n"
    body = "".join(
        f"| {r['scenario']} | {r['reference s']:.2f} | {r['ours s']:.2f} | {r['ratio']:.1f}× "
        f"| {r['peak MiB']:.0f} | {'yes' if r['same answer'] else 'NO'} |\n"
        for r in rows
    )
    return head + body


def machine() -> str:
    return (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, NumPy {np.__version__}, "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (the CI check)")
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions (median)")
    parser.add_argument("--only", nargs="*", help="scenario numbers to run, e.g. 1 2")
    args = parser.parse_args()
    chosen = (
        [QUICK]
        if args.quick
        else [s for key, s in SCENARIOS.items() if not args.only or key.split()[0] in args.only]
    )
    rows = run(chosen, args.repeat)
    print(f"Machine: {machine()}\n")
    print(markdown(rows))
    if not all(r["same answer"] for r in rows):
        raise SystemExit("ours and the reference disagree beyond Monte Carlo error")


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    main()
