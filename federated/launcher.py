"""Start a SuperLink, a noise generator and S site SuperNodes on 127.0.0.1; run; stop them.

Every process is started in its own session so that stopping it also stops the ServerApp
and ClientApp processes it spawned; :class:`Federation` stops everything it started on
exit, error or Ctrl-C. With ``warm`` (the default) every Flower program, including those
Flower itself starts, is forked from one interpreter that has imported Flower and the app
(:mod:`federated.forkserver`), which takes most of the CPU out of a loopback run.

Addresses are explicit and use two port numbers whatever the number of sites: the SuperLink
on 127.0.0.1:``port`` (its Fleet, Control and runtime HTTP APIs share it in Flower 1.42),
and each node's runtime API on ``port + 1`` at a loopback address of its own, 127.0.0.2 for
the noise generator and 127.0.0.(2 + s) for site s (Linux routes all of 127/8 to the
loopback device). Elsewhere the nodes take ports ``port + 1``, ``port + 2``, … on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from federated import forkserver, identity, security
from federated.protocol import read_site_csv

FORK_SERVER = "fork server"
HOST = "127.0.0.1"
APP_DIR = Path(__file__).resolve().parent / "app"
ROOT = Path(__file__).resolve().parent.parent
LOOPBACK_ALIASES = sys.platform.startswith("linux")  # 127.0.0.2, 127.0.0.3, … work as is
# SuperExecs ask their runtime API for a new task every this many seconds (Flower: 1 s).
TASK_POLL = "0.5"
# SuperNodes ask the SuperLink for messages every this many seconds when idle (Flower: 3 s,
# fixed; the fork server shortens it, federated.forkserver._shorten_supernode_poll).
SUPERNODE_POLL = "0.5"


def flower_bin(name: str) -> str:
    """The Flower executable next to this Python, else on PATH."""
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if not found:
        raise FileNotFoundError(f"{name} not found: pip install .[federated]")
    return found


def demo_data(directory: Path, sites: int, *, dim: int = 4, seed: int = 0) -> list[Path]:
    """Unequal demo sites: N_s = 150 + 100 s rows of norm ≤ 1, one CSV per site.

    Rows are x = Lz with a fixed low-rank-ish L (so PCA has something to find), divided by the
    largest row norm of the whole pool (the preprocessing of Sec. 6.1).
    """
    rng = np.random.default_rng(seed)
    mix = rng.standard_normal((dim, dim)) * np.linspace(1.0, 0.2, dim)
    parts = [rng.standard_normal((150 + 100 * (s + 1), dim)) @ mix.T for s in range(sites)]
    scale = max(float(np.linalg.norm(p, axis=1).max()) for p in parts)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for s, part in enumerate(parts):
        path = directory / f"site{s + 1}.csv"
        np.savetxt(path, part / scale, delimiter=",", fmt="%.17g")
        paths.append(path)
    return paths


def node_addresses(port: int, sites: int) -> list[tuple[str, int]]:
    """Where the SuperLink (first) and every node's runtime API listen: port on 127.0.0.1,
    then port + 1 on 127.0.0.2, 127.0.0.3, … (Linux routes all of 127/8 to the loopback
    device), or ports port + 1, port + 2, … on 127.0.0.1 elsewhere."""
    if LOOPBACK_ALIASES:
        return [(HOST, port)] + [(f"127.0.0.{2 + i}", port + 1) for i in range(sites + 1)]
    return [(HOST, port)] + [(HOST, port + 1 + i) for i in range(sites + 1)]


def check_ports(port: int, sites: int) -> None:
    """Refuse a ``port`` whose addresses (:func:`node_addresses`) are not all free.

    Raises
    ------
    ValueError
        Naming the port range allowed, or the address already in use.
    """
    last = port + (1 if LOOPBACK_ALIASES else 1 + sites)
    if not (1024 <= port and last <= 65535):
        raise ValueError(f"--port must be in [1024, {65535 - (last - port)}]; got {port}")
    for host, number in node_addresses(port, sites):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            # as the servers bind: a port in TIME_WAIT after an earlier run is free to them
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, number))
            except OSError:
                raise ValueError(
                    f"--port {port}: {host}:{number} is in use; choose another port"
                ) from None


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "") + "'"


def key_values(items: dict[str, object]) -> str:
    """Flower's ``--node-config`` / ``--run-config`` syntax: k=v pairs with TOML values."""
    return " ".join(f"{k}={_toml_value(v)}" for k, v in items.items())


