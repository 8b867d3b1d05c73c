"""``python -m dpcore sweep pca|otd …``: a sweep from the command line, reproducible.

The options are the keywords of :func:`dpcore.pca_sweep` / :func:`dpcore.otd_sweep`, spelled
with dashes (``--n-per-site``); a comma-separated value of ε, δ, N_s or S is the swept axis
(``--epsilon 0.1,1,10``), as a list is in Python. The run writes a tidy CSV (``--out``; or
Parquet, ``--out x.parquet``, with the record's provenance and the frame's ``attrs`` in the
file, when pyarrow is installed) and, beside it, a JSON record: every keyword with its value
(defaults resolved, algorithms and metrics named), the seed, the version, the commit, the
Python/NumPy/SciPy versions, the BLAS libraries and CPU kernels
(:func:`dpcore.experiments.sweeps.provenance.kernels`) and the output's SHA-256.
``python -m dpcore sweep --from run.json`` reruns that record and checks that the new output
is the same file, bit for bit (exit 1 when it is not).

No limit applies unless asked: ``--max-tasks``, ``--max-minutes`` and ``--max-memory-gib``
refuse a sweep whose estimate, counted on the workers that run it (``--workers``, the
``--scheduler``'s cluster, else this machine's cores), passes them. ``--estimate`` prints the
estimate and writes nothing. ``--processes N`` runs the tasks on a pool of N processes
here. Once a run has taken :data:`PROGRESS_SECONDS`, it prints a progress line on stderr at
least that often, whatever its estimate.

Two bounds apply always. A sweep estimated past a year of its workers' time
(:data:`IMPOSSIBLE_SECONDS`) is impossible: ``--estimate`` says so and exits 2, and a run is
refused before any work. ``--out`` is written into a directory that exists (none is
created); a file that cannot be written is one line on stderr and exit 2, checked before the
sweep runs where it can be (a missing directory, a directory in its place).

Examples
--------
::

    python -m dpcore sweep pca --epsilon 0.1,0.5,1,5 --runs 5 --rng 1 --out eps.csv
    python -m dpcore sweep pca --data mnist_5k --n-per-site 50,100,250,500 --epsilon 1 --k 10
    python -m dpcore sweep otd --model mog --epsilon 0.5,1,5 --n-per-site 2000 --runs 3
    python -m dpcore sweep --from eps.json --out again.csv
    python -m dpcore sweep pca --epsilon 0.1,1 --scheduler tcp://10.0.0.5:8786
    python -m dpcore sweep pca --epsilon 0.1,1,10 --runs 2000 --estimate
    python -m dpcore sweep pca --epsilon 0.1,1 --dim 1000 --runs 100 --max-minutes 60
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import hashlib
import inspect
import json
import logging
import os
import platform
import shlex
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy

from dpcore.experiments.limits import WorkBudget, WorkEstimate, check_budget
from dpcore.experiments.realdata import BUNDLED
from dpcore.experiments.sweeps import (
    OTD_METRICS,
    PCA_METRICS,
    otd_frame,
    otd_sweep,
    pca_sweep,
    run_otd_sweep,
    run_pca_sweep,
)
from dpcore.experiments.sweeps.provenance import kernels
from dpcore.experiments.sweeps.spec import SWEEP_AXES, OtdSpec, PcaSpec
from dpcore.factorization import registry
from dpcore.mechanisms.calibration import ClassicGaussianWarning
from dpcore.parallel import MAX_WORKERS, ExecutorLost, planned_workers, report_progress
from dpcore.version import __version__, source_commit

SWEEPS: dict[str, Callable[..., pd.DataFrame]] = {"pca": pca_sweep, "otd": otd_sweep}
SPECS: dict[str, type[PcaSpec] | type[OtdSpec]] = {"pca": PcaSpec, "otd": OtdSpec}
WHAT = {"pca": "this PCA sweep", "otd": "this tensor sweep"}
METRICS = {"pca": tuple(PCA_METRICS), "otd": tuple(OTD_METRICS)}
# Where the tasks run and the older name of rng: not part of what a sweep computes.
NOT_RECORDED = ("workers", "executor", "seed", "budget")
LISTS = ("algorithms", "metrics", "site_shares")
RECORD_FORMAT = 1
CONNECT_SECONDS = 10  # an unreachable scheduler is reported after this long (Dask: 30 s)
MAX_RECORD_BYTES = 2**20  # a record is a few kB; --from reads no more than this (/dev/zero)
# Once a run has taken this long it prints a progress line at least this often (issue #51:
# a sweep estimated at 6.9 s printed nothing for 31 minutes): whatever the estimate.
PROGRESS_SECONDS = 10.0
# Past a year of its workers' time a sweep is impossible: no one waits for it, and the
# estimate (within a small factor) cannot be wrong by the factor that would make it possible.
IMPOSSIBLE_SECONDS = 365.25 * 24 * 3600


class CliError(Exception):
    """A failure the command line reports as one line and a non-zero exit."""


def keywords(task: str) -> dict[str, inspect.Parameter]:
    """The recordable keywords of the task's sweep function, in signature order."""
    params = inspect.signature(SWEEPS[task]).parameters
    return {n: p for n, p in params.items() if n not in NOT_RECORDED}


