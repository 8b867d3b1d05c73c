"""The lecture-hall layout (issue #26): two app processes behind HAProxy with sticky sessions
(deploy/class_server.py, deploy/haproxy.cfg.in, scripts/class_server.sh), and what it does
when an app process dies (issue #36): the process is started again, within a restart budget,
and its students carry on; and (issue #50) when one hangs (its students are moved to another
process within 15 s, it is restarted) or HAProxy dies (started again, the students reconnect).

The browser test starts the layout, opens the app through the proxy in two browser contexts
(two students), moves ε and switches page in each, and reads the proxy's log: every request of
a browser, its websocket included, reached one process, a different one for each student.
Skipped where HAProxy is missing (``apt-get install haproxy``), unless REQUIRE_BROWSER=1 (set
by .ci/run, which installs it): there a missing proxy is a failure.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import browser_wait
import pytest

from deploy import class_server as cs
from deploy.class_server import HAPROXY, haproxy_available, render_config

# This module's loopback ports on the shared machine (8661-8699: no other test's): the
# module's layout (its proxy, then the app processes and their probes), and a block of its
# own for each failover test's layout, which may run while the module's layout is up.
# CAPE_PROXY_TEST_PORT moves the block where those are someone else's. Before, the failover
# layouts shared the module layout's proxy port: HAProxy bound it with SO_REUSEPORT beside
# the other one, the kernel split the students between the two layouts, and the failover
# tests failed in the full suite only (#50; deploy/haproxy.cfg.in now says noreuseport).
PROXY_PORT = int(os.environ.get("CAPE_PROXY_TEST_PORT", "8661"))
APP_PORTS = range(PROXY_PORT + 1, PROXY_PORT + 20)
FAILOVER_PORT = PROXY_PORT + 20
FAILOVER_APP_PORTS = range(FAILOVER_PORT + 1, FAILOVER_PORT + 19)
# every layout of this module on one worker, one after the other: two workers choosing app
# ports of one block at the same moment could both find a port free
pytestmark = pytest.mark.xdist_group("proxy")


def _need_haproxy() -> None:
    if haproxy_available():
        return
    if os.environ.get("REQUIRE_BROWSER") == "1":
        pytest.fail(
            f"REQUIRE_BROWSER=1 but HAProxy is missing ({HAPROXY}): apt-get install haproxy"
        )
    pytest.skip(f"needs HAProxy ({HAPROXY}; apt-get install haproxy)")


def test_the_generated_configuration_is_valid_and_sticky(tmp_path):
    _need_haproxy()
    text = render_config("127.0.0.1", 18501, [("127.0.0.1", 18601), ("127.0.0.1", 18602)])
    assert re.search(r"@[A-Z]+@", text) is None  # every field filled in
    assert "bind 127.0.0.1:18501" in text
    for i, port in ((1, 18601), (2, 18602)):
        assert f"server app{i} 127.0.0.1:{port} check" in text and f"cookie app{i}" in text
    config = tmp_path / "haproxy.cfg"
    config.write_text(text)
    check = subprocess.run([HAPROXY, "-c", "-f", str(config)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_layout_needs_an_app_process():
    with pytest.raises(ValueError, match="backends"):
        render_config("127.0.0.1", 18501, [])


def test_a_taken_proxy_port_is_refused_before_anything_starts(tmp_path):
    # a second class server on the port of a running one (HAProxy holds it with
    # SO_REUSEPORT): it used to start beside the first and split the class between the two
    _need_haproxy()
    with socket.socket() as held:
        held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        with pytest.raises(RuntimeError, match=f"port {port} of 127.0.0.1 is in use"):
            with cs.class_server(1, port=port, run_dir=tmp_path):
                pass
    assert not list(tmp_path.glob("*.log"))  # refused before any process was started


def test_a_process_that_dies_while_starting_is_named_with_the_end_of_its_log(tmp_path):
    # the operator's first question ("cannot bind socket", a traceback) answered in the error
    command = [sys.executable, "-c", "import sys; print('cannot bind socket'); sys.exit(3)"]
    service = cs.Service.start("haproxy", command, dict(os.environ), tmp_path / "haproxy.log")
    with pytest.raises(
        RuntimeError, match="haproxy exited with status 3 while starting: cannot bind socket"
    ):
        cs._wait_port(cs.free_port(), service, 30, "haproxy")


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_a_second_haproxy_cannot_bind_the_port_of_the_first(tmp_path):
    # the configuration's noreuseport: without it the second proxy ran beside the first
    # (the kernel shared the port between them) and this run timed out
    _need_haproxy()
    port = cs.free_port()
    config = tmp_path / "haproxy.cfg"
    config.write_text(render_config("127.0.0.1", port, [("127.0.0.1", cs.free_port())]))
    command = [HAPROXY, "-db", "-f", str(config)]
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not _listening(port):
            assert first.poll() is None and time.monotonic() < deadline, "no first proxy"
            time.sleep(0.1)
        second = subprocess.run(command, capture_output=True, text=True, timeout=30)
        assert second.returncode != 0, second.stdout + second.stderr
        assert "cannot bind socket" in second.stdout + second.stderr
    finally:
        first.kill()
        first.wait()


@pytest.fixture(scope="module")
def layout():
    _need_haproxy()
    from deploy.class_server import class_server

    try:
        with class_server(2, port=PROXY_PORT, ports=APP_PORTS, timeout=120) as running:
            yield running
    except RuntimeError as err:  # it did not start
        pytest.fail(str(err))


def _chart(page) -> str:
    return page.evaluate(
        "() => JSON.stringify([...document.querySelectorAll('.js-plotly-plot')]"
        ".map(p => [(p.data || []).map(t => [t.x, t.y]),"
        " ((p.layout || {}).shapes || []).map(s => s.x0)]))"
    )


_no_errors = browser_wait.assert_no_errors


def _proxy_log(layout) -> list[tuple[str, str, str]]:
    """(process, path, User-Agent) of every request the proxy logged (log-format in
    deploy/haproxy.cfg.in: ``client process method path status time {User-Agent}``)."""
    rows = []
    for line in (layout.run_dir / "haproxy.log").read_text(errors="replace").splitlines():
        parts = line.split(" ", 6)
        if len(parts) == 7 and parts[6].startswith("{"):
            rows.append((parts[1], parts[3], parts[6].strip("{}")))
    return rows


@pytest.mark.browser
@pytest.mark.slow
def test_two_students_through_the_proxy_each_stay_on_their_own_process(layout, browser):
    students = {}
    for name in ("cape-student-a", "cape-student-b"):  # one after the other, as a class arrives
        context = browser.new_context(user_agent=name, viewport={"width": 1400, "height": 2200})
        page = context.new_page()
        page.goto(f"{layout.url}/pca")
        browser_wait.settle(page, 120, charts=1)
        _no_errors(page)
        students[name] = (context, page)

    process = {}
    for name, (context, page) in students.items():
        before = _chart(page)
        assert json.loads(before) and json.loads(before)[0][0], "no chart on the PCA page"
        eps = page.locator("[data-testid='stSlider']").filter(has_text="Privacy ε")
        eps.locator("input[type='range']").first.focus()
        for _ in range(2):
            page.keyboard.press("ArrowRight")
        browser_wait.settle(page, 120, charts=1)
        assert "pca_eps=" in page.url, f"ε did not move: {page.url}"
        assert _chart(page) != before, "the chart did not change after moving ε"
        page.locator("[data-testid='stSidebarNav'] a[href$='/privacy']").click()
        browser_wait.settle(page, 120, charts=2)
        assert "/privacy" in page.url
        _no_errors(page)
        cookies = [c["value"] for c in context.cookies() if c["name"] == "CAPE_PROCESS"]
        assert len(cookies) == 1, context.cookies()
        process[name] = cookies[0]
    for context, _ in students.values():
        context.close()

    # The proxy logs a websocket when it closes: wait for both students' streams.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        rows = _proxy_log(layout)
        streams = {ua for _, path, ua in rows if path.startswith("/_stcore/stream")}
        if set(process) <= streams:
            break
        time.sleep(0.5)
    assert set(process) <= streams, f"websockets not logged: {streams}"
    for name, cookie in process.items():
        served_by = {server for server, _, ua in rows if ua == name}
        assert served_by == {cookie}, (
            f"{name}'s requests reached {served_by}, cookie {cookie}: "
            f"{[(s, p) for s, p, ua in rows if ua == name and s != cookie]}"
        )
    # a new browser goes to the process with fewer open connections (balance leastconn):
    # the first student's websocket was open on the other one
    assert process["cape-student-a"] != process["cape-student-b"]


@pytest.mark.slow
def test_a_client_that_keeps_the_cookie_reaches_its_process_websocket_included(layout):
    # the capacity benchmark's simulated students keep the proxy's cookie as a browser does
    import asyncio
    import concurrent.futures

    from benchmarks.capacity import Session

    async def visit() -> Session:
        session = Session(layout.url, timeout=120)
        session.cookies["CAPE_PROCESS"] = "app2"  # pinned, as if app2 had set it
        await session.connect()
        try:
            await session.rerun(page="pca", query="")
            await session.move("Privacy ε", session.widgets["Privacy ε"].index + 1)
        finally:
            await session.close()
        return session

    # its own thread: a browser test's Playwright may hold this thread's event loop
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        session = pool.submit(lambda: asyncio.run(visit())).result(timeout=300)
    assert session.process == "app2" and session.errors == []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        streams = [
            server
            for server, path, ua in _proxy_log(layout)
            if path.startswith("/_stcore/stream") and "websockets" in ua
        ]
        if streams:
            break
        time.sleep(0.5)
    assert streams == ["app2"]


@pytest.mark.slow
def test_a_new_page_load_goes_to_the_least_busy_process_whatever_its_cookie(layout):
    # After a restart every student of the restarted process moved to the other one and
    # carries its cookie; a sticky page load would keep every new tab and reload there for
    # the rest of the lesson (issue #50). A page load starts a new Streamlit session, so the
    # proxy balances it afresh and sets the cookie its session's websocket then follows;
    # the session's own routes (/_stcore/: its websocket, uploads, health) stay sticky.
    import asyncio
    import concurrent.futures

    from benchmarks.capacity import Session

    def request(path: str) -> tuple[str, str]:
        ask = urllib.request.Request(layout.url + path, headers={"Cookie": "CAPE_PROCESS=app2"})
        with urllib.request.urlopen(ask, timeout=60) as answer:
            cookie = next(
                (c for c in answer.headers.get_all("Set-Cookie") or [] if "CAPE_PROCESS" in c), ""
            )
            return answer.headers.get("X-Cape-Process", ""), cookie.split(";")[0]

    async def busy_app2() -> list[str]:
        sessions = [Session(layout.url, timeout=120) for _ in range(3)]
        for session in sessions:  # three students' websockets held open on app2
            session.cookies["CAPE_PROCESS"] = "app2"
            await session.connect()
        try:
            return [request("/pca?pca_eps=2"), request("/_stcore/health")]
        finally:
            for session in sessions:
                await session.close()

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        page, health = pool.submit(lambda: asyncio.run(busy_app2())).result(timeout=300)
    assert page == ("app1", "CAPE_PROCESS=app1")  # balanced, and the new cookie set
    assert health[0] == "app2"  # a session's route keeps its process


def _dying_service(tmp_path: Path, name: str, status: int) -> cs.Service:
    command = [sys.executable, "-c", f"raise SystemExit({status})"]
    return cs.Service.start(name, command, dict(os.environ), tmp_path / f"{name}.log")


def _wait_exited(layout: cs.Layout) -> None:
    deadline = time.monotonic() + 30
    while any(p.poll() is None for p in layout.processes().values()):
        assert time.monotonic() < deadline, "a one-line child did not exit within 30 s"
        time.sleep(0.05)


def test_a_dead_process_is_started_again_within_its_restart_budget(tmp_path):
    # issue #36: the monitor stopped the whole layout when one app process died
    layout = cs.Layout("http://127.0.0.1:1", tmp_path)
    layout.services["app1"] = _dying_service(tmp_path, "app1", 3)  # dies at once, every time
    lines: list[str] = []
    first = layout.app_pids
    for _ in range(3 * cs.MAX_RESTARTS):
        _wait_exited(layout)
        layout.check(lines.append)
    assert layout.app_pids != first  # started again: a new process
    # bounded: MAX_RESTARTS in the window, then left down, and the layout keeps serving
    assert len(layout.services["app1"].restarts) == cs.MAX_RESTARTS
    restarts, spent = lines[: cs.MAX_RESTARTS], lines[cs.MAX_RESTARTS :]
    assert all("app1 exited with status 3; started again" in line for line in restarts)
    assert "stays down" in restarts[-1] and "stays down" not in restarts[0]
    # issue #50: the spent budget is one line at the moment the process dies past it
    assert len(spent) == 1 and "app1 exited with status 3; its restart budget is spent" in spent[0]
    assert "started again in 300 s" in spent[0] or "started again in 29" in spent[0]
    # the window passes: one more restart is allowed
    service = layout.services["app1"]
    service.restarts = type(service.restarts)(t - cs.RESTART_WINDOW for t in service.restarts)
    layout.check(lines.append)
    assert len(lines) == cs.MAX_RESTARTS + 2 and "started again as pid" in lines[-1]
    assert layout.events == lines
    _wait_exited(layout)


def test_a_dead_proxy_is_started_again_within_the_same_budget(tmp_path):
    # issue #50: HAProxy's death stopped both healthy app processes and ended the class
    layout = cs.Layout("http://127.0.0.1:1", tmp_path)
    layout.services["haproxy"] = _dying_service(tmp_path, "haproxy", 7)
    lines: list[str] = []
    for _ in range(cs.MAX_RESTARTS + 3):
        _wait_exited(layout)
        layout.check(lines.append)
    assert len(layout.services["haproxy"].restarts) == cs.MAX_RESTARTS
    assert len(lines) == cs.MAX_RESTARTS + 1  # each restart, then the spent budget, once
    assert all("haproxy exited with status 7; started again as pid" in x for x in lines[:-1])
    assert "restart budget is spent" in lines[-1] and "no student can reach" in lines[-1]


class _Probe:
    """A liveness probe the test switches between answering and silence (a stopped process)."""

    def __init__(self) -> None:
        from deploy.app_process import Liveness, probe_server

        self.liveness = Liveness()
        self.liveness.last_answer = time.monotonic()
        self.server = probe_server(0, self.liveness)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/live"
        import threading

        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def test_a_process_that_stops_answering_is_moved_off_then_killed_and_started_again(
    tmp_path, monkeypatch
):
    # issue #50: a SIGSTOPped app process stayed in the layout for good (only poll() was read)
    monkeypatch.setattr(cs, "UNHEALTHY_SECONDS", 1.0)
    probe = _Probe()
    layout = cs.Layout("http://127.0.0.1:1", tmp_path)
    command = [sys.executable, "-c", "import time; time.sleep(120)"]
    service = cs.Service.start(
        "app1", command, dict(os.environ), tmp_path / "app1.log", health_url=probe.url
    )
    layout.services["app1"] = service
    lines: list[str] = []
    try:
        layout.probe(lines.append)
        assert service.seen_healthy and lines == []
        old = service.proc
        os.kill(old.pid, signal.SIGSTOP)
        probe.liveness.last_answer = time.monotonic() - 1000  # its loop silent: 503
        layout.probe(lines.append)
        layout.check(lines.append)  # not yet: unhealthy for less than UNHEALTHY_SECONDS
        assert service.proc is old and len(lines) == 1
        assert "app1 (pid" in lines[0] and "does not answer its health check" in lines[0]
        assert "503" in lines[0] and "moves its students" in lines[0]
        time.sleep(1.1)
        layout.probe(lines.append)  # said once per episode
        layout.check(lines.append)
        assert old.poll() == -signal.SIGKILL and service.proc is not old
        assert len(lines) == 2 and f"app1 (pid {old.pid}) has not answered" in lines[1]
        assert "killed; started again as pid" in lines[1] and "restart 1 of at most" in lines[1]
        # the new process starts: its probe is not held against it within its start grace
        layout.check(lines.append)
        assert len(lines) == 2
        probe.liveness.last_answer = time.monotonic()
        layout.probe(lines.append)
        assert service.seen_healthy and service.unhealthy_since is None and len(lines) == 2
    finally:
        probe.server.shutdown()
        service.kill()


def test_the_probe_tells_busy_from_dead():
    from deploy.app_process import LOOP_SILENT_SECONDS, Liveness

    liveness = Liveness()
    assert liveness.verdict() == (503, "starting")
    liveness.last_answer = 100.0
    assert liveness.verdict(now=100.0 + LOOP_SILENT_SECONDS - 1) == (200, "ok")  # slow, alive
    status, text = liveness.verdict(now=100.0 + LOOP_SILENT_SECONDS + 5)
    assert status == 503 and text.startswith("event loop silent for")


def _health(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
            return answer.read() == b"ok"
    except OSError:
        return False


def _arrive(browser, url: str, name: str):
    """A student's browser opening ``url``; returns (context, page) without waiting. The
    proxy places a page load on the process with the fewest connections, whatever cookie
    the browser holds (deploy/haproxy.cfg.in), so a test reads where a student landed."""
    context = browser.new_context(user_agent=name, viewport={"width": 1200, "height": 1400})
    page = context.new_page()
    page.goto(url, wait_until="commit")
    return context, page


def _settled(page) -> None:
    browser_wait.settle(page, 90, charts=1)
    _no_errors(page)


def _keeps_working(page, key: str = "ArrowRight") -> None:
    """The student moves the Monte Carlo draws (``key``: one step right, or left): the URL
    and the histograms follow."""
    _settled(page)  # a tab whose process died reconnects first
    before, url = _chart(page), page.url
    draws = page.locator("[data-testid='stSlider']").filter(has_text="Monte Carlo draws")
    draws.get_by_role("slider").first.focus()
    page.keyboard.press(key)
    _settled(page)
    assert page.url != url and "avg_draws=" in page.url, f"the draws did not move: {page.url}"
    assert _chart(page) != before, "the chart did not change after moving the draws"


def _process(context) -> str:
    return next(c["value"] for c in context.cookies() if c["name"] == "CAPE_PROCESS")


@pytest.mark.browser
@pytest.mark.slow
def test_kill_9_of_an_app_process_under_the_class_server_loses_no_student(browser):
    # issue #36, item 1: kill -9 (the OOM killer's way) of the process one of two attached
    # students is on; before the fix the monitor then stopped HAProxy and the other process
    _need_haproxy()
    lines: list[str] = []
    with cs.class_server(
        2, port=FAILOVER_PORT, ports=FAILOVER_APP_PORTS, timeout=90, report=lines.append
    ) as layout:
        url = f"{layout.url}/averaging?avg_draws=1000"
        contexts = []
        try:
            students = []
            for name in ("cape-student-a", "cape-student-b"):  # one after the other
                students.append(_arrive(browser, url, name))
                contexts.append(students[-1][0])
                _settled(students[-1][1])
            assert {_process(context) for context in contexts} == {"app1", "app2"}
            killed = _process(contexts[0])
            victim = layout.services[killed]
            old_pid = victim.proc.pid
            os.kill(old_pid, signal.SIGKILL)
            newcomer = _arrive(browser, url, "cape-student-c")  # arrives meanwhile
            contexts.append(newcomer[0])
            # started again on its port within a few supervisor looks, and healthy
            deadline = time.monotonic() + 60
            while victim.proc.pid == old_pid or not _health(_app_url(layout, killed)):
                assert time.monotonic() < deadline, f"{killed} not back within 60 s: {lines}"
                time.sleep(0.5)
            assert layout.proxy is not None and layout.proxy.poll() is None
            assert len(lines) == 1 and f"{killed} exited with status -9; started again" in lines[0]
            # both students carry on (the killed one's tab reconnects; its settings are in
            # its URL), and the new student gets in
            for _, page in students:
                _keeps_working(page)
            _settled(newcomer[1])
            assert all(p.poll() is None for p in layout.processes().values())
        finally:
            for context in contexts:
                context.close()
    # everything it started is gone
    assert all(p.poll() is not None for p in layout.processes().values())


def test_every_process_gets_one_lecturers_key_and_the_operator_reads_it(tmp_path, monkeypatch):
    # issue #49: the class server prints the key students must not have, the same for all
    monkeypatch.delenv("CAPE_LECTURER_KEY", raising=False)
    made = cs.lecturer_key()
    assert len(made) >= 16 and cs.lecturer_key() != made
    assert cs.lecturer_key({"CAPE_LECTURER_KEY": "given"}) == "given"
    monkeypatch.setenv("CAPE_LECTURER_KEY", "from-env")
    assert cs.lecturer_key() == "from-env"
    layout = cs.Layout("http://127.0.0.1:8501", tmp_path, lecturer_key="from-env")
    text = cs.banner(layout, "10.0.0.5", 8501, 2)
    assert "lecturer's key: from-env" in text
    assert "http://10.0.0.5:8501/classroom?lecturer=from-env" in text


_WATCH_DROPS = """() => {
  window.__capeDrops = 0;  // the connection left CONNECTED ...
  window.__capeBack = 0;  // ... and came back at this time (ms since the epoch)
  new MutationObserver(records => {
    for (const r of records) {
      if (r.target.getAttribute('data-test-connection-state') !== 'CONNECTED') {
        window.__capeDrops++;
        window.__capeBack = 0;
      } else if (window.__capeDrops > 0 && !window.__capeBack) window.__capeBack = Date.now();
    }
  }).observe(document, {subtree: true, attributes: true,
                        attributeFilter: ['data-test-connection-state']});
}"""
_RECONNECTED = """() => window.__capeDrops > 0 && document.querySelector("[data-testid='stApp']")
  .getAttribute('data-test-connection-state') === 'CONNECTED'"""


def _draws(page) -> str:
    slider = page.locator("[data-testid='stSlider']").filter(has_text="Monte Carlo draws")
    return slider.get_by_role("slider").first.get_attribute("aria-valuenow") or ""


def _diagnosis(layout, lines: list[str], pages) -> str:
    """What a failed failover leaves to read in CI's log: the supervisor's lines, who
    answers (the proxy, each app process), each tab's connection state and the drops it
    saw, and the end of HAProxy's log (who reached which process after the restart)."""
    log = layout.run_dir / "haproxy.log"
    tail = log.read_text(errors="replace").splitlines()[-12:] if log.exists() else []
    states = []
    for page in pages:
        try:
            states.append(
                page.evaluate(
                    """() => [document.querySelector("[data-testid='stApp']")
                      ?.getAttribute('data-test-connection-state'), window.__capeDrops,
                      window.__capeBack]"""
                )
            )
        except Exception as error:  # a diagnosis reports, never raises
            states.append(repr(error)[:200])
    return (
        f"supervisor: {lines}; proxy answers: {_health(layout.url)}; apps answer: "
        f"{[_health(url) for url in layout.app_urls]}; load {os.getloadavg()}; tabs "
        f"(state, drops, back): {states}; haproxy.log tail: {tail}"
    )


