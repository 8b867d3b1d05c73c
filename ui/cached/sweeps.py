"""The PCA, tensor and rounds sweeps of the PCA, Tensor and Baselines pages (each a frozen
spec), cached here or run as this session's heavy job."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TypeVar

import numpy as np
import pandas as pd
import streamlit as st

import dpcore
from dpcore import OtdSpec, PcaSpec, RoundsSpec, rounds_summary, run_rounds_sweep
from serving import classroom, worker
from serving.datafiles import data_dir
from serving.flight import compute_slot
from ui import jobs
from ui.cached.core import SPEC_HASH
from ui.cached.data import _on_source

T = TypeVar("T")
S = TypeVar("S")
R = TypeVar("R")

# The sweeps below run here under a compute slot, or on CAPE_DASK_SCHEDULER's cluster
# holding no slot while they wait (cluster.run_slotted: a stalled scheduler must not take
# the slots every other page computes in, issue #36).


def on_cluster(fn: Callable[[S, R], T], spec: S, rng: R) -> T:
    """``dpcore.run_slotted(compute_slot, fn, spec, rng)`` (``rng`` a Generator or a seed),
    and a line under the result when a named cluster was unusable and it was computed here
    (issue #50): drawn inside the cached function, Streamlit replays it with the result."""
    result = dpcore.run_slotted(compute_slot, fn, spec, rng)
    if dpcore.fallback_reason() is not None:  # the why is the operator's (the server log)
        st.caption(
            "Computed on this server: the cluster it is set to share heavy work with "
            "(`CAPE_DASK_SCHEDULER`) cannot be used right now, so this took longer and "
            "was not shared with other servers."
        )
    return result


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def pca_frame(spec: PcaSpec, seed: int, source: tuple = ("synthetic",)) -> pd.DataFrame:
    """:func:`dpcore.run_pca_sweep` of a page's spec, its Generator seeded with ``seed``.

    ``source`` is ``("synthetic",)`` or the arguments of :func:`load_dataset`.
    """
    rng = np.random.default_rng(seed)
    spec = _on_source(spec, source)
    classroom.check(spec)  # the class server's limits: here, not in the core (issue #39)
    return on_cluster(dpcore.run_pca_sweep, spec, rng)


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=SPEC_HASH)
def otd_frame(spec: OtdSpec, seed: int) -> pd.DataFrame:
    """:func:`dpcore.run_otd_sweep` of a page's spec as its tidy frame."""
    rng = np.random.default_rng(seed)
    classroom.check(spec)
    run = on_cluster(dpcore.run_otd_sweep, spec, rng)
    return dpcore.otd_frame(spec, run)


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs=SPEC_HASH)
def otd_example(spec: OtdSpec, seed: int) -> pd.DataFrame:
    """True vs recovered weights of one run (``spec`` at one grid point, one run)."""
    rng = np.random.default_rng(seed)
    classroom.check(spec if spec.runs.count == 1 else spec.replace(runs=1))  # as it runs
    return on_cluster(dpcore.otd_example_of, spec, rng)


def pca_job(spec: PcaSpec, seed: int, source: tuple = ("synthetic",), *, gate: str) -> pd.DataFrame:
    """:func:`pca_frame` as this session's heavy job (:func:`ui.jobs.run_heavy`); ``gate``
    is the key of the page's :func:`ui.controls.run_gate`."""
    return jobs.run_heavy(worker.pca_frame, spec, seed, source, data_dir(), gate=gate)


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs=SPEC_HASH)
def rounds_table(spec: RoundsSpec, seed: int, source: tuple = ("synthetic",)) -> pd.DataFrame:
    """Mean ± standard error per (algorithm, ε, T) of a page's rounds axis
    (:func:`dpcore.experiments.sweeps.rounds.rounds_summary` of
    :func:`~dpcore.experiments.sweeps.rounds.run_rounds_sweep`, seeded with ``seed``):
    the numbers ``spec.command(seed)`` prints."""
    if source[0] != "synthetic":
        spec = dataclasses.replace(spec, sweep=_on_source(spec.sweep, source))
    classroom.check(spec)  # the class server's limits (issue #39)
    frame = on_cluster(run_rounds_sweep, spec, seed)
    return rounds_summary(frame)


def rounds_job(
    spec: RoundsSpec, seed: int, source: tuple = ("synthetic",), *, gate: str
) -> pd.DataFrame:
    """:func:`rounds_table` as this session's heavy job (:func:`ui.jobs.run_heavy`)."""
    return jobs.run_heavy(worker.rounds_table, spec, seed, source, data_dir(), gate=gate)


def otd_job(spec: OtdSpec, seed: int, *, gate: str, example: bool = False) -> pd.DataFrame:
    """:func:`otd_frame` (or, with ``example``, :func:`otd_example`) as this session's heavy
    job; the example after the sweep is its follow-up and keeps the queue place (issue #26)
    and the slot the sweep freed (issue #36)."""
    fn = worker.otd_example if example else worker.otd_frame
    return jobs.run_heavy(fn, spec, seed, gate=gate, follow_up=example, then_follow_up=not example)
