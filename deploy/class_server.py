"""Serve the app to a lecture hall: N Streamlit processes behind HAProxy, one command.

Usage (``scripts/class_server.sh`` sets up ``.venv`` first, then runs this)::

    bash scripts/class_server.sh                      # one process per core, port 8501
    bash scripts/class_server.sh --processes 2 --port 8501
    bash scripts/class_server.sh --dask-workers 1     # heavy work on a local Dask worker

What it starts, and stops again on Ctrl-C (or when any of them dies):

- **N app processes** (``streamlit run app.py``) on free ports of 127.0.0.1, with one shared
  cookie secret (``server.cookieSecret``: a signed cookie one process sets is valid on all;
  the XSRF token itself is checked without it, against the browser's own cookie), the file
  watcher off (a lecture server does not reload code mid-lesson), one shared disk store of
  heavy results (``CAPE_RESULT_STORE``, :mod:`serving.store`), and the uploads' server-wide
  bound split between them (``CAPE_UPLOAD_SERVER_MB``: 600 MB for the layout by default).
- **HAProxy** (Debian's ``haproxy`` package) on ``--address:--port``, configured from
  ``deploy/haproxy.cfg.in``: a browser's first request goes to the process with the fewest
  open connections, and a cookie (``CAPE_PROCESS``) keeps the browser's websocket, uploads
  and media on that process (sticky sessions); health checks on ``/_stcore/health``.
- Optionally (``--dask-workers N``) **a Dask scheduler and N one-thread workers** on
  127.0.0.1, named to every app process by ``CAPE_DASK_SCHEDULER`` (:mod:`dpcore.cluster`):
  identical requests from several processes then compute once, on the workers.

Logs, the generated configuration and the store go to ``--run-dir`` (default: a new
temporary directory, removed on exit).
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from serving.uploads import DEFAULT_SERVER_MB, DEFAULT_SESSION_MB, SERVER_ENV

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = Path(__file__).with_name("haproxy.cfg.in")
HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"


def haproxy_available() -> bool:
    """Whether Debian's ``haproxy`` is installed (``apt-get install haproxy``)."""
    return Path(HAPROXY).is_file() and os.access(HAPROXY, os.X_OK)


