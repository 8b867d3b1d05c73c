"""The rounds axis: iterative PCA at T = 1, 2, … rounds with the total (ε, δ) held fixed.

More rounds converge further, but every round gets less of the budget (its noise std grows
as sqrt(T), :func:`dpcore.factorization.iterative.per_round_std`). A :class:`RoundsSpec` is a
:class:`dpcore.PcaSpec` and the T values; :func:`run_rounds_sweep` runs the spec once per T
with each iterative algorithm's record set to T rounds
(:attr:`dpcore.factorization.registry.PcaMethod.with_rounds`); a one-shot algorithm runs once,
at its one round. :func:`rounds_summary` gives mean ± standard error per (algorithm, ε, T) and
:func:`best_rounds` the best T per algorithm and ε.

Every T runs from the same ``rng`` seed: the same data draw and the same per-algorithm noise
streams (common random numbers), so differences between T are not differences of luck in
the data.

The iterative algorithms are the registry's records with ``with_rounds``
(:func:`iterative_algorithms`): a new one joins the rounds axis, the PCA page's Baselines
section and this command by its record alone.

Run ``python -m dpcore.experiments.sweeps.rounds`` for the table at the paper's synthetic setting;
:meth:`RoundsSpec.command` writes the command that reproduces a spec's table.
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
from collections.abc import Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any

import numpy as np
import pandas as pd

from dpcore._validation import check_int
from dpcore.experiments.limits import WorkEstimate, pool_seconds
from dpcore.experiments.sweeps.pca import run_pca_sweep
from dpcore.experiments.sweeps.spec import PcaSpec
from dpcore.factorization import registry
from dpcore.factorization.datasets import synthetic_dataset
from dpcore.factorization.iterative import MAX_ROUNDS, check_rounds
from dpcore.factorization.registry import Algorithm

MAX_ROUND_VALUES = 50
MAX_DRAWS = 100  # data draws of one rounds sweep
# The page's and the command's T values: Hardt & Price's default (11) and its neighbours.
DEFAULT_ROUND_VALUES = (1, 2, 3, 4, 6, 8, 11, 16)
PROG = "python -m dpcore.experiments.sweeps.rounds"
MAX_PROCESSES = 256  # --processes: a pool this machine's OS still starts


def iterative_algorithms() -> tuple[str, ...]:
    """The registered PCA algorithms with a rounds parameter (``PcaMethod.with_rounds``).

    Examples
    --------
    >>> iterative_algorithms()[:2]
    ('npm', 'npm_distributed')
    """
    return tuple(n for n in registry.names("pca") if registry.pca_method(n).with_rounds)


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


def _is_iterative(record: Algorithm) -> bool:
    return record.pca is not None and record.pca.with_rounds is not None


@dataclasses.dataclass(frozen=True)
class RoundsSpec:
    """A rounds-axis request: a PCA sweep spec and the T values its iterative algorithms run.

    Attributes
    ----------
    sweep : PcaSpec
        Everything but T (its algorithms: the iterative ones and any one-shot references).
    rounds : tuple of int
        The T values, each in [1, 1000], at most 50, no repeats.

    Build with :meth:`build`; :func:`run_rounds_sweep` runs it.
    """

    sweep: PcaSpec
    rounds: tuple[int, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.sweep, PcaSpec):
            raise TypeError(f"sweep must be a PcaSpec; got {type(self.sweep).__name__}")
        object.__setattr__(self, "rounds", _check_round_values(self.rounds))

    @classmethod
    def build(cls, *, rounds: Sequence[int] = DEFAULT_ROUND_VALUES, **keywords: Any) -> RoundsSpec:
        """The validated request: ``rounds`` and the keywords of :meth:`dpcore.PcaSpec.build`."""
        return cls(PcaSpec.build(**keywords), _check_round_values(rounds))

    @property
    def data(self) -> object:
        """The sweep's data (:func:`dpcore.experiments.limits.is_heavy` reads it)."""
        return self.sweep.data

    def parts(self) -> tuple[tuple[int, PcaSpec], ...]:
        """(T, spec) per sweep to run.

        The one-shot algorithms once (T = 1), then per T the iterative ones with their
        records set to T rounds.
        """
        spec = self.sweep
        iterative = tuple(r for r in spec.records if _is_iterative(r))
        one_shot = tuple(r for r in spec.records if not _is_iterative(r))
        out: list[tuple[int, PcaSpec]] = []
        if one_shot:
            names = tuple(r.name for r in one_shot)
            out.append((1, dataclasses.replace(spec, algorithms=names, records=one_shot)))
        for t in self.rounds if iterative else ():
            records = tuple(_with_rounds(r, t) for r in iterative)
            names = tuple(r.name for r in records)
            out.append((t, dataclasses.replace(spec, algorithms=names, records=records)))
        return tuple(out)

    def estimate(self, *, workers: int | None = None) -> WorkEstimate:
        """The summed estimate of its sweeps on ``workers`` (:meth:`dpcore.PcaSpec.estimate`).

        A synthetic pool is drawn once for every part (:func:`run_rounds_sweep`), not once
        per part: the parts' estimates count its draw once.
        """
        parts = [p.estimate(workers=workers) for _, p in self.parts()]
        drawn_again = 0.0
        if isinstance(self.sweep.data, str):
            pool, dim = self.sweep.pool_size, self.sweep.dim
            drawn_again = (len(parts) - 1) * (
                pool_seconds(pool, dim) - pool_seconds(pool, dim, draw=False)
            )
        return WorkEstimate(
            seconds=sum(p.seconds for p in parts) - drawn_again,
            memory_bytes=max(p.memory_bytes for p in parts),
            tasks=sum(p.tasks for p in parts),
        )

    def command(self, seed: int, *, python: str = "python") -> str:
        """The shell command that prints this request's :func:`rounds_summary` (synthetic data).

        ``python`` is the interpreter it names (``.venv/bin/python`` at the repository's root:
        the app's page prints that, so that it runs as printed in a fresh terminal).

        Raises
        ------
        ValueError
            If the sweep is on a data set, sweeps an axis other than ε, or sets a keyword the
            command has no option for.
        """
        seed = check_int(seed, "seed", low=0)
        keywords = self.sweep.keywords(defaults=False)
        if keywords.pop("data", "synthetic") != "synthetic":
            raise ValueError("the command covers synthetic data only; got a data set")
        unknown = sorted(set(keywords) - set(_OPTIONS))
        if unknown:
            raise ValueError(f"the command has no option for {unknown}; got {keywords!r}")
        words = [python, *PROG.split()[1:], "--table", "all", "--seed", str(seed)]
        words += ["--rounds", *map(str, self.rounds)]
        words += ["--algorithms", *self.sweep.algorithms]
        for name, value in keywords.items():
            if name == "algorithms":
                continue
            values = value if isinstance(value, (tuple, list)) else (value,)
            words += [_OPTIONS[name], *map(_word, values)]
        return shlex.join(words)


