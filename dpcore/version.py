"""The package version and the commit a run came from, both from git.

Releases are annotated git tags ``vX.Y.Z``. The version follows setuptools-scm's default
scheme: ``0.2.0`` at the tag ``v0.2.0``; ``0.2.1.dev3+g1a2b3c4d5`` three commits after it
(``.d20261127`` added when the tree has uncommitted changes). A clone without tags counts
from the release CITATION.cff names (``scripts/git_describe.sh``, the build's describe command).

- **An installed wheel**: setuptools-scm wrote both into ``dpcore/_build_info.py`` when the
  wheel was built (``pyproject.toml``, ``[tool.setuptools_scm]``; the file is not in git).
- **A checkout** (``PYTHONPATH=.``, ``streamlit run app.py``): read from git the same way,
  so a record names its commit whichever way the code runs.
"""

from __future__ import annotations

import functools
import importlib
import re
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UNKNOWN = "unknown"
DIRTY_NOTE = " (with uncommitted changes)"
# `git describe` with a fallback for clones without tags: the release CITATION.cff names
DESCRIBE = ROOT / "scripts" / "git_describe.sh"


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], capture_output=True, text=True, check=True, cwd=ROOT, timeout=30
    ).stdout.strip()


def _checkout() -> bool:
    return (ROOT / ".git").exists() and (ROOT / "dpcore").is_dir()


@functools.cache
def git_state() -> tuple[str, int, str, bool] | None:
    """(release, commits since it, full commit, dirty) of the checkout; None outside one.

    ``release`` is the last ``vX.Y.Z`` tag without its ``v``; in a clone without tags, the
    release CITATION.cff names, counted from the commit that set it (scripts/git_describe.sh);
    ``"0.0"`` before any release, as setuptools-scm counts then: every commit is "since" it.
    """
    if not _checkout():
        return None
    try:
        commit = _git("rev-parse", "HEAD")
        dirty = bool(_git("status", "--porcelain", "--untracked-files=no"))
        try:  # the build's own describe command (pyproject.toml), so both agree
            described = subprocess.run(
                ["sh", str(DESCRIBE)], capture_output=True, text=True, check=True, timeout=30
            ).stdout.strip()
        except subprocess.CalledProcessError:  # no release yet
            return "0.0", int(_git("rev-list", "--count", "HEAD")), commit, dirty
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    match = re.fullmatch(r"v(?P<tag>.+)-(?P<distance>\d+)-g[0-9a-f]+(-dirty)?", described)
    if match is None:
        return None
    return match["tag"], int(match["distance"]), commit, dirty


def scm_version(release: str, distance: int, commit: str, dirty: bool) -> str:
    """setuptools-scm's default version (guess-next-dev, node-and-date) for a git state.

    Examples
    --------
    >>> scm_version("0.2.0", 0, "1a2b3c4d5e", False)
    '0.2.0'
    >>> scm_version("0.2.0", 3, "1a2b3c4d5e", False)
    '0.2.1.dev3+g1a2b3c4d5'
    >>> scm_version("0.0", 12, "1a2b3c4d5e", False)
    '0.1.dev12+g1a2b3c4d5'
    """
    if distance == 0 and not dirty:
        return release
    parts = release.split(".")
    parts[-1] = str(int(parts[-1]) + 1)
    local = f"+g{commit[:9]}" + (time.strftime(".d%Y%m%d", time.gmtime()) if dirty else "")
    return ".".join(parts) + f".dev{distance}" + local


def _build_info() -> tuple[str, str, bool] | None:
    """(version, commit, dirty) written into the wheel; None without the file."""
    try:
        info = importlib.import_module("dpcore._build_info")
    except ImportError:
        return None
    commit = str(getattr(info, "COMMIT", "") or "")
    commit = commit[1:] if re.fullmatch(r"g[0-9a-f]{7,40}", commit) else commit
    return str(info.__version__), commit or UNKNOWN, bool(info.DIRTY)


def _version() -> str:
    state = git_state()
    if state is not None:
        return scm_version(*state)
    built = _build_info()
    return built[0] if built is not None else "0.0.0+unknown"


def release_of(version: str) -> str:
    """The release a setuptools-scm version counts from (:func:`scm_version` undone).

    Examples
    --------
    >>> release_of("0.2.0"), release_of("0.2.1.dev3+g1a2b3c4d5"), release_of("0.1.dev12+g1a")
    ('0.2.0', '0.2.0', '0.0')
    """
    match = re.fullmatch(r"(?P<next>\d+(?:\.\d+)*)(?:\.dev\d+)?(?:\+.*)?", version)
    if match is None or ".dev" not in version:
        return version
    parts = match["next"].split(".")
    parts[-1] = str(int(parts[-1]) - 1)
    return ".".join(parts)


def release() -> str:
    """The last release's version (``0.2.0`` for the tag ``v0.2.0``): CITATION.cff's.

    In a wheel: the release setuptools-scm wrote, or, for a wheel built from an sdist (whose
    version came from ``PKG-INFO``, written whole as the release), the one its version
    counts from.
    """
    state = git_state()
    if state is not None:
        return state[0]
    info = importlib.import_module("dpcore._build_info")  # written at build
    written = str(info.RELEASE)
    if re.fullmatch(r"\d+(?:\.\d+)*", written):
        return written
    return release_of(str(info.__version__))


@functools.cache
def source_commit() -> str:
    """The git commit the running code came from, for every record, frame and export.

    ``"<sha> (with uncommitted changes)"`` when the tree differed from it (in a checkout,
    or in the checkout a wheel was built from); ``"unknown"`` only for code that is neither
    a checkout nor a built wheel (or without git).
    """
    state = git_state()
    if state is not None:
        return state[2] + (DIRTY_NOTE if state[3] else "")
    built = _build_info()
    if built is None or built[1] == UNKNOWN:
        return UNKNOWN
    return built[1] + (DIRTY_NOTE if built[2] else "")


__version__ = _version()