def _number(text: str, name: str) -> int | float:
    try:
        value = float(text)
    except ValueError:
        raise CliError(f"--{name.replace('_', '-')} must be numbers; got {text!r}") from None
    return int(value) if name in ("sites", "n_per_site") and value.is_integer() else value


def _convert(name: str, text: str, default: Any) -> Any:
    """A command-line string as the Python value the keyword takes."""
    parts = [p.strip() for p in text.split(",")]
    if (name in SWEEP_AXES or name in LISTS) and "," in text and not all(parts):
        raise CliError(f"--{name.replace('_', '-')} has an empty item: {text!r}")
    parts = [p for p in parts if p]
    if name in SWEEP_AXES:
        values = [_number(p, name) for p in parts]
        return values if "," in text else (values[0] if values else text)
    if name in LISTS:
        return [_number(p, name) for p in parts] if name == "site_shares" else parts
    if isinstance(default, int) or name == "rank":
        try:
            return int(text)
        except ValueError:
            raise CliError(f"--{name.replace('_', '-')} must be an integer; got {text!r}") from None
    if isinstance(default, float):
        return _number(text, name)
    return text


def resolve(task: str, given: dict[str, Any]) -> dict[str, Any]:
    """Every keyword with its value: the given ones, else the function's defaults.

    ``algorithms`` and ``metrics`` are named explicitly (a later registered algorithm does
    not join a recorded sweep); ``rng`` must be an integer seed.
    """
    out = {}
    for name, param in keywords(task).items():
        if name in given:
            out[name] = given[name]
        elif param.default is inspect.Parameter.empty:
            raise CliError(f"--{name.replace('_', '-')} is required")
        else:
            out[name] = param.default
    if out["algorithms"] is None:
        out["algorithms"] = list(registry.defaults(task))
    if out["metrics"] is None:
        out["metrics"] = list(METRICS[task])
    if isinstance(out["rng"], bool) or not isinstance(out["rng"], int):
        raise CliError(f"--rng must be an integer seed; got {out['rng']!r}")
    return out


def sweep_keywords(task: str, params: dict[str, Any]) -> dict[str, Any]:
    """The sweep's keywords for recorded parameters (a bundled data set loaded by its name)."""
    call = dict(params)
    if task == "pca" and call.get("data") != "synthetic":
        from dpcore.experiments.realdata import load_bundled

        if call.get("data") not in BUNDLED:  # load_bundled's own error names its "name"
            raise CliError(
                f"--data must be 'synthetic' or one of {', '.join(BUNDLED)}; "
                f"got {call.get('data')!r}"
            )
        call["data"] = load_bundled(call["data"])
        call.pop("dim", None)
    return call


def estimate(task: str, call: dict[str, Any], workers: int) -> WorkEstimate:
    """The cost of the sweep of :func:`sweep_keywords` on ``workers`` workers.

    :func:`dpcore.experiments.limits.estimate_pca` / ``estimate_otd`` through the spec.
    """
    spec = {name: value for name, value in call.items() if name != "rng"}  # rng: not the work
    return SPECS[task].build(**spec).estimate(workers=workers)


def _duration(seconds: float) -> str:
    """The time as "12.3 s", "4.5 minutes", "3.2 years" or "5.7e+14 years"."""
    years = seconds / (365.25 * 24 * 3600)
    if seconds < 60:
        return f"{seconds:.1f} s"
    if years < 1:
        return f"{seconds / 60:,.1f} minutes"
    return f"{years:,.1f} years" if years < 1e6 else f"{years:.1e} years"


def _gib(size: float) -> str:
    gib = size / 2**30
    return f"{gib:,.2f} GiB" if gib < 1e6 else f"{gib:.1e} GiB"


