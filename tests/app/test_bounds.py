"""Fair and bounded under a class (issue #26): one heavy-queue place per browser, uploads
bounded per browser and per server, an unreachable Dask scheduler paid for once."""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

import dpcore
from dpcore import cluster


@pytest.fixture
def fresh_cluster_state(monkeypatch):
    """No runner, no remembered failure, before and after the test."""
    for table in (cluster._RUNNERS, cluster._FAILED, cluster._CONNECTING):
        table.clear()
    yield
    for runner in list(cluster._RUNNERS.values()):
        getattr(runner.client, "close", lambda: None)()
    for table in (cluster._RUNNERS, cluster._FAILED, cluster._CONNECTING):
        table.clear()


def _five_concurrent_misses(caplog) -> tuple[list, list[str]]:
    """Five threads call cluster.run at once (five cache misses); their results and the
    lines logged for the operator."""
    results: list = [None] * 5
    start = threading.Barrier(5)

    def miss(i: int) -> None:
        start.wait()
        results[i] = dpcore.run_on_cluster(divmod, 17 + i, 5)

    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="dpcore.cluster"):
        threads = [threading.Thread(target=miss, args=(i,)) for i in range(5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
    return results, [r.getMessage() for r in caplog.records if r.name == "dpcore.cluster"]


@pytest.mark.slow
def test_an_unreachable_scheduler_costs_one_connection_attempt_not_five(
    monkeypatch, fresh_cluster_state, caplog
):
    """Nothing listens on the address: Dask's real client retries until its timeout. Five
    concurrent calls make one attempt in all (the others wait for its answer, then compute
    here), and a call after them makes none (the failure is remembered)."""
    pytest.importorskip("distributed")
    from benchmarks.server import free_port

    attempts = []
    real_client = cluster._client

    def counting_client(address, timeout=None):
        attempts.append(address)
        return real_client(address, timeout=timeout)

    monkeypatch.setattr(cluster, "_client", counting_client)
    monkeypatch.setattr(cluster, "CONNECT_SECONDS", 1.0)
    monkeypatch.setenv(dpcore.SCHEDULER_ENV, f"tcp://127.0.0.1:{free_port()}")
    results, caught = _five_concurrent_misses(caplog)
    assert results == [divmod(17 + i, 5) for i in range(5)]  # computed here, all of them
    assert len(attempts) == 1
    assert len([m for m in caught if "unusable" in m]) == 1  # one line, not five
    assert dpcore.run_on_cluster(divmod, 9, 4) == (2, 1)
    assert len(attempts) == 1  # remembered: no second wait


def test_a_remembered_failure_expires(monkeypatch, fresh_cluster_state, caplog):
    attempts = []

    def refusing_client(address, timeout=None):
        attempts.append(address)
        raise OSError("nothing listens there")

    monkeypatch.setattr(cluster, "_client", refusing_client)
    monkeypatch.setenv(dpcore.SCHEDULER_ENV, "tcp://127.0.0.1:9")
    with caplog.at_level(logging.WARNING, logger="dpcore.cluster"):
        assert dpcore.run_on_cluster(divmod, 7, 2) == (3, 1)
        assert dpcore.run_on_cluster(divmod, 7, 2) == (3, 1)
        assert len(attempts) == 1 and len(caplog.records) == 1
        assert "unusable (OSError: nothing listens there)" in caplog.records[0].getMessage()
        address = "tcp://127.0.0.1:9"
        cluster._FAILED[address] -= cluster.FAILURE_MEMORY_SECONDS + 1  # as if a minute passed
        dpcore.run_on_cluster(divmod, 7, 2)
    assert len(attempts) == 2 and len(caplog.records) == 2


class _LostFuture:
    def result(self, timeout=None):
        raise OSError("Stream is closed")  # what Dask's CommClosedError is


class _DyingClient:
    closed = 0

    def submit(self, *args, **kwargs):
        return _LostFuture()

    def close(self, timeout=None):
        _DyingClient.closed += 1


def test_a_scheduler_lost_mid_sweep_gives_one_line_and_computes_here(
    monkeypatch, fresh_cluster_state, caplog
):
    monkeypatch.setattr(cluster, "_client", lambda address, timeout=None: _DyingClient())
    monkeypatch.setenv(dpcore.SCHEDULER_ENV, "tcp://127.0.0.1:9")
    results, caught = _five_concurrent_misses(caplog)
    assert results == [divmod(17 + i, 5) for i in range(5)]
    lost = [m for m in caught if "failed a computation" in m]
    assert len(lost) == 1 and "OSError" in lost[0]
    assert cluster._RUNNERS == {} and _DyingClient.closed == 1
    assert "tcp://127.0.0.1:9" in cluster._FAILED  # the next calls compute here at once


def test_a_requests_own_error_is_not_a_lost_scheduler(monkeypatch, fresh_cluster_state):
    class Future:
        def result(self, timeout=None):
            raise ValueError("epsilon must be > 0; got -1")

    class Client:
        def submit(self, *args, **kwargs):
            return Future()

    monkeypatch.setattr(cluster, "_client", lambda address, timeout=None: Client())
    monkeypatch.setenv(dpcore.SCHEDULER_ENV, "tcp://127.0.0.1:9")
    with pytest.raises(ValueError, match="epsilon"):
        dpcore.run_on_cluster(divmod, 7, 2)
    assert "tcp://127.0.0.1:9" in cluster._RUNNERS  # the scheduler is fine


@pytest.mark.slow
@pytest.mark.app
def test_a_page_says_it_computed_here_because_the_cluster_was_unusable(
    monkeypatch, fresh_cluster_state
):
    # before: the page computed here in silence; the operator's log alone said why (#50)
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    def refusing_client(address, timeout=None):
        raise OSError("nothing listens there")

    root = Path(__file__).resolve().parents[2]
    notice = "Computed on this server"

    def pca_page_captions() -> list[str]:
        st.cache_data.clear()  # the sweep computed now, not a result cached by another test
        at = AppTest.from_file(str(root / "app.py"), default_timeout=120)
        at = at.switch_page("app_pages/pca.py").run()
        assert not at.exception
        return [c.value for c in at.caption if notice in c.value]

    monkeypatch.delenv(dpcore.SCHEDULER_ENV, raising=False)
    assert pca_page_captions() == []  # no cluster named: nothing to say
    monkeypatch.setattr(cluster, "_client", refusing_client)
    monkeypatch.setenv(dpcore.SCHEDULER_ENV, "tcp://127.0.0.1:9")
    shown = pca_page_captions()
    assert len(shown) >= 1 and "CAPE_DASK_SCHEDULER" in shown[0]
    assert "127.0.0.1" not in shown[0] and "nothing listens" not in shown[0]  # the operator's
    assert dpcore.fallback_reason() == "OSError: nothing listens there"
    st.cache_data.clear()


# --- one heavy-queue place per browser ---------------------------------------------------


def _xsrf_cookie(token: bytes) -> str:
    """Streamlit's XSRF cookie for ``token``, freshly masked as on every page load."""
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(token))
    return f"2|{mask.hex()}|{masked.hex()}|{int(time.time())}"


@pytest.fixture
def tabs(monkeypatch):
    """``owner(tab)``: jobs.owner_id() as seen from a tab; tab-1 and tab-2 are one browser
    (one token, two cookie strings), other-1 another browser."""
    from streamlit.runtime import scriptrunner

    from serving import jobs

    token = os.urandom(16)
    cookies = {"tab-1": _xsrf_cookie(token), "tab-2": _xsrf_cookie(token)}
    cookies["other-1"] = _xsrf_cookie(os.urandom(16))
    assert cookies["tab-1"] != cookies["tab-2"]
    current = {"id": ""}
    monkeypatch.setattr(
        scriptrunner, "get_script_run_ctx", lambda: SimpleNamespace(session_id=current["id"])
    )
    monkeypatch.setattr(jobs, "_xsrf_cookie", lambda: cookies.get(current["id"]))
    monkeypatch.setattr(jobs, "_TABS", {})

    def owner(tab: str) -> str:
        current["id"] = tab
        return jobs.owner_id()

    return owner


def _lane():
    from serving import jobs, worker

    return jobs.Lane("test", slots=1, limits=worker.Limits(3 * 2**30, seconds=60))


def _settle(lane) -> None:
    for owner in list(lane._by_owner):
        lane.cancel(owner)
    deadline = time.monotonic() + 30
    while lane.busy() != (0, 0) and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.mark.slow
def test_two_tabs_of_one_browser_hold_one_queue_place(tabs):
    assert tabs("tab-1") == tabs("tab-2") != tabs("other-1")
    assert tabs("unknown-tab") == "unknown-tab"  # no cookie: one place per session
    from serving import jobs

    assert jobs.browser_key("") is None and jobs.browser_key(object()) is None  # type: ignore[arg-type]
    lane = _lane()
    try:
        lane.submit("x", time.sleep, (30,), {}, tabs("other-1"))  # runs
        first, _ = lane.submit("a", time.sleep, (30,), {}, tabs("tab-1"))
        second, replaced = lane.submit("b", time.sleep, (30,), {}, tabs("tab-2"))
        assert replaced and first.outcome.status == "cancelled"  # the browser's one place
        assert lane.busy() == (1, 1) and lane.position(second) == (1, 1)
    finally:
        _settle(lane)


def test_a_browser_is_connected_while_any_of_its_tabs_is(tabs, monkeypatch):
    import streamlit.runtime

    from serving import jobs

    browser = tabs("tab-1")
    assert tabs("tab-2") == browser
    active: set[str] = {"tab-2"}
    runtime = SimpleNamespace(is_active_session=lambda session: session in active)
    fake = SimpleNamespace(exists=lambda: True, instance=lambda: runtime)
    monkeypatch.setattr(streamlit.runtime, "Runtime", fake)
    assert jobs._session_alive(browser)  # tab-1 closed, tab-2 open
    active.clear()
    assert not jobs._session_alive(browser)  # both closed: the job may stop


def test_a_follow_up_job_keeps_its_place(tabs):
    lane = _lane()
    try:
        mine = tabs("tab-1")
        sweep, _ = lane.submit("sweep", divmod, (7, 2), {}, mine)
        assert lane.wait(sweep, 30).status == "ok"
        lane.submit("x", time.sleep, (30,), {}, tabs("other-1"))  # someone else runs
        waiting, _ = lane.submit("y", time.sleep, (30,), {}, "third-browser")
        follow, _ = lane.submit("example", time.sleep, (30,), {}, mine, follow_up=True)
        assert lane.position(follow) == (1, 2) and lane.position(waiting) == (2, 2)
        # a new request of the same browser (not a follow-up) goes to the back
        later, _ = lane.submit("other", time.sleep, (30,), {}, "fourth-browser")
        assert lane.position(later) == (3, 3)
    finally:
        _settle(lane)


@pytest.mark.slow
def test_a_follow_up_job_gets_the_slot_its_sweep_freed(tabs):
    """The tensor page's example is queued only after the page has drawn the sweep's result;
    meanwhile the monitor must not hand the freed slot to the job queued behind (issue #36):
    the follow-up runs at once, the other job keeps its place at the head of the queue."""
    lane = _lane()
    try:
        mine = tabs("tab-1")
        sweep, _ = lane.submit("sweep", time.sleep, (1.0,), {}, mine, then_follow_up=True)
        waiting, _ = lane.submit("y", time.sleep, (30,), {}, tabs("other-1"))
        assert lane.position(waiting) == (1, 1)
        assert lane.wait(sweep, 30).status == "ok"
        time.sleep(3 * 0.2)  # the page draws the sweep; the monitor polls several times
        assert lane.position(waiting) == (1, 1)  # the slot is held, not given away
        follow, _ = lane.submit("example", time.sleep, (30,), {}, mine, follow_up=True)
        assert lane.position(follow) == (0, 1) and lane.position(waiting) == (1, 1)
    finally:
        _settle(lane)


@pytest.mark.slow
def test_a_held_slot_is_given_on_when_no_follow_up_comes(tabs, monkeypatch):
    """A sweep whose page stops before its follow-up (an error, a closed tab) holds the slot
    only for FOLLOW_UP_HOLD_SECONDS; then the next job runs."""
    from serving import jobs

    monkeypatch.setattr(jobs, "FOLLOW_UP_HOLD_SECONDS", 1.0)
    lane = _lane()
    try:
        sweep, _ = lane.submit("sweep", divmod, (7, 2), {}, tabs("tab-1"), then_follow_up=True)
        waiting, _ = lane.submit("y", time.sleep, (30,), {}, tabs("other-1"))
        assert lane.wait(sweep, 30).status == "ok"
        deadline = time.monotonic() + 10
        while lane.position(waiting)[0] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert lane.position(waiting) == (0, 1)
    finally:
        _settle(lane)


# --- uploads bounded per browser and per server -----------------------------------------


def _browsers(monkeypatch=None):
    """A stand-in runtime whose sessions ``a-1``, ``a-2``, … are tabs of one browser (one
    XSRF token, each cookie masked afresh) and ``b-1``, … of another; other sessions have no
    cookie (each is its own owner)."""
    tokens = {"a": os.urandom(16), "b": os.urandom(16)}

    def get_client(session_id: str):
        token = tokens.get(session_id.split("-")[0])
        cookies = {} if token is None else {"_streamlit_xsrf": _xsrf_cookie(token)}
        return SimpleNamespace(client_context=SimpleNamespace(cookies=cookies))

    return SimpleNamespace(
        get_client=get_client,
        is_active_session=lambda s: True,
        disconnect_session=lambda s, **kw: None,
    )


def _manager(monkeypatch, browser_mb: int, server_mb: int, runtime=None):
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager

    from serving import uploads

    monkeypatch.setenv(uploads.BROWSER_ENV, str(browser_mb))
    monkeypatch.setenv(uploads.SERVER_ENV, str(server_mb))
    manager = MemoryUploadedFileManager("/_stcore/upload_file")
    uploads.bound(manager, runtime)
    return manager


def _file(file_id: str, mb: float):
    from streamlit.runtime.uploaded_file_manager import UploadedFileRec

    return UploadedFileRec(file_id, "a.csv", "text/csv", b"1" * int(mb * 2**20))


def _held_mb(manager) -> float:
    return sum(len(r.data) for fs in manager.file_storage.values() for r in fs.values()) / 2**20


def test_uploads_past_the_browser_cap_are_refused_with_a_message(monkeypatch):
    from starlette.exceptions import HTTPException

    manager = _manager(monkeypatch, browser_mb=50, server_mb=1000, runtime=_browsers())
    manager.add_file("a-1", _file("f0", 19))
    manager.add_file("a-2", _file("f1", 19))  # another tab of the same browser
    with pytest.raises(HTTPException) as refused:
        manager.add_file("a-3", _file("f2", 19))  # 57 MB > 50 MB, whichever tab asks
    assert refused.value.status_code == 413
    assert "this browser (all its tabs)" in refused.value.detail
    assert "at most 50 MB" in refused.value.detail and "38 MB" in refused.value.detail
    assert _held_mb(manager) == 38  # the refused bytes are not kept
    manager.add_file("a-2", _file("f1", 19))  # the same file again replaces it: counts once
    manager.add_file("b-1", _file("g", 19))  # another browser has its own cap
    manager.add_file("lone", _file("g", 19))  # so has a session without a cookie
    manager.remove_file("a-1", "f0")
    manager.add_file("a-3", _file("f3", 19))  # room again after a removal
    assert _held_mb(manager) == 19 * 4


def test_uploads_past_the_server_cap_are_refused(monkeypatch):
    from starlette.exceptions import HTTPException

    manager = _manager(monkeypatch, browser_mb=30, server_mb=70, runtime=_browsers())
    for tab in ("a-1", "b-1", "c"):
        manager.add_file(tab, _file("f", 20))
    with pytest.raises(HTTPException, match="413") as refused:
        manager.add_file("d", _file("f", 20))
    assert "server holds 60 MB" in refused.value.detail and "at most 70 MB" in refused.value.detail
    assert _held_mb(manager) == 60


def test_no_browser_holds_more_than_half_the_servers_bound(monkeypatch):
    from starlette.exceptions import HTTPException

    from serving import uploads

    # a browser cap above the server's: one browser would take the whole server (issue #36)
    manager = _manager(monkeypatch, browser_mb=500, server_mb=100, runtime=_browsers())
    for i in range(2):
        manager.add_file(f"a-{i}", _file("f", 25))
    with pytest.raises(HTTPException, match="at most 50 MB"):
        manager.add_file("a-9", _file("f", 1))
    assert uploads.MAX_SHARE == 0.5
    manager.add_file("b-1", _file("f", 49))  # the other half is the others'
    assert _held_mb(manager) == 99


@pytest.mark.parametrize("raw", ["0", "-5", "lots"])
def test_an_upload_cap_must_be_a_positive_number(monkeypatch, raw):
    from serving import uploads

    monkeypatch.setenv(uploads.BROWSER_ENV, raw)
    with pytest.raises(ValueError, match=uploads.BROWSER_ENV):
        uploads._megabytes(uploads.BROWSER_ENV, 60)


def test_a_closed_tabs_uploads_are_freed_after_the_grace_unless_it_returns(monkeypatch):
    from serving import uploads

    monkeypatch.setattr(uploads, "FREE_AFTER_SECONDS", 0.2)
    active = {"gone", "back"}
    disconnected = []
    runtime = SimpleNamespace(
        is_active_session=lambda s: s in active,
        disconnect_session=lambda s, **kw: disconnected.append(s),
    )
    runtime.get_client = _browsers().get_client
    manager = _manager(monkeypatch, browser_mb=60, server_mb=600, runtime=runtime)
    for tab in ("gone", "back"):
        manager.add_file(tab, _file("f", 5))
    for tab in ("gone", "back"):
        active.discard(tab)
        runtime.disconnect_session(tab)  # the websocket closed
    active.add("back")  # a reconnect within the grace
    assert disconnected == ["gone", "back"]  # Streamlit's own disconnect still runs
    deadline = time.monotonic() + 20
    while "gone" in manager.file_storage and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "gone" not in manager.file_storage and "back" in manager.file_storage


def _put(url: str, session_id: str, xsrf: str, file_id: str, data: bytes) -> tuple[int, str]:
    """PUT one file as the browser's uploader does (multipart, the session's XSRF token)."""
    import urllib.error
    import urllib.request

    boundary = "capeboundary7MA4YWxkTrZu0gW"
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="b.csv"\r\n'
            "Content-Type: text/csv\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    request = urllib.request.Request(
        f"{url}/_stcore/upload_file/{session_id}/{file_id}",
        data=body,
        method="PUT",
        headers={
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "X-Xsrftoken": xsrf,
            "Cookie": f"_streamlit_xsrf={xsrf}",
            "Origin": url,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, ""
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(errors="replace")


@pytest.mark.slow
def test_an_upload_flood_from_twelve_tabs_leaves_room_for_another_browser(monkeypatch):
    """Issue #36's flood (after #26's from one tab): twelve tabs of one browser (its XSRF
    cookie copied to each, as a script needs) PUT a 20 MB file each (the request limit)
    under new file ids. With a 40 MB cap per browser and 200 MB per server, two are kept
    and the ten others are refused (413, with the sentence); another browser's 50 kB CSV is
    then accepted. With the former cap per tab, ten of the twelve were kept, the server's
    200 MB was full to the byte and the other browser got 413. The server's memory grows by
    about the browser's cap, not by the flood (240 MB). Slack: one in-flight request's
    copies (the body, the parsed file: 2 × 20 MB) and allocator noise, 60 MB in all."""
    import asyncio
    import uuid

    from benchmarks.capacity import Session
    from benchmarks.server import rss_mib, streamlit_server

    monkeypatch.setenv("CAPE_UPLOAD_BROWSER_MB", "40")
    monkeypatch.setenv("CAPE_UPLOAD_SERVER_MB", "200")
    # 20 MB (MiB, the request limit) less the multipart framing: ten fill 200 MB to 2 kB
    bomb = b"1," * (10 * 2**20 - 101) + b"1\n"
    small = b"a,b,c\n" + b"".join(b"%d,%d,%d\n" % (i, 2 * i, 3 * i) for i in range(4000))
    assert 40_000 < len(small) < 60_000  # the 50 kB CSV
    with streamlit_server(port=8650) as (url, proc):  # this helper's port

        async def flood() -> tuple[list[tuple[int, str]], tuple[int, str], float, float]:
            first = Session(url, timeout=120)
            await first.connect()
            await first.rerun(page="", query="")  # app.py ran: the bounds are in
            tabs = [first]
            for _ in range(11):  # the same browser: its cookies, re-masked by the server
                tabs.append(Session(url, timeout=120, cookies=dict(first.cookies)))
            other = Session(url, timeout=120)
            for tab in [*tabs[1:], other]:  # each tab's session opens and runs the page
                await tab.connect()
                await tab.rerun(page="", query="")
            assert len({tab.session_id for tab in [*tabs, other]}) == 13
            try:
                before = rss_mib(proc.pid)
                answers = [
                    await asyncio.to_thread(
                        _put, url, tab.session_id, tab.xsrf, str(uuid.uuid4()), bomb
                    )
                    for tab in tabs
                ]
                after = rss_mib(proc.pid)
                theirs = await asyncio.to_thread(
                    _put, url, other.session_id, other.xsrf, str(uuid.uuid4()), small
                )
            finally:
                for tab in [*tabs, other]:
                    await tab.close()
            return answers, theirs, before, after

        answers, theirs, before, after = asyncio.run(flood())
    assert theirs == (204, ""), theirs  # another student's CSV gets in
    codes = [code for code, _ in answers]
    assert codes[:2] == [204, 204] and set(codes[2:]) == {413}, codes
    assert "this browser (all its tabs)" in answers[-1][1] and "at most 40 MB" in answers[-1][1]
    assert after - before < 40 + 60, (before, after)
