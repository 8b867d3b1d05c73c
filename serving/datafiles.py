"""Local data files (MNIST, Covertype): only those in one directory, chosen from a list.

The directory is ``CAPE_DATA_DIR``, else ``data/`` next to ``app.py``. Students pick a file
name from what is there; they never type a path, and :mod:`dpcore.experiments.realdata` refuses any
name that does not resolve (links followed) to a regular file directly inside the directory,
with one message whatever the reason, so nothing can be learnt about the rest of the disk.

Pages ask on every rerun; the directory's listing is kept per process and read again when
:func:`stamp` changes (a file added, removed or renamed changes the directory's modification
time), one ``stat`` instead of a listing and a path resolution per file (issue #36 item 4).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import dpcore

_DEFAULT_DIR = str(Path(__file__).resolve().parents[1] / "data")  # resolved once


def data_dir() -> str:
    """The data directory: ``CAPE_DATA_DIR``, else ``data/`` next to ``app.py``."""
    named = dpcore.data_directory()
    return str(named) if named is not None else _DEFAULT_DIR


def stamp() -> tuple:
    """What decides the data files a page finds: the directory, its modification time (None
    when it is missing) and the operator's defaults (``CAPE_MNIST``, ``CAPE_COVTYPE``). Equal
    stamps, the same files: per-process results about them may be keyed by it."""
    directory = data_dir()
    try:
        mtime: int | None = os.stat(directory).st_mtime_ns
    except OSError:
        mtime = None
    return (directory, mtime, *(os.environ.get(name, "") for name in dpcore.DATASET_ENV.values()))


@functools.lru_cache(maxsize=1)  # the listing of the latest stamp
def _listing(now: tuple) -> tuple[str, ...]:
    return tuple(dpcore.data_files(now[0]))


def data_files() -> list[str]:
    """The names a student may pick (at most 500), listed again when :func:`stamp` changes."""
    return list(_listing(stamp()))


def file_picker(container, kind: str, label: str, key: str) -> str:
    """A select box of the directory's files for ``kind`` ("mnist" or "covtype"); "" is
    "the file named by CAPE_MNIST / CAPE_COVTYPE" (the operator's default)."""
    env = dpcore.DATASET_ENV[kind]
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
