"""The package version (read by ``pyproject.toml``) and the commit a run came from."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

__version__ = "0.1.0"


@functools.cache  # once per process: the code it describes was loaded once
def source_commit() -> str:
    """The git commit of the checkout this code runs from, for the records the CLIs write.

    ``"<sha> (with uncommitted changes to dpcore/ or paper/)"`` when those differ from it;
    ``"unknown"`` for an installed package outside a checkout (or without git).
    """
    root = Path(__file__).resolve().parent.parent
    if not (root / ".git").exists():
        return "unknown"
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True, cwd=root
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "dpcore", "paper"],
            capture_output=True,
            text=True,
            check=True,
            cwd=root,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" (with uncommitted changes to dpcore/ or paper/)" if dirty else "")
