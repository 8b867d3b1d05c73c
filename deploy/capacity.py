"""How many students will this server hold? Run it on the lecture's machine before class.

    .venv/bin/python -m deploy.capacity                   # ~2–4 min on an idle 2-core machine
    .venv/bin/python -m deploy.capacity --processes 2     # for `deploy.class_server --processes 2`
    .venv/bin/python -m deploy.capacity --check           # then run that class for real

Three steps, all on this machine:

1. **Calibration.** The fixed CPU loop of :mod:`benchmarks.calibration` (median of 15
   passes), before and after: the machine's speed, and whether it changed during the run.
2. **Costs.** A fresh server (``streamlit run app.py``, file watcher off) and the websocket
   client of :mod:`benchmarks.capacity` price every request a class makes, page by page, as
   server CPU over the server's process tree (/proc, job processes included): opening the page
   at its defaults once computed (a page switch), moving its lecture slider (ε, else its first
   slider) between two computed settings (a follower's move), moving it to a new setting, and
   moving another slider to a new setting (a student on settings of their own); the lecture's
   link computed from scratch and a new seed on it. Each cached figure is the median of
   ``--batches`` batches (default 3) of ``--moves`` moves (the CPU clock ticks in 10 ms).
3. **Prediction.** :func:`simulate` replays the class of ``benchmarks.capacity`` — the same
   students, seeds, waits and choices (4 in 5 follow the lecture and move ε, 1 in 5 pick a new
   seed first and move any slider; every 3–8 s a move (80 %) or a page switch (20 %)) — on a
   model of the server: each app process runs its students' reruns side by side, sharing one
   core (Streamlit runs page scripts under one GIL; processes beyond the cores share them), a
   request's work being its measured CPU. A follower's ε move costs the new-setting price the
   first time anyone reaches that setting, the cached price after. :func:`largest_class` is
   the largest class whose simulated p95 stays within ``--p95`` (default 1 s).

``--check`` then runs ``benchmarks.capacity`` with the predicted number of students (its
default 90-s class) and prints the measured p95 beside the predicted one. The prediction is
for the machine as it is during the measurement: another program's CPU during the class is
not in it (the report gives the load average beside every figure, and the calibration says
how fast the machine ran). docs/performance.md shows runs and how they compare.
"""

from __future__ import annotations

import argparse
import asyncio
import heapq
import json
import os
import statistics
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

LECTURE_PAGE = "pca"  # benchmarks.capacity.LECTURE: the lecturer's link
MOVE_SHARE = 0.8  # a student's action is a move with this probability, else a page switch
WAIT_SECONDS = (3.0, 8.0)  # between a student's actions, uniform
OWN_EVERY = 5  # student i has settings of their own when i % 5 == 4


@dataclass(frozen=True)
class PageCost:
    """Server CPU seconds of each request a class makes on one page.

    Attributes
    ----------
    page : str
        The page's url path.
    open : float
        Opening the page at its defaults, already computed (a page switch).
    cached_move : float
        Moving the lecture slider between two computed settings.
    new_lecture_move : float
        Moving the lecture slider to a setting nobody computed.
    new_move : float
        Moving another slider to a setting nobody computed.
    lecture_values : int
        How many settings the lecture slider has (0: the page has no slider).
    lecture_home : int
        The lecture slider's index at the page's defaults.
    sliders : int
        How many movable sliders the page draws.
    """

    page: str
    open: float
    cached_move: float
    new_lecture_move: float
    new_move: float
    lecture_values: int
    lecture_home: int
    sliders: int


@dataclass(frozen=True)
class ClassCosts:
    """Every page's :class:`PageCost`, and the two requests only the lecture's link makes."""

    pages: tuple[PageCost, ...]
    first_open: float  # the lecture's link on a fresh server: computed from scratch
    new_seed: float  # a new seed on the lecture's page: computed from scratch


