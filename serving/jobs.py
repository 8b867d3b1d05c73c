"""Heavy work for a classroom: a shared queue with visible positions, one job per student at a
time, a Cancel button, and work that stops when nobody waits for it any more.

Each job runs in a child process (:mod:`serving.worker`) with a memory and a time bound, at a
lower CPU priority and on one core, so two students pressing Run on the heaviest settings
leave the other core to everyone else. Identical requests share one job (the queue is keyed
by the request); finished results and refusals are kept in a small LRU store, so asking
again is free. The queue's widgets (place, progress, Cancel) are in :mod:`ui.jobs`.
With ``CAPE_RESULT_STORE`` set, the heavy lane also keeps its results in a disk store that
every app process of a multi-process server shares (:mod:`serving.store`), so a result one
process computed is an answer in all.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from dpcore import MAX_MEMORY, MAX_SECONDS, default_workers
from serving import worker
from serving.store import DiskStore, store_from_env

KEPT_RESULTS = 64
POLL_SECONDS = 0.2
# A session whose browser lost its connection is kept by Streamlit for a reconnect; on a
# loaded classroom server a starved browser misses the websocket's pings and reconnects
# seconds later. Its job stops only after this long without a connection (the 30-client
# load run lost a heavy job to such a blip when a missed ping cancelled it at once).
# CAPE_DISCONNECT_GRACE_SECONDS sets another grace (tests/app/test_load.py: a short one, so that
# checking that a closed tab's job stops waits seconds, not twenty).
GRACE_ENV = "CAPE_DISCONNECT_GRACE_SECONDS"


def disconnect_grace() -> float:
    """The grace in seconds: ``CAPE_DISCONNECT_GRACE_SECONDS`` if set, else 20.

    Raises
    ------
    ValueError
        If the variable is set to something other than a number ≥ 0, naming it and the value.
    """
    text = os.environ.get(GRACE_ENV, "").strip()
    if not text:
        return 20.0
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:  # NaN too
        raise ValueError(f"{GRACE_ENV} must be a number of seconds ≥ 0, got {text!r}")
    return seconds


DISCONNECT_GRACE_SECONDS = disconnect_grace()


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
    then_follow_up: bool = False  # its page queues a follow-up with its result


# Browser sessions that ran the app lately (app.py notes each run): a job started while
# nobody else is here may use every core; with a class present it keeps to one.
ACTIVE_SECONDS = 120.0
# A page's second job (the tensor page's example after its sweep) queued within this long of
# the first one's end keeps the owner's place (Lane.submit's follow_up).
FOLLOW_UP_SECONDS = 30.0
# A job whose page queues a follow-up (Lane.submit's then_follow_up) keeps its slot this long
# after it ends, for that follow-up: the page first draws the result (a few seconds on a
# loaded server), and without the hold the monitor gave the slot to the job queued behind,
# so the follow-up kept its place but waited for that whole job (issue #36).
FOLLOW_UP_HOLD_SECONDS = 10.0
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
    """Whether a browser session (or any tab of a browser, :func:`owner_id`) is still
    connected (always True outside a server)."""
    from streamlit.runtime import Runtime

    if not Runtime.exists() or owner.startswith("local:"):
        return True
    with _tabs_lock:
        sessions = list(_TABS.get(owner, ())) or [owner]
    return any(Runtime.instance().is_active_session(s) for s in sessions)


class Lane:
    """A FIFO of jobs, ``slots`` of them running at once, each bounded by ``limits``;
    finished results kept in memory (LRU) and, with a ``store``, on disk for every process."""

    def __init__(
        self, name: str, slots: int, limits: worker.Limits, store: DiskStore | None = None
    ) -> None:
        self.name, self.slots, self.limits, self.store = name, slots, limits, store
        self._to_store: list[tuple[str, worker.Outcome]] = []  # written outside the lock
        self._cond = threading.Condition()
        self._queue: list[Ticket] = []
        self._running: list[Ticket] = []
        self._by_owner: dict[str, Ticket] = {}
        self._results: OrderedDict[str, worker.Outcome] = OrderedDict()
        self._monitor: threading.Thread | None = None
        self._away_since: dict[str, float] = {}  # owner → when its connection was first missed
        self._ended: dict[str, float] = {}  # owner → when its last job ended (follow-ups)
        self._holds: list[tuple[frozenset[str], float]] = []  # slots held: (owners, until)

    # --- what sessions call -----------------------------------------------------------------

    def kept(self, key: str) -> worker.Outcome | None:
        """A finished outcome for ``key`` (result or refusal), if still kept here or in the
        shared store (read outside the lock: a disk read never holds up the queue)."""
        with self._cond:
            outcome = self._results.get(key)
            if outcome is not None:
                self._results.move_to_end(key)
                return outcome
        if self.store is None:
            return None
        try:
            stored = self.store.get(key)
        except OSError:  # the store is unreadable: compute, as without one
            return None
        if not isinstance(stored, worker.Outcome):
            return None
        with self._cond:
            self._keep(key, stored)
        return stored

    def submit(
        self,
        key: str,
        fn: Callable,
        args: tuple,
        kwargs: dict,
        owner: str,
        follow_up: bool = False,
        then_follow_up: bool = False,
    ) -> tuple[Ticket, bool]:
        """Queue ``fn(*args, **kwargs)`` for ``owner`` (or join the identical request).

        One job per owner: an earlier unfinished job of the same owner is released (and
        stopped if nobody else waits for it). Returns the ticket and whether that happened.
        A ``follow_up`` (the second job a page queues with the first one's result) keeps
        the owner's place: it goes to the head of the queue if the owner's previous job
        ended less than :data:`FOLLOW_UP_SECONDS` ago, not to the back. A job submitted
        with ``then_follow_up`` holds its slot for its owners for
        :data:`FOLLOW_UP_HOLD_SECONDS` after it succeeds, so that the follow-up runs at once.
        """
        with self._cond:
            self._drop_holds(owner)  # the owner's next job: the held slot is free for it
            ticket = next((t for t in self._queue + self._running if t.key == key), None)
            previous = self._by_owner.get(owner)
            replaced = False
            if previous is not None and previous is not ticket:
                replaced = True
                self._release(previous, owner)
            if ticket is None:
                ticket = Ticket(key, fn, args, kwargs, then_follow_up=then_follow_up)
                ended = self._ended.get(owner)
                if follow_up and ended is not None and time.monotonic() - ended < FOLLOW_UP_SECONDS:
                    self._queue.insert(0, ticket)
                else:
                    self._queue.append(ticket)
            ticket.then_follow_up |= then_follow_up
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
            self._drop_holds(owner)
            ticket = self._by_owner.get(owner)
            if ticket is None:
                return False
            self._release(ticket, owner)
            self._cond.notify_all()
            return True

    def release_hold(self, owner: str) -> None:
        """Give up a slot held for ``owner``'s follow-up (it was answered without a job)."""
        with self._cond:
            self._drop_holds(owner)
            self._pump()

    def position(self, ticket: Ticket) -> tuple[int, int]:
        """(0, running jobs) while running; (place in the queue from 1, queue length)."""
        with self._cond:
            if ticket in self._queue:
                return self._queue.index(ticket) + 1, len(self._queue)
            return 0, len(self._running)

    def progress(self, ticket: Ticket) -> tuple[int, int, float]:
        """(tasks done, tasks known, seconds running) of a running ticket; zeros otherwise."""
        with self._cond:
            job = ticket.job
            if job is None or ticket not in self._running:
                return 0, 0, 0.0
            done, total = job.progress()
            return done, total, time.monotonic() - job.started

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

    def _drop_holds(self, owner: str) -> None:
        self._holds = [hold for hold in self._holds if owner not in hold[0]]

    def _pump(self) -> None:
        now = time.monotonic()
        self._holds = [hold for hold in self._holds if hold[1] > now]
        while len(self._running) + len(self._holds) < self.slots and self._queue:
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
        now = time.monotonic()
        if ticket.then_follow_up and outcome.status == "ok" and ticket.owners:
            self._holds.append((frozenset(ticket.owners), now + FOLLOW_UP_HOLD_SECONDS))
        for owner in list(ticket.owners):
            self._ended[owner] = now
            if self._by_owner.get(owner) is ticket:
                del self._by_owner[owner]
        for owner, ended in list(self._ended.items()):  # keep the record small
            if now - ended > FOLLOW_UP_SECONDS:
                del self._ended[owner]
        if outcome.status in ("ok", "refused"):  # deterministic: keep
            self._keep(ticket.key, outcome)
            if self.store is not None:
                self._to_store.append((ticket.key, outcome))

    def _keep(self, key: str, outcome: worker.Outcome) -> None:
        self._results[key] = outcome
        self._results.move_to_end(key)
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
                    # _pump gives every ticket its job as it starts running
                    assert ticket.job is not None, "a running ticket without its job"
                    outcome = ticket.job.poll()
                    if outcome is not None:
                        self._finish(ticket, outcome)
                self._release_the_gone()
                self._pump()
                self._cond.notify_all()
                writes, self._to_store = self._to_store, []
                idle = not self._running and not self._queue
                if idle:
                    self._monitor = None
            self._save(writes)
            if idle:
                return
            time.sleep(POLL_SECONDS)

    def _save(self, writes: list[tuple[str, worker.Outcome]]) -> None:
        """Write finished outcomes to the shared store; a failing store (full disk, a value
        that does not pickle) costs only the sharing, never the queue."""
        for key, outcome in writes:
            try:
                self.store.put(key, outcome)  # type: ignore[union-attr]
            except Exception as err:
                warnings.warn(f"result store: {type(err).__name__}: {err}", stacklevel=2)


def _memory_limit() -> int:
    # the sweep's own bound (dpcore.experiments.limits) plus the interpreter, numpy and thread
    # arenas
    return MAX_MEMORY + int(1.5 * 2**30)


# Heavy sweeps: one at a time per app process by default (CAPE_HEAVY_JOBS to change), so on
# one process they never take both cores from the classroom (N processes behind the proxy
# run up to N: docs/performance.md sizes them). Loads of files and uploads: their own lane.
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
    store=store_from_env(),  # CAPE_RESULT_STORE: shared by every process of the server
)
LOADS = Lane("loads", slots=1, limits=worker.Limits(_memory_limit(), seconds=120, nice=5))