def free_port(address: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def render_config(address: str, port: int, backends: list[tuple[str, int]]) -> str:
    """The HAProxy configuration: ``deploy/haproxy.cfg.in`` with the proxy's address and port
    and one ``server`` line per app process (``(host, port)``; named ``app1``, ``app2``, …,
    which is also the value of its sticky cookie)."""
    if not backends:
        raise ValueError("backends must name at least one app process")
    lines = [
        f"    server app{i} {host}:{app_port} check inter 2s fall 3 rise 2 cookie app{i}"
        for i, (host, app_port) in enumerate(backends, start=1)
    ]
    text = TEMPLATE.read_text()
    for name, value in (("@ADDRESS@", address), ("@PORT@", str(port))):
        text = text.replace(name, value)
    return text.replace("@SERVERS@", "\n".join(lines))


def _wait_healthy(url: str, proc: subprocess.Popen, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with status {proc.returncode} while starting")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.read() == b"ok":
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"{what} did not answer {url}/_stcore/health within {timeout:.0f} s")


def _wait_port(port: int, proc: subprocess.Popen, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with status {proc.returncode} while starting")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"{what} did not listen on port {port} within {timeout:.0f} s")


@dataclass
class Layout:
    """A running layout: the proxy's ``url`` and every process behind it."""

    url: str
    run_dir: Path
    apps: list[subprocess.Popen] = field(default_factory=list)
    app_urls: list[str] = field(default_factory=list)
    proxy: subprocess.Popen | None = None
    dask: list[subprocess.Popen] = field(default_factory=list)
    scheduler: str = ""

    @property
    def app_pids(self) -> list[int]:
        return [p.pid for p in self.apps]

    def processes(self) -> dict[str, subprocess.Popen]:
        named = {f"app{i}": p for i, p in enumerate(self.apps, start=1)}
        named.update({f"dask{i}": p for i, p in enumerate(self.dask)})
        if self.proxy is not None:
            named["haproxy"] = self.proxy
        return named


def _start(
    stack: ExitStack, command: list[str], env: dict[str, str], log: Path
) -> subprocess.Popen:
    out = stack.enter_context(open(log, "ab"))
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)

    def stop() -> None:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:  # pragma: no cover - a stuck process
                proc.kill()
                proc.wait()

    stack.callback(stop)
    return proc


@contextmanager
def class_server(
    processes: int = 2,
    *,
    port: int | None = None,
    address: str = "127.0.0.1",
    run_dir: str | Path | None = None,
    dask_workers: int = 0,
    timeout: float = 90.0,
    env: dict[str, str] | None = None,
) -> Iterator[Layout]:
    """Start ``processes`` app processes behind HAProxy (see the module doc); stop all on exit.

    Parameters
    ----------
    processes : int
        App processes (≈ the machine's cores).
    port, address : int, str
        Where the proxy listens (default: a free port of 127.0.0.1).
    run_dir : str or Path, optional
        Logs, configuration and the result store; default a temporary directory, removed
        on exit.
    dask_workers : int
        0: no Dask; N: a local scheduler and N one-thread workers for the heavy work.
    timeout : float
        Seconds each process may take to start.
    env : dict, optional
        Extra environment of the app processes.
    """
    if not 1 <= processes <= 64:
        raise ValueError(f"processes must be between 1 and 64; got {processes}")
    if not 0 <= dask_workers <= 64:
        raise ValueError(f"dask_workers must be between 0 and 64; got {dask_workers}")
    if not haproxy_available():
        raise RuntimeError(
            f"HAProxy is not installed ({HAPROXY}): apt-get install haproxy "
            "(Debian's package; the proxy in front of the app processes)"
        )
    with ExitStack() as stack:
        if run_dir is None:
            run_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="cape-class-"))
        directory = Path(run_dir)
        directory.mkdir(parents=True, exist_ok=True)
        local = "127.0.0.1" if address == "0.0.0.0" else address  # this machine's way in
        port = port or free_port(local)
        layout = Layout(f"http://{local}:{port}", directory)
        app_env = {
            **os.environ,
            "OPENBLAS_NUM_THREADS": "1",
            "STREAMLIT_SERVER_HEADLESS": "true",
            "STREAMLIT_SERVER_FILE_WATCHER_TYPE": "none",
            # one secret for all: a cookie signed by one process is valid on the others
            "STREAMLIT_SERVER_COOKIE_SECRET": secrets.token_hex(32),
            "CAPE_RESULT_STORE": str(directory / "store"),
            # the uploads' server-wide bound (serving/uploads.py) holds for the whole layout
            SERVER_ENV: os.environ.get(
                SERVER_ENV, str(max(DEFAULT_SESSION_MB, DEFAULT_SERVER_MB // processes))
            ),
            **(env or {}),
        }
        if dask_workers:
            scheduler_port = free_port()
            layout.scheduler = f"tcp://127.0.0.1:{scheduler_port}"
            dask_env = {**app_env, "PYTHONPATH": str(ROOT)}  # the workers import dpcore
            layout.dask.append(
                _start(
                    stack,
                    [
                        sys.executable,
                        "-m",
                        "distributed.cli.dask_scheduler",
                        "--host",
                        "127.0.0.1",
                        "--port",
                        str(scheduler_port),
                        "--dashboard-address",
                        "127.0.0.1:0",
                        "--no-show",
                    ],
                    dask_env,
                    directory / "dask-scheduler.log",
                )
            )
            _wait_port(scheduler_port, layout.dask[0], timeout, "the Dask scheduler")
            layout.dask.append(
                _start(
                    stack,
                    [
                        sys.executable,
                        "-m",
                        "distributed.cli.dask_worker",
                        layout.scheduler,
                        "--nworkers",
                        str(dask_workers),
                        "--nthreads",
                        "1",
                        "--host",
                        "127.0.0.1",
                        "--no-dashboard",
                    ],
                    dask_env,
                    directory / "dask-workers.log",
                )
            )
            app_env["CAPE_DASK_SCHEDULER"] = layout.scheduler
        backends = []
        for i in range(1, processes + 1):
            app_port = free_port()
            backends.append(("127.0.0.1", app_port))
            layout.apps.append(
                _start(
                    stack,
                    [
                        sys.executable,
                        "-m",
                        "streamlit",
                        "run",
                        "app.py",
                        "--server.port",
                        str(app_port),
                        "--server.address",
                        "127.0.0.1",
                    ],
                    app_env,
                    directory / f"app{i}.log",
                )
            )
            layout.app_urls.append(f"http://127.0.0.1:{app_port}")
        for i, (url, proc) in enumerate(zip(layout.app_urls, layout.apps, strict=True), 1):
            _wait_healthy(url, proc, timeout, f"app process {i}")
        config = directory / "haproxy.cfg"
        config.write_text(render_config(address, port, backends))
        check = subprocess.run(
            [HAPROXY, "-c", "-q", "-f", str(config)], capture_output=True, text=True, check=False
        )
        if check.returncode != 0:
            raise RuntimeError(f"haproxy rejected {config}: {check.stderr.strip()[:500]}")
        layout.proxy = _start(
            stack, [HAPROXY, "-db", "-f", str(config)], app_env, directory / "haproxy.log"
        )
        _wait_healthy(layout.url, layout.proxy, timeout, "haproxy")
        yield layout


def _lan_address() -> str:
    """This machine's address on its network (for the URL students type), else its name."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # no packet is sent: only picks the outgoing interface
            return s.getsockname()[0]
        except OSError:
            return socket.gethostname()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--processes", type=int, default=os.cpu_count() or 1, help="app processes (≈ cores)"
    )
    parser.add_argument("--port", type=int, default=8501, help="the proxy's port")
    parser.add_argument(
        "--address", default="0.0.0.0", help="the proxy's address (default: every interface)"
    )
    parser.add_argument("--dask-workers", type=int, default=0, help="local Dask workers")
    parser.add_argument("--run-dir", default=None, help="logs, config, result store")
    args = parser.parse_args(argv)

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)  # `kill` stops the processes too, as Ctrl-C does
    try:
        with class_server(
            args.processes,
            port=args.port,
            address=args.address,
            run_dir=args.run_dir,
            dask_workers=args.dask_workers,
        ) as layout:
            host = _lan_address() if args.address == "0.0.0.0" else args.address
            print(
                f"CAPE Lab for a class: http://{host}:{args.port}\n"
                f"  {args.processes} app processes behind HAProxy"
                + (f", Dask at {layout.scheduler}" if layout.scheduler else "")
                + f"\n  logs and result store: {layout.run_dir}\n  Ctrl-C stops everything.",
                flush=True,
            )
            while True:
                for name, proc in layout.processes().items():
                    if proc.poll() is not None:
                        raise SystemExit(
                            f"{name} exited with status {proc.returncode} "
                            f"(log: {layout.run_dir}); stopping the rest"
                        )
                time.sleep(1)
    except KeyboardInterrupt:
        print("stopping…", flush=True)
    except RuntimeError as err:
        raise SystemExit(f"class_server: {err}") from err


if __name__ == "__main__":
    main()
