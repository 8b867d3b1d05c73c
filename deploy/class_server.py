"""Serve the app to a lecture hall: N Streamlit processes behind HAProxy, one command.

Usage (``scripts/class_server.sh`` sets up ``.venv`` first, then runs this)::

    bash scripts/class_server.sh                      # one process per core, port 8501
    bash scripts/class_server.sh --processes 2 --port 8501
    bash scripts/class_server.sh --dask-workers 1     # heavy work on a local Dask worker

What it starts, and stops again on Ctrl-C, on SIGTERM, or when HAProxy itself dies:

- **N app processes** (``streamlit run app.py`` inside :mod:`deploy.app_process`, which adds
  a liveness probe answered from its own thread on a second port) on free ports of
  127.0.0.1, with one shared
  cookie secret (``server.cookieSecret``: a signed cookie one process sets is valid on all;
  the XSRF token itself is checked without it, against the browser's own cookie), the file
  watcher off (a lecture server does not reload code mid-lesson), one shared disk store of
  heavy results (``CAPE_RESULT_STORE``, :mod:`serving.store`), and the uploads' server-wide
  bound split between them (``CAPE_UPLOAD_SERVER_MB``: 600 MB for the layout by default).
- **HAProxy** (Debian's ``haproxy`` package) on ``--address:--port``, configured from
  ``deploy/haproxy.cfg.in``: a browser's first request goes to the process with the fewest
  open connections, and a cookie (``CAPE_PROCESS``) keeps the browser's websocket, uploads
  and media on that process (sticky sessions); health checks on each process's probe every
  second, 2 s to answer, two misses take a process out and close its students' websockets
  (``on-marked-down shutdown-sessions``: their tabs reconnect to another process).
- Optionally (``--dask-workers N``) **a Dask scheduler and N one-thread workers** on
  127.0.0.1, named to every app process by ``CAPE_DASK_SCHEDULER`` (:mod:`dpcore.cluster`):
  identical requests from several processes then compute once, on the workers.

A supervisor thread starts again every process that dies — an app process ended by the OOM
killer, a Dask process, HAProxy itself — on its port, at most :data:`MAX_RESTARTS` times in
:data:`RESTART_WINDOW` seconds each; a second thread asks each app process's probe every
:data:`WATCH_SECONDS` and an app process that stays unanswered for :data:`UNHEALTHY_SECONDS`
(stopped, frozen) is killed and started again, within the same budget. Every event is one
line to the operator (stderr) at the moment it happens: a process not answering, answering
again, started again, or left down because its budget is spent (until its window passes).
Students of a process that is down or hung carry on on the others meanwhile (HAProxy's health
checks, ``shutdown-sessions`` and ``option redispatch``; their settings are in the URL); a
restarted HAProxy's students reconnect by themselves. Only the operator stops the layout.

Logs, the generated configuration and the store go to ``--run-dir`` (default: a new
temporary directory, removed on exit).
"""

from __future__ import annotations

import argparse
import collections
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from serving.uploads import DEFAULT_BROWSER_MB, DEFAULT_SERVER_MB, SERVER_ENV

ROOT = Path(__file__).resolve().parents[1]
LECTURER_ENV = "CAPE_LECTURER_KEY"  # ui/lecturer.py
TEMPLATE = Path(__file__).with_name("haproxy.cfg.in")
HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"
MAX_RESTARTS = 5  # a process that died is started again at most this often …
RESTART_WINDOW = 300.0  # … within this many seconds; past that it waits for the window
WATCH_SECONDS = 0.5  # how often the supervisor looks at the processes
PROBE_SECONDS = 2.0  # the supervisor's wait for a probe's answer (HAProxy's `timeout check`)
UNHEALTHY_SECONDS = 20.0  # a live app process unanswered this long is killed, started again


def lecturer_key(env: dict[str, str] | None = None) -> str:
    """The layout's lecturer's key (ui/lecturer.py), the same for every app process: ``env``'s
    or the environment's ``CAPE_LECTURER_KEY``, else a new one."""
    return (
        (env or {}).get(LECTURER_ENV) or os.environ.get(LECTURER_ENV) or secrets.token_urlsafe(12)
    )


