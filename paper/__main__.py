"""Regenerate panels of the paper's Figures 2–5 without a browser.

Usage::

    .venv/bin/python -m paper --figure 2a --out results/      # one panel
    .venv/bin/python -m paper --figure 3 --out results/       # a whole figure
    .venv/bin/python -m paper --figure all --mnist mnist.npz --covtype covtype.data.gz
    .venv/bin/python -m paper --figure all --scheduler tcp://HOST:8786   # on a Dask cluster

For each panel it writes ``fig<key>.csv`` (the tidy data, one row per algorithm, grid point
and run) and ``fig<key>.html`` (a standalone interactive figure), and prints the paper's
claims for the panel with whether the regenerated data support them; ``claims.csv`` collects
them. MNIST / Covertype panels need the files (or CAPE_MNIST / CAPE_COVTYPE) and are skipped
with a message otherwise. With ``--scheduler`` every panel's tasks run on that Dask cluster
(docs/scale-out.md); the numbers are the same as on this machine.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from dpcore import ClassicGaussianWarning, cluster, paper, realdata
from ui.figures import figure_html, sweep_figure
from ui.theme import AXIS_LABELS


def panels_for(spec: str) -> list[paper.Panel]:
    """Panels named by a key ('2a'), a figure ('2') or 'all'."""
    if spec == "all":
        return list(paper.PANELS.values())
    if spec in paper.FIGURES:
        return list(paper.FIGURES[spec]["panels"])
    return [paper.get_panel(spec)]


def load_real(kind: str, path: str | None):
    """The MNIST / Covertype pool, or None (with the reason) when the file is unavailable."""
    try:
        if kind == "mnist":
            return realdata.load_mnist(path), ""
        return realdata.load_covtype(path, rng=np.random.default_rng(0)), ""
    except ValueError as err:
        return None, str(err)


def figure_for(panel: paper.Panel, df: pd.DataFrame, calibration: str):
    y_title = "captured energy / optimum" if panel.task == "pca" else "component error q_comp"
    fig = sweep_figure(df, axis=panel.axis, metric=panel.metric, y_title=y_title)
    caption = paper.panel_caption(panel, calibration)
    fig.update_layout(
        title={"text": f"Figure {panel.key}: {panel.title}<br><sup>{caption}</sup>"},
        margin={"t": 90},
        xaxis_title=AXIS_LABELS[panel.axis],
    )
    return fig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--figure", default="2a", help="panel (2a), figure (2) or 'all'")
    parser.add_argument("--out", default="results", help="output folder")
    parser.add_argument("--runs", type=int, default=10, help="runs per point (paper: 10)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--calibration", choices=["classic", "analytic"], default="classic")
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
    args = parser.parse_args(argv)
    if args.precompute:
        return precompute(Path(args.precompute), args, argv)
    try:
        chosen = panels_for(args.figure)
    except ValueError as err:
        parser.error(str(err))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with (
        cluster.dask_executor(args.scheduler) if args.scheduler else contextlib.nullcontext()
    ) as executor:
        claims = run_panels(chosen, args, out, executor)
    if claims:
        pd.DataFrame(claims).to_csv(out / "claims.csv", index=False)
    print(f"wrote {out}/")
    return 0


PRECOMPUTED = Path(__file__).with_name("precomputed.csv.gz")


def _commit() -> str:
    import subprocess

    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).parent,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "dpcore", "paper"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).parent,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" (with uncommitted changes to dpcore/ or paper/)" if dirty else "")


def precompute(path: Path, args, argv: list[str] | None) -> int:
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
            "commit": _commit(),
            "runs": str(args.runs),
            "seed": str(args.seed),
            "calibration": args.calibration,
            "generated": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "seconds": f"{time.perf_counter() - start:.0f}",
        },
    )
    print(f"wrote {path}")
    return 0


def run_panels(chosen: list[paper.Panel], args, out: Path, executor) -> list[dict]:
    """Compute, write and check each panel (on ``executor``, or this machine's threads)."""
    pools: dict[str, tuple] = {}
    claims = []
    for panel in chosen:
        data = None
        if panel.task == "pca" and panel.data != "synthetic":
            if panel.data not in pools:
                pools[panel.data] = load_real(panel.data, getattr(args, panel.data))
            data, reason = pools[panel.data]
            if data is None:
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
        df.to_csv(out / f"fig{panel.key}.csv", index=False)
        (out / f"fig{panel.key}.html").write_text(
            figure_html(figure_for(panel, df, args.calibration)), encoding="utf-8"
        )
        print(f"{panel.key}: {panel.title} ({time.perf_counter() - start:.1f} s)")
        for result in paper.check_claims(panel, df):
            print(f"   {paper.MARKS[result.verdict]} {result.claim} — {result.evidence}")
            claims.append({"panel": panel.key, **result.__dict__, "holds": result.holds})
    return claims


if __name__ == "__main__":
    sys.exit(main())
