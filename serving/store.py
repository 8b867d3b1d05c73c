"""A small disk store of heavy results that several app processes share.

Behind a reverse proxy (``scripts/class_server.sh``, ``deploy/``) a lecture hall is served by
several Streamlit processes, each with its own heavy-job queue (:mod:`serving.jobs`). With
``CAPE_RESULT_STORE`` naming a directory, every finished heavy result is also written here
under its request key (:func:`serving.jobs.request_key`), so process 2 answers a request that
process 1 computed, at once.

- **Atomic**: a value is pickled to a temporary file in the same directory and renamed into
  place (``os.replace``), so a reader sees a whole file or none, whichever process writes.
- **Bounded**: after each write the directory is trimmed to ``CAPE_RESULT_STORE_MB``
  (default 512) by removing the least recently used files (a read touches its file).
- **Separated by code**: files live under a subdirectory named by a hash of the code that
  computes them (``dpcore/`` and ``serving/worker.py``), so a server running changed code never
  reads an old result.

The directory must be private to the server's user (it is created with mode 0700): its files
are pickles, and unpickling runs code, so nobody else may write there.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import string
import tempfile
import time
from pathlib import Path
from typing import Any

STORE_ENV = "CAPE_RESULT_STORE"
STORE_MB_ENV = "CAPE_RESULT_STORE_MB"
DEFAULT_MB = 512
_SUFFIX = ".pkl"
_HEX = frozenset(string.hexdigits.lower())


@functools.cache
def code_stamp() -> str:
    """Hash of the code whose results are stored (every ``dpcore`` module and the worker)."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in [*sorted((root / "dpcore").rglob("*.py")), root / "serving" / "worker.py"]:
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


class DiskStore:
    """Pickled values under hexadecimal keys in ``directory``, at most ``max_bytes`` in all.

    Parameters
    ----------
    directory : str or Path
        Where the files go (created, mode 0700); shared by every process of one server.
    max_bytes : int
        Bound of the files' total size; a value larger than this is not stored.
    """

    def __init__(self, directory: str | Path, max_bytes: int) -> None:
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be positive; got {max_bytes}")
        self.directory = Path(directory)
        self.max_bytes = int(max_bytes)
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        if not key or len(key) > 128 or not set(key) <= _HEX:  # never a path of its own
            raise ValueError(f"key must be a lowercase hexadecimal digest; got {key!r}")
        return self.directory / f"{key}{_SUFFIX}"

    def get(self, key: str) -> Any | None:
        """The value stored under ``key``, or None (missing, or unreadable: then removed)."""
        path = self._path(key)
        try:
            blob = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            value = pickle.loads(blob)
        except Exception:  # a file cut short by a full disk, or written by other code
            path.unlink(missing_ok=True)
            return None
        try:
            os.utime(path)  # recently used: trimmed last
        except OSError:
            pass
        return value

    def put(self, key: str, value: Any) -> bool:
        """Store ``value`` under ``key`` (atomically); False if it is too large to keep."""
        path = self._path(key)
        blob = pickle.dumps(value, protocol=5)
        if len(blob) > self.max_bytes:
            return False
        handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".tmp-")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(blob)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        self.trim()
        return True

    def trim(self) -> None:
        """Remove the least recently used files until the total is within the bound
        (temporary files of writers that died more than an hour ago too)."""
        entries = []
        now = time.time()
        for entry in os.scandir(self.directory):
            try:
                stat = entry.stat()
            except FileNotFoundError:  # another process removed it meanwhile
                continue
            if entry.name.startswith(".tmp-"):
                if now - stat.st_mtime > 3600:
                    Path(entry.path).unlink(missing_ok=True)
                continue
            if entry.name.endswith(_SUFFIX):
                entries.append((stat.st_mtime, stat.st_size, entry.path))
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            Path(path).unlink(missing_ok=True)
            total -= size

    def size(self) -> int:
        """Total bytes of the stored values."""
        return sum(
            entry.stat().st_size
            for entry in os.scandir(self.directory)
            if entry.name.endswith(_SUFFIX)
        )


def store_from_env() -> DiskStore | None:
    """The store named by ``CAPE_RESULT_STORE`` (its code subdirectory), or None when unset."""
    directory = os.environ.get(STORE_ENV, "").strip()
    if not directory:
        return None
    megabytes = os.environ.get(STORE_MB_ENV, "").strip() or str(DEFAULT_MB)
    try:
        size = int(megabytes)
    except ValueError:
        size = 0
    if size < 1:
        raise ValueError(f"{STORE_MB_ENV} must be a positive number of MB; got {megabytes!r}")
    return DiskStore(Path(directory) / code_stamp(), size * 2**20)
