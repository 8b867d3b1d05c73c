"""``bash run.sh`` (issue #36): this machine only unless an address is asked for, and a
warning when started as root. Run against stubs: a no-op setup, a ``python`` that prints the
arguments Streamlit would get, an ``id`` that says who runs it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def checkout(tmp_path):
    """``run(*args, uid=1000, env={})``: run.sh in a copy whose setup and Python are stubs;
    (the arguments the Python got, stderr)."""
    shutil.copy(ROOT / "run.sh", tmp_path / "run.sh")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "setup.sh").write_text("exit 0\n")
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text('#!/usr/bin/env bash\nprintf "%s\\n" "$@"\n')
    python.chmod(0o755)
    stubs = tmp_path / "stubs"
    stubs.mkdir()

    def run(*args: str, uid: int = 1000, env: dict[str, str] | None = None):
        (stubs / "id").write_text(f'#!/usr/bin/env bash\n[ "$1" = -u ] && echo {uid}\n')
        (stubs / "id").chmod(0o755)
        base = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
        done = subprocess.run(
            ["bash", str(tmp_path / "run.sh"), *args],
            capture_output=True,
            text=True,
            timeout=60,
            env={**base, **(env or {}), "PATH": f"{stubs}:{os.environ['PATH']}"},
            check=True,
        )
        return done.stdout.splitlines(), done.stderr

    return run


def _address(argv: list[str]) -> list[str]:
    """Every address the arguments give the server, in either spelling."""
    out = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--server.address"]
    return out + [a.split("=", 1)[1] for a in argv if a.startswith("--server.address=")]


def test_the_app_listens_on_this_machine_only_by_default(checkout):
    argv, err = checkout()
    assert argv[:4] == ["-m", "streamlit", "run", "app.py"]
    assert _address(argv) == ["127.0.0.1"]
    assert err == ""  # an unprivileged user: no warning


@pytest.mark.parametrize("asked", [["--server.address", "0.0.0.0"], ["--server.address=0.0.0.0"]])
def test_an_address_asked_for_is_the_only_one(checkout, asked):
    # the README's classroom recipe: bash run.sh --server.address 0.0.0.0
    argv, _ = checkout(*asked, "--server.port", "8600")
    assert _address(argv) == ["0.0.0.0"] and argv[-2:] == ["--server.port", "8600"]


def test_an_address_from_streamlits_environment_is_not_overridden(checkout):
    argv, _ = checkout(env={"STREAMLIT_SERVER_ADDRESS": "0.0.0.0"})
    assert _address(argv) == []  # Streamlit reads the variable itself


def test_root_is_warned_once_on_stderr(checkout):
    argv, err = checkout(uid=0)
    assert _address(argv) == ["127.0.0.1"]  # it still starts
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: run.sh runs as root")


def test_a_lecturers_key_is_made_and_printed_when_none_is_set(checkout):
    # issue #49: the lecturer's page needs a key students do not have (ui/lecturer.py)
    _, err = checkout(env={"CAPE_LECTURER_KEY": ""})
    assert err.startswith("Lecturer's key: ") and "?lecturer=" in err
    key = err.split()[2]
    assert len(key) >= 16 and f"?lecturer={key};" in err
    _, again = checkout(env={"CAPE_LECTURER_KEY": ""})
    assert again.split()[2] != key  # a new one per start
    assert checkout(env={"CAPE_LECTURER_KEY": "chosen"})[1] == ""  # the environment's: silent