def _check_costs(costs: ClassCosts) -> None:
    if not costs.pages:
        raise ValueError("costs.pages must hold at least one page, got none")
    for cost in costs.pages:
        for name in ("open", "cached_move", "new_lecture_move", "new_move"):
            value = getattr(cost, name)
            if not (np.isfinite(value) and 0 <= value <= 600):
                raise ValueError(f"{cost.page}.{name} must be in [0, 600] CPU s; got {value!r}")
    for name in ("first_open", "new_seed"):
        value = getattr(costs, name)
        if not (np.isfinite(value) and 0 <= value <= 600):
            raise ValueError(f"{name} must be in [0, 600] CPU s; got {value!r}")


def _fixed(work: float) -> Callable[[], float]:
    return lambda: work


def _student_requests(
    index: int, costs: ClassCosts, computed: set[tuple[str, int]], seed: int = 2026
) -> Iterable[tuple[float, Callable[[], float], bool]]:
    """Student ``index``'s requests as (wait before it, its CPU seconds when sent, measured?).

    The same draws, in the same order, as ``benchmarks.capacity.student``; the work is read
    when the request is sent, so a follower's ε move is new only for the first to reach it.
    """
    rng = np.random.default_rng([seed, index])
    own = index % OWN_EVERY == OWN_EVERY - 1
    by_page = {cost.page: cost for cost in costs.pages}
    pages = [cost.page for cost in costs.pages]
    page = by_page.get(LECTURE_PAGE, costs.pages[0])
    position = page.lecture_home

    def first() -> float:
        key = (page.page, -1)  # the lecture's link at its defaults
        if key in computed:
            return page.open
        computed.add(key)
        return costs.first_open

    yield 0.0, first, False
    if own:
        yield 0.0, lambda: costs.new_seed, False
    while True:
        wait = float(rng.uniform(*WAIT_SECONDS))
        movable = page.sliders if own else min(page.sliders, 1)
        if movable and rng.random() < MOVE_SHARE:
            choice = int(rng.integers(movable))
            step = -1 if rng.random() < 0.5 else 1
            if own:  # any slider of their own settings: new work (or the lecture slider's)
                work = page.new_lecture_move if choice == 0 else page.new_move
                yield wait, _fixed(work), True
                continue
            target = position + step
            if not 0 <= target < page.lecture_values:
                target = position - step
            position = target

            def move(p: PageCost = page, at: int = target) -> float:
                if (p.page, at) in computed:
                    return p.cached_move
                computed.add((p.page, at))
                return p.new_lecture_move

            yield wait, move, True
        else:
            page = by_page[pages[int(rng.integers(len(pages)))]]
            position = page.lecture_home
            yield wait, _fixed(page.open), True


