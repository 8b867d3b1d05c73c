"""Scale-out on a Dask cluster: executors for the sweeps, shared results for app servers.

Dask is optional (``requirements-dask.txt``) and imported only here, only when a scheduler is
asked for. Two uses (docs/scale-out.md):

- **Sweeps on a cluster**: :func:`dask_executor` gives ``Client.get_executor()`` for the
  sweeps' ``executor=`` argument (:func:`dpcore.parallel.parallel_map`); ``python -m paper
  --scheduler ADDRESS`` and ``python -m benchmarks --scheduler ADDRESS`` use it.
- **Shared app work**: with ``CAPE_DASK_SCHEDULER`` set, :func:`run` sends a whole request
  (one sweep) to the cluster under a key derived from the request and the core's code, so
  identical requests from several app servers compute once, and a recent result is reused.

The cluster is a help, never a dependency (issue #36): connecting and every remote call are
bounded (:data:`CONNECT_SECONDS`; :func:`remote_seconds`, from the request's work estimate
with a floor), and a scheduler that cannot serve — unreachable, stalled, without workers,
misconfigured, unable to load the task — gives one log line (logger ``dpcore.cluster``), is
remembered for :data:`FAILURE_MEMORY_SECONDS`, and the call is computed here.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import functools
import hashlib
import logging
import os
import pickle
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from pathlib import Path
from typing import Any, TypeVar

R = TypeVar("R")

SCHEDULER_ENV = "CAPE_DASK_SCHEDULER"
PORTS_ENV = "CAPE_DASK_PORTS"  # "first:last" for local clusters on a machine with port ranges
CONNECT_SECONDS = 5.0  # an app server waits this long for the scheduler, then computes itself
KEPT_RESULTS = 128  # recent requests whose results this process keeps alive on the cluster
REMOTE_FLOOR_SECONDS = 10.0  # the least a remote call is waited for …
REMOTE_FACTOR = 4.0  # … else this many times its estimate (one worker thread, a queue ahead)
UNKNOWN_WORK_SECONDS = 600.0  # a call with no estimable argument: the core's MAX_SECONDS
# A new runner's first call also waits for its workers' cold start (importing dpcore, numpy,
# scipy, pandas: 6–8 s of wall time on the 2-core machine at load average 10, 2026-12-07).
WARM_UP_SECONDS = 30.0
# A scheduler that answers after CONNECT_SECONDS (a cold or busy one) is used from then on:
# the late connection is kept if it completes within this long (issue #50).
LATE_CONNECT_SECONDS = 60.0
LOG = logging.getLogger(__name__)


def _client(address: str, timeout: float | None = None) -> Any:
    """Dask's client of ``address``, or the extra's install line if Dask is missing."""
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
        # the build's stamp (git-ignored, written by setuptools-scm whenever the checkout is
        # built or installed) is no source: a build beside a running server changed the hash
        if path.name == "_build_info.py":
            continue
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


def _call(fn: Callable[..., R], args: tuple[Any, ...], kwargs: dict[str, Any]) -> R:
    # Arguments travel packed: a sweep's own ``workers=`` must not reach Client.submit's.
    return fn(*args, **kwargs)


class SchedulerUnusable(RuntimeError):
    """The scheduler answered but cannot run the app's work (no workers)."""


def _connect(address: str, seconds: float, late: Callable[[Any], None] | None = None) -> Any:
    """:func:`_client` within ``seconds``, or :class:`TimeoutError`.

    Dask's own timeout does not bound the handshake: a listener that accepts the connection
    and never answers held ``Client()`` for good (issue #36). The attempt runs in a daemon
    thread, given :data:`LATE_CONNECT_SECONDS`; a client that connects after ``seconds`` is
    handed to ``late`` (a cold but healthy scheduler is not condemned), else closed.
    """
    box: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def attempt() -> None:
        try:
            box.set_result(_client(address, timeout=max(seconds, LATE_CONNECT_SECONDS)))
        except BaseException as err:  # handed to the waiting caller
            box.set_exception(err)

    def adopt(done: concurrent.futures.Future[Any]) -> None:
        if done.exception() is not None:
            return
        if late is None:
            done.result().close()
            return
        try:
            late(done.result())
        except Exception:  # the late client is unusable after all: the failure stands
            with contextlib.suppress(Exception):
                done.result().close()

    threading.Thread(target=attempt, name=f"dask-connect {address}", daemon=True).start()
    try:
        return box.result(timeout=seconds + 1)
    except concurrent.futures.TimeoutError:
        box.add_done_callback(adopt)
        raise TimeoutError(f"no answer within {seconds:.0f} s") from None