def _word(value: object) -> str:
    """A value as the command's option reads it back exactly (a float by its repr)."""
    return repr(value) if isinstance(value, float) else str(value)


# PcaSpec.build keyword → command option (those a page's synthetic request can set).
_OPTIONS = {
    "dim": "--dim",
    "k": "--k",
    "sites": "--sites",
    "n_per_site": "--n-per-site",
    "epsilon": "--epsilon",
    "delta": "--delta",
    "runs": "--runs",
    "algorithms": "--algorithms",
    "calibration": "--calibration",
    "neighbouring": "--neighbouring",
    "site_shares": "--site-shares",
    "weighting": "--weighting",
    "pool_size": "--pool-size",
}


def run_rounds_sweep(
    spec: RoundsSpec,
    rng: int = 0,
    *,
    workers: int | None = None,
    executor: Executor | None = None,
    draws: int = 1,
) -> pd.DataFrame:
    """Captured energy of PCA algorithms against the number of rounds T at a fixed total ε.

    Parameters
    ----------
    spec : RoundsSpec
    rng : int
        Seed (≥ 0) every T runs from (common random numbers, module docstring).
    workers, executor
        As in :func:`dpcore.pca_sweep`: where each T's (grid point, run) tasks run (a process
        pool, Dask's ``Client.get_executor()``, …); the frame is identical for any.
    draws : int
        Data draws, in [1, 100]: draw d is the whole sweep run from seed ``rng + d`` (a new
        synthetic pool and sites' rows, or, on a data set, new sites' rows, and new noise),
        so draw 0 is the one-draw sweep and ``--seed rng+d`` reproduces draw d alone.

    Returns
    -------
    pandas.DataFrame
        :func:`dpcore.pca_sweep`'s frame with a ``rounds`` column (every iterative algorithm
        once per T, every one-shot algorithm once with ``rounds`` 1) and a ``draw`` column.
    """
    if not isinstance(spec, RoundsSpec):
        raise TypeError(f"spec must be a RoundsSpec; got {type(spec).__name__}")
    seed = check_int(rng, "rng", low=0)
    count = check_int(draws, "draws", low=1, high=MAX_DRAWS)
    frames = []
    for d in range(count):
        frame = _one_draw(spec, seed + d, workers, executor)
        frame.insert(2, "draw", d)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def _one_draw(
    spec: RoundsSpec, seed: int, workers: int | None, executor: Executor | None
) -> pd.DataFrame:
    """Every part of ``spec`` from ``seed``: one data draw, common to every T."""
    sweep = spec.sweep
    data = sweep.data
    if isinstance(data, str):  # the synthetic pool every part would draw from its first child
        first = np.random.default_rng(seed).spawn(3)[0]  # run_pca_sweep's data stream
        data = synthetic_dataset(dim=sweep.dim, k=sweep.k, n_samples=sweep.pool_size, rng=first)
    frames = []
    for t, part in spec.parts():
        part = dataclasses.replace(part, data=data)  # drawn once, not once per T
        rng = np.random.default_rng(seed)
        frames.append(run_pca_sweep(part, rng, workers=workers, executor=executor))
        frames[-1].insert(1, "rounds", t)
    return pd.concat(frames, ignore_index=True)


