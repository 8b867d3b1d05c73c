"""Capacity benchmark: a class of simulated students on the real server's websocket protocol.

Usage::

    .venv/bin/python -m benchmarks.capacity                       # 30 students, 90 s
    .venv/bin/python -m benchmarks.capacity --students 60 --seconds 120
    .venv/bin/python -m benchmarks.capacity --per-page            # CPU per cached move, every page
    .venv/bin/python -m benchmarks.capacity --url http://127.0.0.1:8501   # a running server
    .venv/bin/python -m benchmarks.capacity --profile pca       # where a cached rerun's time goes
    .venv/bin/python -m benchmarks.capacity --processes 2       # 2 app processes behind HAProxy
    .venv/bin/python -m benchmarks.capacity --compare-processes 1,2 --students 30   # the ratio

Each student is one websocket client speaking Streamlit's own protocol (``BackMsg`` /
``ForwardMsg`` protobufs from the installed ``streamlit`` package), not a browser: it opens
the lecturer's link (:data:`LECTURE`), then every 3–8 s (seeded per student) moves a slider
of the page one step (80 %) or switches page (20 %). A fifth of the students first change the
seed of the page and then move any slider (their own settings: every move of theirs is new
work); the others follow the lecture and move ε (the slider the lecturer demonstrates), so
most of their moves land on a setting already computed, the classroom's common case.
``--wander`` makes every student move any slider.

For every interaction it records the seconds from sending the rerun to the server's
``script_finished`` (the rerun's last message). The report gives p50 / p95 / max, errors
(an exception or error box on the page, a page not found, a lost connection, a timeout: must
be 0), the server process's CPU time per interaction (``/proc/PID/stat``, so the load of the
machine barely moves it) and its memory over time.

``--processes N`` runs the class against the lecture-hall layout instead of one server
(:mod:`deploy.class_server`: N app processes behind HAProxy with sticky sessions, a shared
result store): the students connect to the proxy, keep its cookie, and the CPU and memory are
summed over the N app processes (the proxy's own CPU is reported apart).
``--compare-processes 1,2`` runs the same class (same seeds) on each layout in turn, each on a
fresh set of servers, and reports the latencies side by side with their ratios.

``--per-page`` measures the server CPU of a slider move on a setting already computed, on
every page: open the page, move its first slider one step, back, and again (the third move
is cached), then repeat the cached move ``--repeats`` times and divide the server's CPU time
by the count (the clock ticks in 10 ms steps, so one move alone would be too coarse). Beside
each page it times the fixed calibration loop (:mod:`benchmarks.calibration`, median of 7
passes) and gives the page's figure in milliseconds of the reference machine too
(ms × ``REFERENCE_MS`` / loop ms), so that runs on different machines compare.

Everything is bounded (a timeout per wait, a deadline per run) and talks only to 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import time
import urllib.request
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import calibration
from benchmarks.server import cpu_seconds, rss_mib, streamlit_server
from figures.theme import is_verdict_icon


def _verdict(element) -> bool:
    """Whether an error box is one of the pages' verdicts: content, not a failure, told by
    its icon (:data:`figures.theme.VERDICT_ICON`)."""
    return is_verdict_icon(element.alert.icon)


def _cpu(pids: list[int]) -> float:
    """CPU seconds used so far by the app processes ``pids``, summed."""
    return sum(cpu_seconds(pid) for pid in pids)


def _rss(pids: list[int]) -> float:
    """Resident memory of the app processes ``pids``, summed, MiB."""
    return sum(rss_mib(pid) for pid in pids)


# The link the lecturer shares: the PCA page at its defaults.
LECTURE = ("pca", "")
# A student on settings of their own changes this widget (a new seed: nothing cached).
OWN_SETTING = "Seed"
SLIDER_KINDS = ("slider", "number_input")
FINISHED = {0, 3}  # ScriptFinishedStatus: FINISHED_SUCCESSFULLY, FINISHED_FRAGMENT_RUN_...


@dataclass
class Widget:
    """A movable widget as the server last drew it: ``values`` are the wire values it can take
    (a slider's grid, a select slider's formatted options), ``index`` the current one."""

    id: str
    kind: str  # "slider" (numbers), "select_slider" (strings), "number_input"
    label: str
    values: list[Any]
    index: int
    integer: bool
    fragment_id: str = ""

    def state(self, index: int) -> Any:
        from streamlit.proto.Common_pb2 import DoubleArray, StringArray
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        value = self.values[index]
        if self.kind == "select_slider":
            return WidgetState(id=self.id, string_array_value=StringArray(data=[value]))
        if self.kind == "number_input":
            if self.integer:
                return WidgetState(id=self.id, int_value=int(value))
            return WidgetState(id=self.id, double_value=float(value))
        return WidgetState(id=self.id, double_array_value=DoubleArray(data=[float(value)]))


def _widget(element: Any, fragment_id: str) -> Widget | None:
    """The movable widget of a delta's element, if it is one (sliders and number inputs)."""
    kind = element.WhichOneof("type")
    if kind == "slider":
        proto = element.slider
        if proto.disabled or len(proto.value or proto.default) != 1:
            return None  # a range slider or a disabled one: not a student's move
        current = (proto.value if proto.set_value and proto.value else proto.default)[0]
        if proto.options:
            values: list[Any] = list(proto.options)
            index = int(current)
            return Widget(proto.id, "select_slider", proto.label, values, index, False, fragment_id)
        integer = proto.data_type == 0
        if proto.data_type not in (0, 1) or proto.step <= 0:
            return None
        count = round((proto.max - proto.min) / proto.step) + 1
        if count < 2:
            return None
        values = [proto.min + i * proto.step for i in range(min(count, 10_000))]
        index = round((current - proto.min) / proto.step)
        return Widget(proto.id, "slider", proto.label, values, index, integer, fragment_id)
    if kind == "number_input":
        proto = element.number_input
        if proto.disabled:
            return None
        integer = proto.data_type == proto.INT
        current = proto.value if proto.set_value else proto.default
        step = proto.step or 1
        lo = proto.min if proto.has_min else current - 100 * step
        count = round((proto.max - lo) / step) + 1 if proto.has_max else 201
        values = [round(lo + i * step, 10) for i in range(min(count, 10_000))]
        if len(values) < 2:
            return None
        index = min(range(len(values)), key=lambda i: abs(values[i] - current))
        return Widget(proto.id, "number_input", proto.label, values, index, integer, fragment_id)
    return None


