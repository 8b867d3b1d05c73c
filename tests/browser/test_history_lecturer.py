"""Back/Forward at a lecturer's pace on a busy server (issue #22, item 4), in a real Chromium.

A lecturer clicks about once a second and does not wait for the app: the server is throttled to
half of a core for the test's duration (paused while a fresh browser takes a reference screen),
so it answers late, as on a busy classroom server. Then every
history entry is walked, Back to the start and Forward to the end, and checked:

* no address carries another page's keys (docs/state.md: each page owns its prefix);
* every entry's screen is what a fresh browser opened at that entry's URL shows (no half-built
  entry, e.g. ``/averaging?avg_S=7`` with a sites table nobody set);
* Forward returns to the last entry (it used to be lost: Back landed on an entry that the app
  rewrote into a new one);
* an Overview preset link shows the fresh browser's numbers whatever link came before it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from urllib.parse import parse_qsl, urlsplit

import pytest
from test_lecturer import metrics, new_page, settle

from ui.state import page_prefixes

SHARED_KEYS = {"present", "section"}  # shared on purpose (docs/state.md, rule 3)
PACE = 1.0  # seconds between a lecturer's clicks
SHARE, PERIOD = 0.5, 0.1  # the busy server runs 50 ms of every 100 ms

# One worker for the tests that load the machine on purpose (tests/app/test_load.py too): under
# pytest-xdist they run one after another, never two at once.
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("load")]


class Throttle:
    """The server process runs for SHARE of every PERIOD of wall time and is stopped
    (SIGSTOP) for the rest: a server on a fraction of a core, as when a class keeps it busy.
    Unlike a burner spinning a core, it slows only the server and costs no CPU, so the rest of
    the suite keeps both cores. Paused (the server running freely) while a fresh browser takes
    a reference screen: what the app shows at rest is the truth an entry is compared with."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.active = True
        self.done = threading.Event()
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.done.is_set():
            with self.lock:  # the server is stopped only inside the lock
                if self.active:
                    os.kill(self.pid, signal.SIGSTOP)
                    time.sleep(PERIOD * (1 - SHARE))
                    os.kill(self.pid, signal.SIGCONT)
            time.sleep(PERIOD * SHARE)

    @contextlib.contextmanager
    def paused(self):
        with self.lock:
            self.active = False
        try:
            yield
        finally:
            self.active = True

    def stop(self) -> None:
        self.done.set()
        self.thread.join()
        os.kill(self.pid, signal.SIGCONT)


@pytest.fixture
def busy_server(served):
    """A :class:`Throttle` on the shared server for the test's duration."""
    throttle = Throttle(served[1].pid)
    yield throttle
    throttle.stop()


def prefix_of(path: str) -> str:
    """The key prefix a page declares in its source (``P = "avg_"``: ui.state.page_prefixes,
    which ui/history.js reads too)."""
    name = path.strip("/") or "overview"
    found = page_prefixes().get(name)
    assert found, f"app_pages/{name}.py declares no key prefix"
    return found


def foreign_keys(url: str) -> list[str]:
    """Keys in the address that belong to another page."""
    parts = urlsplit(url)
    if not parts.scheme.startswith("http"):
        return [f"(left the app: {url})"]
    own = prefix_of(parts.path)
    return [k for k, _ in parse_qsl(parts.query) if k not in SHARED_KEYS and not k.startswith(own)]


SLIDERS = """() => [...document.querySelectorAll("input[type=range]")].map(e => [
  (e.closest('[class*="st-key-"]')?.className.match(/st-key-(\\S+)/) || [, "?"])[1],
  e.getAttribute("aria-valuetext")])"""


def screen(page) -> tuple:
    """What the settled entry shows: every slider's value and every metric (when the page
    has any). The caller settles the page: a settle after a settle waits out
    browser_wait.START_MS for a run nobody asked for."""
    values = tuple(sorted(map(tuple, page.evaluate(SLIDERS))))
    shown = metrics(page) if page.locator("[data-testid='stMetric']").count() >= 6 else {}
    return urlsplit(page.url).path, values, tuple(sorted(shown.items()))