def describe(what: str, cost: WorkEstimate, workers: int) -> str:
    """One line: the tasks, the time on ``workers`` workers and the memory of an estimate."""
    return (
        f"{what}: {cost.tasks:,} grid points × runs, about {_duration(cost.seconds)} on "
        f"{workers} worker{'s' if workers != 1 else ''} and {_gib(cost.memory_bytes)} of memory "
        "(estimates within a small factor)"
    )


def _check_possible(what: str, cost: WorkEstimate, workers: int) -> None:
    """Refuse a sweep estimated past :data:`IMPOSSIBLE_SECONDS` (a year) on its workers.

    Raises :class:`CliError` saying it is impossible, whatever budget was asked for.
    """
    if cost.seconds <= IMPOSSIBLE_SECONDS:
        return
    raise CliError(
        f"{what} is impossible: about {_duration(cost.seconds)}, more than a year on its "
        f"{workers} worker{'s' if workers != 1 else ''} (a sweep estimated past a year of its "
        "workers' time is not run); use fewer runs or grid points, a smaller D or more workers"
    )


def _check_out(out: Path) -> None:
    """Refuse, before any work, an ``--out`` that cannot be a file.

    Raises :class:`CliError` when its directory does not exist (none is created) or a
    directory stands in its place or in its record's.
    """
    parent = out.parent
    if not parent.is_dir():
        raise CliError(f"--out {out}: no such directory {parent} (none is created)")
    if out.suffix.lower() == ".parquet":  # the sweep does not run to fail at its end
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise CliError("--out *.parquet needs pyarrow: pip install pyarrow") from None
    for path in (out, record_path(out), partial_path(out)):  # the CSV, its record, its tasks
        if path.is_dir():
            raise CliError(f"--out {out}: {path} is a directory, not a file")


