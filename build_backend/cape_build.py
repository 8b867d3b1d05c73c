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

A tree made by ``git archive`` (a release tarball, GitHub's "Download ZIP") has no ``.git``
either, but git wrote the commit into ``.git_archival.txt`` (``.gitattributes``:
``export-subst``). setuptools-scm reads that file only when the archived repository had a
release tag (``describe-name``), and then with an abbreviated commit; without one it stopped
the build. Here the archive's full commit is handed over as for an sdist, and without a tag
the version counts from the release CITATION.cff names, as a clone without tags does
(``scripts/git_describe.sh``), at ``dev0``: an archive cannot count its commits since.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from setuptools import build_meta

INFO = Path("dpcore") / "_build_info.py"
ARCHIVAL = Path(".git_archival.txt")
CITATION = Path("CITATION.cff")
PRETEND = "SETUPTOOLS_SCM_PRETEND_METADATA"
PRETEND_VERSION = "SETUPTOOLS_SCM_PRETEND_VERSION"


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


def archive_pretence(archival: str, citation: str) -> dict[str, str]:
    r"""setuptools-scm's pretended metadata (and version) for a ``git archive`` tree.

    ``archival`` is its ``.git_archival.txt`` as git wrote it, ``citation`` its CITATION.cff.
    Empty when git substituted no commit (a copy of the tree, not an archive).

    Examples
    --------
    >>> head = "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d"
    >>> got = archive_pretence(f"node: {head}\ndescribe-name: \n", "version: 0.2.0\n")
    >>> got["SETUPTOOLS_SCM_PRETEND_VERSION"]
    '0.2.1.dev0+g1a2b3c4d5'
    >>> got["SETUPTOOLS_SCM_PRETEND_METADATA"] == f'{{node = "g{head}", dirty = false}}'
    True
    >>> list(archive_pretence(f"node: {head}\ndescribe-name: v0.3.0-4-g1a2b3c4\n", ""))
    ['SETUPTOOLS_SCM_PRETEND_METADATA']
    >>> archive_pretence("node: $Format:%H$\n", "version: 0.2.0\n")
    {}
    """
    node = re.search(r"^node: ([0-9a-f]{40})$", archival, re.M)
    if node is None:
        return {}
    found = {PRETEND: f'{{node = "g{node[1]}", dirty = false}}'}
    if re.search(r"^describe-name: v\d", archival, re.M):
        return found  # setuptools-scm's own reading gives the version from the tag
    release = re.search(r"^version: *(\d+(?:\.\d+)*) *$", citation, re.M)
    if release is None:
        return {}  # no release to count from: setuptools-scm's own reading, unchanged
    parts = release[1].split(".")
    parts[-1] = str(int(parts[-1]) + 1)  # guess-next-dev, as dpcore.version.scm_version
    return {**found, PRETEND_VERSION: ".".join(parts) + f".dev0+g{node[1][:9]}"}


def _pretence() -> dict[str, str]:
    """What setuptools-scm is told here: an unpacked sdist's commit, or an archive's."""
    if Path(".git").exists():
        return {}
    if ARCHIVAL.is_file():  # substituted by git archive (an sdist of an archive keeps it)
        citation = CITATION.read_text() if CITATION.is_file() else ""
        found = archive_pretence(ARCHIVAL.read_text(), citation)
        if found:
            return found
    metadata = pretended_metadata(INFO.read_text()) if INFO.is_file() else None
    return {PRETEND: metadata} if metadata is not None else {}


@contextlib.contextmanager
def _from_sdist() -> Iterator[None]:
    """Without ``.git`` (an unpacked sdist, a ``git archive``), setuptools-scm told the commit
    the tree came from."""
    given = _pretence()
    if not given or PRETEND in os.environ or PRETEND_VERSION in os.environ:
        yield  # git, nothing to tell, or the builder's own choice
        return
    os.environ.update(given)
    try:
        yield
    finally:
        for key in given:
            del os.environ[key]


def build_sdist(sdist_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    """setuptools' ``build_sdist``, told an archive's commit (see the module docstring)."""
    with _from_sdist():
        return build_meta.build_sdist(sdist_directory, config_settings)


def get_requires_for_build_sdist(config_settings: dict[str, Any] | None = None) -> list[str]:
    """setuptools' hook, told an archive's commit (see :func:`build_sdist`)."""
    with _from_sdist():
        return build_meta.get_requires_for_build_sdist(config_settings)


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