def banner(layout: Layout, host: str, port: int, processes: int) -> str:
    """What the operator reads when the layout is up: the address, the processes, the logs,
    and the lecturer's key with the link that opens the lecturer's page."""
    return (
        f"CAPE Lab for a class: http://{host}:{port}\n"
        f"  {processes} app processes behind HAProxy"
        + (f", Dask at {layout.scheduler}" if layout.scheduler else "")
        + f"\n  logs and result store: {layout.run_dir}\n  Ctrl-C stops everything."
        + f"\n  lecturer's key: {layout.lecturer_key} (the lecturer opens "
        f"http://{host}:{port}/classroom?lecturer={layout.lecturer_key}; students must not "
        "see it)"
    )


def haproxy_available() -> bool:
    """Whether Debian's ``haproxy`` is installed (``apt-get install haproxy``)."""
    return Path(HAPROXY).is_file() and os.access(HAPROXY, os.X_OK)


def free_port(address: str = "127.0.0.1", within: Iterable[int] | None = None) -> int:
    """A port of ``address`` nobody listens on: any (the system's choice), or the first
    free one of ``within``.

    The probe binds as the servers will (``SO_REUSEADDR``, as Tornado and HAProxy do), so a
    port whose last connections linger in TIME_WAIT after a stopped process counts as free:
    the next server can bind it, and a layout started soon after another has its ports.
    """
    for candidate in within if within is not None else [0]:
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind((address, candidate))
            except OSError:
                continue
            return s.getsockname()[1]
    raise RuntimeError(f"no free port of {address} in {within}")


def render_config(address: str, port: int, backends: list[tuple[int | str, ...]]) -> str:
    """The HAProxy configuration: ``deploy/haproxy.cfg.in`` with the proxy's address and port
    and one ``server`` line per app process (``(host, port)`` or ``(host, port, probe_port)``;
    named ``app1``, ``app2``, …, which is also the value of its sticky cookie)."""
    if not backends:
        raise ValueError("backends must name at least one app process")
    lines = []
    for i, (host, app_port, *probe) in enumerate(backends, start=1):
        check = f"check port {probe[0]}" if probe else "check"  # the liveness probe's port
        lines.append(f"    server app{i} {host}:{app_port} {check} cookie app{i}")
    text = TEMPLATE.read_text()
    for name, value in (("@ADDRESS@", address), ("@PORT@", str(port))):
        text = text.replace(name, value)
    return text.replace("@SERVERS@", "\n".join(lines))


def _exited(what: str, service: Service) -> RuntimeError:
    """The error for a process that exited while starting, with the end of its log (HAProxy's
    "cannot bind socket", a Streamlit traceback): the operator's first question."""
    tail = ""
    if service.log.exists():
        lines = service.log.read_text(errors="replace").strip().splitlines()[-5:]
        tail = ": " + " | ".join(line.strip() for line in lines)[:800]
    status = service.proc.returncode
    return RuntimeError(f"{what} exited with status {status} while starting{tail}")


def _wait_healthy(url: str, service: Service, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if service.proc.poll() is not None:
            raise _exited(what, service)
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.read() == b"ok":
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"{what} did not answer {url}/_stcore/health within {timeout:.0f} s")


def _wait_port(port: int, service: Service, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if service.proc.poll() is not None:
            raise _exited(what, service)
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"{what} did not listen on port {port} within {timeout:.0f} s")