def request_key(fn: Callable, args: tuple, kwargs: dict) -> str:
    """A digest of the request (uploaded bytes included, so it can key a store)."""
    payload = pickle.dumps(
        (fn.__module__, fn.__qualname__, args, sorted(kwargs.items())), protocol=5
    )
    return hashlib.sha256(payload).hexdigest()


def browser_key(xsrf_cookie: str | None) -> str | None:
    """A stable id of the browser behind Streamlit's XSRF cookie, which all its tabs share.

    The cookie is ``2|mask|masked token|time``; the server re-masks it on every page load,
    so the token itself (unmasked) identifies the browser. Hashed: the id never carries the
    token. None without a cookie (XSRF off, or a test).
    """
    if not xsrf_cookie or not isinstance(xsrf_cookie, str):
        return None
    value = xsrf_cookie.strip("\"'")
    try:
        _, mask_hex, masked_hex, _ = value.split("|")
        mask, masked = bytes.fromhex(mask_hex), bytes.fromhex(masked_hex)
        token = bytes(b ^ mask[i % len(mask)] for i, b in enumerate(masked))
    except (ValueError, ZeroDivisionError):
        token = value.encode()
    return "browser:" + hashlib.sha256(token).hexdigest()[:24]


# browser key → its sessions (tabs) seen, so that the browser's job lives while a tab does
_TABS: dict[str, set[str]] = {}
_tabs_lock = threading.Lock()