def rounds_sweep(
    *,
    rounds: Sequence[int],
    rng: int = 0,
    workers: int | None = None,
    executor: Executor | None = None,
    draws: int = 1,
    **keywords: Any,
) -> pd.DataFrame:
    """:func:`run_rounds_sweep` of ``RoundsSpec.build(rounds=rounds, **keywords)``.

    Parameters
    ----------
    rounds : sequence of int
        The T values, each in [1, 1000], at most 50 of them, no repeats.
    rng : int
        Seed (≥ 0) every T runs from.
    workers, executor
        As in :func:`dpcore.pca_sweep` (the frame is identical for any).
    draws : int
        Data draws (:func:`run_rounds_sweep`).
    **keywords
        Those of :meth:`dpcore.PcaSpec.build` (``algorithms`` names the iterative ones and
        any one-shot references).
    """
    spec = RoundsSpec.build(rounds=rounds, **keywords)
    return run_rounds_sweep(spec, rng, workers=workers, executor=executor, draws=draws)


def rounds_summary(frame: pd.DataFrame, *, metric: str = "captured_energy_ratio") -> pd.DataFrame:
    """Mean and standard error of ``metric`` per (algorithm, ε, T): the page's bands.

    Parameters
    ----------
    frame : pandas.DataFrame
        A :func:`run_rounds_sweep` frame.
    metric : str
        A metric column.

    Returns
    -------
    pandas.DataFrame
        Columns ``algorithm``, ``epsilon``, ``rounds``, ``mean``, ``se`` (s/sqrt(runs), the
        sample std with ddof 1; 0 for one run) and ``runs``, in the frame's algorithm order.
    """
    if metric not in frame.columns:
        raise ValueError(f"metric must be a column of frame; got {metric!r}")
    stats = (
        frame.groupby(["algorithm", "epsilon", "rounds"], sort=False)[metric]
        .agg(mean="mean", std="std", runs="count")
        .reset_index()
    )
    stats["se"] = stats["std"].fillna(0.0) / np.sqrt(stats["runs"])
    return stats[["algorithm", "epsilon", "rounds", "mean", "se", "runs"]]