def simulate(
    costs: ClassCosts,
    students: int,
    *,
    processes: int = 1,
    cores: int = 2,
    speed: float = 1.0,
    seconds: float = 90.0,
    ramp: float = 15.0,
    seed: int = 2026,
) -> dict[str, float]:
    """Latencies of ``benchmarks.capacity``'s class on a model of the server.

    Each of ``processes`` app processes serves students i ≡ k (mod processes) (HAProxy's
    least-connections start, then sticky) and runs their reruns side by side (processor
    sharing) at min(1, cores / processes) of a core, times ``speed``: the share of a core
    one thread gets on a machine shared with other work (:func:`cpu_share`; 1 when idle).
    A student sends the next request a 3–8 s wait after the previous one finished; none
    starts after ``seconds``. ``seed`` 2026 is the benchmark's own class; other seeds are
    other classes of the same kind.

    Returns
    -------
    dict
        ``p50 s``, ``p95 s``, ``max s`` of the moves and page switches (the lecture's link
        and the new seed are served but not counted, as ``benchmarks.capacity`` counts),
        ``interactions`` and ``utilisation`` (the busiest process's share of busy time).
    """
    _check_costs(costs)
    if not 1 <= students <= 10_000:
        raise ValueError(f"students must be in [1, 10000]; got {students!r}")
    if not 1 <= processes <= 64:
        raise ValueError(f"processes must be in [1, 64]; got {processes!r}")
    if not 1 <= cores <= 1024:
        raise ValueError(f"cores must be in [1, 1024]; got {cores!r}")
    if not 0.01 <= speed <= 1:
        raise ValueError(f"speed must be in [0.01, 1]; got {speed!r}")
    if not (1 <= seconds <= 7200 and 0 <= ramp <= seconds):
        raise ValueError(
            f"seconds must be in [1, 7200] and ramp in [0, seconds]; got {seconds}, {ramp}"
        )
    rate = min(1.0, cores / processes) * speed
    computed: set[tuple[str, int]] = set()
    plans = [iter(_student_requests(i, costs, computed, seed)) for i in range(students)]
    pending: dict[int, tuple[Callable[[], float], bool]] = {}  # student → request to send
    due: list[tuple[float, int]] = []  # (time, student): a request to send, or a next choice
    for i in range(students):
        heapq.heappush(due, (ramp * i / students, i))
    running: list[dict[int, list[Any]]] = [{} for _ in range(processes)]  # student → job
    busy = [0.0] * processes
    latencies: list[float] = []
    now = 0.0
    while due or any(running):
        # the next completion under processor sharing
        finish, where, who = float("inf"), -1, -1
        for k, jobs in enumerate(running):
            for s, job in jobs.items():
                at = now + job[0] * len(jobs) / rate
                if at < finish:
                    finish, where, who = at, k, s
        if due and due[0][0] <= finish:
            t, s = heapq.heappop(due)
            _advance(running, busy, t - now, rate)
            now = t
            if s in pending:  # its wait is over: send it
                work, counted = pending.pop(s)
                running[s % processes][s] = [work(), now, counted]
                continue
            wait, work, counted = next(plans[s])
            if now + wait > seconds:  # as benchmarks.capacity: no action past the end
                continue
            pending[s] = (work, counted)
            heapq.heappush(due, (now + wait, s))
        else:
            _advance(running, busy, finish - now, rate)
            now = finish
            _, sent, counted = running[where].pop(who)
            if counted:
                latencies.append(now - sent)
            heapq.heappush(due, (now, who))
    ordered = sorted(latencies) or [float("nan")]
    return {
        "p50 s": round(float(np.median(ordered)), 3),
        "p95 s": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 3),
        "max s": round(ordered[-1], 3),
        "interactions": len(latencies),
        "utilisation": round(max(busy) / max(now, 1e-9), 2),
    }


def _advance(
    running: list[dict[int, list[Any]]], busy: list[float], dt: float, rate: float
) -> None:
    """Run every process's jobs side by side for ``dt`` seconds."""
    for k, jobs in enumerate(running):
        if jobs and dt > 0:
            share = dt * rate / len(jobs)
            for job in jobs.values():
                job[0] = max(0.0, job[0] - share)
            busy[k] += dt


SEEDS = (2026, 2027, 2028, 2029, 2030)  # the benchmark's class and four more of its kind


def class_p95(costs: ClassCosts, students: int, **options: Any) -> float:
    """The median over :data:`SEEDS` of the simulated p95: one class's p95 is its slowest
    twentieth, a few new computations that another draw of the same class would not have."""
    return float(np.median([simulate(costs, students, seed=s, **options)["p95 s"] for s in SEEDS]))


SMALLEST_CLASS = 10  # below it a p95 is the slowest single computation, not the server's load


