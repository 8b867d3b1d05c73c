"""ui/history.js on its own in Chromium: the orders in which Streamlit writes the URL around a
page change, replayed deterministically, must leave one history entry per state (docs/state.md).

A fake origin (routed by Playwright, no server) serves an empty page with the script; each test
calls ``history.pushState``/``replaceState`` as Streamlit's frontend does (a bound widget's
change: ``replaceState`` with an absolute URL; the server's query for a page: a same-path
``pushState``; a page change: ``pushState`` of the new path) and then walks Back.
"""

from __future__ import annotations

import pytest

from ui.state import HISTORY_JS

pytestmark = [pytest.mark.browser]

ORIGIN = "http://cape.test"
PAGE = f"<!doctype html><title>t</title><script>{HISTORY_JS}</script>"


@pytest.fixture
def page(browser):
    context = browser.new_context()
    page = context.new_page()
    page.route(f"{ORIGIN}/**", lambda route: route.fulfill(body=PAGE, content_type="text/html"))
    page.goto(f"{ORIGIN}/tensor?td_eps=0.2")
    yield page
    context.close()


def call(page, method: str, url: str) -> None:
    page.evaluate(f"history.{method}({{}}, '', {url!r})")


def path(page) -> str:
    return page.evaluate("location.pathname + location.search")


def back(page) -> str:
    page.evaluate("history.back()")
    page.wait_for_timeout(150)  # popstate is asynchronous
    return path(page)


def test_a_widget_change_becomes_its_own_entry(page):
    call(page, "replaceState", f"{ORIGIN}/tensor?td_eps=0.5")
    assert path(page) == "/tensor?td_eps=0.5"  # shown at once
    page.wait_for_timeout(400)  # settled after 250 ms
    assert back(page) == "/tensor?td_eps=0.2"


def test_a_slider_drag_is_one_entry(page):
    page.goto(f"{ORIGIN}/pca")
    for value in ("1", "2", "5"):
        call(page, "replaceState", f"{ORIGIN}/pca?pca_eps={value}")
        page.wait_for_timeout(50)
    page.wait_for_timeout(400)
    assert back(page) == "/pca"


def test_page_change_after_the_query_is_known_keeps_the_old_entry(page):
    # Streamlit: the current path once more, its query rewritten, then the new page (seen).
    call(page, "pushState", "/tensor")
    call(page, "replaceState", "/tensor?pca_eps=2")
    call(page, "pushState", "/pca?pca_eps=2")
    page.wait_for_timeout(2500)  # past every settle timer
    assert path(page) == "/pca?pca_eps=2"
    assert back(page) == "/tensor?td_eps=0.2"


@pytest.mark.parametrize("first", ["/pca", "/pca?td_eps=0.2"], ids=["no-query", "old-query"])
def test_the_servers_late_query_completes_the_new_pages_entry(page, first):
    # The new path pushed before the server said its query (a busy server): its answer, a
    # same-path push, must not leave the half-made URL as an entry of its own (1 of 5 CI
    # runs: Back stayed on /pca).
    call(page, "pushState", first)
    page.wait_for_timeout(1500)
    call(page, "pushState", "/pca?pca_eps=2")
    page.wait_for_timeout(2500)
    assert path(page) == "/pca?pca_eps=2"
    assert back(page) == "/tensor?td_eps=0.2"


def test_changes_after_arriving_are_entries_again(page):
    call(page, "pushState", "/pca?pca_eps=2")
    call(page, "replaceState", f"{ORIGIN}/pca?pca_eps=5")  # the user's first change
    page.wait_for_timeout(400)
    call(page, "pushState", "/pca?pca_eps=1")  # a preset: the server rewrites the query
    page.wait_for_timeout(2500)
    assert back(page) == "/pca?pca_eps=5"
    assert back(page) == "/pca?pca_eps=2"
    assert back(page) == "/tensor?td_eps=0.2"


def test_the_arrival_window_closes(page):
    call(page, "pushState", "/pca?pca_eps=2")
    page.wait_for_timeout(5500)  # nothing completed the entry within 5 s
    call(page, "pushState", "/pca?pca_eps=1")  # a preset
    page.wait_for_timeout(2500)
    assert back(page) == "/pca?pca_eps=2"