def draws_summary(frame: pd.DataFrame, *, metric: str = "captured_energy_ratio") -> pd.DataFrame:
    """How the data draw moves each level: the spread of the per-draw means.

    Per (algorithm, ε, T), the mean of ``metric`` over each draw's runs, then its median, min
    and max over the draws.

    Parameters
    ----------
    frame : pandas.DataFrame
        A :func:`run_rounds_sweep` frame (``draws`` ≥ 1).
    metric : str
        A metric column.

    Returns
    -------
    pandas.DataFrame
        Columns ``algorithm``, ``epsilon``, ``rounds``, ``median``, ``min``, ``max`` (of the
        per-draw means), ``draws`` and ``runs`` (per draw), in the frame's algorithm order.
        :func:`rounds_summary`'s standard errors are over the noise of one draw; the spread
        here is the data draw's.
    """
    if metric not in frame.columns:
        raise ValueError(f"metric must be a column of frame; got {metric!r}")
    if "draw" not in frame.columns:
        raise ValueError("frame must have a draw column (a run_rounds_sweep frame)")
    keys = ["algorithm", "epsilon", "rounds"]
    per_draw = (
        frame.groupby([*keys, "draw"], sort=False)[metric]
        .agg(mean="mean", runs="count")
        .reset_index()
    )
    stats = (
        per_draw.groupby(keys, sort=False)
        .agg(
            median=("mean", "median"),
            min=("mean", "min"),
            max=("mean", "max"),
            draws=("draw", "nunique"),
            runs=("runs", "min"),
        )
        .reset_index()
    )
    return stats


def best_rounds(frame: pd.DataFrame, *, metric: str = "captured_energy_ratio") -> pd.DataFrame:
    """Per algorithm and ε, the T with the largest mean ``metric``, with its standard error.

    Parameters
    ----------
    frame : pandas.DataFrame
        A :func:`run_rounds_sweep` frame.
    metric : str
        A metric column (larger is better).

    Returns
    -------
    pandas.DataFrame
        Columns ``algorithm``, ``epsilon``, ``rounds`` (the best T), ``mean``, ``se``
        (standard error of the mean over runs, s/sqrt(runs)) and ``runs``, sorted by
        algorithm and ε.
    """
    return best_of(rounds_summary(frame, metric=metric))


def best_of(summary: pd.DataFrame) -> pd.DataFrame:
    """:func:`best_rounds` of a :func:`rounds_summary` frame (the page holds only that).

    Ties go to the smallest T; rows sorted by algorithm and ε.
    """
    stats = summary.sort_values(["algorithm", "epsilon", "rounds"], kind="stable")
    best = stats.loc[stats.groupby(["algorithm", "epsilon"])["mean"].idxmax()]
    return best.sort_values(["algorithm", "epsilon"]).reset_index(drop=True)


def versus(
    frame: pd.DataFrame, reference: str, *, metric: str = "captured_energy_ratio"
) -> pd.DataFrame:
    """Each algorithm at its best T against ``reference`` (a one-shot algorithm), per ε.

    Parameters
    ----------
    frame : pandas.DataFrame
        A :func:`run_rounds_sweep` frame holding ``reference``.
    reference : str
        The algorithm compared against (e.g. ``"cape"``, one-shot capePCA).
    metric : str
        A metric column (larger is better).

    Returns
    -------
    pandas.DataFrame
        :func:`best_rounds`'s rows and columns plus ``difference`` (mean − the reference's
        mean at the same ε), ``se_difference`` and ``z`` (difference / se_difference), NaN
        on the reference's own rows. Every algorithm has its own noise stream, so the two
        means are independent given the data draw: se_difference = sqrt(se² + se_ref²).

    Notes
    -----
    The best T is chosen on the same runs, so ``difference`` is optimistic for the
    iterative algorithm (a maximum over T of noisy means): a negative ``z`` is the stronger
    statement.
    """
    return versus_of(rounds_summary(frame, metric=metric), reference)