@dataclass
class Federation:
    """A loopback federation: SuperLink, noise generator and one SuperNode per CSV."""

    data: Sequence[Path]
    epsilon: Sequence[float]
    delta: Sequence[float]
    seed: int = -1
    port: int = 9091
    workdir: Path | None = None
    allow_test_faults: bool = False
    warm: bool = True
    attached: bool = False  # another process runs this federation (``python -m federated up``)
    secure: bool = False  # TLS, SuperNode authentication, SuperExec secrets (#48)
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)
    killed: set[str] = field(default_factory=set)
    _earlier_servers: set[int] = field(default_factory=set)
    _programs: dict[str, tuple[int, str]] = field(default_factory=dict)  # stand-in → (pid, program)

    def __post_init__(self) -> None:
        n = len(self.data)
        if n < 2:
            raise ValueError(f"data must name at least 2 site CSVs; got {n}")
        if len(self.epsilon) != n or len(self.delta) != n:
            raise ValueError(f"epsilon and delta need one entry per site ({n})")
        if not self.attached:
            check_ports(self.port, n)
        self.workdir = Path(self.workdir or tempfile.mkdtemp(prefix="cape-flower-"))
        self.home = self.workdir / "flwr-home"
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "config.toml").write_text(
            '[superlink]\ndefault = "cape"\n\n[superlink.cape]\n'
            f'address = "{HOST}:{self.port}"\ninsecure = true\n'
        )
        bins = [str(Path(flower_bin("flower-superlink")).parent), os.environ["PATH"]]
        if self.warm:  # the stand-ins first: Flower starts its programs from PATH
            bins.insert(0, str(forkserver.install_shims(self.workdir / "bin")))
        self.env = {
            **os.environ,
            "PATH": os.pathsep.join(bins),  # SuperLink, SuperNodes start flower-superexec …
            "FLWR_HOME": str(self.home),
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "PYTHONUNBUFFERED": "1",
            "FLWR_SUPEREXEC_TASK_POLL_INTERVAL": TASK_POLL,
            forkserver.SOCKET_ENV: str(self.workdir / "forkserver.sock"),
            forkserver.PIDS_ENV: str(self.workdir / "pids"),
            forkserver.POLL_ENV: SUPERNODE_POLL,
        }
        (self.workdir / "pids").mkdir(parents=True, exist_ok=True)
        self.identities = self.workdir / "identities"
        self.manifest = self.workdir / "federation.json"
        if not self.attached:
            self.write_manifest()
            if self.secure:
                self._init_secure()

    UP_FILE = "federation-up.json"

    def announce(self) -> Path:
        """Write what another process needs to submit runs to this running federation
        (:meth:`attach`): its sites' files and promises, seed, port and this pid."""
        up = self._dir / self.UP_FILE
        up.write_text(
            json.dumps(
                {
                    "data": [str(Path(p).resolve()) for p in self.data],
                    "epsilon": list(self.epsilon),
                    "delta": list(self.delta),
                    "seed": self.seed,
                    "port": self.port,
                    "pid": os.getpid(),
                }
            )
        )
        return up

    def announced_pid(self) -> int:
        """The pid of the process that keeps this federation up (:meth:`announce`)."""
        return int(json.loads((self._dir / self.UP_FILE).read_text())["pid"])

    def check_up(self) -> None:
        """RuntimeError if a process of a running federation has ended (``up`` watches)."""
        self._check_alive()

    @classmethod
    def attach(cls, workdir: Path) -> Federation:
        """The federation ``python -m federated up`` keeps running in ``workdir``, to submit
        runs to (it starts nothing; its processes belong to the ``up`` command).

        Raises
        ------
        ValueError
            If no federation is up there (no announcement, or its process is gone).
        """
        up = Path(workdir) / cls.UP_FILE
        try:
            info = json.loads(up.read_text())
        except (OSError, ValueError):
            raise ValueError(f"no federation is up in {workdir} (start one with `up`)") from None
        if not _alive(int(info["pid"])):
            raise ValueError(f"the federation in {workdir} is down (its process has ended)")
        return cls(
            [Path(p) for p in info["data"]],
            info["epsilon"],
            info["delta"],
            seed=int(info["seed"]),
            port=int(info["port"]),
            workdir=Path(workdir),
            attached=True,
        )

    def identity(self, index: int) -> Path:
        """The identity key file of node ``index`` (0: the noise generator, s: site s)."""
        return self.identities / ("noise.key" if index == 0 else f"site{index}.key")

    def write_manifest(self) -> Path:
        """Make the parties' identity keys (once) and the manifest they all pin: every
        site's N_s (rows of its CSV now), ε_s and δ_s. Call again after changing a CSV."""
        self.identities.mkdir(parents=True, exist_ok=True)
        for index in range(len(self.data) + 1):
            if not self.identity(index).exists():
                identity.new_identity(self.identity(index))
        sites = []
        for s, path in enumerate(self.data):
            try:
                n = int(read_site_csv(path).shape[0])
            except ValueError:  # data a site will refuse: count its lines
                n = sum(1 for line in Path(path).read_text().splitlines() if line.strip())
            public = identity.read_public(f"{self.identity(s + 1)}.pub")
            sites.append(
                identity.Site(s + 1, public, n, float(self.epsilon[s]), float(self.delta[s]))
            )
        noise = identity.read_public(f"{self.identity(0)}.pub")
        identity.Manifest(noise, tuple(sites)).write(self.manifest)
        return self.manifest

    @property
    def _dir(self) -> Path:
        """``workdir``, which ``__post_init__`` set (to a temp dir when it was None)."""
        if self.workdir is None:
            raise RuntimeError("workdir is None: the federation has no working directory")
        return self.workdir

    def _bin(self, name: str) -> str:
        """The command to start: its stand-in when warm, else its executable."""
        return str(self._dir / "bin" / name) if self.warm else flower_bin(name)

    # -- processes --------------------------------------------------------------------------

    def _start(self, name: str, args: list[str]) -> None:
        log = (self._dir / f"{name.replace(' ', '-')}.log").open("w")
        self.procs[name] = subprocess.Popen(
            args,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=self.env,
            start_new_session=True,
            preexec_fn=forkserver.die_with_parent,  # a launcher killed with -9 leaves nothing
        )
        if not self.attached:  # for the fault tests
            parties = {n: proc.pid for n, proc in self.procs.items()}
            (self._dir / "parties.json").write_text(json.dumps(parties))

    def node_address(self, index: int) -> tuple[str, int]:
        """The runtime API address of node ``index`` (0: the noise generator, s: site s)."""
        return node_addresses(self.port, len(self.data))[1 + index]

    def _node(self, name: str, index: int, config: dict[str, object]) -> None:
        host, port = self.node_address(index)
        config = {**config, "identity": str(self.identity(index)), "manifest": str(self.manifest)}
        self._start(
            name,
            [
                self._bin("flower-supernode"),
                *self._node_security(index),
                "--superlink",
                f"{HOST}:{self.port}",
                "--host",
                host,
                "--port",
                str(port),
                "--node-config",
                key_values(config),
            ],
        )
        self._node_superexec(name, index)

    # -- the secured mode (#48; federated.security) ------------------------------------------

    def _init_secure(self) -> None:
        """Make (once) the CA, the SuperLink's certificate, the nodes' keys and the SuperExec
        secrets under ``workdir/secure``; point ``flwr`` at the SuperLink over TLS."""
        out = self._dir / "secure"
        self.material = security.Material(out, len(self.data))
        if not (out / "ca" / security.CA_KEY).exists():
            self.material, _ = security.make_material(out, [], len(self.data))
        ca = self.material.party("analyst") / security.CA_CERT
        (self.home / "config.toml").write_text(security.flower_config(f"{HOST}:{self.port}", ca))

    @staticmethod
    def node_name(index: int) -> str:
        """The secured material's name of node ``index``: ``noise``, ``site1``, …"""
        return "noise" if index == 0 else f"site{index}"

    def _link_security(self) -> list[str]:
        return security.superlink_args(self.material) if self.secure else ["--insecure"]

    def _node_security(self, index: int) -> list[str]:
        if not self.secure:
            return ["--insecure"]
        return security.supernode_args(self.material, self.node_name(index))

    def _node_superexec(self, name: str, index: int) -> None:
        """Secured: the node's own SuperExec (Flower starts none with ``--isolation process``)."""
        if self.secure:
            host, port = self.node_address(index)
            args = security.superexec_args(self.material, self.node_name(index), f"{host}:{port}")
            self._start(f"superexec {name}", [self._bin("flower-superexec"), *args])

    def _after_superlink(self, deadline: float) -> None:
        """Secured: once the SuperLink listens, register every node's public key through its
        Control API (``flwr supernode register``) and start the ServerApp's SuperExec."""
        if not self.secure:
            return
        log = self._dir / "superlink.log"
        self._wait_for(lambda: "Uvicorn running" in log.read_text(errors="replace"), deadline,
                       "the SuperLink")  # fmt: skip
        for index in range(len(self.data) + 1):
            self.register(self.material.node_public(self.node_name(index)), deadline)
        args = security.superexec_args(self.material, "aggregator", f"{HOST}:{self.port}")
        self._start("superexec aggregator", [self._bin("flower-superexec"), *args])

    def register(self, public_key: Path, deadline: float) -> str:
        """``flwr supernode register`` one public key with the SuperLink; its output."""
        done = subprocess.run(
            [self._bin("flwr"), "supernode", "register", str(public_key), "cape"],
            env=self.env, capture_output=True, text=True,
            timeout=max(1.0, deadline - time.monotonic()),
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"registering {public_key.name} failed: {done.stdout}{done.stderr}")
        return done.stdout

    def start(self, deadline: float) -> None:
        """Start every process and wait (until ``deadline``) for the SuperLink to listen."""
        if self.warm:
            sock = Path(self.env[forkserver.SOCKET_ENV])
            sock.unlink(missing_ok=True)
            self._start(FORK_SERVER, [sys.executable, "-m", "federated.forkserver", str(sock)])
            self._wait_for(lambda: sock.exists(), deadline, "the fork server")
        self._start(
            "superlink",
            [
                self._bin("flower-superlink"),
                *self._link_security(),
                "--host",
                HOST,
                "--port",
                str(self.port),
                "--disable-runtime-dependency-installation",
            ],
        )
        self._after_superlink(deadline)
        common = {"seed": self.seed, "allow-test-faults": self.allow_test_faults}
        self._node("noise generator", 0, {"role": "noise", **common})
        for s, path in enumerate(self.data):
            config = {"role": "site", "site": s + 1, "data": str(Path(path).resolve())}
            config.update(epsilon=float(self.epsilon[s]), delta=float(self.delta[s]), **common)
            self._node(f"site {s + 1}", s + 1, config)
        log = self._dir / "superlink.log"
        listening = lambda: "Uvicorn running" in log.read_text(errors="replace")  # noqa: E731
        self._wait_for(listening, deadline, "the SuperLink")

    def _wait_for(self, ready, deadline: float, what: str) -> None:
        while not ready():
            self._check_alive()
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what} did not start in time")
            time.sleep(0.05)

    def _check_alive(self, during_run: bool = False) -> None:
        for name, proc in self.procs.items():
            expected = name.startswith("flwr run") or name in self.killed
            if during_run:  # a node's death is a fault the protocol handles
                expected = expected or name not in ("superlink", FORK_SERVER)
            if proc.poll() is not None and not expected:
                why = "; the run cannot finish, nothing was released" if during_run else ""
                raise RuntimeError(
                    f"the {name} exited with code {proc.returncode}{why} (see its log in "
                    f"{self.workdir})"
                )

    def _serverapps(self) -> set[int]:
        """The real pids of the ServerApps the fork server has run so far.

        Every stand-in (one per ClientApp and message) writes its file once, so each file is
        read once (:attr:`_programs`): ``wait`` asks every 50 ms, and a federation that stays
        up gathers thousands of them."""
        for entry in (self._dir / "pids").iterdir():
            if entry.name in self._programs or entry.name.startswith("."):
                continue
            try:
                pid, program = entry.read_text().split()
            except (OSError, ValueError):  # not written yet: read again next time
                continue
            self._programs[entry.name] = (int(pid), program)
        return {pid for pid, program in self._programs.values() if program == "flwr-serverapp"}

    def real_pid(self, name: str) -> int:
        """The pid of party ``name``'s real program (behind its stand-in when warm)."""
        pid = self.procs[name].pid
        real = self._dir / "pids" / str(pid)
        return int(real.read_text().split()[0]) if real.exists() else pid

    def kill(self, name: str) -> None:
        """Kill one party's process group at once (SIGKILL): a crash, for the fault tests."""
        self.killed.add(name)
        for pid in descendants(self.procs[name].pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        _signal_group(self.procs[name].pid, signal.SIGKILL)

    def pause(self, name: str, resume: bool = False) -> None:
        """Stop one party's real program (SIGSTOP), or let it go on (``resume``: SIGCONT):
        a slow party — a GC pause, a network stall — for the fault tests."""
        _signal_group(self.real_pid(name), signal.SIGCONT if resume else signal.SIGSTOP)

    def stop(self) -> None:
        """Stop every process this federation started and their descendants.

        SIGTERM to each process group (the SuperLink then stops its SuperExec), then SIGKILL
        after 5 s to the groups and to every descendant seen before (Flower starts some
        detached, in sessions of their own).
        """
        family = {d for proc in self.procs.values() for d in descendants(proc.pid)}
        # the fork server last: stopping it kills at once every program it still runs
        order = sorted(self.procs, key=lambda name: name == FORK_SERVER)
        end = time.monotonic() + 5.0
        for name in order:
            proc = self.procs[name]
            if proc.poll() is None:
                _signal_group(proc.pid, signal.SIGTERM)
            if name == FORK_SERVER:  # the others first had their 5 s to stop
                for other in order[:-1]:
                    _wait(self.procs[other], end)
        for name in order:
            proc = self.procs[name]
            _wait(proc, end)
            _signal_group(proc.pid, signal.SIGKILL)  # also any child still in the group
            proc.wait()
        for pid in family:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def __enter__(self) -> Federation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- one run ----------------------------------------------------------------------------

    def submit(
        self,
        *,
        kind: str,
        design: str,
        k: int = 2,
        timeout: float = 120.0,
        fault: str = "",
        tag: str = "run",
        scheme: str = "helper",
        releases: str = "",
    ) -> tuple[Path, Path]:
        """Submit one run (``flwr run``) in the background; its (output, log) paths.

        ``releases`` (``kind:design:scheme`` items, comma-separated) makes several releases
        in one run, sharing its rounds; empty: the one of ``kind``, ``design``, ``scheme``."""
        output = self._dir / f"{tag}-result.json"
        log = self._dir / f"{tag}-log.jsonl"
        output.unlink(missing_ok=True)
        self._earlier_servers = self._serverapps()  # the ServerApps of earlier runs ended
        config = {
            "kind": kind,
            "design": design,
            "sites": len(self.data),
            "seed": self.seed,
            "k": k,
            "timeout": float(timeout),
            "log": str(log),
            "output": str(output),
            "test-fault": fault,
            "scheme": scheme,
            "releases": releases,
        }
        run = [self._bin("flwr"), "run", str(APP_DIR), "cape", "--run-config", key_values(config)]
        self._start(f"flwr run {tag}", run)
        return output, log

    def wait(self, output: Path, deadline: float, tag: str = "run") -> dict:
        """The run's outcome once the ServerApp has written it.

        A site or the noise generator may die meanwhile: that is the protocol's to handle
        (a dropout, a refusal). The SuperLink's, the fork server's or the ServerApp's death
        ends the wait at once with a RuntimeError: nothing can be released any more."""
        servers: set[int] = set()
        while not output.exists():
            self._check_alive(during_run=True)
            if self.attached and not _alive(self.announced_pid()):
                raise RuntimeError(f"the federation in {self.workdir} went down mid-run")
            servers |= self._serverapps() - self._earlier_servers  # this run's
            gone = [pid for pid in servers if not _alive(pid)]
            if gone and not output.exists():
                raise RuntimeError(
                    f"the ServerApp (the aggregator, pid {gone[0]}) died before it wrote an "
                    f"outcome; nothing was released (logs in {self.workdir})"
                )
            run = self.procs.get(f"flwr run {tag}")
            if run is not None and run.poll() not in (None, 0):
                raise RuntimeError(f"flwr run failed (see {self.workdir}/flwr-run-{tag}.log)")
            if time.monotonic() > deadline:
                raise TimeoutError(f"no result within the time limit (logs in {self.workdir})")
            time.sleep(0.05)
        return json.loads(output.read_text())


def _wait(proc: subprocess.Popen, end: float) -> None:
    try:
        proc.wait(timeout=max(0.1, end - time.monotonic()))
    except subprocess.TimeoutExpired:
        pass


def _alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (not a zombie)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return not sys.platform.startswith("linux")
    return state != "Z"


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def descendants(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (Linux /proc; empty elsewhere)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


def _sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def run_once(
    data: Sequence[Path],
    *,
    kind: str,
    design: str,
    epsilon: Sequence[float],
    delta: Sequence[float],
    seed: int,
    k: int = 2,
    port: int = 9091,
    limit: float = 300.0,
    fault: str = "",
    workdir: Path | None = None,
    scheme: str = "helper",
) -> tuple[dict, Path]:
    """Start a federation, run once, stop everything; the outcome and the run log's path.

    ``limit`` bounds the whole (start, run, stop) in seconds; TimeoutError past it. The
    outcome's ``phases`` are the wall seconds of each: ``start`` (the fork server, SuperLink
    and nodes until the SuperLink listens), ``run`` (``flwr run`` until the ServerApp wrote
    the outcome) and ``stop``.
    """
    begin = time.monotonic()
    deadline = begin + limit
    previous = signal.signal(signal.SIGTERM, _sigterm)
    previous_hup = signal.signal(signal.SIGHUP, _sigterm)  # a closed terminal: stop all too
    fed = Federation(
        data, epsilon, delta, seed=seed, port=port, workdir=workdir, allow_test_faults=bool(fault)
    )
    phases = {}
    try:
        with fed:
            fed.start(deadline)
            phases["start"] = time.monotonic() - begin
            output, log = fed.submit(
                kind=kind,
                design=design,
                k=k,
                # a round waits half of what is left, so one silent party still fits
                timeout=min(120.0, (deadline - time.monotonic()) / 2),
                fault=fault,
                scheme=scheme,
            )
            result = fed.wait(output, deadline)
            phases["run"] = time.monotonic() - begin - phases["start"]
        phases["stop"] = time.monotonic() - begin - phases["start"] - phases["run"]
        return {**result, "phases": phases}, log
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGHUP, previous_hup)