def _reconnects_and_moves(page, since: float, deadline: float) -> tuple[float, float]:
    """The student's tab loses its connection, gets it back, and the student's next move
    works, its URL state (the draws moved before) carried over. Returns the seconds from
    ``since`` (``time.time()``) until the tab was connected again (seen by the page itself,
    so one student's wait does not include the test's work with another), and the seconds
    the move then took (until its chart was drawn)."""
    draws, query = _draws(page), page.url.split("?", 1)[1]
    page.wait_for_function(_RECONNECTED, timeout=max(1.0, deadline - time.time()) * 1000)
    back = page.evaluate("() => window.__capeBack") / 1000 - since
    _settled(page)
    assert _draws(page) == draws and page.url.split("?", 1)[1] == query, page.url
    moving = time.monotonic()
    _keeps_working(page, "ArrowLeft")  # back to 1,000 (right of 5,000 is the default)
    return back, time.monotonic() - moving


def _all_reconnect(layout, lines: list[str], students, first: int, since: float, deadline: float):
    """:func:`_reconnects_and_moves` for the ``first`` students; if one does not, the failure
    carries :func:`_diagnosis` of every student's tab."""
    try:
        return [_reconnects_and_moves(page, since, deadline) for _, page in students[:first]]
    except Exception as error:
        pages = [page for _, page in students]
        raise AssertionError(_diagnosis(layout, lines, pages)) from error


