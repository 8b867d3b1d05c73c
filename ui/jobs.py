"""Heavy work for a classroom: a shared queue with visible positions, one job per student at a
time, a Cancel button, and work that stops when nobody waits for it any more.

Each job runs in a child process (:mod:`ui.worker`) with a memory and a time bound, at a
lower CPU priority and on one core, so two students pressing Run on the heaviest settings
leave the other core to everyone else. Identical requests share one job (the queue is keyed
by the request); finished results and refusals are kept in a small LRU store, so asking
again is free.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import streamlit as st

from dpcore.limits import MAX_MEMORY, MAX_SECONDS
from dpcore.parallel import default_workers
from ui import worker
from ui.guard import show_error

KEPT_RESULTS = 64
POLL_SECONDS = 0.2
# A session whose browser lost its connection is kept by Streamlit for a reconnect; on a
# loaded classroom server a starved browser misses the websocket's pings and reconnects
# seconds later. Its job stops only after this long without a connection (the 30-client
# load run lost a heavy job to such a blip when a missed ping cancelled it at once).
DISCONNECT_GRACE_SECONDS = 20.0


@dataclass(eq=False)
class Ticket:
    """One queued or running request and the sessions waiting for it."""

    key: str
    fn: Callable
    args: tuple
    kwargs: dict
    owners: set[str] = field(default_factory=set)
    job: worker.Job | None = None
    outcome: worker.Outcome | None = None


# Browser sessions that ran the app lately (app.py notes each run): a job started while
# nobody else is here may use every core; with a class present it keeps to one.
ACTIVE_SECONDS = 120.0
_seen: dict[str, float] = {}
_seen_lock = threading.Lock()


def note_visit() -> None:
    """Record that this browser session ran the app just now (app.py, every run)."""
    with _seen_lock:
        _seen[owner_id()] = time.monotonic()


def _others_active(owners: set[str]) -> bool:
    """Whether a connected session besides ``owners`` ran the app in the last
    :data:`ACTIVE_SECONDS` (forgets the rest, so the record stays small)."""
    now = time.monotonic()
    with _seen_lock:
        for session, seen in list(_seen.items()):
            if now - seen > ACTIVE_SECONDS or not _session_alive(session):
                del _seen[session]
        return any(session not in owners for session in _seen)


def _session_alive(owner: str) -> bool:
    """Whether a browser session is still connected (always True outside a server)."""
    from streamlit.runtime import Runtime

    if not Runtime.exists() or owner.startswith("local:"):
        return True
    return Runtime.instance().is_active_session(owner)


class Lane:
    """A FIFO of jobs, ``slots`` of them running at once, each bounded by ``limits``."""

    def __init__(self, name: str, slots: int, limits: worker.Limits) -> None:
        self.name, self.slots, self.limits = name, slots, limits
        self._cond = threading.Condition()
        self._queue: list[Ticket] = []
        self._running: list[Ticket] = []
        self._by_owner: dict[str, Ticket] = {}
        self._results: OrderedDict[str, worker.Outcome] = OrderedDict()
        self._monitor: threading.Thread | None = None
        self._away_since: dict[str, float] = {}  # owner → when its connection was first missed

    # --- what sessions call -----------------------------------------------------------------

    def kept(self, key: str) -> worker.Outcome | None:
        """A finished outcome for ``key`` (result or refusal), if still kept."""
        with self._cond:
            outcome = self._results.get(key)
            if outcome is not None:
                self._results.move_to_end(key)
            return outcome

    def submit(
        self, key: str, fn: Callable, args: tuple, kwargs: dict, owner: str
    ) -> tuple[Ticket, bool]:
        """Queue ``fn(*args, **kwargs)`` for ``owner`` (or join the identical request).

        One job per owner: an earlier unfinished job of the same owner is released (and
        stopped if nobody else waits for it). Returns the ticket and whether that happened.
        """
        with self._cond:
            ticket = next((t for t in self._queue + self._running if t.key == key), None)
            previous = self._by_owner.get(owner)
            replaced = previous is not None and previous is not ticket
            if replaced:
                self._release(previous, owner)
            if ticket is None:
                ticket = Ticket(key, fn, args, kwargs)
                self._queue.append(ticket)
            ticket.owners.add(owner)
            self._by_owner[owner] = ticket
            self._pump()
            if self._monitor is None or not self._monitor.is_alive():
                self._monitor = threading.Thread(
                    target=self._watch, name=f"jobs-{self.name}", daemon=True
                )
                self._monitor.start()
            return ticket, replaced

    def cancel(self, owner: str) -> bool:
        """Release ``owner``'s job (stopped if nobody else waits); True if there was one."""
        with self._cond:
            ticket = self._by_owner.get(owner)
            if ticket is None:
                return False
            self._release(ticket, owner)
            self._cond.notify_all()
            return True

    def position(self, ticket: Ticket) -> tuple[int, int]:
        """(0, running jobs) while running; (place in the queue from 1, queue length)."""
        with self._cond:
            if ticket in self._queue:
                return self._queue.index(ticket) + 1, len(self._queue)
            return 0, len(self._running)

    def wait(self, ticket: Ticket, timeout: float) -> worker.Outcome | None:
        """The ticket's outcome, waiting at most ``timeout`` seconds for it."""
        with self._cond:
            self._cond.wait_for(lambda: ticket.outcome is not None, timeout)
            return ticket.outcome

    def run_blocking(self, key: str, fn: Callable, args: tuple, owner: str) -> worker.Outcome:
        """Submit and wait for the outcome without drawing anything (loads)."""
        kept = self.kept(key)
        if kept is not None:
            return kept
        ticket, _ = self.submit(key, fn, args, {}, owner)
        while (outcome := self.wait(ticket, 1.0)) is None:
            pass
        return outcome

    def busy(self) -> tuple[int, int]:
        """(running, queued) jobs."""
        with self._cond:
            return len(self._running), len(self._queue)

    # --- inside, under the lock ---------------------------------------------------------------

    def _release(self, ticket: Ticket, owner: str) -> None:
        ticket.owners.discard(owner)
        if self._by_owner.get(owner) is ticket:
            del self._by_owner[owner]
        if ticket.owners or ticket.outcome is not None:
            return
        if ticket in self._queue:
            self._queue.remove(ticket)
            ticket.outcome = worker.Outcome("cancelled")
        elif ticket.job is not None:
            ticket.job.kill()  # the monitor collects it

    def _pump(self) -> None:
        while len(self._running) < self.slots and self._queue:
            ticket = self._queue.pop(0)
            limits = self.limits
            if limits.workers is None:  # every core for a lone user, one when a class is here
                alone = not _others_active(ticket.owners)
                limits = replace(limits, workers=default_workers() if alone else 1)
            ticket.job = worker.Job(ticket.fn, ticket.args, ticket.kwargs, limits)
            self._running.append(ticket)

    def _finish(self, ticket: Ticket, outcome: worker.Outcome) -> None:
        self._running.remove(ticket)
        ticket.outcome = outcome
        for owner in list(ticket.owners):
            if self._by_owner.get(owner) is ticket:
                del self._by_owner[owner]
        if outcome.status in ("ok", "refused"):  # deterministic: keep
            self._results[ticket.key] = outcome
            while len(self._results) > KEPT_RESULTS:
                self._results.popitem(last=False)

    def _release_the_gone(self) -> None:
        """Stop waiting for sessions disconnected longer than the grace (tab closed)."""
        now = time.monotonic()
        for owner, ticket in list(self._by_owner.items()):
            if _session_alive(owner):
                self._away_since.pop(owner, None)
            elif now - self._away_since.setdefault(owner, now) >= DISCONNECT_GRACE_SECONDS:
                del self._away_since[owner]
                self._release(ticket, owner)
        for owner in set(self._away_since) - set(self._by_owner):
            del self._away_since[owner]

    def _watch(self) -> None:
        while True:
            with self._cond:
                for ticket in list(self._running):
                    outcome = ticket.job.poll()
                    if outcome is not None:
                        self._finish(ticket, outcome)
                self._release_the_gone()
                self._pump()
                self._cond.notify_all()
                if not self._running and not self._queue:
                    self._monitor = None
                    return
            time.sleep(POLL_SECONDS)


