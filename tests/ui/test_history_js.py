"""ui/history.js on its own in Chromium: the orders in which Streamlit writes the URL around a
page change, replayed deterministically, must leave one history entry per state (docs/state.md).

A fake origin (routed by Playwright, no server) serves an empty page with the script; each test
calls ``history.pushState``/``replaceState`` as Streamlit's frontend does (a bound widget's
change: ``replaceState`` with an absolute URL; the server's query for a page: a same-path
``pushState``; a page change: ``pushState`` of the new path), with the user's key or click
(``act``) where the user acts, and then walks Back.
"""

from __future__ import annotations

import json

import pytest

from ui.state import HISTORY_JS, page_prefixes

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


def act(page, kind: str = "keydown") -> None:
    """The user acts (a key or a click), as before each change they make."""
    page.evaluate(f"window.dispatchEvent(new Event({kind!r}))")


def test_a_widget_change_becomes_its_own_entry(page):
    act(page)
    call(page, "replaceState", f"{ORIGIN}/tensor?td_eps=0.5")
    assert path(page) == "/tensor?td_eps=0.5"
    assert back(page) == "/tensor?td_eps=0.2"


def test_a_slider_drag_is_one_entry(page):
    page.goto(f"{ORIGIN}/pca")
    act(page, "pointerdown")
    for value in ("1", "2", "5"):
        call(page, "replaceState", f"{ORIGIN}/pca?pca_eps={value}")
    assert back(page) == "/pca"


def test_the_servers_late_answer_completes_the_users_entry(page):
    # S moved, and seconds later (a busy server) the sites table follows: one entry, whole.
    page.goto(f"{ORIGIN}/averaging")
    act(page)
    call(page, "replaceState", f"{ORIGIN}/averaging?avg_S=6")
    page.wait_for_timeout(2500)
    call(page, "replaceState", f"{ORIGIN}/averaging?avg_S=6&avg_sites=x")
    assert back(page) == "/averaging"
    page.evaluate("history.forward()")
    page.wait_for_timeout(150)
    assert path(page) == "/averaging?avg_S=6&avg_sites=x"


def test_page_change_after_the_query_is_known_keeps_the_old_entry(page):
    # Streamlit: the current path once more, its query rewritten, then the new page (seen).
    act(page, "pointerdown")
    call(page, "pushState", "/tensor")
    call(page, "replaceState", "/tensor?pca_eps=2")
    call(page, "pushState", "/pca?pca_eps=2")
    assert path(page) == "/pca?pca_eps=2"
    assert back(page) == "/tensor?td_eps=0.2"


@pytest.mark.parametrize("first", ["/pca", "/pca?td_eps=0.2"], ids=["no-query", "old-query"])
def test_the_servers_late_query_completes_the_new_pages_entry(page, first):
    # The new path pushed before the server said its query (a busy server): its answer, a
    # same-path push, must not leave the half-made URL as an entry of its own.
    act(page, "pointerdown")
    call(page, "pushState", first)
    page.wait_for_timeout(1500)
    call(page, "pushState", "/pca?pca_eps=2")
    assert path(page) == "/pca?pca_eps=2"
    assert back(page) == "/tensor?td_eps=0.2"


def test_changes_after_arriving_are_entries_again(page):
    call(page, "pushState", "/pca?pca_eps=2")
    act(page)
    call(page, "replaceState", f"{ORIGIN}/pca?pca_eps=5")  # the user's first change
    act(page, "pointerdown")
    call(page, "pushState", "/pca?pca_eps=1")  # a preset: the server rewrites the query
    assert back(page) == "/pca?pca_eps=5"
    assert back(page) == "/pca?pca_eps=2"
    assert back(page) == "/tensor?td_eps=0.2"


def test_the_apps_rewrite_after_back_keeps_forward(page):
    # A preset link's long address: the app drops its defaults after Back, in place, so Back
    # does not stop there for good and Forward still returns (issue #22).
    call(page, "pushState", "/pca?pca_dim=50&pca_eps=0.05")
    call(page, "replaceState", "/pca?pca_eps=0.05")
    assert back(page) == "/tensor?td_eps=0.2"
    call(page, "replaceState", "/tensor?td_eps=0.2&x=1")  # the app rewrites the restored URL
    page.evaluate("history.forward()")
    page.wait_for_timeout(150)
    assert path(page) == "/pca?pca_eps=0.05"


def test_a_late_answer_for_the_page_left_rewrites_nothing(page):
    # Back from PCA to CAPE averaging on a busy server: Streamlit writes the server's answer
    # for the PCA run it was still making with the *current* path (same-path push or replace).
    # It used to turn the averaging entry into /averaging?pca_eps=… (a foreign key, a screen
    # nobody chose); it is dropped, and a page's own keys are kept beside other ones.
    page.goto(f"{ORIGIN}/averaging?avg_S=7")
    act(page)
    call(page, "pushState", "/pca?avg_S=7")  # a page change: the old page's query, new path
    assert path(page) == "/pca"
    call(page, "replaceState", "/pca?pca_eps=2")  # the server's answer for PCA
    assert back(page) == "/averaging?avg_S=7"
    for method in ("pushState", "replaceState"):
        call(page, method, "/averaging?pca_eps=2")  # PCA's late answer, on averaging's path
        assert path(page) == "/averaging?avg_S=7"
    call(page, "replaceState", "/averaging?avg_S=7&pca_eps=2&present=true")
    assert path(page) == "/averaging?avg_S=7&present=true"
    page.evaluate("history.forward()")
    page.wait_for_timeout(150)
    assert path(page) == "/pca?pca_eps=2"


def test_the_prefixes_are_the_pages_declared_ones():
    prefixes = page_prefixes()
    assert prefixes["averaging"] == "avg_" and prefixes["pca"] == "pca_"
    assert prefixes[""] == prefixes["overview"]  # the default page is served at /
    assert len(set(prefixes.values())) == len(prefixes) - 1  # one page, one prefix
    assert f"window.__capePrefixes = {json.dumps(prefixes)};" in HISTORY_JS
