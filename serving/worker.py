"""One computation in a child process, bounded in memory and time, that can be killed.

A heavy sweep or a file parse running inside the server process can take the whole server
down (one CSV reached 6 GB and aborted every student's session) and cannot be stopped: a
Python thread cannot be cancelled. In a child process the operating system enforces the
memory bound (``RLIMIT_AS``: the child gets a ``MemoryError``, the server nothing), the
parent kills it past its time bound or when nobody waits for it any more, and all of its
memory goes back to the system when it exits. Children fork from a small ``forkserver``
that has already imported the core, so a start costs tens of milliseconds, not an import
of numpy, and never a fork of the multi-threaded server itself.

No Streamlit here: the child imports only what the job needs.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(["dpcore", "dpcore.experiments.realdata", "pandas", "numpy"])


@dataclass(frozen=True)
class Limits:
    """Bounds of one child: address space (bytes), wall time (s), CPU priority (nice) and
    worker threads of its sweeps (``CAPE_WORKERS`` in the child; ``None``: the lane decides
    when the job starts, :class:`serving.jobs.Lane`)."""

    memory_bytes: int
    seconds: float
    nice: int = 10
    workers: int | None = 1


@dataclass(frozen=True)
class Outcome:
    """How a job ended: ``ok`` (value), ``refused`` (a ValueError/TypeError: message),
    ``memory``, ``timeout``, ``cancelled`` or ``crashed`` (message says what)."""

    status: str
    value: Any = None
    message: str = ""


def _child(conn, fn: Callable, args: tuple, kwargs: dict, limits: Limits, progress) -> None:
    from dpcore import report_progress

    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    os.nice(limits.nice)  # interactive requests in the server come first
    os.environ["CAPE_WORKERS"] = str(limits.workers or 1)
    warnings.simplefilter("ignore")  # the page shows the warnings that apply, from parameters

    def tell(done: int, total: int) -> None:  # the parent reads it (Job.progress)
        with progress.get_lock():
            progress[0], progress[1] = done, total

    try:
        with report_progress(tell):
            outcome = Outcome("ok", fn(*args, **kwargs))
    except (ValueError, TypeError) as err:
        outcome = Outcome("refused", message=str(err))
    except MemoryError:
        outcome = Outcome("memory")
    except BaseException as err:  # reported, never raised in the server
        outcome = Outcome("crashed", message=type(err).__name__)
    try:
        conn.send(outcome)
    except MemoryError:
        conn.send(Outcome("memory"))
    finally:
        conn.close()


class Job:
    """``fn(*args, **kwargs)`` in a child process under ``limits``; started at once.

    ``fn`` and its arguments must pickle (module-level functions, plain data).
    """

    def __init__(self, fn: Callable, args: tuple, kwargs: dict, limits: Limits) -> None:
        self.limits = limits
        self._conn, child_conn = _CONTEXT.Pipe(duplex=False)
        self._progress = _CONTEXT.Array("q", 2)  # (tasks done, tasks known), from the child
        self._process = _CONTEXT.Process(
            target=_child,
            args=(child_conn, fn, args, kwargs, limits, self._progress),
            daemon=True,
        )
        self.started = time.monotonic()
        self.outcome: Outcome | None = None
        try:
            self._process.start()
        except Exception as err:  # e.g. an argument that does not pickle
            self.outcome = Outcome("crashed", message=f"the job could not start: {err}")
        finally:
            child_conn.close()

    def progress(self) -> tuple[int, int]:
        """(tasks done, tasks known so far) of the sweep running in the child
        (:func:`dpcore.parallel.report_progress`); (0, 0) before its first task is known."""
        with self._progress.get_lock():
            done, total = self._progress[0], self._progress[1]
        return int(done), int(total)

    def poll(self) -> Outcome | None:
        """The outcome once the job has ended (kills it past its time bound), else None."""
        if self.outcome is not None:
            return self.outcome
        if self._conn.poll():
            try:
                self.outcome = self._conn.recv()
            except (EOFError, OSError):
                self.outcome = Outcome("crashed", message="the worker stopped")
            self._reap()
        elif not self._process.is_alive():
            code = self._process.exitcode
            self.outcome = Outcome("crashed", message=f"the worker exited with code {code}")
            self._reap()
        elif time.monotonic() - self.started > self.limits.seconds:
            self.kill(Outcome("timeout"))
        return self.outcome

    def kill(self, outcome: Outcome | None = None) -> None:
        """Stop the child now (its memory returns to the system)."""
        if self.outcome is None:
            self.outcome = outcome or Outcome("cancelled")
        if self._process.pid is not None and self._process.is_alive():
            self._process.kill()
        self._reap()

    def _reap(self) -> None:
        if self._process.pid is not None:
            self._process.join(timeout=5)
        self._conn.close()


def run(fn: Callable, *args: Any, limits: Limits, **kwargs: Any) -> Outcome:
    """Run one job to its end (blocking, polling every 50 ms)."""
    job = Job(fn, args, kwargs, limits)
    while (outcome := job.poll()) is None:
        time.sleep(0.05)
    return outcome


# --- the jobs themselves (module-level, so that they pickle) --------------------------------


def load_source(kind: str, arg: Any, data_dir: str | None):
    """A real data set by source (see :func:`ui.cached.load_dataset`), in the child."""
    import numpy as np

    import dpcore

    if kind in dpcore.BUNDLED_DATASETS:
        return dpcore.load_bundled(kind)
    if kind == "mnist":
        return dpcore.load_mnist(arg or None, data_dir=data_dir)
    if kind == "covtype":
        return dpcore.load_covtype(arg or None, data_dir=data_dir, rng=np.random.default_rng(0))
    if kind == "upload":
        return dpcore.load_csv(arg, name="your CSV")
    kinds = [*dpcore.BUNDLED_DATASETS, "mnist", "covtype", "upload"]
    raise ValueError(f"data must be one of {kinds}")


def source_data(source: tuple, data_dir: str | None):
    """The data set a page's ``source`` names: ``(kind,)`` for a bundled set, ``(kind, arg)``
    for a file or an upload (:func:`load_source`)."""
    return load_source(source[0], source[1] if len(source) > 1 else None, data_dir)


def pca_frame(spec, seed: int, source: tuple, data_dir: str | None):
    """:func:`dpcore.run_pca_sweep` of a page's spec on its data source, loaded here in the
    child (the spec travels small: ``data`` joins it here)."""
    import numpy as np

    import dpcore
    from serving import classroom

    if source[0] != "synthetic":
        spec = spec.replace(data=source_data(source, data_dir))
    classroom.check(spec)  # the class server's limits (issue #39), on the loaded data
    return dpcore.run_on_cluster(dpcore.run_pca_sweep, spec, np.random.default_rng(seed))


def rounds_table(spec, seed: int, source: tuple, data_dir: str | None):
    """The rounds axis of a page's :class:`dpcore.experiments.sweeps.rounds.RoundsSpec` on its data
    source, as :func:`dpcore.experiments.sweeps.rounds.rounds_summary`, in the child."""
    import dataclasses

    import dpcore
    from dpcore import rounds_summary, run_rounds_sweep
    from serving import classroom

    if source[0] != "synthetic":
        data = source_data(source, data_dir)
        spec = dataclasses.replace(spec, sweep=spec.sweep.replace(data=data))
    classroom.check(spec)
    return rounds_summary(dpcore.run_on_cluster(run_rounds_sweep, spec, seed))


def otd_frame(spec, seed: int):
    """:func:`dpcore.run_otd_sweep` of a page's spec as its tidy frame, in the child."""
    import numpy as np

    import dpcore
    from serving import classroom

    classroom.check(spec)
    run = dpcore.run_on_cluster(dpcore.run_otd_sweep, spec, np.random.default_rng(seed))
    return dpcore.otd_frame(spec, run)


def otd_example(spec, seed: int):
    """True vs recovered weights of one run of a page's one-point spec, in the child."""
    import numpy as np

    import dpcore
    from serving import classroom

    classroom.check(spec if spec.runs.count == 1 else spec.replace(runs=1))
    return dpcore.run_on_cluster(dpcore.otd_example_of, spec, np.random.default_rng(seed))


def paper_panel(key: str, runs: int, seed: int, calibration: str, path: str, data_dir: str):
    """One panel of the paper's figures (:func:`dpcore.experiments.paper.run_panel`), in the
    child."""
    import dpcore
    from serving import classroom

    panel = dpcore.panel_by_key(key)  # a paper panel or MNIST's subset ("2b~mnist_5k")
    data = None
    if panel.task == "pca" and panel.data != "synthetic":
        data = load_source(panel.data, path, data_dir)
    return dpcore.run_on_cluster(
        dpcore.run_panel,
        key,
        runs=runs,
        seed=seed,
        calibration=calibration,
        data=data,
        budget=classroom.BUDGET,
    )