def _never_resumed(pid: int) -> bool:
    """Whether process ``pid``, stopped with SIGSTOP, is still stopped (state ``T`` in
    ``/proc/<pid>/stat``) or is gone (killed: a zombie or reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("T", "Z", "X")


def _app_url(layout, process: str) -> str:
    """The direct address of app process ``process`` (``app1``, ``app2``, …)."""
    return layout.app_urls[int(process.removeprefix("app")) - 1]


def _students(browser, layout, count: int):
    """``count`` students arriving one after the other (each settled and moved once before
    the next comes): the proxy puts each on the process with the fewest connections, so the
    first two are on different processes."""
    url = f"{layout.url}/averaging?avg_draws=1000"
    students = []
    for i in range(count):
        students.append(_arrive(browser, url, f"cape-student-{i}"))
        _settled(students[-1][1])
        _keeps_working(students[-1][1])  # moved once: URL state of their own to carry over
        students[-1][1].evaluate(_WATCH_DROPS)
    assert len({_process(context) for context, _ in students}) == min(count, 2)
    return students


@pytest.mark.browser
@pytest.mark.slow
def test_a_hung_app_process_hands_its_students_to_another_within_15_s(browser):
    # issue #50: SIGSTOP of the process three students were on: for 60 s every page stayed
    # "connected" and every move was silently ignored; the supervisor said nothing
    _need_haproxy()
    lines: list[str] = []
    with cs.class_server(
        2, port=FAILOVER_PORT, ports=FAILOVER_APP_PORTS, timeout=90, report=lines.append
    ) as layout:
        students = []
        try:
            students += _students(browser, layout, 3)
            on = [_process(context) for context, _ in students]
            stopped_name = max(set(on), key=on.count)  # the process two students are on
            students.sort(key=lambda student: _process(student[0]) != stopped_name)
            victim = layout.services[stopped_name]
            hung = victim.proc.pid
            stopped, clock = time.monotonic(), time.time()
            os.kill(hung, signal.SIGSTOP)
            # each student's next move, made once the tab is connected again, has worked
            # within 15 s of the stop
            # The 15 s on an idle machine (measured 6.1-6.9 s to reconnect, 3.9-4.7 s
            # to move, 2026-12-07), stretched by the load: a failover is a chain of processes
            # getting the CPU (HAProxy's checks, the supervisor, the browser, the other app
            # process); under the suite's browser tests (load 8) the same code missed 15 s.
            bound = 15 * browser_wait.stretch()
            seconds = _all_reconnect(layout, lines, students, 2, clock, clock + bound)
            print(f"hung process: (reconnected, move) after {seconds} s (bound {bound:.0f} s)")
            assert max(back + move for back, move in seconds) <= bound, seconds
            # the hung process never ran again (still stopped, or killed by the supervisor):
            # those moves were served by a live process, the other one or its restarted
            # successor (the CAPE_PROCESS cookie names only the slot, app1 or app2)
            assert _never_resumed(hung), lines
            _keeps_working(students[2][1], "ArrowLeft")  # the other process's student
            # the supervisor: one line when the probe went silent, one when it restarted it
            deadline = time.monotonic() + 90
            while victim.proc.pid == hung or not _health(_app_url(layout, stopped_name)):
                assert time.monotonic() < deadline, f"{stopped_name} not restarted: {lines}"
                time.sleep(0.5)
            restarted = time.monotonic() - stopped
            print(f"hung process restarted and healthy after {restarted:.1f} s: {lines}")
            assert len(lines) == 2, lines
            assert f"{stopped_name} (pid {hung}) does not answer its health check" in lines[0]
            assert f"{stopped_name} (pid {hung}) has not answered its health check for" in lines[1]
            assert "killed; started again as pid" in lines[1]
        finally:
            for context, _ in students:
                context.close()


@pytest.mark.browser
@pytest.mark.slow
def test_kill_9_of_haproxy_under_students_is_not_the_end_of_the_class(browser):
    # issue #50: kill -9 of HAProxy stopped both healthy app processes and exited 20 s later;
    # every student got "Connection error" for good
    _need_haproxy()
    lines: list[str] = []
    with cs.class_server(
        2, port=FAILOVER_PORT, ports=FAILOVER_APP_PORTS, timeout=90, report=lines.append
    ) as layout:
        students = []
        try:
            students += _students(browser, layout, 2)
            placed = [_process(context) for context, _ in students]
            apps = layout.app_pids
            proxy = layout.services["haproxy"]
            killed = proxy.proc.pid
            os.kill(killed, signal.SIGKILL)
            since = time.time()
            bound = 60 * browser_wait.stretch()
            seconds = _all_reconnect(layout, lines, students, 2, since, since + bound)
            print(f"HAProxy killed: (reconnected, move) after {seconds} s: {lines}")
            assert proxy.proc.pid != killed and proxy.proc.poll() is None
            assert layout.app_pids == apps  # the app processes were left alone
            assert len(lines) == 1 and "haproxy exited with status -9; started again" in lines[0]
            assert [_process(context) for context, _ in students] == placed
        finally:
            for context, _ in students:
                context.close()