def _xsrf_cookie() -> str | None:
    import streamlit as st  # the request's context (its cookies), not a widget

    try:
        cookie = st.context.cookies.get("_streamlit_xsrf")
    except Exception:  # no request context: one place per session
        return None
    return cookie if isinstance(cookie, str) else None  # AppTest gives a stand-in


def owner_id() -> str:
    """Who holds a queue place: this browser (all its tabs share the XSRF cookie,
    :func:`browser_key`), else this session; a fixed local id outside a server."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None:
        return "local:script"
    browser = browser_key(_xsrf_cookie())
    if browser is None:
        return ctx.session_id
    with _tabs_lock:
        tabs = _TABS.setdefault(browser, set())
        if ctx.session_id not in tabs:
            from streamlit.runtime import Runtime

            alive = Runtime.exists() and Runtime.instance().is_active_session
            tabs.intersection_update({s for s in tabs if alive and alive(s)})
            tabs.add(ctx.session_id)
    return browser


MESSAGES = {
    "memory": "This computation needed more memory than one job may use "
    f"({_memory_limit() / 2**30:.1f} GiB) and was stopped. Use a smaller D or fewer samples.",
    "timeout": f"This computation ran past {1.5 * MAX_SECONDS / 60:.0f} minutes and was "
    "stopped. Use fewer runs or a shorter grid.",
    "crashed": "This computation failed unexpectedly and was stopped; the server is fine.",
}


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(seconds, 1):.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def progress_text(done: int, total: int, seconds: float) -> tuple[float, str]:
    """The fraction done and a line saying it, with an estimate of the time left.

    The estimate assumes the remaining tasks take as long as the finished ones did on
    average: time left = running time × (total − done) / done. Before the first task is done
    there is no rate yet, and once every known task is done the sweep may still be in a stage
    that has no tasks (the tensor power method): both say so instead of guessing.
    """
    if total <= 0:
        return 0.0, f"Starting ({_duration(seconds)} so far)."
    done = min(done, total)
    fraction = done / total
    head = f"{done} of {total} tasks done ({fraction:.0%}), {_duration(seconds)} so far"
    if done == 0:
        return fraction, f"{head}; the first task gives the estimate."
    if done == total:
        return fraction, f"{head}; finishing."
    left = seconds * (total - done) / done
    return fraction, f"{head}, about {_duration(left)} left."


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
