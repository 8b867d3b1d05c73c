"""The lecture-hall layout (issue #26): two app processes behind HAProxy with sticky sessions
(deploy/class_server.py, deploy/haproxy.cfg.in, scripts/class_server.sh).

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
import subprocess
import time

import browser_wait
import pytest

from deploy.class_server import HAPROXY, haproxy_available, render_config


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


@pytest.fixture(scope="module")
def layout():
    _need_haproxy()
    from deploy.class_server import class_server

    try:
        with class_server(2, timeout=120) as running:
            yield running
    except RuntimeError as err:  # it did not start
        pytest.fail(str(err))


def _chart(page) -> str:
    return page.evaluate(
        "() => JSON.stringify([...document.querySelectorAll('.js-plotly-plot')]"
        ".map(p => [(p.data || []).map(t => [t.x, t.y]),"
        " ((p.layout || {}).shapes || []).map(s => s.x0)]))"
    )


def _no_errors(page) -> None:
    assert page.locator("[data-testid='stException']").count() == 0
    errors = page.locator("[data-testid='stAlertContentError']")
    assert errors.count() == 0, errors.all_inner_texts()


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
        assert served_by == {cookie}, f"{name}'s requests reached {served_by}, cookie {cookie}"
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