# What a fresh browser shows at each URL asked for: the same at the same URL (same settings,
# same seed, same figure), so each is loaded once per module (a page load costs Chromium
# about 4 CPU-s, docs/performance.md).
_FRESH: dict[str, tuple] = {}


def fresh(tabs, url: str) -> tuple:
    """What a fresh browser shows at ``url``: a new document in a reused tab (conftest.py's
    ``tabs``: cookies and storage cleared), so a new Streamlit session with nothing but the
    URL, at the same window size as the lecturer's; once per URL (``_FRESH``)."""
    if url not in _FRESH:
        page = tabs()
        page.goto(url)
        settle(page)
        _FRESH[url] = screen(page)
    return _FRESH[url]


def lecturer(page, action) -> str:
    """One click, then the lecturer's pause (no waiting for the app); the address after it."""
    action()
    time.sleep(PACE)
    return page.url


def arrow(page, key: str, direction: str = "ArrowRight"):
    def press():
        page.locator(f".st-key-{key} input[type='range']").first.focus()
        page.keyboard.press(direction)

    return press


def nav(page, title: str):
    return lambda: page.locator("[data-testid='stSidebarNav'] a", has_text=title).first.click()


def index(page) -> int:
    """The current entry's place in the tab's history (the Navigation API)."""
    return page.evaluate("navigation.currentEntry.index")


def walk_back_and_forth(page, tabs, start: int, busy: Throttle) -> None:
    """Every entry from the last to ``start`` and back: each screen as a fresh browser's at
    that URL, no foreign keys, Back one entry at a time, and Forward reaching the last entry."""
    end = page.evaluate("navigation.entries().length - 1")
    if index(page) < end:
        while index(page) < end:  # Forward reaches the last entry
            page.go_forward()
        settle(page)
    last = page.url
    while True:
        url = page.url
        assert not foreign_keys(url), url
        shown = screen(page)
        with busy.paused():
            expected = fresh(tabs, url)
        assert shown == expected, url
        if index(page) == start:
            break
        here = index(page)
        page.go_back()
        assert index(page) == here - 1, url
        settle(page)
    while index(page) < end:
        page.go_forward()
        settle(page)
    assert page.url == last  # Forward returns to the last entry
    assert page.evaluate("navigation.entries().length - 1") == end  # Back made no entries


def test_back_and_forward_at_one_click_a_second(server, browser, tabs, busy_server):
    page = new_page(browser)
    page.goto(f"{server}/averaging")
    settle(page)
    start = index(page)
    urls = [
        lecturer(page, arrow(page, "avg_S")),  # 5 → 6 sites
        lecturer(page, arrow(page, "avg_S")),  # → 7
        lecturer(page, nav(page, "PCA")),
        lecturer(page, page.go_back),
        lecturer(page, page.go_back),
        lecturer(page, page.go_forward),
        lecturer(page, page.go_forward),
        lecturer(page, arrow(page, "pca_eps")),
        lecturer(page, page.go_back),
    ]
    settle(page)
    assert not any(foreign_keys(url) for url in urls), urls
    walk_back_and_forth(page, tabs, start, busy_server)
    page.context.close()


def test_a_preset_link_after_another_gives_the_fresh_numbers(server, browser, tabs, busy_server):
    page = new_page(browser)
    page.goto(server)
    settle(page)
    start = index(page)
    lecturer(page, lambda: page.get_by_role("link", name="Strong privacy PCA").click())
    settle(page)
    lecturer(page, page.go_back)
    settle(page)
    assert urlsplit(page.url).path == "/", page.url  # Back returns to the Overview
    lecturer(page, lambda: page.get_by_role("link", name="Equal hospitals").click())
    settle(page)
    shown = screen(page)
    with busy_server.paused():
        assert shown == fresh(tabs, page.url)
    walk_back_and_forth(page, tabs, start, busy_server)
    page.context.close()
