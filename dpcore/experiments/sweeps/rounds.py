"""The rounds axis: iterative PCA at T = 1, 2, … rounds with the total (ε, δ) held fixed.

More rounds converge further, but every round gets less of the budget (its noise std grows
as sqrt(T), :func:`dpcore.factorization.iterative.per_round_std`). :func:`rounds_sweep` runs
:func:`dpcore.pca_sweep` once per T with each iterative algorithm's record set to T rounds
(:attr:`dpcore.factorization.registry.PcaMethod.with_rounds`); a one-shot algorithm runs once, at
its one round. :func:`best_rounds` reads the best T per algorithm and grid point off the frame.

Every T runs from the same ``rng`` seed: the same data draw and the same per-algorithm noise
streams (common random numbers), so differences between T are not differences of luck in
the data.

Run ``python -m dpcore.experiments.sweeps.rounds`` for the table at the paper's synthetic setting.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from dpcore._validation import check_int
from dpcore.experiments.sweeps.pca import run_pca_sweep
from dpcore.experiments.sweeps.spec import PcaSpec
from dpcore.factorization.iterative import MAX_ROUNDS, check_rounds
from dpcore.factorization.registry import Algorithm

MAX_ROUND_VALUES = 50


def _check_round_values(rounds: object) -> tuple[int, ...]:
    if isinstance(rounds, (str, bytes)) or not isinstance(rounds, Sequence) or not rounds:
        raise ValueError(
            f"rounds must be a non-empty sequence of integers in [1, {MAX_ROUNDS}]; got {rounds!r}"
        )
    if len(rounds) > MAX_ROUND_VALUES:
        raise ValueError(f"rounds must list at most {MAX_ROUND_VALUES} values; got {len(rounds)}")
    values = tuple(check_rounds(t) for t in rounds)
    if len(set(values)) != len(values):
        raise ValueError(f"rounds must not repeat a value; got {list(values)}")
    return values


def _with_rounds(record: Algorithm, rounds: int) -> Algorithm:
    method = record.pca
    assert method is not None and method.with_rounds is not None  # iterative ones only
    return dataclasses.replace(record, pca=method.with_rounds(rounds))


def rounds_sweep(
    *, rounds: Sequence[int], rng: int = 0, workers: int | None = None, **keywords: Any
) -> pd.DataFrame:
    """Captured energy of PCA algorithms against the number of rounds T at a fixed total ε.

    Parameters
    ----------
    rounds : sequence of int
        The T values, each in [1, 1000], at most 50 of them, no repeats.
    rng : int
        Seed (≥ 0) every T runs from (common random numbers, module docstring).
    workers : int, optional
        As in :func:`dpcore.pca_sweep`.
    **keywords
        Those of :meth:`dpcore.PcaSpec.build` (``algorithms`` names the iterative ones and
        any one-shot references).

    Returns
    -------
    pandas.DataFrame
        :func:`dpcore.pca_sweep`'s frame with a ``rounds`` column: every iterative algorithm
        once per T, every one-shot algorithm once with ``rounds`` 1.
    """
    values = _check_round_values(rounds)
    seed = check_int(rng, "rng", low=0)
    spec = PcaSpec.build(**keywords)
    iterative = tuple(r for r in spec.records if r.pca is not None and r.pca.with_rounds)
    one_shot = tuple(r for r in spec.records if r not in iterative)
    frames = []
    if one_shot:
        part = dataclasses.replace(
            spec, algorithms=tuple(r.name for r in one_shot), records=one_shot
        )
        frames.append(run_pca_sweep(part, np.random.default_rng(seed), workers=workers))
        frames[-1].insert(1, "rounds", 1)
    for t in values if iterative else ():
        records = tuple(_with_rounds(r, t) for r in iterative)
        part = dataclasses.replace(spec, algorithms=tuple(r.name for r in records), records=records)
        frames.append(run_pca_sweep(part, np.random.default_rng(seed), workers=workers))
        frames[-1].insert(1, "rounds", t)
    return pd.concat(frames, ignore_index=True)


def best_rounds(frame: pd.DataFrame, *, metric: str = "captured_energy_ratio") -> pd.DataFrame:
    """Per algorithm and ε, the T with the largest mean ``metric``, with its standard error.

    Parameters
    ----------
    frame : pandas.DataFrame
        A :func:`rounds_sweep` frame.
    metric : str
        A metric column (larger is better).

    Returns
    -------
    pandas.DataFrame
        Columns ``algorithm``, ``epsilon``, ``rounds`` (the best T), ``mean``, ``se``
        (standard error of the mean over runs, s/sqrt(runs)) and ``runs``.
    """
    if metric not in frame.columns:
        raise ValueError(f"metric must be a column of frame; got {metric!r}")
    stats = (
        frame.groupby(["algorithm", "epsilon", "rounds"])[metric]
        .agg(mean="mean", std="std", runs="count")
        .reset_index()
    )
    stats["se"] = stats["std"].fillna(0.0) / np.sqrt(stats["runs"])
    best = stats.loc[stats.groupby(["algorithm", "epsilon"])["mean"].idxmax()]
    return best[["algorithm", "epsilon", "rounds", "mean", "se", "runs"]].reset_index(drop=True)


def main(argv: Sequence[str] | None = None) -> pd.DataFrame:
    """Headless rounds axis: print the best T per algorithm and ε (docs/baselines.md)."""
    parser = argparse.ArgumentParser(prog="python -m dpcore.experiments.sweeps.rounds")
    parser.add_argument("--epsilon", type=float, nargs="+", default=[0.1, 1.0, 10.0])
    parser.add_argument("--rounds", type=int, nargs="+", default=[1, 2, 3, 4, 6, 8, 11, 16])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--algorithms",
        nargs="+",
        default=["cape", "cape_joint", "conv", "npm", "npm_distributed", "npm_cape",
                 "npm_cape_joint"],
    )
    args = parser.parse_args(argv)
    frame = rounds_sweep(
        rounds=args.rounds,
        rng=args.seed,
        epsilon=args.epsilon,
        runs=args.runs,
        algorithms=args.algorithms,
    )
    best = best_rounds(frame)
    with pd.option_context("display.width", 120, "display.max_rows", 200):
        print(best.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    return best


if __name__ == "__main__":  # pragma: no cover
    main()