@dataclass
class Session:
    """One simulated browser tab on the server at ``base`` (``http://127.0.0.1:PORT``)."""

    base: str
    timeout: float = 60.0
    widgets: dict[str, Widget] = field(default_factory=dict)
    pages: dict[str, str] = field(default_factory=dict)  # url path → page script hash
    page_hash: str = ""
    query: str = ""
    errors: list[str] = field(default_factory=list)
    xsrf: str = ""
    cookies: dict[str, str] = field(default_factory=dict)  # as a browser keeps them
    process: str = ""  # the app process behind a proxy (its X-Cape-Process header)
    session_id: str = ""
    messages: int = 0  # ForwardMsgs received: one per element, block and status change
    _states: dict[str, Any] = field(default_factory=dict)  # widget id → WidgetState sent
    _finished: int = 0
    _changed: asyncio.Condition | None = None
    _ws: Any = None
    _reader: asyncio.Task | None = None

    async def connect(self) -> None:
        """Fetch the cookies as a browser does (health route: Streamlit's XSRF cookie and,
        behind the proxy, its sticky ``CAPE_PROCESS`` cookie), open the websocket with them."""
        import websockets

        def fetch_cookies() -> None:
            kept = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
            request = urllib.request.Request(
                f"{self.base}/_stcore/health", headers={"Cookie": kept} if kept else {}
            )
            with urllib.request.urlopen(request, timeout=self.timeout) as r:
                self.process = r.headers.get("X-Cape-Process", "")
                for header in r.headers.get_all("Set-Cookie") or []:
                    name, _, rest = header.partition("=")
                    self.cookies[name.strip()] = rest.split(";")[0]

        await asyncio.to_thread(fetch_cookies)
        self.xsrf = self.cookies.get("_streamlit_xsrf", "")
        self._changed = asyncio.Condition()
        headers = {"Origin": self.base}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        ws_url = self.base.replace("http://", "ws://", 1) + "/_stcore/stream"
        self._ws = await websockets.connect(
            ws_url,
            subprotocols=["streamlit", self.xsrf or "x"],
            additional_headers=headers,
            max_size=None,
            open_timeout=self.timeout,
            ping_interval=None,  # a loaded server must not drop us for a late pong
        )
        self._reader = asyncio.create_task(self._read())

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()

    async def _read(self) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        try:
            async for data in self._ws:
                msg = ForwardMsg()
                msg.ParseFromString(data)
                try:
                    await self._handle(msg)
                except Exception as err:  # a message this client misreads: say so, go on
                    self.errors.append(f"client: {type(err).__name__}: {str(err)[:100]}")
        except Exception as err:  # the connection ended: a waiting rerun reports it
            self.errors.append(f"connection: {type(err).__name__}: {str(err)[:100]}")
        finally:
            async with self._changed:
                self._finished = -(10**9)  # wakes every waiter, who sees the error
                self._changed.notify_all()

    async def _handle(self, msg: Any) -> None:
        self.messages += 1
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            new = msg.new_session
            if new.initialize.session_id:
                self.session_id = new.initialize.session_id
            if new.page_script_hash and new.page_script_hash != self.page_hash:
                self.page_hash = new.page_script_hash
                self.widgets.clear()
                self._states.clear()
        elif kind == "navigation":
            for page in msg.navigation.app_pages:
                self.pages[page.url_pathname] = page.page_script_hash
            if msg.navigation.page_script_hash:
                self.page_hash = msg.navigation.page_script_hash
        elif kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string
        elif kind == "page_not_found":
            self.errors.append(f"page not found: {msg.page_not_found.page_name}")
        elif kind == "delta":
            delta = msg.delta
            if delta.WhichOneof("type") == "new_element":
                element = delta.new_element
                etype = element.WhichOneof("type")
                if etype == "exception":
                    exception = element.exception
                    self.errors.append(
                        f"exception on {self.page()!r}: {exception.type}: {exception.message[:80]}"
                    )
                elif etype == "alert" and element.alert.format == 1 and not _verdict(element):
                    self.errors.append(f"error box on {self.page()!r}: {element.alert.body[:80]}")
                widget = _widget(element, delta.fragment_id)
                if widget is not None:
                    self.widgets[widget.label] = widget
        elif kind == "script_finished":
            if msg.script_finished in FINISHED:
                async with self._changed:
                    self._finished += 1
                    self._changed.notify_all()

    async def rerun(
        self, *, page: str | None = None, query: str | None = None, fragment_id: str = ""
    ) -> float:
        """Send a rerun (of ``page``'s url path when given) with every widget value this tab
        set; return the seconds until the run's ``script_finished``."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ClientState_pb2 import ClientState
        from streamlit.proto.WidgetStates_pb2 import WidgetStates

        if query is not None:
            self.query = query
        state = ClientState(
            query_string=self.query,
            widget_states=WidgetStates(widgets=list(self._states.values())),
            fragment_id=fragment_id,
        )
        if page is not None:
            target = self.pages.get(page, "")
            if target:
                state.page_script_hash = target
            else:
                state.page_name = page
            if target != self.page_hash:
                self._states.clear()
                state.ClearField("widget_states")
        else:
            state.page_script_hash = self.page_hash
        async with self._changed:
            before = self._finished
        start = time.perf_counter()
        await self._ws.send(BackMsg(rerun_script=state).SerializeToString())
        async with self._changed:
            await asyncio.wait_for(
                self._changed.wait_for(lambda: self._finished != before), self.timeout
            )
        if self._finished < 0:
            raise ConnectionError(f"the connection closed during a rerun ({self.errors[-3:]})")
        return time.perf_counter() - start

    async def move(self, label: str, index: int) -> float:
        """Set the widget ``label`` to its ``index``-th value (as the browser does), rerun."""
        widget = self.widgets[label]
        self._states[widget.id] = widget.state(index)
        widget.index = index
        return await self.rerun(fragment_id=widget.fragment_id)

    def page(self) -> str:
        """The url path of the page this tab shows ("" for the default page)."""
        return next((p for p, h in self.pages.items() if h == self.page_hash), "?")

    def sliders(self) -> list[Widget]:
        return [w for w in self.widgets.values() if w.kind != "number_input"]


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"p50 s": float("nan"), "p95 s": float("nan"), "max s": float("nan")}
    ordered = sorted(values)
    return {
        "p50 s": round(statistics.median(ordered), 3),
        "p95 s": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 3),
        "max s": round(ordered[-1], 3),
    }


def machine() -> dict[str, Any]:
    """The facts a number needs next to it."""
    import streamlit

    return {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "load average at start": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
        "streamlit": streamlit.__version__,
    }


# --- a class ---------------------------------------------------------------------------------


async def student(
    base: str,
    index: int,
    seconds: float,
    own: bool,
    timeout: float,
    out: dict[str, list],
    wander: bool = False,
) -> None:
    """Open the lecture, then act every 3–8 s (seeded) until ``seconds`` have passed.

    A student who follows the lecture moves the slider the lecturer demonstrates (ε, where
    the page has it, else its first slider), so the class walks the same few settings; a
    student on settings of their own (``own``), or every student with ``wander``, moves any
    slider of the page (mostly settings nobody computed yet).
    """
    rng = np.random.default_rng([2026, index])
    session = Session(base, timeout=timeout)
    end = time.perf_counter() + seconds
    try:
        await session.connect()
        out["process"].append(session.process)
        page, query = LECTURE
        out["open"].append(await session.rerun(page=page, query=query))
        if own and OWN_SETTING in session.widgets:  # settings of their own: a new seed
            seed = session.widgets[OWN_SETTING]
            out["own"].append(await session.move(OWN_SETTING, (seed.index + 1 + index) % 200))
        pages = list(session.pages) or [page]
        while True:
            wait = float(rng.uniform(3, 8))
            if time.perf_counter() + wait > end:
                break
            await asyncio.sleep(wait)
            sliders = session.sliders()
            if not (own or wander):
                sliders = [w for w in sliders if w.label == "Privacy ε"] or sliders[:1]
            if sliders and rng.random() < 0.8:  # mostly moves, sometimes another page
                widget = sliders[int(rng.integers(len(sliders)))]
                step = -1 if rng.random() < 0.5 else 1
                target = widget.index + step
                if not 0 <= target < len(widget.values):
                    target = widget.index - step
                out["move"].append(await session.move(widget.label, target))
            else:
                out["switch"].append(await session.rerun(page=str(rng.choice(pages)), query=""))
    except Exception as err:  # every failure is counted, none stops the others
        session.errors.append(f"{type(err).__name__}: {str(err)[:100]}")
    finally:
        await session.close()
        out["errors"].extend(f"student {index}: {e}" for e in session.errors)


async def _sample_memory(pids: list[int], every: float, samples: list, stop: asyncio.Event) -> None:
    start = time.perf_counter()
    while not stop.is_set():
        samples.append((round(time.perf_counter() - start, 1), round(_rss(pids), 1)))
        try:
            await asyncio.wait_for(stop.wait(), every)
        except TimeoutError:
            pass


async def run_class(
    base: str,
    pids: list[int],
    students: int,
    seconds: float,
    ramp: float,
    timeout: float,
    wander: bool = False,
    proxy_pid: int | None = None,
) -> dict[str, Any]:
    """``students`` students for ``seconds`` (arrivals spread over ``ramp`` s) on the server
    at ``base``, whose app processes are ``pids`` (CPU and memory summed over them)."""
    out: dict[str, list] = {
        "open": [],
        "own": [],
        "move": [],
        "switch": [],
        "errors": [],
        "process": [],
    }
    memory: list = []
    stop = asyncio.Event()
    sampler = asyncio.create_task(_sample_memory(pids, 5.0, memory, stop))
    cpu_before, start = _cpu(pids), time.perf_counter()
    proxy_before = cpu_seconds(proxy_pid) if proxy_pid else 0.0

    async def arrive(i: int) -> None:
        delay = ramp * i / max(students, 1)
        await asyncio.sleep(delay)
        await student(base, i, seconds - delay, i % 5 == 4, timeout, out, wander)

    try:
        await asyncio.wait_for(
            asyncio.gather(*(arrive(i) for i in range(students))), seconds + 2 * timeout
        )
    except TimeoutError:
        out["errors"].append(f"the run passed its {seconds + 2 * timeout:.0f} s deadline")
    wall, cpu = time.perf_counter() - start, _cpu(pids) - cpu_before
    proxy_cpu = cpu_seconds(proxy_pid) - proxy_before if proxy_pid else None
    stop.set()
    await sampler
    interactions = out["move"] + out["switch"]
    per_process = {p: out["process"].count(p) for p in sorted(set(out["process"])) if p}
    return {
        "students": students,
        "every student wanders": wander,
        "app processes": len(pids),
        "students per process": per_process,
        "seconds": round(wall, 1),
        "interactions": len(interactions),
        "interactions per s": round(len(interactions) / max(wall, 1e-9), 2),
        "moves": len(out["move"]),
        "page switches": len(out["switch"]),
        "errors": len(out["errors"]),
        "error details": out["errors"][:10],
        "interaction": _percentiles(interactions),
        "move": _percentiles(out["move"]),
        "page switch": _percentiles(out["switch"]),
        "open the link": _percentiles(out["open"]),
        "server CPU s": round(cpu, 2),
        "server CPU per interaction ms": round(
            1000 * cpu / max(len(interactions) + len(out["open"]) + len(out["own"]), 1), 1
        ),
        "server MiB over time (s, MiB)": memory,
        "server MiB peak": max((mib for _, mib in memory), default=float("nan")),
        **({"proxy CPU s": round(proxy_cpu, 2)} if proxy_cpu is not None else {}),
        **machine(),
    }


# --- CPU per cached move, every page ---------------------------------------------------------


async def cached_move_cpu(
    base: str, pids: list[int], page: str, repeats: int, timeout: float
) -> dict:
    """Server CPU ms of one slider move on a computed setting on ``page`` (see module doc)."""
    session = Session(base, timeout=timeout)
    try:
        await session.connect()
        await session.rerun(page=page, query="")
        sliders = session.sliders() or list(session.widgets.values())
        if not sliders:
            return {"page": page, "widget": None, "errors": session.errors}
        # ε where the page has it (the measurement), else its first slider
        widget = next((w for w in sliders if w.label == "Privacy ε"), sliders[0])
        home = widget.index
        other = home + 1 if home + 1 < len(widget.values) else home - 1
        label = widget.label
        await session.move(label, other)  # computes
        await session.move(label, home)  # back (computed at the page's first run)
        await session.move(label, other)  # the third move: cached
        times = []
        messages = session.messages
        cpu_before = _cpu(pids)
        for i in range(repeats):
            times.append(await session.move(label, home if i % 2 == 0 else other))
        cpu = _cpu(pids) - cpu_before
        loop = calibration.loop_ms()  # this machine's speed, in the same minute as the page
        return {
            "page": page,
            "widget": f"{widget.kind} '{label}'",
            "server CPU per cached move ms": round(1000 * cpu / repeats, 1),
            "messages per cached move": round((session.messages - messages) / repeats, 1),
            "calibration loop ms": round(loop, 1),
            "per move in reference-machine ms": round(
                1000 * cpu / repeats * calibration.REFERENCE_MS / loop, 1
            ),
            "wall per cached move s (median)": round(statistics.median(times), 3),
            "errors": session.errors,
        }
    finally:
        await session.close()


async def run_per_page(base: str, pids: list[int], repeats: int, timeout: float) -> dict[str, Any]:
    probe = Session(base, timeout=timeout)
    await probe.connect()
    await probe.rerun(page=LECTURE[0], query="")
    pages = list(probe.pages) or [LECTURE[0]]
    await probe.close()
    rows = [await cached_move_cpu(base, pids, page, repeats, timeout) for page in pages]
    errors = [f"{r['page']}: {e}" for r in rows for e in r["errors"]]
    return {
        "pages": rows,
        "errors": len(errors),
        "error details": errors[:10],
        "repeats": repeats,
        **machine(),
    }


async def run_profile(
    base: str, pids: list[int], page: str, directory: str, timeout: float
) -> dict:
    """cProfile of one cached slider move on ``page``, recorded inside the server
    (``serving.profiling``, ``CAPE_PROFILE_DIR``): the top functions by own time and by
    cumulative time, in % of the run."""
    import glob
    import pstats

    row = await cached_move_cpu(base, pids, page, 1, timeout)  # the last run is cached
    files = sorted(glob.glob(f"{directory}/*.prof"))
    if not files:
        raise RuntimeError("no profile written: is CAPE_PROFILE_DIR reaching the server?")
    stats = pstats.Stats(files[-1])
    total = stats.total_tt  # type: ignore[attr-defined]
    entries = stats.stats  # type: ignore[attr-defined]

    root = str(Path(__file__).resolve().parents[1])

    def top(column: int, count: int, ours: bool = False) -> list[tuple[str, float]]:
        rows = entries.items()
        if ours:  # the app's own functions (pages, ui/, dpcore/), not the libraries'
            rows = [r for r in rows if r[0][0].startswith(root) and ".venv" not in r[0][0]]
        ranked = sorted(rows, key=lambda item: -item[1][column])[:count]
        return [
            (f"{Path(f).name}:{line} {name}", round(100 * v[column] / total, 1))
            for (f, line, name), v in ranked
        ]

    return {
        **row,
        "profiled run s (cProfile, inflated)": round(total, 3),
        "top by own time (%)": top(2, 15),
        "top by cumulative time (%)": top(3, 25),
        "the app's own functions by cumulative time (%)": top(3, 20, ours=True),
        "errors": len(row["errors"]),
    }


def _server_pid(url: str) -> int:
    """The pid of the local server listening on ``url``'s port (from /proc's sockets)."""
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":  # LISTEN
                inodes.add(fields[9])
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            for fd in os.listdir(f"/proc/{entry}/fd"):
                link = os.readlink(f"/proc/{entry}/fd/{fd}")
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    return int(entry)
        except OSError:
            continue
    raise RuntimeError(f"no process of this user listens on port {port}")


def measure(
    *,
    students: int = 30,
    seconds: float = 90.0,
    ramp: float = 15.0,
    per_page: bool = False,
    repeats: int = 10,
    timeout: float = 60.0,
    url: str | None = None,
    pids: list[int] | None = None,
    processes: int | None = None,
    profile: str | None = None,
    wander: bool = False,
    ports: range | None = None,
) -> dict[str, Any]:
    """Run the benchmark against ``url`` (a server on 127.0.0.1; ``pids`` its app processes,
    default the one listening on its port), a fresh server, or with ``processes`` a fresh
    lecture-hall layout of that many app processes behind HAProxy. ``ports``: where the
    fresh server (its first port) or the layout (the proxy on the first, the app processes on
    the next free ones) listens, for a machine shared by several runs; default any free ports."""
    import tempfile

    from serving.profiling import PROFILE_ENV

    if processes is not None and (url is not None or profile is not None):
        raise ValueError("processes starts its own layout: give neither url nor profile")
    with ExitStack() as stack:
        # A lecture server does not watch its files: in a working tree that changes under the
        # run, the watcher reloads modules mid-rerun and students see exceptions (KeyError:
        # 'ui' in the server log) that a deployed server never has.
        # An error's details in the report (students would see a generic message).
        for name, value in (
            ("STREAMLIT_SERVER_FILE_WATCHER_TYPE", "none"),
            ("STREAMLIT_CLIENT_SHOW_ERROR_DETAILS", "full"),
        ):
            if name not in os.environ:
                os.environ[name] = value
                stack.callback(os.environ.pop, name, None)
        if profile is not None:  # the fresh server profiles every run into a temp dir
            directory = stack.enter_context(tempfile.TemporaryDirectory())
            os.environ[PROFILE_ENV] = directory
            stack.callback(os.environ.pop, PROFILE_ENV, None)
            url = None
        proxy_pid = None
        if processes is not None:
            from deploy.class_server import class_server

            placed = {} if ports is None else {"port": ports[0], "ports": ports[1:]}
            layout = stack.enter_context(
                class_server(processes, timeout=max(timeout, 90), **placed)
            )
            url, pids = layout.url, layout.app_pids
            proxy_pid = layout.proxy.pid if layout.proxy is not None else None
        elif url is None:
            first = None if ports is None else ports[0]
            url, proc = stack.enter_context(streamlit_server(port=first))
            pids = [proc.pid]
        else:
            if not url.startswith(("http://127.0.0.1:", "http://localhost:")):
                raise ValueError(f"url must be a server on 127.0.0.1; got {url!r}")
            pids = pids or [_server_pid(url)]
        if profile is not None:
            return asyncio.run(run_profile(url, pids, profile, directory, timeout))
        if per_page:
            return asyncio.run(run_per_page(url, pids, repeats, timeout))
        return asyncio.run(
            run_class(url, pids, students, seconds, ramp, timeout, wander, proxy_pid)
        )


def compare_processes(counts: list[int], **options: Any) -> dict[str, Any]:
    """The same class on ``counts[0]``, ``counts[1]``, … app processes (each a fresh layout
    behind HAProxy, one after the other), side by side, with each run's ratios to the first:
    latencies first / this (above 1: this one is quicker) and interactions per second this /
    first (above 1: this one served more)."""
    runs = [measure(processes=n, **options) for n in counts]
    first = runs[0]
    rows = []
    for run in runs:
        row = {
            "app processes": run["app processes"],
            "students per process": run["students per process"],
            "interactions": run["interactions"],
            "interactions per s": run["interactions per s"],
            "errors": run["errors"],
            **run["interaction"],
            "open the link p95 s": run["open the link"]["p95 s"],
            "server CPU s": run["server CPU s"],
            "server CPU per interaction ms": run["server CPU per interaction ms"],
            "server MiB peak": run["server MiB peak"],
            "proxy CPU s": run.get("proxy CPU s"),
        }
        if run is not first:
            row["speed-up"] = {
                name: round(first["interaction"][name] / run["interaction"][name], 2)
                if run["interaction"][name] > 0
                else float("nan")
                for name in ("p50 s", "p95 s", "max s")
            }
            row["throughput ratio"] = round(
                run["interactions per s"] / max(first["interactions per s"], 1e-9), 2
            )
        rows.append(row)
    return {
        "students": options.get("students", 30),
        "compare": rows,
        "errors": sum(run["errors"] for run in runs),
        "error details": [e for run in runs for e in run["error details"]][:10],
        "runs": runs,
        **machine(),
    }


def port_range(text: str | None) -> range | None:
    """``--ports LO-HI`` as a range (None for None), or ValueError with the option's rule."""
    if not text:
        return None
    lo, _, hi = text.partition("-")
    if not (lo.isdigit() and hi.isdigit() and 1024 <= int(lo) < int(hi) <= 65535):
        raise ValueError(f"--ports must be LO-HI with 1024 <= LO < HI <= 65535; got {text!r}")
    return range(int(lo), int(hi) + 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=90, help="length of the class")
    parser.add_argument("--ramp", type=float, default=15, help="arrivals spread, seconds")
    parser.add_argument(
        "--wander", action="store_true", help="every student moves any slider (no lecture)"
    )
    parser.add_argument("--per-page", action="store_true", help="CPU per cached move, per page")
    parser.add_argument("--repeats", type=int, default=10, help="cached moves per page")
    parser.add_argument("--timeout", type=float, default=60, help="per wait, seconds")
    parser.add_argument("--url", default=None, help="a running server (default: start one)")
    parser.add_argument(
        "--pids", default=None, help="with --url: its app processes' ids, comma-separated"
    )
    parser.add_argument(
        "--processes", type=int, default=None, help="N app processes behind HAProxy"
    )
    parser.add_argument(
        "--compare-processes", metavar="N,M", default=None, help="e.g. 1,2: the same class on each"
    )
    parser.add_argument(
        "--profile", metavar="PAGE", default=None, help="cProfile a cached move on PAGE"
    )
    parser.add_argument(
        "--ports", metavar="LO-HI", default=None, help="listen only on these ports, e.g. 8620-8629"
    )
    args = parser.parse_args()
    try:
        ports = port_range(args.ports)
    except ValueError as err:
        parser.error(str(err))
    if not 1 <= args.students <= 200:
        parser.error("--students must be between 1 and 200")
    if not 1 <= args.seconds <= 1800:
        parser.error("--seconds must be between 1 and 1800")
    options = dict(
        students=args.students,
        seconds=args.seconds,
        ramp=args.ramp,
        per_page=args.per_page,
        repeats=args.repeats,
        timeout=args.timeout,
        wander=args.wander,
        ports=ports,
    )
    if args.compare_processes:
        try:
            counts = [int(n) for n in args.compare_processes.split(",")]
        except ValueError:
            counts = []
        if len(counts) < 2 or not all(1 <= n <= 64 for n in counts):
            parser.error("--compare-processes must be two or more counts in 1..64, e.g. 1,2")
        report = compare_processes(counts, **options)
    else:
        pids = [int(p) for p in args.pids.split(",")] if args.pids else None
        report = measure(
            url=args.url, pids=pids, processes=args.processes, profile=args.profile, **options
        )
    print(json.dumps(report, indent=2))
    raise SystemExit(1 if report["errors"] else 0)


if __name__ == "__main__":
    main()
