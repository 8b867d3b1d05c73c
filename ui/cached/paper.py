"""The paper's figures page: one panel, its claims and the pools' spread."""

from __future__ import annotations

import pandas as pd
import streamlit as st

import dpcore
from serving import classroom, worker
from serving.datafiles import data_dir
from serving.flight import compute_slot
from ui import jobs
from ui.cached.data import load_dataset


@st.cache_data(show_spinner=False, max_entries=128)
def paper_panel(
    key: str, *, runs: int, seed: int, calibration: str, path: str = ""
) -> pd.DataFrame:
    """One panel of the paper's figures (:func:`dpcore.experiments.paper.run_panel`), cached; here
    under
    a compute slot, or on the cluster holding none."""
    panel = dpcore.panel_by_key(key)  # a paper panel or a bundled stand-in ("2b~digits")
    data = None
    if panel.task == "pca" and panel.data != "synthetic":
        data = load_dataset(panel.data, path)
    return dpcore.run_slotted(
        compute_slot,
        dpcore.run_panel,
        key,
        runs=runs,
        seed=seed,
        calibration=calibration,
        data=data,
        budget=classroom.BUDGET,
    )


@st.cache_data(show_spinner=False, max_entries=16)
@compute_slot
def paper_pool_spread(key: str, *, calibration: str) -> pd.DataFrame:
    """capePCA's curve over several synthetic data pools
    (:func:`dpcore.experiments.paper.pool_spread`)."""
    return dpcore.pool_spread(key, calibration=calibration)


def paper_claims(key: str, df: pd.DataFrame) -> list:
    """The verdicts of a panel's claims on its numbers
    (:func:`dpcore.experiments.paper.check_claims`):
    deciding them reads the frame point by point, ~40 ms a panel, so a page keeps them with
    ``figures.memo.built(paper_claims, key, df, key=<the panel's settings>)`` instead of
    hashing the frame on every rerun."""
    return dpcore.check_claims(dpcore.panel_by_key(key), df)


def paper_panel_job(
    key: str, *, runs: int, seed: int, calibration: str, path: str = "", gate: str
) -> pd.DataFrame:
    """:func:`paper_panel` as this session's heavy job (the heavy panels)."""
    return jobs.run_heavy(
        worker.paper_panel, key, runs, seed, calibration, path, data_dir(), gate=gate
    )
