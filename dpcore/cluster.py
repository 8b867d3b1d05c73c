"""Scale-out on a Dask cluster: executors for the sweeps, shared results for app servers.

Dask is optional (``requirements-dask.txt``) and imported only here, only when a scheduler is
asked for. Two uses (docs/scale-out.md):

- **Sweeps on a cluster**: :func:`dask_executor` gives ``Client.get_executor()`` for the
  sweeps' ``executor=`` argument (:func:`dpcore.parallel.parallel_map`); ``python -m paper
  --scheduler ADDRESS`` and ``python -m benchmarks --scheduler ADDRESS`` use it.
- **Shared app work**: with ``CAPE_DASK_SCHEDULER`` set, :func:`run` sends a whole request
  (one sweep) to the cluster under a key derived from the request and the core's code, so
  identical requests from several app servers compute once, and a recent result is reused.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import functools
import hashlib
import os
import pickle
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from pathlib import Path
from typing import Any, TypeVar

R = TypeVar("R")

SCHEDULER_ENV = "CAPE_DASK_SCHEDULER"
PORTS_ENV = "CAPE_DASK_PORTS"  # "first:last" for local clusters on a machine with port ranges
CONNECT_SECONDS = 5.0  # an app server waits this long for the scheduler, then computes itself
KEPT_RESULTS = 128  # recent requests whose results this process keeps alive on the cluster


def _client(address: str, timeout: float | None = None) -> Any:
    try:
        from distributed import Client
    except ImportError as err:  # the optional extra is missing
        raise ImportError(
            "a Dask scheduler needs the optional extra: pip install -r requirements-dask.txt"
        ) from err
    options = {} if timeout is None else {"timeout": timeout}
    return Client(address, set_as_default=False, **options)


@contextlib.contextmanager
def dask_executor(address: str) -> Iterator[Executor]:
    """A ``concurrent.futures.Executor`` on the Dask scheduler at ``address``.

    Parameters
    ----------
    address : str
        Scheduler address, e.g. ``"tcp://10.0.0.5:8786"``. Its workers must be able to
        import ``dpcore`` (same code, same environment).

    Yields
    ------
    concurrent.futures.Executor
        ``Client.get_executor()``; the client is closed on exit.
    """
    client = _client(address)
    try:
        yield client.get_executor()
    finally:
        client.close()


def _port_ranges(ports: str | None) -> dict[str, Any]:
    """Ports for a local cluster: ``"first:last"`` (≥ 7 ports) split, else any free ones.

    The scheduler, its HTTP server (health and metrics routes; the dashboard stays off),
    workers and nannies. The workers' own HTTP servers always take a free port of 127.0.0.1
    (Dask has no range for them).
    """
    if not ports:
        http = {"dashboard_address": "127.0.0.1:0"}  # not Dask's default 8787
        return {"scheduler_port": 0, "worker_port": 0, "port": 0, "scheduler_kwargs": http}
    try:
        first, last = (int(p) for p in ports.split(":"))
    except ValueError:
        first = last = -1
    if not (0 < first and first + 6 <= last < 65536):
        raise ValueError(f"ports must be 'first:last' with at least 7 ports; got {ports!r}")
    half = (last - first - 2) // 2
    return {
        "scheduler_port": first,
        "scheduler_kwargs": {"dashboard_address": f"127.0.0.1:{first + 1}"},
        "worker_port": f"{first + 2}:{first + 1 + half}",
        "port": f"{first + 2 + half}:{last}",  # the nannies'
    }


@contextlib.contextmanager
def local_cluster(workers: int | None = None, *, ports: str | None = None) -> Iterator[str]:
    """A Dask ``LocalCluster`` on this machine; yields its scheduler address.

    Parameters
    ----------
    workers : int, optional
        Worker processes of one thread each; default :func:`dpcore.parallel.default_workers`.
    ports : str, optional
        ``"first:last"``: the scheduler, workers and nannies take ports in this range
        (default ``CAPE_DASK_PORTS``, else any free ports). No dashboard; bound to 127.0.0.1.
    """
    try:
        from distributed import LocalCluster
    except ImportError as err:
        raise ImportError(
            "a Dask cluster needs the optional extra: pip install -r requirements-dask.txt"
        ) from err
    from dpcore.parallel import default_workers

    with LocalCluster(
        n_workers=workers or default_workers(),
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        host="127.0.0.1",
        **_port_ranges(ports or os.environ.get(PORTS_ENV)),
    ) as cluster:
        yield cluster.scheduler_address


@functools.cache
def code_version() -> str:
    """Hash of the core's source: servers running different code never share a result."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def request_key(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
    """Deterministic Dask key of the call ``fn(*args, **kwargs)``.

    The function's qualified name, the core's :func:`code_version` and the pickled arguments
    (keyword arguments sorted): the same request from any process gets the same key.
    """
    name = f"{fn.__module__}.{fn.__qualname__}"
    blob = pickle.dumps((name, code_version(), args, sorted(kwargs.items())), protocol=5)
    return f"cape-{fn.__name__}-{hashlib.sha256(blob).hexdigest()[:32]}"