def _memory_limit() -> int:
    # the sweep's own bound (dpcore.limits) plus the interpreter, numpy and thread arenas
    return MAX_MEMORY + int(1.5 * 2**30)


# Heavy sweeps: one at a time on the whole server by default (CAPE_HEAVY_JOBS to change), so
# they never take both cores from the classroom. Loads of files and uploads: their own lane.
# Each runs on one core while other students use the server (two job cores doubled the
# light users' median update in the load run) and on every core for a lone user, e.g. a
# lecturer preparing (Figure 3 recomputed: 133 s on one core, 87 s on two;
# docs/performance.md). CAPE_JOB_WORKERS fixes the number instead.
HEAVY = Lane(
    "heavy",
    slots=int(os.environ.get("CAPE_HEAVY_JOBS", "1") or 1),
    limits=worker.Limits(
        _memory_limit(),
        seconds=1.5 * MAX_SECONDS,
        workers=int(os.environ["CAPE_JOB_WORKERS"]) if os.environ.get("CAPE_JOB_WORKERS") else None,
    ),
)
LOADS = Lane("loads", slots=1, limits=worker.Limits(_memory_limit(), seconds=120, nice=5))


def request_key(fn: Callable, args: tuple, kwargs: dict) -> str:
    """A digest of the request (uploaded bytes included, so it can key a store)."""
    payload = pickle.dumps(
        (fn.__module__, fn.__qualname__, args, sorted(kwargs.items())), protocol=5
    )
    return hashlib.sha256(payload).hexdigest()