def versus_of(summary: pd.DataFrame, reference: str) -> pd.DataFrame:
    """:func:`versus` of a :func:`rounds_summary` frame (the page holds only that)."""
    best = best_of(summary)
    if reference not in set(best["algorithm"]):
        raise ValueError(f"reference must be an algorithm of frame; got {reference!r}")
    ref = best[best["algorithm"] == reference].set_index("epsilon")
    out = best.copy()
    others = (out["algorithm"] != reference).to_numpy()
    against = ref.loc[out["epsilon"]]
    difference = out["mean"].to_numpy() - against["mean"].to_numpy()
    se = np.hypot(out["se"].to_numpy(), against["se"].to_numpy())
    out["difference"] = np.where(others, difference, np.nan)
    out["se_difference"] = np.where(others, se, np.nan)
    out["z"] = out["difference"] / out["se_difference"]
    return out.reset_index(drop=True)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    parser.add_argument("--epsilon", type=float, nargs="+", default=[0.1, 1.0, 10.0])
    parser.add_argument("--rounds", type=int, nargs="+", default=list(DEFAULT_ROUND_VALUES))
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--algorithms",
        nargs="+",
        default=["cape", "cape_joint", "conv", *iterative_algorithms()],
    )
    parser.add_argument(
        "--draws", type=int, default=1, help="data draws, seeds --seed … --seed + draws − 1"
    )
    parser.add_argument(
        "--processes",
        type=int,
        help="run each T's tasks on a pool of this many processes (the table is the same); "
        "a Dask cluster through the API: rounds_sweep(..., executor=client.get_executor())",
    )
    parser.add_argument("--table", choices=["best", "all", "versus", "draws"], default="best")
    parser.add_argument(
        "--reference", default="cape", help="the one-shot algorithm of --table versus"
    )
    for name in ("dim", "k", "sites", "n_per_site", "pool_size"):
        parser.add_argument(_OPTIONS[name], type=int, dest=name)
    parser.add_argument("--delta", type=float)
    parser.add_argument("--calibration")
    parser.add_argument("--neighbouring")
    parser.add_argument("--weighting")
    parser.add_argument("--site-shares", type=float, nargs="+", dest="site_shares")
    return parser


def main(argv: Sequence[str] | None = None) -> pd.DataFrame:
    """Headless rounds axis: print and return a table.

    ``--table best`` (default): the best T per algorithm and ε (docs/baselines.md);
    ``--table all``: every (algorithm, ε, T) mean ± se, the PCA page's Baselines numbers
    (:meth:`RoundsSpec.command`); ``--table versus``: :func:`versus` against
    ``--reference`` (default ``cape``); ``--table draws``: :func:`draws_summary`, each level's
    median [min, max] over ``--draws`` data draws.
    """
    args = vars(_parser().parse_args(argv))
    table, seed, rounds = args.pop("table"), args.pop("seed"), args.pop("rounds")
    draws = args.pop("draws")
    reference, processes = args.pop("reference"), args.pop("processes")
    keywords = {n: v for n, v in args.items() if v is not None}
    if len(keywords["epsilon"]) == 1:  # one ε is a point, not a one-point grid
        keywords["epsilon"] = keywords["epsilon"][0]
    spec = RoundsSpec.build(rounds=rounds, **keywords)
    if processes is None:
        frame = run_rounds_sweep(spec, seed, draws=draws)
    else:
        count = check_int(processes, "--processes", low=1, high=MAX_PROCESSES)
        with ProcessPoolExecutor(count) as pool:
            frame = run_rounds_sweep(spec, seed, executor=pool, draws=draws)
    tables = {
        "draws": lambda: draws_summary(frame),
        "best": lambda: best_rounds(frame),
        "all": lambda: rounds_summary(frame),
        "versus": lambda: versus(frame, reference),
    }
    out = tables[table]()
    with pd.option_context("display.width", 120, "display.max_rows", 500):
        print(out.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    return out


if __name__ == "__main__":  # pragma: no cover
    main()