def _answers(url: str, timeout: float) -> tuple[bool, str]:
    """Whether ``url`` answers 200 within ``timeout`` seconds, and if not, why not."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            return True, answer.read(200).decode(errors="replace")
    except urllib.error.HTTPError as err:
        return False, f"answered {err.code} {err.read(200).decode(errors='replace')}"
    except (OSError, ValueError) as err:  # refused, reset, timed out
        reason = getattr(err, "reason", err)
        if isinstance(reason, TimeoutError):
            return False, f"no answer within {timeout:g} s"
        return False, str(reason)


@dataclass
class Service:
    """One supervised process: how to start it, the times it was started again, and (an app
    process) its liveness probe's URL and what the supervisor's probe saw."""

    name: str
    command: list[str]
    env: dict[str, str]
    log: Path
    proc: subprocess.Popen
    restarts: collections.deque[float] = field(default_factory=collections.deque)
    health_url: str = ""  # the probe (deploy/app_process.py); "" = not probed
    start_grace: float = 90.0  # seconds a (re)started process may take to answer
    started: float = field(default_factory=time.monotonic)
    unhealthy_since: float | None = None  # the first unanswered probe of this episode
    seen_healthy: bool = False  # since this process started
    announced: bool = False  # the operator was told of this episode
    left_down: bool = False  # the operator was told its budget is spent

    @classmethod
    def start(
        cls, name: str, command: list[str], env: dict[str, str], log: Path, **kw: object
    ) -> Service:
        return cls(name, command, env, log, _popen(command, env, log), **kw)  # type: ignore[arg-type]

    def unhealthy_for(self, now: float) -> float:
        """Seconds this running process has failed its probe (0 while it may still be
        starting: not yet answered once, within :attr:`start_grace`)."""
        since = self.unhealthy_since
        if since is None or (not self.seen_healthy and now - self.started < self.start_grace):
            return 0.0
        return now - since

    def kill(self) -> None:
        """SIGKILL (a stopped process too) and wait for it."""
        if self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover - uninterruptible sleep
                pass

    def may_restart(self, now: float) -> bool:
        """Whether a restart now stays within :data:`MAX_RESTARTS` per :data:`RESTART_WINDOW`."""
        while self.restarts and now - self.restarts[0] >= RESTART_WINDOW:
            self.restarts.popleft()
        return len(self.restarts) < MAX_RESTARTS

    def restart(self, now: float) -> None:
        self.restarts.append(now)
        self.proc = _popen(self.command, self.env, self.log)
        self.started, self.unhealthy_since = time.monotonic(), None
        self.seen_healthy = self.announced = self.left_down = False

    def stop(self) -> None:
        proc = self.proc
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:  # pragma: no cover - a stuck process
                proc.kill()
                proc.wait()


def _popen(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    with open(log, "ab") as out:  # the child keeps its own descriptor
        return subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


def _to_operator(line: str) -> None:
    print(f"class_server: {line}", file=sys.stderr, flush=True)


@dataclass
class Layout:
    """A running layout: the proxy's ``url`` and every process behind it.

    ``events`` lists the supervisor's lines (a process not answering or answering again,
    started again, left down), each also reported at the moment it happens.
    """

    url: str
    run_dir: Path
    services: dict[str, Service] = field(default_factory=dict)
    app_urls: list[str] = field(default_factory=list)
    scheduler: str = ""
    lecturer_key: str = ""  # CAPE_LECTURER_KEY of every app process (ui/lecturer.py)
    events: list[str] = field(default_factory=list)

    @property
    def apps(self) -> list[subprocess.Popen]:
        """The app processes now running (a restarted one is its new process)."""
        return [s.proc for n, s in self.services.items() if n.startswith("app")]

    @property
    def app_pids(self) -> list[int]:
        return [p.pid for p in self.apps]

    @property
    def proxy(self) -> subprocess.Popen | None:
        service = self.services.get("haproxy")
        return None if service is None else service.proc

    @property
    def dask(self) -> list[subprocess.Popen]:
        return [s.proc for n, s in self.services.items() if n.startswith("dask")]

    def processes(self) -> dict[str, subprocess.Popen]:
        return {name: service.proc for name, service in self.services.items()}

    def _say(self, line: str, report: Callable[[str], None]) -> None:
        self.events.append(line)
        report(line)

    def check(self, report: Callable[[str], None] = _to_operator) -> None:
        """One look at every process: a dead one, or a live app process whose probe has not
        answered for :data:`UNHEALTHY_SECONDS` (killed first), is started again within its
        restart budget; past the budget it is left down until its window passes. HAProxy
        too: its death is not the end of the class."""
        now = time.monotonic()
        for name, service in self.services.items():
            status = service.proc.poll()
            if status is None:
                if service.unhealthy_for(now) < UNHEALTHY_SECONDS:
                    continue
                pid = service.proc.pid
                service.kill()
                cause = (
                    f"{name} (pid {pid}) has not answered its health check for "
                    f"{now - (service.unhealthy_since or now):.0f} s (hung or stopped); killed"
                )
            else:
                cause = f"{name} exited with status {status}"
            if not service.may_restart(now):
                if not service.left_down:  # said once, at the moment the budget is spent
                    service.left_down = True
                    wait = RESTART_WINDOW - (now - service.restarts[0])
                    self._say(
                        f"{cause}; its restart budget is spent ({MAX_RESTARTS} restarts in "
                        f"{RESTART_WINDOW:.0f} s): left down, started again in {wait:.0f} s"
                        + (
                            "; meanwhile no student can reach the class"
                            if name == "haproxy"
                            else ""
                        )
                        + f" (log: {service.log})",
                        report,
                    )
                continue
            service.restart(now)
            line = (
                f"{cause}; started again as pid {service.proc.pid} "
                f"(restart {len(service.restarts)} of at most {MAX_RESTARTS} in "
                f"{RESTART_WINDOW:.0f} s; log: {service.log})"
            )
            if not service.may_restart(now):
                line += f"; if it fails again it stays down until the {RESTART_WINDOW:.0f} s pass"
            self._say(line, report)

    def probe(self, report: Callable[[str], None] = _to_operator) -> None:
        """Ask every running app process's probe (:data:`PROBE_SECONDS` to answer) and note
        when it stopped answering; the first miss after it had answered, and its answering
        again, are one line each."""
        for name, service in list(self.services.items()):
            proc = service.proc
            if not service.health_url or proc.poll() is not None:
                continue
            asked = time.monotonic()
            ok, why = _answers(service.health_url, PROBE_SECONDS)
            if proc is not service.proc or (not ok and proc.poll() is not None):
                continue  # started again meanwhile, or died: for check(), not a hang
            if ok:
                if service.announced:
                    silent = time.monotonic() - (service.unhealthy_since or asked)
                    self._say(f"{name} answers its health check again after {silent:.0f} s", report)
                service.unhealthy_since, service.seen_healthy = None, True
                service.announced = False
                continue
            if service.unhealthy_since is None:
                service.unhealthy_since = asked
            if service.seen_healthy and not service.announced:
                service.announced = True
                self._say(
                    f"{name} (pid {proc.pid}) does not answer its health check ({why}): the "
                    f"proxy moves its students to the other processes; it is killed and "
                    f"started again if this lasts {UNHEALTHY_SECONDS:.0f} s",
                    report,
                )

    def supervise(self, stop: threading.Event, report: Callable[[str], None]) -> None:
        """:meth:`check` every :data:`WATCH_SECONDS` until ``stop``; :meth:`probe` as often on
        a thread of its own (a hung process's probe takes :data:`PROBE_SECONDS`)."""

        def probing() -> None:
            while not stop.wait(WATCH_SECONDS):
                self.probe(report)

        prober = threading.Thread(target=probing, name="class-server-probe", daemon=True)
        prober.start()
        while not stop.wait(WATCH_SECONDS):
            self.check(report)
        prober.join(timeout=2 * PROBE_SECONDS)


def _start(
    stack: ExitStack,
    layout: Layout,
    name: str,
    command: list[str],
    env: dict[str, str],
    **kw: object,
) -> Service:
    service = Service.start(name, command, env, layout.run_dir / f"{name}.log", **kw)
    layout.services[name] = service
    stack.callback(service.stop)
    return service


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
    ports: range | None = None,
    report: Callable[[str], None] = _to_operator,
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
    ports : range, optional
        Where the app processes and the Dask scheduler listen (the first free ports of the
        range; default any free ports of 127.0.0.1), for a machine whose users share ports.
    report : callable, optional
        Receives the supervisor's lines (a process not answering, answering again, started
        again, or left down); default stderr.

    While the block runs, a supervisor thread starts again any process that dies, HAProxy
    included, and any app process that stays unhealthy (:meth:`Layout.check`,
    :meth:`Layout.probe`, within :data:`MAX_RESTARTS` per :data:`RESTART_WINDOW`).
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
        if port:  # taken: refuse before starting anything (HAProxy would fail last)
            try:
                free_port(local, within=[port])
            except RuntimeError:
                raise RuntimeError(
                    f"port {port} of {local} is in use (another class server, or another "
                    "program): stop it or choose another port"
                ) from None
        port = port or free_port(local)
        given: set[int] = {port}  # handed out, not yet bound: not given twice

        def next_port() -> int:
            chosen = free_port(
                within=None if ports is None else (p for p in ports if p not in given)
            )
            given.add(chosen)
            return chosen

        layout = Layout(f"http://{local}:{port}", directory)
        layout.lecturer_key = lecturer_key(env)  # one for all processes
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
                SERVER_ENV, str(max(DEFAULT_BROWSER_MB, DEFAULT_SERVER_MB // processes))
            ),
            **(env or {}),
            LECTURER_ENV: layout.lecturer_key,
        }
        if dask_workers:
            scheduler_port = next_port()
            layout.scheduler = f"tcp://127.0.0.1:{scheduler_port}"
            dask_env = {**app_env, "PYTHONPATH": str(ROOT)}  # the workers import dpcore
            scheduler = _start(
                stack,
                layout,
                "dask-scheduler",
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
            )
            _wait_port(scheduler_port, scheduler, timeout, "the Dask scheduler")
            _start(
                stack,
                layout,
                "dask-workers",
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
            )
            app_env["CAPE_DASK_SCHEDULER"] = layout.scheduler
        backends: list[tuple[int | str, ...]] = []
        probes = []
        for i in range(1, processes + 1):
            app_port, probe_port = next_port(), next_port()
            backends.append(("127.0.0.1", app_port, probe_port))
            probes.append(f"http://127.0.0.1:{probe_port}")
            _start(
                stack,
                layout,
                f"app{i}",
                [
                    sys.executable,
                    "-m",
                    "deploy.app_process",
                    "--port",
                    str(app_port),
                    "--probe-port",
                    str(probe_port),
                ],
                app_env,
                health_url=f"{probes[-1]}/live",
                start_grace=timeout,
            )
            layout.app_urls.append(f"http://127.0.0.1:{app_port}")
        for i, probe in enumerate(probes, 1):
            # the probe answers "ok" once Streamlit's own health route has answered
            app = layout.services[f"app{i}"]
            _wait_healthy(probe, app, timeout, f"app process {i}")
            app.seen_healthy = True
        config = directory / "haproxy.cfg"
        config.write_text(render_config(address, port, backends))
        check = subprocess.run(
            [HAPROXY, "-c", "-q", "-f", str(config)], capture_output=True, text=True, check=False
        )
        if check.returncode != 0:
            raise RuntimeError(f"haproxy rejected {config}: {check.stderr.strip()[:500]}")
        proxy = _start(stack, layout, "haproxy", [HAPROXY, "-db", "-f", str(config)], app_env)
        _wait_healthy(layout.url, proxy, timeout, "haproxy")
        stop = threading.Event()
        watcher = threading.Thread(
            target=layout.supervise, args=(stop, report), name="class-server", daemon=True
        )
        watcher.start()

        def stop_watching() -> None:  # first on exit: nothing is started again while stopping
            stop.set()
            watcher.join(timeout=10)

        stack.callback(stop_watching)
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
    parser.add_argument(
        "--ports",
        default=None,
        metavar="FIRST:LAST",
        help="ports of 127.0.0.1 for the app processes and the Dask scheduler (default: any free)",
    )
    args = parser.parse_args(argv)
    ports = None
    if args.ports:
        first, _, last = args.ports.partition(":")
        if not (first.isdigit() and last.isdigit() and 0 < int(first) <= int(last) < 65536):
            parser.error(f"--ports must be FIRST:LAST, two port numbers; got {args.ports!r}")
        ports = range(int(first), int(last) + 1)

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
            ports=ports,
        ) as layout:
            host = _lan_address() if args.address == "0.0.0.0" else args.address
            print(banner(layout, host, args.port, args.processes), flush=True)
            while True:  # the supervisor thread starts again what dies or hangs meanwhile
                time.sleep(1)
    except KeyboardInterrupt:
        print("stopping…", flush=True)
    except RuntimeError as err:
        raise SystemExit(f"class_server: {err}") from err


if __name__ == "__main__":
    main()
