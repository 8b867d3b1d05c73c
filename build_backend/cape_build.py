"""The build backend: setuptools' (``setuptools.build_meta``), with the commit kept from an
sdist to the wheel built from it (``pyproject.toml``, ``[build-system]``; issue #51).

setuptools-scm writes ``dpcore/_build_info.py`` (version, release, commit) from git. An sdist
holds that file as git gave it, but a wheel built from the unpacked sdist, where there is no
git (``python -m build`` builds the wheel that way), had its version from ``PKG-INFO`` alone:
setuptools-scm wrote the file again with ``COMMIT = None`` and the version as the release, and
the wheel's frames said "unknown". Here, in a tree without ``.git`` whose build info names a
commit, every hook hands setuptools-scm that commit and state
(``SETUPTOOLS_SCM_PRETEND_METADATA``), so the wheel's file names the sdist's commit; a tree
with ``.git``, or with no such file, is built exactly as setuptools builds it.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from setuptools import build_meta
from setuptools.build_meta import build_sdist, get_requires_for_build_sdist  # noqa: F401

INFO = Path("dpcore") / "_build_info.py"
PRETEND = "SETUPTOOLS_SCM_PRETEND_METADATA"


def pretended_metadata(text: str) -> str | None:
    r"""setuptools-scm's metadata (a TOML inline table) for a build info file's text.

    The commit and the state: the version comes from ``PKG-INFO`` as it is (setuptools-scm
    takes a pretended tag as a string it cannot format; ``dpcore.version.release`` reads the
    release back from the version). None when the file names no commit.

    Examples
    --------
    >>> pretended_metadata("COMMIT = 'g1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d'\nDIRTY = False\n")
    '{node = "g1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d", dirty = false}'
    >>> pretended_metadata("COMMIT = None\nDIRTY = False\n") is None
    True
    """
    commit = re.search(r"^COMMIT = '(g?[0-9a-f]{7,40})'$", text, re.M)
    dirty = re.search(r"^DIRTY = (True|False)$", text, re.M)
    if not (commit and dirty):
        return None
    return f'{{node = "{commit[1]}", dirty = {dirty[1].lower()}}}'


@contextlib.contextmanager
def _from_sdist() -> Iterator[None]:
    """In an unpacked sdist (no ``.git``), setuptools-scm told what the sdist's file says."""
    given = None if Path(".git").exists() or not INFO.is_file() else INFO.read_text()
    metadata = pretended_metadata(given) if given is not None else None
    if metadata is None or PRETEND in os.environ:  # git, or the builder's own choice
        yield
        return
    os.environ[PRETEND] = metadata
    try:
        yield
    finally:
        del os.environ[PRETEND]


def build_wheel(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """setuptools' ``build_wheel``, keeping an sdist's commit (see the module docstring)."""
    with _from_sdist():
        return build_meta.build_wheel(wheel_directory, config_settings, metadata_directory)


# Every hook a frontend calls in the unpacked sdist runs setuptools-scm, which writes the build
# info again: each one (each in a process of its own) is told the sdist's metadata, so the
# first does not overwrite the file the later ones read.
def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    """setuptools' hook, told the sdist's commit (see :func:`build_wheel`)."""
    with _from_sdist():
        return build_meta.get_requires_for_build_wheel(config_settings)


def prepare_metadata_for_build_wheel(
    metadata_directory: str, config_settings: dict[str, Any] | None = None
) -> str:
    """setuptools' hook, with the same version as :func:`build_wheel` gives."""
    with _from_sdist():
        return build_meta.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def get_requires_for_build_editable(config_settings: dict[str, Any] | None = None) -> list[str]:
    """setuptools' hook, told the sdist's commit (see :func:`build_wheel`)."""
    with _from_sdist():
        return build_meta.get_requires_for_build_editable(config_settings)


def prepare_metadata_for_build_editable(
    metadata_directory: str, config_settings: dict[str, Any] | None = None
) -> str:
    """setuptools' hook, told the sdist's commit (see :func:`build_wheel`)."""
    with _from_sdist():
        return build_meta.prepare_metadata_for_build_editable(metadata_directory, config_settings)


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """setuptools' hook, told the sdist's commit (see :func:`build_wheel`)."""
    with _from_sdist():
        return build_meta.build_editable(wheel_directory, config_settings, metadata_directory)