def largest_class(
    costs: ClassCosts, *, p95: float = 1.0, limit: int = 200, **options: Any
) -> tuple[int, dict[str, float]]:
    """The largest class (≤ ``limit``) whose :func:`class_p95` is ≤ ``p95`` s, searched up
    from :data:`SMALLEST_CLASS` students in steps of 5 to the first that fails, then refined;
    with its simulated latencies (the benchmark's own draw). Below SMALLEST_CLASS a class of
    ~15 requests a student has its p95 at its slowest request: when 10 students fail, the
    largest smaller class that holds (0 if none: one new computation takes longer alone)."""
    if not (0 < p95 <= 60):
        raise ValueError(f"p95 must be in (0, 60] s; got {p95!r}")
    if not 1 <= limit <= 10_000:
        raise ValueError(f"limit must be in [1, 10000]; got {limit!r}")

    def holds(n: int) -> bool:
        return class_p95(costs, n, **options) <= p95

    first = min(SMALLEST_CLASS, limit)
    if not holds(first):
        best = next((n for n in range(first - 1, 0, -1) if holds(n)), 0)
    else:
        best = first
        for n in range(first + 5, limit + 5, 5):
            n = min(n, limit)
            if not holds(n):
                best = next((m for m in range(n - 1, best, -1) if holds(m)), best)
                break
            best = n
            if n == limit:
                break
    return best, simulate(costs, max(best, 1), **options)


# --- measuring the costs on a real server ---------------------------------------------------


def _tree_cpu(pid: int) -> float:
    from benchmarks.tree_cpu import tree_seconds

    return float(tree_seconds(pid))


async def _timed(pid: int, request: Awaitable[Any]) -> float:
    """Server tree CPU seconds of one request (a coroutine not yet started)."""
    before = _tree_cpu(pid)
    await request
    return _tree_cpu(pid) - before


async def _batched(pid: int, count: int, batches: int, request: Callable[[int], Any]) -> float:
    """Median over ``batches`` of (server tree CPU of ``count`` requests) / count."""
    readings = []
    for b in range(batches):
        before = _tree_cpu(pid)
        for i in range(count):
            await request(b * count + i)
        readings.append((_tree_cpu(pid) - before) / count)
    return statistics.median(readings)


async def page_cost(base: str, pid: int, page: str, moves: int, batches: int) -> PageCost:
    """Price every request of the class on ``page`` (the module's step 2)."""
    from benchmarks.capacity import Session

    session = Session(base, timeout=300)
    try:
        await session.connect()
        await session.rerun(page=page, query="")  # computes the defaults
        opened = await _batched(pid, 2, batches, lambda i: session.rerun(page=page, query=""))
        sliders = session.sliders()
        if not sliders:
            return PageCost(page, opened, 0.0, 0.0, 0.0, 0, 0, 0)
        lecture = next((w for w in sliders if w.label == "Privacy ε"), sliders[0])
        home, size = lecture.index, len(lecture.values)
        other = home + 1 if home + 1 < size else home - 1
        for index in (other, home):
            await session.move(lecture.label, index)
        cached = await _batched(
            pid,
            moves,
            batches,
            lambda i: session.move(lecture.label, other if i % 2 == 0 else home),
        )
        # new settings: the lecture slider two and three steps away, then another slider
        fresh = [i for i in (home + 2, home + 3, home - 2, home - 3) if 0 <= i < size][:2]
        new_lecture = statistics.median(
            [await _timed(pid, session.move(lecture.label, i)) for i in fresh] or [cached]
        )
        await session.move(lecture.label, home)
        others = [w for w in sliders if w is not lecture]
        new_other = new_lecture
        if others:
            widget = others[0]
            steps = [
                i
                for i in (widget.index + 1, widget.index + 2, widget.index - 1)
                if 0 <= i < len(widget.values)
            ][:2]
            new_other = statistics.median(
                [await _timed(pid, session.move(widget.label, i)) for i in steps]
            )
        if session.errors:
            raise RuntimeError(f"{page}: {session.errors[:3]}")
        return PageCost(page, opened, cached, new_lecture, new_other, size, home, len(sliders))
    finally:
        await session.close()