def owner_id() -> str:
    """This browser session's id (a fixed local id outside a server)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "local:script"


MESSAGES = {
    "memory": "This computation needed more memory than one job may use "
    f"({_memory_limit() / 2**30:.1f} GiB) and was stopped. Use a smaller D or fewer samples.",
    "timeout": f"This computation ran past {1.5 * MAX_SECONDS / 60:.0f} minutes and was "
    "stopped. Use fewer runs or a shorter grid.",
    "crashed": "This computation failed unexpectedly and was stopped; the server is fine.",
}


def deliver(outcome: worker.Outcome) -> Any:
    """The value of a finished job, or its message on the page (and the page stops)."""
    if outcome.status == "ok":
        return outcome.value
    if outcome.status == "refused":
        show_error(outcome.message)
    elif outcome.status == "cancelled":
        st.info("Cancelled.", icon=":material/cancel:")
    else:
        show_error(MESSAGES[outcome.status])
    st.stop()


def run_heavy(fn: Callable, *args: Any, gate: str, lane: Lane = HEAVY, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` as this session's heavy job: its place in the queue and its
    running time shown, a Cancel button under them; the result once done.

    ``gate`` is the key of the :func:`ui.controls.run_gate` that let the request through:
    a cancel closes that gate again, so the page waits for another Run press.
    """
    key = request_key(fn, args, kwargs)
    kept = lane.kept(key)
    if kept is not None:
        return deliver(kept)
    owner = owner_id()
    cancel_box = st.empty()
    cancel = cancel_box.button(  # one per request: a page may run several jobs in turn
        "Cancel", key=f"{gate}_cancel_{key[:12]}", icon=":material/stop_circle:"
    )
    if cancel:
        lane.cancel(owner)
        st.session_state.pop(f"{gate}_done", None)
        cancel_box.empty()
        deliver(worker.Outcome("cancelled"))
    ticket, replaced = lane.submit(key, fn, args, kwargs, owner)
    if replaced:
        st.toast("Your earlier heavy job was stopped: one at a time per student.")
    status = st.empty()
    started = time.monotonic()
    while (outcome := lane.wait(ticket, 0.5)) is None:
        place, length = lane.position(ticket)
        elapsed = time.monotonic() - started
        if place:
            status.info(
                f"Queued: position {place} of {length} for the heavy-job slot "
                f"({elapsed:.0f} s). Other students' heavy jobs run one at a time so that "
                "the page stays quick for everyone.",
                icon=":material/hourglass_top:",
            )
        else:
            status.info(
                f"Running ({elapsed:.0f} s; stopped after {1.5 * MAX_SECONDS / 60:.0f} "
                "minutes). Cancel stops it; leaving the page does too.",
                icon=":material/hourglass_bottom:",
            )
    status.empty()
    cancel_box.empty()
    return deliver(outcome)


def load_blocking(fn: Callable, *args: Any) -> Any:
    """``fn(*args)`` in the loads lane (bounded child process); raises its ValueError."""
    outcome = LOADS.run_blocking(request_key(fn, args, {}), fn, args, owner_id())
    if outcome.status == "ok":
        return outcome.value
    if outcome.status == "refused":
        raise ValueError(outcome.message)
    if outcome.status == "cancelled":
        raise ValueError("loading the data was cancelled")
    raise ValueError(
        {
            "memory": "the data needed more memory than one load may use",
            "timeout": "the data took longer than 2 minutes to load",
        }.get(outcome.status, "the data could not be loaded")
    )