class ProgressLine:
    """``report_progress`` sink: "progress: 120 of 6,000 tasks (2 %), … left" on ``stream``.

    Once the run has taken ``every`` seconds (default a second under
    :data:`PROGRESS_SECONDS`; one on a terminal), a line at least every ``every`` seconds of
    wall time, whether tasks finished or not (a heartbeat thread, between :meth:`start` and
    :meth:`stop`), and a last line when the run ends; a run shorter than ``every`` prints
    nothing, whatever its estimate. On a terminal each line overwrites the one before.
    """

    def __init__(self, stream: Any = None, every: float | None = None) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        # a beat a second early: a busy machine wakes the thread late, the line still comes
        # within PROGRESS_SECONDS (10.3 s between lines was measured on time, 2026-12-07)
        default = 1.0 if self.tty else max(PROGRESS_SECONDS - 1.0, PROGRESS_SECONDS / 2)
        self.every = every if every is not None else default
        self.started = time.monotonic()
        self.shown = self.started  # the first line after ``every`` seconds
        self.done = self.total = 0
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.beat: threading.Thread | None = None

    def __call__(self, done: int, total: int) -> None:
        """Take ``done`` of ``total``; show them unless a line was shown under ``every`` s ago.

        The last one (``done == total``) is shown when any line was.
        """
        with self.lock:
            self.done, self.total = done, total
            now = time.monotonic()
            last = done >= total > 0
            if now - self.shown < self.every and not (last and self.shown > self.started):
                return
            self._show(now)

    def _show(self, now: float) -> None:
        """Print the line for the counts held (under ``self.lock``)."""
        self.shown = now
        done, total = self.done, self.total
        elapsed = now - self.started
        left = ""
        if 0 < done < total:
            left = f", about {_clock(elapsed * (total - done) / done)} left"
        line = (
            f"progress: {done:,} of {total:,} tasks ({100 * done / max(total, 1):.0f} %), "
            f"{_clock(elapsed)} elapsed{left}"
            if total
            else f"progress: preparing the tasks, {_clock(elapsed)} elapsed"
        )
        end = "\r" if self.tty and done < total else "\n"
        print(line, end=end, file=self.stream, flush=True)

    def _heartbeat(self) -> None:
        """Show the counts held whenever ``every`` seconds passed without a line."""
        while True:
            with self.lock:
                wait = self.shown + self.every - time.monotonic()
            if self.stopped.wait(max(wait, 0.0)):
                return
            with self.lock:
                now = time.monotonic()
                if now - self.shown >= self.every:
                    self._show(now)

    def start(self) -> ProgressLine:
        """Start the heartbeat thread (a daemon: it never holds the process)."""
        self.beat = threading.Thread(target=self._heartbeat, name="progress", daemon=True)
        self.beat.start()
        return self

    def stop(self) -> None:
        """Stop the heartbeat; print the last counts if any line was shown."""
        self.stopped.set()
        if self.beat is not None:
            self.beat.join()
        with self.lock:
            if self.shown > self.started and self.total and self.done < self.total:
                self._show(time.monotonic())

    def __enter__(self) -> ProgressLine:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _clock(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def run(
    task: str,
    call: dict[str, Any],
    executor: Executor | None = None,
    workers: int | None = None,
    budget: WorkBudget | None = None,
    progress: Callable[[int, int], None] | None = None,
    partial: PartialOutput | None = None,
    completed: dict[tuple[int, int], list[dict[str, Any]]] | None = None,
) -> pd.DataFrame:
    """The sweep's frame for its keywords (:func:`sweep_keywords`), within ``budget``.

    ``budget`` None: no limit. ``progress``: a :func:`dpcore.parallel.report_progress` sink
    for the run's tasks (a :class:`ProgressLine`'s heartbeat runs while the sweep does).
    ``partial``: where each finished task is kept; ``completed``: the tasks a killed run
    kept (:func:`dpcore.run_pca_sweep`, :func:`dpcore.run_otd_sweep`), not run again.
    """
    with (
        warnings.catch_warnings(),
        report_progress(progress) if progress else contextlib.nullcontext(),
        progress if isinstance(progress, ProgressLine) else contextlib.nullcontext(),
    ):
        warnings.simplefilter("ignore", ClassicGaussianWarning)  # the record names the method
        if partial is None and not completed:
            return SWEEPS[task](**call, workers=workers, executor=executor, budget=budget)
        keywords = {name: value for name, value in call.items() if name != "rng"}
        on_task = partial.append if partial is not None else None
        if task == "otd":
            otd = OtdSpec.build(**keywords)
            result = run_otd_sweep(
                otd,
                call["rng"],
                workers=workers,
                executor=executor,
                budget=budget,
                completed=completed,
                on_task=on_task,
            )
            return otd_frame(otd, result)
        return run_pca_sweep(
            PcaSpec.build(**keywords),
            call["rng"],
            workers=workers,
            executor=executor,
            budget=budget,
            completed=completed,
            on_task=on_task,
        )


@contextlib.contextmanager
def _quiet_dask() -> Iterator[None]:
    """Dask's own reconnect tracebacks off: the CLI reports a lost scheduler in one line."""
    names = [n for n in logging.root.manager.loggerDict if n.startswith("distributed")]
    loggers = [logging.getLogger(n) for n in ("distributed", *names)]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


@contextlib.contextmanager
def scheduler_executor(address: str | None) -> Iterator[Executor | None]:
    """A Dask executor on ``address`` (None: this machine's threads).

    An unreachable scheduler (after :data:`CONNECT_SECONDS`), one that dies or drops the
    connection mid-run, or one that cannot load the task graph (it lacks ``dpcore``) becomes
    a :class:`CliError` naming the address: one line, not a traceback; nothing is written.
    """
    if not address:
        yield None
        return
    try:
        import dask
        import distributed  # noqa: F401  # its loggers exist from here on (_quiet_dask)
    except ImportError:
        raise CliError("--scheduler needs Dask: pip install 'cape-lab[dask]'") from None
    from dpcore import cluster

    _check_address(address)
    connected = False
    lost = (OSError, TimeoutError, concurrent.futures.CancelledError)
    with dask.config.set({"distributed.comm.timeouts.connect": f"{CONNECT_SECONDS}s"}):
        try:
            with _quiet_dask(), cluster.dask_executor(address) as executor:
                connected = True
                yield executor
        except lost as err:
            raised: BaseException = err
            if isinstance(err, ExecutorLost) and err.__cause__ is not None:
                raised = err.__cause__  # what Dask raised; the address is said below
            what = (
                "stopped answering during the run"
                if connected
                else f"cannot be reached (waited {CONNECT_SECONDS} s)"
            )
            detail = str(raised).splitlines()[0][:160] if str(raised) else ""
            raise CliError(
                f"the Dask scheduler at {address} {what}: {type(raised).__name__}"
                + (f" ({detail})" if detail and detail != type(raised).__name__ else "")
                + "; nothing was written"
            ) from None
        except RuntimeError as err:
            if "deserializ" not in str(err):
                raise
            raise CliError(
                f"the Dask scheduler at {address} cannot load the sweep's tasks: start the "
                "scheduler and the workers where dpcore is installed (docs/scale-out.md)"
            ) from None


@contextlib.contextmanager
def where_executor(address: str | None, processes: int | None) -> Iterator[Executor | None]:
    """The executor of ``--scheduler`` (:func:`scheduler_executor`) or ``--processes``.

    ``processes``: a pool of that many fresh interpreters (spawned: no thread of this
    process is forked), shut down on exit; None with no address: this machine's threads.
    """
    if processes is None:
        with scheduler_executor(address) as executor:
            yield executor
        return
    if isinstance(processes, bool) or not 1 <= processes <= MAX_WORKERS:
        raise CliError(f"--processes must be an integer in [1, {MAX_WORKERS}]; got {processes}")
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(processes, mp_context=context) as pool:
        yield pool


def _check_address(address: str) -> None:
    """A :class:`CliError` unless ``address`` reads as a Dask address, before connecting.

    Dask's own "missing port number" came with a client that took 20 s to give up.
    """
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        protocol, location = parse_address(address)
        if protocol in ("tcp", "tls", "ws", "wss", "ucx"):
            host, port = parse_host_port(location)
            if not host or not 1 <= int(port) <= 65535:
                raise ValueError("host and port 1–65535 needed")
    except (ValueError, TypeError) as err:
        raise CliError(
            f"--scheduler must be a Dask scheduler address, [tcp://]host:port; "
            f"got {address!r} ({err})"
        ) from None


def sha256(path: Path) -> str:
    """The file's SHA-256, hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


OUTPUTS = (".csv", ".parquet")  # what --out writes, by its suffix


def record_path(csv: Path) -> Path:
    """Where the record of an output goes: beside it, ``.json`` for ``.csv`` or ``.parquet``."""
    return csv.with_suffix(".json")


def write(
    task: str, params: dict[str, Any], df: pd.DataFrame, out: Path, command: str
) -> dict[str, Any]:
    """Write the CSV and its JSON record; returns the record.

    The directory must exist (none is created); a failed write raises :class:`CliError`
    naming the file that could not be written.
    """
    try:
        return _write(task, params, df, out, command)
    except OSError as err:
        where = err.filename if isinstance(err.filename, str) else out
        raise CliError(f"cannot write {where}: {err.strerror or type(err).__name__}") from None


def _write(
    task: str, params: dict[str, Any], df: pd.DataFrame, out: Path, command: str
) -> dict[str, Any]:
    provenance = {
        "format": RECORD_FORMAT,
        "task": task,
        "params": params,
        "version": __version__,
        "commit": source_commit(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "kernels": kernels(),  # the BLAS libraries and CPU kernels the numbers came from
    }
    if out.suffix.lower() == ".parquet":
        write_parquet(df, out, provenance)
    else:
        df.to_csv(out, index=False)
    digest = sha256(out)
    key = "csv" if out.suffix.lower() == ".csv" else "output"
    record = {
        "format": RECORD_FORMAT,
        "task": task,
        "params": params,
        key: out.name,
        f"{key}_sha256": digest,
        "rows": len(df),
        **{name: provenance[name] for name in ("version", "commit", "python", "numpy", "scipy")},
        "kernels": provenance["kernels"],
        "command": command,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    record_path(out).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record


PARQUET_KEY = b"cape_lab"  # the schema metadata key of a Parquet output's provenance


def write_parquet(df: pd.DataFrame, out: Path, provenance: dict[str, Any]) -> None:
    """Write the frame as Parquet with its provenance in the file.

    The frame's ``attrs`` (pandas keeps them) and, under :data:`PARQUET_KEY`, the record's
    fields that do not change between two runs of the same sweep (no time, no command
    line): the same sweep, the same bytes.

    Raises :class:`CliError` when pyarrow is missing (no dependency of the core).
    """
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise CliError("--out *.parquet needs pyarrow: pip install pyarrow") from None
    table = pa.Table.from_pandas(df, preserve_index=False)
    metadata = dict(table.schema.metadata or {})
    metadata[PARQUET_KEY] = json.dumps(provenance, sort_keys=True).encode("utf-8")
    pq.write_table(table.replace_schema_metadata(metadata), out)


def read_provenance(path: Path) -> dict[str, Any]:
    """The provenance :func:`write_parquet` kept in a Parquet output."""
    import pyarrow.parquet as pq

    metadata = pq.read_schema(path).metadata or {}
    value: dict[str, Any] = json.loads(metadata[PARQUET_KEY])
    return value


def read_record(path: Path) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(task, params, record) of a JSON record :func:`write` made."""
    try:
        with path.open("rb") as file:
            text = file.read(MAX_RECORD_BYTES + 1)
    except FileNotFoundError:
        raise CliError(f"--from {path}: no such file") from None
    except IsADirectoryError:
        raise CliError(f"--from {path}: a directory, not a sweep record") from None
    except OSError as err:
        raise CliError(f"{path} is not a sweep record ({type(err).__name__})") from None
    if len(text) > MAX_RECORD_BYTES:
        raise CliError(f"{path} is not a sweep record (larger than {MAX_RECORD_BYTES} bytes)")
    try:
        record = json.loads(text.decode("utf-8"))
        task, params = record["task"], record["params"]
    except (ValueError, KeyError, TypeError) as err:
        raise CliError(f"{path} is not a sweep record ({type(err).__name__})") from None
    if task not in SWEEPS or not isinstance(params, dict):
        raise CliError(f"{path} is not a sweep record (task {task!r})")
    unknown = sorted(set(params) - set(keywords(task)))
    if unknown:
        raise CliError(f"{path} has keywords this version does not know: {unknown}")
    missing = [name for name in keywords(task) if name not in params]
    if missing:  # a record names every keyword (write): a rerun guesses none
        raise CliError(f"{path} is not a sweep record: it lacks {missing}")
    return task, params, record


def partial_path(out: Path) -> Path:
    """Where a run keeps its tasks as they finish: ``x.partial.jsonl`` beside ``x.csv``."""
    return out.with_name(out.stem + ".partial.jsonl")


class PartialOutput:
    """A run's finished (grid point, run) tasks, one line each, kept as they arrive.

    A line is the JSON's SHA-256 (16 hex digits), a tab, the JSON and a newline, written by
    one ``write`` call at the end of the file (``O_APPEND``): the first line says which
    sweep (task, keywords, commit), the others hold one task's key ``[i, run]`` and rows.
    A process killed at any moment leaves at most one last line cut short: its checksum or
    its newline is missing, and :meth:`read` stops before it and cuts it off, so a resumed
    run never trusts a half row. JSON keeps every float to the bit (Python writes the
    shortest repr that reads back).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: int | None = None
        self.lock = threading.Lock()
        self.kept = 0  # tasks the file holds

    @staticmethod
    def line(value: Any) -> bytes:
        """One line: the checksum, a tab, the JSON, a newline."""
        text = json.dumps(value, separators=(",", ":"), default=_plain)
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        return f"{digest}\t{text}\n".encode()

    @staticmethod
    def parse(raw: bytes) -> Any:
        """The value of one whole line; ValueError for a line cut short or damaged."""
        if not raw.endswith(b"\n"):
            raise ValueError("no newline: the line was cut short")
        digest, _, text = raw[:-1].decode("utf-8").partition("\t")
        if hashlib.sha256(text.encode()).hexdigest()[:16] != digest:
            raise ValueError("the checksum does not match")
        return json.loads(text)

    def read(self, header: dict[str, Any]) -> dict[tuple[int, int], list[dict[str, Any]]]:
        """The tasks a killed run of this sweep kept; the file cut after the last whole line.

        Raises :class:`CliError` when the file is of another sweep (its header differs).
        """
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as err:
            raise CliError(f"--resume: cannot read {self.path} ({err.strerror})") from None
        lines = data.splitlines(keepends=True)
        good = 0
        tasks: dict[tuple[int, int], list[dict[str, Any]]] = {}
        for number, raw in enumerate(lines):
            try:
                value = self.parse(raw)
                if number == 0:
                    if value != header:
                        differ = sorted(
                            k for k in {*value, *header} if value.get(k) != header.get(k)
                        )
                        raise CliError(
                            f"--resume: {self.path} is the partial output of another sweep "
                            f"or code (they differ in: {', '.join(differ)}); delete it to start "
                            "afresh"
                        )
                else:
                    i, run = value["key"]
                    tasks[(int(i), int(run))] = list(value["rows"])
            except (ValueError, KeyError, TypeError, UnicodeDecodeError):
                break
            good += len(raw)
        if good < len(data):  # a line cut short by the kill (or damaged): not trusted
            with self.path.open("r+b") as file:
                file.truncate(good)
        if good == 0:
            self.path.unlink()
        self.kept = len(tasks)
        return tasks

    def open(self, header: dict[str, Any], *, fresh: bool) -> None:
        """Open for appending; ``fresh``: a new file holding only ``header``."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (os.O_TRUNC if fresh else 0)
        new = fresh or not self.path.exists()
        self.fd = os.open(self.path, flags, 0o644)
        if new:
            self._write(self.line(header))

    def _write(self, data: bytes) -> None:
        assert self.fd is not None
        view = memoryview(data)
        while view:  # a regular file takes it whole; a short write is finished here
            view = view[os.write(self.fd, view) :]

    def append(self, key: tuple[int, int], rows: list[dict[str, Any]]) -> None:
        """Keep one finished task (called as tasks finish, from any thread)."""
        data = self.line({"key": list(key), "rows": rows})
        with self.lock:
            try:
                self._write(data)
            except OSError as err:  # a full disk: one line, the tasks kept so far stay
                raise CliError(f"cannot write {self.path}: {err.strerror}") from None
            self.kept += 1

    def close(self, *, remove: bool = False) -> None:
        """Close; delete the file when ``remove`` (the output is whole) or it holds no task."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if remove or self.kept == 0:
            self.path.unlink(missing_ok=True)


def _plain(value: Any) -> Any:
    """A NumPy scalar as the Python number it holds (``json.dumps``'s ``default``)."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"a partial output holds numbers, strings and booleans; got {value!r}")


def _where(parser: argparse.ArgumentParser, default: Any) -> None:
    """The options that say where the output goes and where the tasks run."""
    parser.add_argument(
        "--out",
        default=default,
        help="CSV or Parquet (.parquet, with its provenance inside) to write (default "
        "sweep.csv; the record beside it)",
    )
    parser.add_argument(
        "--scheduler", default=default, help="run the tasks on this Dask scheduler (tcp://…)"
    )
    parser.add_argument("--workers", type=int, default=default, help="threads on this machine")
    parser.add_argument(
        "--processes",
        type=int,
        default=default,
        help="run the tasks on a pool of this many processes on this machine",
    )
    limits = (
        ("--max-tasks", int, "refuse more grid points × runs than this (default: no limit)"),
        ("--max-minutes", float, "refuse a sweep estimated longer, on its workers (default: none)"),
        ("--max-memory-gib", float, "refuse a sweep estimated to need more memory (default: none)"),
    )
    for flag, kind, text in limits:
        parser.add_argument(flag, type=kind, default=default, help=text)
    parser.add_argument(
        "--resume",
        action="store_const",
        const=True,
        default=default,
        help="take the tasks a killed run of the same sweep kept (OUT.partial.jsonl) and "
        "run the rest",
    )
    parser.add_argument(
        "--estimate",
        action="store_const",
        const=True,
        default=default,
        help="print the estimated tasks, time and memory, and write nothing",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m dpcore", description=(__doc__ or "").splitlines()[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    sweep = commands.add_parser(
        "sweep",
        help="run a PCA or tensor sweep, or rerun a record (--from)",
        description="The options are the keywords of dpcore.pca_sweep / dpcore.otd_sweep.",
    )
    sweep.add_argument("--from", dest="source", metavar="RECORD.json", help="rerun a record")
    _where(sweep, None)
    tasks = sweep.add_subparsers(dest="task")
    for task in SWEEPS:
        sub = tasks.add_parser(task, help=f"dpcore.{SWEEPS[task].__name__}")
        _where(sub, argparse.SUPPRESS)  # before or after the task: either is read
        for name, param in keywords(task).items():
            flag = "--" + name.replace("_", "-")
            if param.default is False:
                sub.add_argument(flag, action="store_const", const=True, default=argparse.SUPPRESS)
                continue
            shown = "required" if param.default is inspect.Parameter.empty else param.default
            lists = " (comma-separated: the swept axis)" if name in SWEEP_AXES else ""
            if name in LISTS:
                lists = " (comma-separated)"
            if name == "data":
                lists = f" ('synthetic' or one of {', '.join(BUNDLED)})"
            if name in registry.SPEC_PARAMETERS:  # read by some algorithms: say what it sets
                lists += f"; {registry.SPEC_PARAMETERS[name].description}"
            sub.add_argument(flag, default=argparse.SUPPRESS, help=f"default {shown}{lists}")
    return parser


def sweep(args: argparse.Namespace, argv: Sequence[str]) -> int:
    """The ``sweep`` command."""
    if args.source:
        if args.task:
            raise CliError("give --from RECORD.json or a task (pca, otd), not both")
        source = Path(args.source)
        task, params, record = read_record(source)
        recorded = Path(record.get("csv") or record.get("output") or "sweep.csv")
        default_out = source.with_name(recorded.stem + "-rerun" + recorded.suffix)
        out = Path(args.out) if args.out else default_out
    elif args.task:
        given = {
            name: _convert(name, str(getattr(args, name)), param.default)
            if not isinstance(getattr(args, name), bool)
            else getattr(args, name)
            for name, param in keywords(args.task).items()
            if hasattr(args, name)
        }
        task, params, record = args.task, resolve(args.task, given), {}
        out = Path(args.out or "sweep.csv")
    else:
        raise CliError("name a task (pca or otd) or --from RECORD.json")
    if out.suffix.lower() not in OUTPUTS:
        raise CliError(f"--out must name a .csv or a .parquet file; got {out}")
    budget = _budget(args)
    if not args.estimate:
        _check_out(out)
    if args.scheduler and args.processes is not None:
        raise CliError("give --scheduler or --processes, not both")
    with where_executor(args.scheduler, args.processes) as executor:
        workers = planned_workers(args.workers, executor)
        call = sweep_keywords(task, params)
        cost = estimate(task, call, workers)
        if args.estimate:
            print(describe(WHAT[task], cost, workers))
            _check_possible(WHAT[task], cost, workers)
            if budget is not None:
                check_budget(cost, what=WHAT[task], budget=budget)
            print(
                "within the budget" if budget is not None else "no limit applies (--max-minutes …)"
            )
            return 0
        _check_possible(WHAT[task], cost, workers)
        partial, completed = _partial(task, params, out, resume=bool(args.resume))
        try:
            df = run(task, call, executor, args.workers, budget, ProgressLine(), partial, completed)
        finally:
            if partial is not None:
                partial.close()
    command = "python -m dpcore " + shlex.join(argv)
    written = write(task, params, df, out, command)
    if partial is not None:
        partial.close(remove=True)  # the output is whole: nothing left to resume
    print(f"wrote {out} ({len(df)} rows) and {record_path(out)}")
    if record:
        key = "csv" if "csv" in record else "output"
        mine = written.get("csv_sha256") or written.get("output_sha256")
        if mine != record.get(f"{key}_sha256"):
            print(
                f"{out} differs from the recorded {record.get(key)} (SHA-256 "
                f"{str(mine)[:12]} vs {str(record.get(f'{key}_sha256'))[:12]}; "
                f"recorded with numpy {record.get('numpy')}, scipy {record.get('scipy')})",
                file=sys.stderr,
            )
            return 1
        print(f"reproduced bit for bit: SHA-256 {mine}")
    return 0


def _partial(
    task: str, params: dict[str, Any], out: Path, *, resume: bool
) -> tuple[PartialOutput | None, dict[tuple[int, int], list[dict[str, Any]]]]:
    """The partial output of a run, opened, and the tasks it already holds (``resume``).

    Without ``resume`` the file is new (one left by a killed run is refused: its tasks are
    not thrown away unasked). A PCA sweep keeps each task as it finishes; a tensor sweep
    keeps a block of tasks at a time, once the block's batched power method has run
    (:func:`dpcore.run_otd_sweep`).
    """
    header = {"format": RECORD_FORMAT, "task": task, "params": params, "commit": source_commit()}
    partial = PartialOutput(partial_path(out))
    if not resume and partial.path.exists():
        raise CliError(
            f"{partial.path} holds the tasks of a run that did not finish: add --resume to "
            "keep them, or delete it to start afresh"
        )
    completed = partial.read(header) if resume else {}
    if resume:
        print(f"resuming: {len(completed):,} tasks kept in {partial.path}", file=sys.stderr)
    try:
        partial.open(header, fresh=not resume)
    except OSError as err:
        raise CliError(
            f"cannot write {out}'s partial output {partial.path}: {err.strerror}"
        ) from None
    return partial, completed


def _budget(args: argparse.Namespace) -> WorkBudget | None:
    """The ``--max-*`` options as a budget; None when none is given (no limit)."""
    given = {
        "max_tasks": args.max_tasks,
        "max_minutes": args.max_minutes,
        "max_memory_gib": args.max_memory_gib,
    }
    given = {name: value for name, value in given.items() if value is not None}
    if not given:
        return None
    for name, value in given.items():
        if not value > 0:
            raise CliError(f"--{name.replace('_', '-')} must be a number > 0; got {value}")
    return WorkBudget.of(**given)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m dpcore`` (and ``cape-sweep``); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in ("sweep", "-h", "--help"):
        argv = ["sweep", *argv]  # cape-sweep pca … is python -m dpcore sweep pca …
    args = _parser().parse_args(argv)
    try:
        return sweep(args, argv)
    except CliError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except ImportError as err:  # a missing optional package: its one line names the extra
        print(f"error: {err}", file=sys.stderr)
        return 2
    except (ValueError, TypeError) as err:  # the API's own validation, naming the parameter
        print(f"error: {err}", file=sys.stderr)
        return 2