async def measure_costs(base: str, pid: int, moves: int = 6, batches: int = 3) -> ClassCosts:
    """:class:`ClassCosts` of the fresh server at ``base`` (app process ``pid``)."""
    from benchmarks.capacity import OWN_SETTING, Session

    session = Session(base, timeout=300)
    try:
        await session.connect()
        first = await _timed(pid, session.rerun(page=LECTURE_PAGE, query=""))
        pages = list(session.pages)
        seeds = []
        if OWN_SETTING in session.widgets:
            seed = session.widgets[OWN_SETTING]
            for step in (1, 2):
                index = (seed.index + step) % len(seed.values)
                seeds.append(await _timed(pid, session.move(OWN_SETTING, index)))
    finally:
        await session.close()
    rows = [await page_cost(base, pid, page, moves, batches) for page in pages]
    return ClassCosts(tuple(rows), first, statistics.median(seeds) if seeds else first)


def cpu_share(passes: int = 9) -> float:
    """The share of a core one busy thread gets on this machine now: the median over
    ``passes`` of the calibration workload's CPU time / wall time (1 on an idle machine)."""
    from benchmarks import calibration

    shares = []
    for _ in range(passes):
        wall, cpu = time.perf_counter(), time.process_time()
        calibration.workload()
        shares.append((time.process_time() - cpu) / max(time.perf_counter() - wall, 1e-9))
    return min(1.0, statistics.median(shares))


def predict(
    *,
    processes: int = 1,
    p95: float = 1.0,
    moves: int = 6,
    batches: int = 3,
    ports: range | None = None,
) -> dict[str, Any]:
    """Steps 1–3 of the module on this machine; the report as a dict."""
    from benchmarks import calibration
    from benchmarks.capacity import machine
    from benchmarks.server import streamlit_server

    os.environ.setdefault("STREAMLIT_SERVER_FILE_WATCHER_TYPE", "none")
    load = os.getloadavg()[0]
    loop_before = calibration.loop_ms(15)
    share_before = cpu_share()
    start = time.perf_counter()
    with streamlit_server(timeout=120, port=None if ports is None else ports[0]) as (base, proc):
        costs = asyncio.run(measure_costs(base, proc.pid, moves, batches))
    loop_after = calibration.loop_ms(15)
    cores = os.cpu_count() or 1
    share = statistics.median([share_before, cpu_share()])
    # the machine as it is now (other programs' load takes its share) and as it is idle
    students, latencies = largest_class(
        costs, p95=p95, processes=processes, cores=cores, speed=share
    )
    idle, idle_latencies = largest_class(costs, p95=p95, processes=processes, cores=cores)
    twice = simulate(costs, max(2 * students, 2), processes=processes, cores=cores, speed=share)
    loop = statistics.median([loop_before, loop_after])
    scale = calibration.REFERENCE_MS / loop
    return {
        "students": students,
        "p95 bound s": p95,
        "share of a core per thread (other load)": round(share, 2),
        "students on this machine idle": idle,
        "predicted latencies idle (the benchmark's class)": idle_latencies,
        "predicted p95 s at that size (median of 5 classes)": class_p95(
            costs, max(students, 1), processes=processes, cores=cores, speed=share
        ),
        "predicted latencies at that size (the benchmark's class)": latencies,
        f"predicted at {max(2 * students, 2)} students": twice,
        "app processes": processes,
        "reference-machine ms per ms here": round(scale, 2),
        "per page (server tree CPU ms)": [
            {
                "page": c.page,
                "open (cached)": round(1000 * c.open, 1),
                "cached move": round(1000 * c.cached_move, 1),
                "cached move, reference ms": round(1000 * c.cached_move * scale, 1),
                "new lecture-slider move": round(1000 * c.new_lecture_move, 1),
                "new other-slider move": round(1000 * c.new_move, 1),
            }
            for c in costs.pages
        ],
        "lecture link from scratch ms": round(1000 * costs.first_open, 1),
        "new seed ms": round(1000 * costs.new_seed, 1),
        "costs": asdict(costs),
        "calibration loop ms (before, after)": [round(loop_before, 1), round(loop_after, 1)],
        "reference calibration loop ms": calibration.REFERENCE_MS,
        "measuring took s": round(time.perf_counter() - start, 1),
        **machine(),
        "load average at start": round(load, 2),
        "load average at end": round(os.getloadavg()[0], 2),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=1, help="app processes (class_server)")
    parser.add_argument("--p95", type=float, default=1.0, help="the wait to hold, seconds")
    parser.add_argument("--moves", type=int, default=6, help="cached moves per batch")
    parser.add_argument("--batches", type=int, default=3, help="batches per cached figure")
    parser.add_argument("--check", action="store_true", help="then run that class for real")
    parser.add_argument(
        "--check-students", type=int, default=0, help="then run a class of this many instead"
    )
    parser.add_argument("--ports", metavar="LO-HI", default=None, help="e.g. 8620-8629")
    args = parser.parse_args(argv)
    if not 1 <= args.processes <= 64:
        parser.error(f"--processes must be in [1, 64]; got {args.processes}")
    if not 0 <= args.check_students <= 200:
        parser.error(f"--check-students must be in [0, 200]; got {args.check_students}")
    if not 0 < args.p95 <= 60:
        parser.error(f"--p95 must be in (0, 60] seconds; got {args.p95}")
    if not (1 <= args.moves <= 100 and 1 <= args.batches <= 20):
        parser.error(
            "--moves must be in [1, 100] and --batches in [1, 20];"
            f" got {args.moves}, {args.batches}"
        )
    from benchmarks.capacity import port_range

    try:
        ports = port_range(args.ports)
    except ValueError as err:
        parser.error(str(err))
    report = predict(
        processes=args.processes, p95=args.p95, moves=args.moves, batches=args.batches, ports=ports
    )
    students = report["students"]
    print(json.dumps(report, indent=2))
    print(
        f"This machine holds {students} students at p95 ≤ {args.p95:g} s with "
        f"{args.processes} app process(es) as loaded now (a thread got "
        f"{report['share of a core per thread (other load)']:.0%} of a core; "
        f"load average {report['load average at start']} → {report['load average at end']}), "
        f"{report['students on this machine idle']} with nothing else running "
        f"(calibration loop {report['calibration loop ms (before, after)']} ms; reference "
        f"machine {report['reference calibration loop ms']} ms)."
    )
    if args.check or args.check_students:
        print(
            json.dumps(
                check(report, args.check_students or students, args.processes, ports), indent=2
            )
        )