def remote_seconds(args: tuple[Any, ...], kwargs: dict[str, Any]) -> float:
    """How long a remote call with these arguments is waited for.

    :data:`REMOTE_FACTOR` times the work estimate of its arguments (those with an
    ``estimate()``, the sweep specs), at least :data:`REMOTE_FLOOR_SECONDS`;
    :data:`UNKNOWN_WORK_SECONDS` times the factor when no argument can be estimated.

    Examples
    --------
    >>> from dpcore import PcaSpec
    >>> remote_seconds((PcaSpec.build(epsilon=1.0, runs=3),), {}) == REMOTE_FLOOR_SECONDS
    True
    """
    estimates = [
        float(value.estimate().seconds)
        for value in (*args, *kwargs.values())
        if callable(getattr(value, "estimate", None))
    ]
    work = sum(estimates) if estimates else UNKNOWN_WORK_SECONDS
    return max(REMOTE_FLOOR_SECONDS, REMOTE_FACTOR * work)


class SharedRunner:
    """Calls sent to one Dask scheduler under :func:`request_key`, recent results kept.

    Two clients submitting the same key get the same task: the scheduler runs it once. Each
    runner also holds its last :data:`KEPT_RESULTS` futures, so the results stay on the
    workers for a later identical request from any server.

    Connecting is bounded by :data:`CONNECT_SECONDS` (:class:`TimeoutError`; ``late`` gets
    a runner of a connection that completes afterwards); a scheduler without workers is
    refused at once (:class:`SchedulerUnusable`). The first call also waits
    :data:`WARM_UP_SECONDS` for the workers' cold start.
    """

    def __init__(
        self,
        address: str,
        late: Callable[[SharedRunner], None] | None = None,
        *,
        client: Any = None,
    ) -> None:
        def adopt(client: Any) -> None:
            assert late is not None
            late(SharedRunner(address, client=client))

        if client is None:
            client = _connect(address, CONNECT_SECONDS, None if late is None else adopt)
        self.client = client
        self._cold = True  # the first call waits for the workers' imports too
        info = getattr(self.client, "scheduler_info", None)
        if info is not None and not info().get("workers"):
            with contextlib.suppress(Exception):
                self.client.close(timeout=1)
            raise SchedulerUnusable("it has no workers")
        self._kept: collections.OrderedDict[str, Any] = collections.OrderedDict()
        self._guard = threading.Lock()

    def run(self, fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> R:
        """``fn(*args, **kwargs)`` on the cluster, computed once per distinct request.

        Waited for :func:`remote_seconds` at most (then :class:`TimeoutError`).
        """
        key = request_key(fn, *args, **kwargs)
        future = self.client.submit(_call, fn, args, kwargs, key=key)
        with self._guard:
            self._kept[key] = future
            self._kept.move_to_end(key)
            while len(self._kept) > KEPT_RESULTS:
                self._kept.popitem(last=False)
        seconds = remote_seconds(args, kwargs) + (WARM_UP_SECONDS if self._cold else 0.0)
        try:
            result: R = future.result(timeout=seconds)
            self._cold = False
            return result
        except TimeoutError:
            with self._guard:
                self._kept.pop(key, None)  # not kept alive: nobody waits for it here
            raise TimeoutError(f"no result within {seconds:.0f} s") from None

    def close(self) -> None:
        """Release the kept results and close the client."""
        with self._guard:
            self._kept.clear()
        self.client.close()


_RUNNERS: dict[str, SharedRunner] = {}
_RUNNERS_GUARD = threading.Lock()  # held only to read and write the three dicts, never to connect
_CONNECTING: dict[str, threading.Event] = {}  # address → set when its one attempt has ended
_FAILED: dict[str, float] = {}  # address → time.monotonic() of its last failure
_REASONS: dict[str, str] = {}  # address → what its last failure was (_reason)
FAILURE_MEMORY_SECONDS = 60.0  # a failed scheduler is not asked again for this long
# A ValueError or TypeError of the request itself is the request's answer and propagates;
# anything else a remote call raises is the cluster's failure (a lost or stalled scheduler:
# Dask's CommClosedError is an OSError, a timeout, a cancelled future; a task its workers
# cannot load: ModuleNotFoundError, a deserialisation error), and the call is computed here.
_REQUEST_ERRORS = (ValueError, TypeError)


CANNOT_LOAD = (
    "the scheduler or its workers cannot load the task: start them where dpcore is "
    "installed (docs/scale-out.md)"
)


def _reason(err: BaseException) -> str:
    """One line saying what went wrong, for the operator."""
    if isinstance(err, ModuleNotFoundError) or "deserializ" in str(err):
        text = CANNOT_LOAD
    else:
        text = " ".join(str(err).split())[:200]
    return type(err).__name__ + (f": {text}" if text else "")


def _runner(address: str) -> SharedRunner | None:
    """The runner of ``address`` (None while its last failure is remembered).

    None while the last failure is younger than :data:`FAILURE_MEMORY_SECONDS`.

    One thread connects at a time per address, without holding the lock: the other callers
    wait for its answer, so an unreachable scheduler costs one :data:`CONNECT_SECONDS` wait
    in all, not one per caller, and a failure is remembered (one log line, then silence).
    Any failure to connect counts: unreachable, no answer, no workers, a malformed address
    (Dask's ``ValueError``: the operator's setting, not the student's), Dask not installed.
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
            runner = SharedRunner(address, functools.partial(_adopt, address))
        except Exception as err:  # whatever it is, this process computes here
            with _RUNNERS_GUARD:
                _FAILED[address] = time.monotonic()
                _REASONS[address] = _reason(err)
            LOG.warning(
                "%s=%s unusable (%s); computing here for the next %.0f s",
                SCHEDULER_ENV,
                address,
                _reason(err),
                FAILURE_MEMORY_SECONDS,
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


def _adopt(address: str, runner: SharedRunner) -> None:
    """A scheduler that answered after the connection's bound: used from now on."""
    with _RUNNERS_GUARD:
        if address in _RUNNERS:  # another attempt got there first
            runner.client.close()
            return
        _RUNNERS[address] = runner
        _FAILED.pop(address, None)
    LOG.warning("%s=%s answered late; using it again", SCHEDULER_ENV, address)


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


def fallback_reason() -> str | None:
    """Why calls compute here although ``CAPE_DASK_SCHEDULER`` names a cluster.

    The reason of its last failure while it is remembered (:data:`FAILURE_MEMORY_SECONDS`);
    None when no cluster is named or it is in use. The app says so beside what it computed
    here (the reason itself is the operator's: it may name the scheduler's address).
    """
    address = os.environ.get(SCHEDULER_ENV, "").strip()
    with _RUNNERS_GUARD:
        failed = _FAILED.get(address) if address else None
        if failed is None or time.monotonic() - failed >= FAILURE_MEMORY_SECONDS:
            return None
        return _REASONS.get(address, "it failed")


def _as_is(fn: Callable[..., R]) -> Callable[..., R]:
    return fn


def run(fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> R:
    """``fn(*args, **kwargs)``: here, or on the scheduler named by ``CAPE_DASK_SCHEDULER``.

    The app's heavy calls go through this, so several app servers pointed at one scheduler
    share its workers and compute each distinct request once (:class:`SharedRunner`). When
    the scheduler cannot serve — unreachable or silent for :data:`CONNECT_SECONDS`, without
    workers, a malformed address — the call runs here, with one log line, and the failure is
    remembered for :data:`FAILURE_MEMORY_SECONDS` (later calls compute here at once). A
    remote call that fails or takes longer than :func:`remote_seconds` (a lost scheduler,
    workers that stall or cannot load the task) gives one log line too, is remembered the
    same way, and the call is computed here. Errors raised by ``fn`` itself (a ValueError
    for a bad parameter) propagate as they are.
    """
    return run_slotted(_as_is, fn, *args, **kwargs)


def run_slotted(
    slot: Callable[[Callable[..., R]], Callable[..., R]],
    fn: Callable[..., R],
    /,
    *args: Any,
    **kwargs: Any,
) -> R:
    """:func:`run`, where a computation here runs as ``slot(fn)(*args, **kwargs)``.

    ``slot`` is a decorator that holds a local resource while ``fn`` computes (the app's
    compute slots, ``serving.flight.compute_slot``): waiting on the cluster holds none of
    it, so a stalled scheduler cannot take the slots the other pages compute in.
    """
    address = os.environ.get(SCHEDULER_ENV, "").strip()
    runner = _runner(address) if address else None
    if runner is None:
        return slot(fn)(*args, **kwargs)
    try:
        return runner.run(fn, *args, **kwargs)
    except _REQUEST_ERRORS:
        raise
    except Exception as err:  # the cluster failed this call: compute here
        _REASONS[address] = _reason(err)
        if _forget(address, runner):
            LOG.warning(
                "%s=%s failed a computation (%s); computing here for the next %.0f s",
                SCHEDULER_ENV,
                address,
                _reason(err),
                FAILURE_MEMORY_SECONDS,
            )
    return slot(fn)(*args, **kwargs)
