"""The data sets a page names by source: bundled, files in DATA_DIR, CSV uploads (loaded once
per server, parsed in a bounded child)."""

from __future__ import annotations

from typing import Any

import streamlit as st

import dpcore
from dpcore import (
    PcaSpec,
)
from serving import worker
from serving.datafiles import data_dir
from serving.jobs import load_blocking

# What the data-set picker shows (and the URL holds) → the source kind.
DATA_SOURCES = {
    "synthetic": "synthetic",
    "digits": "digits",
    "breast cancer": "breast_cancer",
    "wine": "wine",
    "MNIST": "mnist",
    "MNIST, 5,000-sample subset": "mnist_5k",
    "Covertype": "covtype",
    "CSV upload": "upload",
}


# Sources read from a file on this machine: parsed again in the heavy job's child, so their
# sweeps run as a job whatever their work (the server holds one copy, the child its own).
FILE_SOURCES = ("mnist", "covtype")


@st.cache_resource(show_spinner="Loading the data set…", max_entries=4)
def _load_outcome(kind: str, arg: Any, *, directory: str) -> tuple[dpcore.Dataset | None, str]:
    """(data set, "") or (None, why not): a refusal is cached like a result, so a bad file is
    read once, not on every rerun of every panel that asks for it."""
    try:
        if kind in dpcore.BUNDLED_DATASETS:
            return dpcore.load_bundled(kind), ""
        if kind == "upload":  # cheap structural checks in the server, before any parse
            dpcore.check_csv_bytes(arg, "your CSV")
        elif kind in dpcore.DATASET_ENV:  # a missing file is refused at once, without a child
            dpcore.locate_dataset(kind, arg or None, data_dir=directory)
        # files and uploads are parsed in a bounded child process (serving.worker)
        return load_blocking(worker.load_source, kind, arg, directory), ""
    except (ValueError, TypeError) as err:
        return None, str(err)


def load_dataset(kind: str, arg: Any = None) -> dpcore.Dataset:
    """A real data set by source: bundled name, file name in DATA_DIR (MNIST, Covertype) or
    CSV bytes. Cached as a shared resource (one read-only copy per server: MNIST is ~380 MB
    in float64); raises ValueError saying why a source cannot be used."""
    dataset, refusal = _load_outcome(kind, arg, directory=data_dir())
    if dataset is None:
        raise ValueError(refusal)
    return dataset


def load_source(source: tuple) -> dpcore.Dataset:
    """:func:`load_dataset` of a page's ``source``: ``(kind,)`` or ``(kind, name or bytes)``."""
    return load_dataset(source[0], source[1] if len(source) > 1 else None)


def _on_source(spec: PcaSpec, source: tuple) -> PcaSpec:
    """The spec on its data: a page's spec names the data by ``source`` (small, hashable),
    the data set itself joins it only here, where the sweep runs."""
    return spec if source[0] == "synthetic" else spec.replace(data=load_source(source))