def check(report: dict[str, Any], students: int, processes: int, ports: range | None) -> dict:
    """Run ``benchmarks.capacity``'s class of ``students`` on a fresh server (layout) and
    put its measured latencies beside the ones :func:`simulate` predicts from ``report``'s
    costs at the share of a core the machine gives a thread during the run."""
    from benchmarks import capacity

    costs = ClassCosts(
        tuple(PageCost(**row) for row in report["costs"]["pages"]),
        report["costs"]["first_open"],
        report["costs"]["new_seed"],
    )
    cores = os.cpu_count() or 1
    share_before = cpu_share()
    measured = capacity.measure(
        students=max(students, 1), processes=processes if processes > 1 else None, ports=ports
    )
    share = statistics.median([share_before, cpu_share()])
    return {
        "check: students": students,
        "share of a core per thread during the run (before, after)": round(share, 2),
        "predicted at that share": {
            "p95 s (median of 5 classes)": class_p95(
                costs, max(students, 1), processes=processes, cores=cores, speed=share
            ),
            **simulate(costs, max(students, 1), processes=processes, cores=cores, speed=share),
        },
        "measured (benchmarks.capacity)": measured["interaction"],
        "measured interactions": measured["interactions"],
        "measured server CPU per interaction ms": measured["server CPU per interaction ms"],
        "measured errors": measured["errors"],
        "load average at start": measured["load average at start"],
        "load average at end": round(os.getloadavg()[0], 2),
    }


if __name__ == "__main__":
    main()
