"""The PCA page's Baselines section (issue #38): iterative methods on the rounds axis.

Every registered iterative algorithm
(:func:`dpcore.experiments.sweeps.rounds.iterative_algorithms`) at
T = 1, 2, … rounds beside the one-shot algorithms of the page's picker, all at the sliders'
one total (ε, δ); mean ± standard error over the page's runs. The numbers are those of
the shown command (:meth:`dpcore.experiments.sweeps.rounds.RoundsSpec.command`), which reproduces
them
headless. Adding an iterative method is its registry record: nothing here names one.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import RoundsSpec, best_of, is_heavy, versus_of
from figures.memo import built
from figures.rounds import rounds_figure
from figures.theme import label
from learning.settings import PcaControls
from ui import presenter
from ui.cached import (
    FILE_SOURCES,
    call_core,
    call_core_with_spinner,
    rounds_job,
    rounds_table,
)
from ui.controls import run_gate
from ui.specs import rounds_spec
from ui.state import bound

Y_TITLE = "captured energy / optimum"

# The interpreter the shown command names: the project's venv, relative to the checkout's root
# (README: every command there runs as `.venv/bin/python …`; issue #49: a bare `python` in a
# fresh terminal said "No module named pandas").
VENV_PYTHON = ".venv/bin/python"


def _best(summary: pd.DataFrame, order: tuple[str, ...]) -> pd.DataFrame:
    """Each algorithm's best T with its mean and standard error, and, where one-shot capePCA
    is shown, the difference from it with that difference's standard error
    (:func:`dpcore.experiments.sweeps.rounds.versus_of`)."""
    compared = "cape" in set(summary["algorithm"])
    best = versus_of(summary, "cape") if compared else best_of(summary)
    present = set(best["algorithm"])
    best = best.set_index("algorithm").loc[[a for a in order if a in present]]
    table = pd.DataFrame(
        {
            "algorithm": [label(a) for a in best.index],
            "best T": best["rounds"].to_numpy(),
            "mean": [f"{v:.4f}" for v in best["mean"]],
            "standard error": [f"{v:.4f}" for v in best["se"]],
            "runs": best["runs"].to_numpy(),
        }
    )
    if compared:
        table["difference from CAPE (one release) ± s.e."] = [
            "" if np.isnan(d) else f"{d:+.4f} ± {e:.4f}"
            for d, e in zip(best["difference"], best["se_difference"], strict=True)
        ]
    return table


def show_baselines(chosen: PcaControls, source: tuple, *, prefix: str) -> None:
    """The section: a toggle (off by default: the sweep costs T times the page's), then
    the chart, the best T per algorithm, every number, and the command."""
    st.header("Baselines: iterative methods at equal total ε")
    if not bound(
        st.toggle,
        "Show the rounds axis (iterative baselines)",
        f"{prefix}rounds",
        help="Private power methods release a D×K matrix every round; every round is charged "
        "against the same total (ε, δ), so more rounds converge further but each gets less "
        "budget (docs/baselines.md).",
    ):
        return
    spec: RoundsSpec = call_core(rounds_spec, chosen)
    heavy = is_heavy(spec) or source[0] in FILE_SOURCES
    if not run_gate((spec, chosen.seed, source), heavy, key=f"{prefix}rounds_run"):
        return
    if heavy:
        summary = rounds_job(spec, chosen.seed, source, gate=f"{prefix}rounds_run")
    else:
        summary = call_core_with_spinner(
            "Running the rounds axis…", rounds_table, spec, chosen.seed, source
        )
    fig = built(rounds_figure, summary, y_title=Y_TITLE, algorithms=spec.sweep.algorithms)
    st.plotly_chart(
        presenter.style(fig), key=f"{prefix}rounds_chart", config=presenter.chart_config("rounds")
    )
    st.caption(
        f"Mean ± standard error over {chosen.runs} runs at ε = {chosen.epsilon:g}, "
        f"δ = {chosen.delta:g}, the same total for every T; a one-shot algorithm spends it in "
        "one release (a flat line). Every T runs from the same seed (common random numbers)."
    )
    st.dataframe(_best(summary, spec.sweep.algorithms), hide_index=True, key=f"{prefix}rounds_best")
    st.caption(
        "Best T: the largest mean over the T swept (chosen on the same runs, so it flatters "
        "the iterative methods). Difference ± its standard error, sqrt(se² + se_CAPE²): every "
        "algorithm has its own noise stream."
    )
    with st.expander("Every number, and the command that reproduces them"):
        st.dataframe(summary, hide_index=True, key=f"{prefix}rounds_all")
        if source[0] == "synthetic":
            st.code(spec.command(chosen.seed, python=VENV_PYTHON), language="bash")
            st.caption(
                "Run it in a terminal at the root of the CAPE Lab checkout: it needs the "
                f"project's environment, `{VENV_PYTHON}` (`bash run.sh` or `bash test.sh` "
                "creates it); a system `python` lacks numpy and pandas."
            )
        else:
            st.caption(
                "The command covers the synthetic data; on a data set, use "
                "dpcore.experiments.sweeps.rounds.run_rounds_sweep with the data set in the spec."
            )
