"""Warm start for the loopback federation: Flower's programs forked from one loaded interpreter.

Flower starts a fresh Python process for every party and every message (SuperLink,
SuperNodes, their SuperExecs, a ``flwr-clientapp`` per message, a ``flwr-serverapp`` per
run). Each imports ``flwr`` and the app (with ``dpcore``: numpy, scipy, pandas): 2–6 s of
CPU apiece, about 80 s of CPU for a 3-site run and 190 s for 10 sites on this 2-core
machine (docs/federated.md, "Time"). On one machine those imports are all the same, so
:func:`serve` imports them once and forks a child per program: the child is still a
separate process with its own arguments, environment, working directory and standard
streams, exactly as if started from its executable, but starts in milliseconds.

:func:`install_shims` writes, for each Flower command, a small executable of the same name
that asks the fork server to run the command and then stands in for it: it forwards
SIGTERM/SIGINT/SIGHUP to the child, waits, and exits with the child's code; if the stand-in
dies (SIGKILL), the server kills the child. Putting the shims first on ``PATH`` makes Flower
start its SuperExecs, ClientApps and ServerApps through the server too. Only the loopback
launcher does this; on real machines every program starts from its own executable.

Imports here are the standard library's only: the shim runs under ``python -S``.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
import time
from pathlib import Path

SOCKET_ENV = "CAPE_FORKSERVER"
PIDS_ENV = "CAPE_FORKSERVER_PIDS"  # a directory: <stand-in pid> holds its real program's pid
COMMANDS = (
    "flower-superlink",
    "flower-supernode",
    "flower-superexec",
    "flwr-clientapp",
    "flwr-serverapp",
    "flwr",
)
PRELOAD = ("federated.flower_app",)  # the app and dpcore, which every ClientApp imports
ROOT = Path(__file__).resolve().parent.parent


def _entry_points() -> dict:
    from importlib.metadata import entry_points

    found = {ep.name: ep for ep in entry_points(group="console_scripts") if ep.name in COMMANDS}
    missing = set(COMMANDS) - set(found)
    if missing:
        raise FileNotFoundError(f"{sorted(missing)} not installed: pip install .[federated]")
    return {name: ep.load() for name, ep in found.items()}


def die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (prctl PR_SET_PDEATHSIG; a
    no-op elsewhere), so that nothing outlives a launcher killed with SIGKILL. Call it in a
    child whose parent forked it from its main thread (the signal follows the forking
    thread); if the parent is already gone, exit at once."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    parent = os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(1)


def _run_child(entry, request: dict, fds: list[int]) -> None:
    """In the forked child: become the requested program; never returns."""
    code = 1
    try:
        die_with_parent()  # the fork server's death (with the launcher's) ends every program
        os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = list(request["argv"])
        result = entry()
        code = result if isinstance(result, int) else 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    except BaseException:  # the program's own crash: print it as Python would
        import traceback

        traceback.print_exc()
    finally:
        import atexit

        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


POLL_ENV = "CAPE_SUPERNODE_POLL"  # seconds between a SuperNode's pulls when idle (Flower: 3)


class _Clock:
    """``time`` as Flower 1.42's SuperNode loop sees it, its idle 3-s sleep shortened."""

    def __init__(self, poll: float) -> None:
        self.poll = poll

    def sleep(self, seconds: float) -> None:
        time.sleep(self.poll if seconds == 3 else seconds)

    def __getattr__(self, name: str) -> object:
        return getattr(time, name)


def _shorten_supernode_poll(poll: float) -> None:
    """Make the SuperNodes this fork server runs ask the SuperLink for messages every
    ``poll`` seconds when idle instead of Flower's fixed 3 s
    (``flwr/supernode/start_client_internal.py``: ``time.sleep(3)`` after an empty pull).
    Each round of a run waits for that poll once, so the loopback federation's rounds take
    about a second less each; the three-machine recipe runs Flower's own programs, with 3 s."""
    from flwr.supernode import start_client_internal

    start_client_internal.time = _Clock(poll)  # type: ignore[assignment]


def serve(path: str) -> None:
    """Import Flower's programs and the app, then fork one child per request on ``path``."""
    import importlib

    entries = _entry_points()
    for module in PRELOAD:
        importlib.import_module(module)
    if os.environ.get(POLL_ENV):
        _shorten_supernode_poll(float(os.environ[POLL_ENV]))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path + ".tmp")
    listener.listen(64)
    os.rename(path + ".tmp", path)  # appears only once the server accepts
    children: dict[int, socket.socket] = {}  # pid -> the stand-in's connection
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    while not stop:
        conns = list(children.values())
        ready, _, _ = select.select([listener, *conns], [], [], 0.05)
        for sock in ready:
            if sock is listener:
                conn, _ = listener.accept()
                msg, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
                request = json.loads(msg)
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    listener.close()
                    for other in children.values():
                        other.close()
                    conn.close()
                    _run_child(entries[Path(request["argv"][0]).name], request, fds)
                for fd in fds:
                    os.close(fd)
                conn.sendall(str(pid).encode())
                children[pid] = conn
            else:  # the stand-in closed its end: it died, so its program goes too
                pid = next(p for p, c in children.items() if c is sock)
                if not sock.recv(16):
                    _kill_group(pid)
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            ended = children.pop(pid, None)  # None: not one of the stand-ins' programs
            if ended is not None:
                try:
                    ended.sendall(str(os.waitstatus_to_exitcode(status)).encode())
                except OSError:
                    pass
                ended.close()
    for pid in children:
        _kill_group(pid)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def shim() -> None:
    """The stand-in: run ``sys.argv`` in the fork server, forward signals, exit as it does."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    conn.connect(os.environ[SOCKET_ENV])
    request = {"argv": sys.argv, "env": dict(os.environ), "cwd": os.getcwd()}
    socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
    pid = int(conn.recv(32))
    if os.environ.get(PIDS_ENV):  # the launcher watches the ServerApp; tests signal programs
        done = Path(os.environ[PIDS_ENV], str(os.getpid()))
        part = done.with_name(f".{done.name}.part")  # whole or absent: the launcher reads once
        part.write_text(f"{pid} {Path(sys.argv[0]).name}")
        os.replace(part, done)

    def forward(signum: int, frame: object) -> None:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    code = conn.recv(32)
    sys.exit(int(code) if code else 1)


def install_shims(directory: Path) -> Path:
    """Write one stand-in executable per Flower command into ``directory``; the directory."""
    directory.mkdir(parents=True, exist_ok=True)
    text = (
        f"#!{sys.executable} -S\n"
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from federated.forkserver import shim; shim()\n"
    )
    for name in COMMANDS:
        path = directory / name
        path.write_text(text)
        path.chmod(0o755)
    return directory


if __name__ == "__main__":
    serve(sys.argv[1])
