"""Local data files (MNIST, Covertype): only those in one directory, chosen from a list.

The directory is ``CAPE_DATA_DIR``, else ``data/`` next to ``app.py``. Students pick a file
name from what is there; they never type a path, and :mod:`dpcore.experiments.realdata` refuses any
name that does not resolve (links followed) to a regular file directly inside the directory,
with one message whatever the reason, so nothing can be learnt about the rest of the disk.
"""

from __future__ import annotations

import os
from pathlib import Path

from dpcore.experiments import realdata


def data_dir() -> str:
    """The data directory: ``CAPE_DATA_DIR``, else ``data/`` next to ``app.py``."""
    return str(realdata.data_directory() or Path(__file__).resolve().parents[1] / "data")


def data_files() -> list[str]:
    """The names a student may pick (at most 500)."""
    return realdata.data_files(data_dir())


def file_picker(container, kind: str, label: str, key: str) -> str:
    """A select box of the directory's files for ``kind`` ("mnist" or "covtype"); "" is
    "the file named by CAPE_MNIST / CAPE_COVTYPE" (the operator's default)."""
    env = realdata.ENV[kind]
    files = data_files()
    default = os.path.basename(os.environ.get(env, ""))
    return container.selectbox(
        label,
        ["", *files],
        key=key,
        bind="query-params",
        format_func=lambda name: name or f"default (${env})",
        help="Files the server's operator put in the data directory (CAPE_DATA_DIR). "
        "MNIST: train-images-idx3-ubyte(.gz), .npz or a 785-column CSV. Covertype: "
        "covtype.data(.gz) from UCI. Nothing is downloaded."
        + ("" if files else " The directory is empty."),
        index=["", *files].index(default) if default in files else 0,
    )