def _call(fn: Callable[..., R], args: tuple, kwargs: dict[str, Any]) -> R:
    # Arguments travel packed: a sweep's own ``workers=`` must not reach Client.submit's.
    return fn(*args, **kwargs)


class SharedRunner:
    """Calls sent to one Dask scheduler under :func:`request_key`, recent results kept.

    Two clients submitting the same key get the same task: the scheduler runs it once. Each
    runner also holds its last :data:`KEPT_RESULTS` futures, so the results stay on the
    workers for a later identical request from any server.
    """

    def __init__(self, address: str) -> None:
        self.client = _client(address, timeout=CONNECT_SECONDS)
        self._kept: collections.OrderedDict[str, Any] = collections.OrderedDict()
        self._guard = threading.Lock()

    def run(self, fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> R:
        """``fn(*args, **kwargs)`` on the cluster, computed once per distinct request."""
        key = request_key(fn, *args, **kwargs)
        future = self.client.submit(_call, fn, args, kwargs, key=key)
        with self._guard:
            self._kept[key] = future
            self._kept.move_to_end(key)
            while len(self._kept) > KEPT_RESULTS:
                self._kept.popitem(last=False)
        return future.result()

    def close(self) -> None:
        """Release the kept results and close the client."""
        with self._guard:
            self._kept.clear()
        self.client.close()


_RUNNERS: dict[str, SharedRunner] = {}
_RUNNERS_GUARD = threading.Lock()  # held only to read and write the three dicts, never to connect
_CONNECTING: dict[str, threading.Event] = {}  # address → set when its one attempt has ended
_FAILED: dict[str, float] = {}  # address → time.monotonic() of its last failure
FAILURE_MEMORY_SECONDS = 60.0  # a failed scheduler is not asked again for this long
# What a lost or unreachable scheduler raises (Dask's CommClosedError is an OSError); a
# ValueError or TypeError of the request itself is the request's answer and propagates.
_SCHEDULER_ERRORS = (OSError, TimeoutError, concurrent.futures.CancelledError)


def _runner(address: str) -> SharedRunner | None:
    """The runner of ``address`` (None while its last failure is remembered).

    None while the last failure is younger than :data:`FAILURE_MEMORY_SECONDS`.

    One thread connects at a time per address, without holding the lock: the other callers
    wait for its answer, so an unreachable scheduler costs one :data:`CONNECT_SECONDS` wait
    in all, not one per caller, and a failure is remembered (one warning, then silence).
    """
    while True:
        with _RUNNERS_GUARD:
            runner = _RUNNERS.get(address)
            if runner is not None:
                return runner
            failed = _FAILED.get(address)
            if failed is not None and time.monotonic() - failed < FAILURE_MEMORY_SECONDS:
                return None
            pending = _CONNECTING.get(address)
            if pending is None:
                attempt = _CONNECTING[address] = threading.Event()
        if pending is not None:
            pending.wait()  # another caller is connecting: its answer is ours
            continue
        try:
            runner = SharedRunner(address)
        except OSError as err:
            with _RUNNERS_GUARD:
                _FAILED[address] = time.monotonic()
            warnings.warn(
                f"{SCHEDULER_ENV}={address} unreachable ({err}); computing here for the next "
                f"{FAILURE_MEMORY_SECONDS:.0f} s",
                stacklevel=3,
            )
            return None
        finally:
            with _RUNNERS_GUARD:
                del _CONNECTING[address]
                if runner is not None:
                    _RUNNERS[address] = runner
                    _FAILED.pop(address, None)
            attempt.set()
        return runner


def _forget(address: str, runner: SharedRunner) -> bool:
    """Drop a runner whose scheduler went away, remembered as a failure.

    True if this call dropped it (so only one caller reports it).
    """
    with _RUNNERS_GUARD:
        if _RUNNERS.get(address) is not runner:
            return False
        del _RUNNERS[address]
        _FAILED[address] = time.monotonic()
    with contextlib.suppress(Exception):
        runner.client.close(timeout=1)
    return True


def run(fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> R:
    """``fn(*args, **kwargs)``: here, or on the scheduler named by ``CAPE_DASK_SCHEDULER``.

    The app's heavy calls go through this, so several app servers pointed at one scheduler
    share its workers and compute each distinct request once (:class:`SharedRunner`). When
    the scheduler cannot be reached (down, wrong address: ``OSError`` within
    :data:`CONNECT_SECONDS`) the call runs here, with one warning, and the failure is
    remembered for :data:`FAILURE_MEMORY_SECONDS` (later calls compute here at once). A
    scheduler lost during a call gives one warning too and the call is computed here. Errors
    raised by ``fn`` itself (a ValueError for a bad parameter) propagate as they are.
    """
    address = os.environ.get(SCHEDULER_ENV, "").strip()
    if not address:
        return fn(*args, **kwargs)
    runner = _runner(address)
    if runner is None:
        return fn(*args, **kwargs)
    try:
        return runner.run(fn, *args, **kwargs)
    except _SCHEDULER_ERRORS as err:
        if _forget(address, runner):
            warnings.warn(
                f"{SCHEDULER_ENV}={address} lost during a computation "
                f"({type(err).__name__}); computing here",
                stacklevel=2,
            )
        return fn(*args, **kwargs)
