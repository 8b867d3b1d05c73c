"""The Overview's presets in any order, in one session of a real Chromium (issue #34, item 6).

A page keeps its settings while you visit others (docs/state.md, rule 4), but a link that names
its settings replaces them (rule 6): clicking a preset must show what a fresh browser shows at
the same link, whatever was clicked before. It did not: after "Different privacy needs"
(avg_S=4), "Equal hospitals" (avg_S=5, every value the page's default) showed avg_S=4, because
Streamlit drops a URL value equal to the widget's default and the remembered one came back.

One tab does everything: a new document per fresh reference (a new Streamlit session, as a
fresh browser; conftest.py's ``tabs``), one reference per preset, then one session clicks the
issue's sequence and goes on until every ordered pair of presets (a preset after itself
included) has followed each other at least once. The same session then clicks CAPE averaging's
own preset buttons (issue #13) until every ordered pair of them has followed each other, each
click showing the numbers and sites of a fresh browser at the preset's link (this replaces
tests/browser/test_lecturer.py's two orders, each from a fresh page, and reuses the references
above).
"""

from __future__ import annotations

from itertools import pairwise
from urllib.parse import parse_qsl, urljoin, urlsplit

import pytest
from test_browser import _chart_data
from test_lecturer import metrics, no_errors, settle, sites

from learning.lessons import LESSONS
from ui.sites_table import PRESETS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# The issue's sequence: an averaging preset, a PCA preset twice, then the averaging preset
# whose every value is the page's default.
ISSUE = ["Different privacy needs", "Strong privacy PCA", "Strong privacy PCA", "Equal hospitals"]

# The Overview's links that carry settings (its presets), as (label, href) pairs
PRESET_LINKS = """() => [...document.querySelectorAll("a[data-testid='stPageLink-NavLink']")]
  .filter(a => a.getAttribute('href').includes('?'))
  .map(a => [a.querySelector("[data-testid='stMarkdownContainer']").innerText.trim(),
             a.getAttribute('href')])"""


def every_pair(first: list[str], names: list[str]) -> list[str]:
    """A click sequence starting with ``first`` in which every ordered pair of ``names`` (a
    name after itself included) is clicked in a row at least once: from each preset go to one
    not yet clicked after it, preferring the one with the most such pairs left; when none is
    left, go to a preset that still has some."""
    left = {(a, b) for a in names for b in names}
    sequence = list(first)
    left -= set(pairwise(sequence))
    while left:
        here = sequence[-1]
        after = [b for a, b in sorted(left) if a == here]
        if not after:  # a detour: this click repeats a pair already seen
            after = sorted({a for a, _ in left})
        sequence.append(max(after, key=lambda b: sum(a == b for a, _ in left)))
        left.discard((here, sequence[-1]))
    return sequence


def test_every_pair_covers_every_ordered_pair():
    names = ["a", "b", "c", "d"]
    sequence = every_pair(["c", "d", "d", "a"], names)
    assert sequence[:4] == ["c", "d", "d", "a"]
    pairs = set(pairwise(sequence))
    assert pairs == {(a, b) for a in names for b in names}
    assert len(sequence) <= len(names) ** 2 + 4  # 16 pairs need 17 clicks; few detours


# What a settled page shows: every keyed control's value as drawn (sliders, radios, toggles,
# number and text fields) and every metric.
SHOWN = """() => [
  [...document.querySelectorAll("[class*='st-key-']")].flatMap(el => {
    const key = el.className.match(/st-key-(\\S+)/)[1];
    return [...el.querySelectorAll("input")].map(i => [key, i.type,
      i.type === "range" ? i.getAttribute("aria-valuetext")
      : i.type === "radio" || i.type === "checkbox" ? String(i.checked) : i.value].join(" "));
  }).sort(),
  [...document.querySelectorAll("[data-testid='stMetric']")].map(m => m.innerText)]"""


def shown(page) -> tuple:
    """What the settled page shows: its path, its controls and metrics, and every chart's
    data (the PCA curves)."""
    controls, metrics = page.evaluate(SHOWN)
    return urlsplit(page.url).path, controls, metrics, _chart_data(page)


def test_each_preset_after_any_other_gives_a_fresh_browsers_numbers(server, tabs):
    page = tabs()
    page.goto(server)
    settle(page)
    links = {name: urljoin(page.url, href) for name, href in page.evaluate(PRESET_LINKS)}
    carried = {name: set(parse_qsl(urlsplit(url).query)) for name, url in links.items()}
    assert set(ISSUE) <= set(links), links  # the issue's presets are still on the Overview
    fresh, numbers = {}, {}
    for name, url in links.items():  # each preset's reference, once: a new session each
        page = tabs()
        page.goto(url)
        settle(page)
        no_errors(page)
        fresh[name] = shown(page)
        if urlsplit(url).path == "/averaging":  # the page's preset buttons' reference
            numbers[name] = (metrics(page), sites(page))
    assert fresh["Equal hospitals"] != fresh["Different privacy needs"]
    buttons = [preset["label"] for preset in PRESETS.values()]
    assert set(buttons) == set(numbers), numbers  # every averaging preset is on the Overview
    assert numbers["One big site, many small"][0] != numbers["Equal hospitals"][0]

    page = tabs()
    page.goto(server)  # one session for the whole sequence
    settle(page)
    clicked = []
    for name in every_pair(ISSUE, list(links)):
        if urlsplit(page.url).path != "/":
            page.locator("[data-testid='stSidebarNav'] a", has_text="Overview").first.click()
        # The Overview's run is too quick to be seen running (settle would wait 3 s for it):
        # its link is what the next click needs.
        page.wait_for_url(f"{server}/")
        page.get_by_role("link", name=name).first.click()
        settle(page)
        clicked.append(name)
        no_errors(page)
        assert shown(page) == fresh[name], clicked
        # The address holds the link's settings, less those the app drops as defaults: no
        # remembered value of an earlier visit (the bug wrote avg_S=4 back into it).
        assert set(parse_qsl(urlsplit(page.url).query)) <= carried[name], (clicked, page.url)

    # CAPE averaging's own buttons, from what the walk left remembered on the page: "Equal
    # hospitals" (every value the default) right after "Different privacy needs" first.
    page.locator("[data-testid='stSidebarNav'] a", has_text="CAPE averaging").first.click()
    settle(page)
    for name in every_pair(["Different privacy needs", "Equal hospitals"], buttons):
        page.get_by_role("button", name=name).first.click()
        settle(page)
        clicked.append(name)
        no_errors(page)
        assert (metrics(page), sites(page)) == numbers[name], clicked


def test_a_lessons_link_after_a_preset_gives_a_fresh_browsers_numbers(server, tabs):
    """The same rule for a link that names only some settings: the first lesson's first step
    opens CAPE averaging with S = 5 (the default) and its own sites; after a preset of four
    sites, the page showed four (Streamlit dropped S = 5 and the remembered 4 came back)."""
    label = LESSONS[0].steps[0].explore.label
    page = tabs()
    page.goto(server)
    settle(page)
    page.get_by_role("link", name=ISSUE[0]).first.click()  # four sites
    settle(page)
    page.locator("[data-testid='stSidebarNav'] a", has_text="Lessons").first.click()
    link = page.get_by_role("link", name=label).first
    url = urljoin(page.url, link.get_attribute("href"))
    assert ("avg_S", "5") in parse_qsl(urlsplit(url).query), url
    link.click()
    settle(page)
    no_errors(page)
    clicked = shown(page)
    page = tabs()
    page.goto(url)
    settle(page)
    assert clicked == shown(page)
