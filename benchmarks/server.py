"""Start the real app (`streamlit run app.py`) on a free loopback port, for browser tests and
the classroom load test."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from figures.theme import VERDICT_SYMBOL

ROOT = Path(__file__).resolve().parents[1]
# Debian's Chromium, driven by Playwright (the browser tests and the load test).
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]
# What a page in Chromium shows that is wrong, as texts (``page.evaluate(ERRORS_SHOWN)``):
# every exception and every error box but the pages' verdicts, told by their icon
# (figures.theme.VERDICT_ICON), never by their words: Streamlit draws a box's icon as a
# Material Symbols span, [data-testid='stAlertDynamicIcon'], whose text is the symbol's name
# (VERDICT_SYMBOL, "gavel": the verdict boxes as Streamlit 1.67 draws them).
ERRORS_SHOWN = f"""() => [
  ...[...document.querySelectorAll("[data-testid='stException']")].map(e => e.innerText),
  ...[...document.querySelectorAll("[data-testid='stAlertContentError']")]
    .filter(box => ![...box.querySelectorAll("[data-testid='stAlertDynamicIcon']")]
      .some(icon => icon.textContent.trim() === "{VERDICT_SYMBOL}"))
    .map(box => box.innerText)]"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def streamlit_server(
    timeout: float = 60, port: int | None = None, root: str | Path = ROOT
) -> Iterator[tuple[str, subprocess.Popen]]:
    """Yield (base URL, process) of a fresh server of ``root``/app.py; stop it on exit."""
    port = port or free_port()
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
        ],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.read() == b"ok":
                        break
            except OSError:
                time.sleep(0.5)
        else:
            raise RuntimeError(f"streamlit did not start within {timeout:.0f} s")
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:  # pragma: no cover - a stuck server
            proc.kill()


def rss_mib(pid: int) -> float:
    """Resident memory of a process (Linux /proc), MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used (Linux /proc), seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def job_processes(pid: int) -> list[int]:
    """Heavy-job processes of a server (serving.worker): children of its multiprocessing
    forkserver, the server's child."""
    children: dict[int, list[int]] = {}
    commands: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            commands[int(entry.name)] = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    servers = [c for c in children.get(pid, []) if "forkserver" in commands.get(c, "")]
    return [job for server in servers for job in children.get(server, [])]
