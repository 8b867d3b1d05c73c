"""Accessibility: axe-core (the npm package, pinned in package-lock.json, installed by
scripts/setup.sh) injected into every page of the real app in Chromium, light and dark theme:
no critical and no serious violation, and headings in order (issue #22).

Every page: the pages are read from the app's own navigation, not listed here, and their count
is checked against app_pages/*.py, so a new page is covered the day it is added.

One exception, and only it: Streamlit's own navigation list (``stSidebarNav``) nests section
headers inside its ``<ul>``, which axe's ``list``/``listitem`` rules flag. That markup is
Streamlit's, not ours; the exception is limited to those two rules on nodes inside that list.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_lecturer import new_page, settle

ROOT = Path(__file__).resolve().parents[1]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
NAV = "[data-testid='stSidebarNav']"
STREAMLIT_NAV_RULES = {"list", "listitem"}  # the exception above: Streamlit's markup
BLOCKING = {"critical", "serious"}
ALSO_BLOCKING = {"heading-order"}  # "moderate" for axe, but headings in order are asked for

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def axe_source() -> str:
    if not AXE.exists():
        message = f"{AXE} missing: run `bash scripts/setup.sh` (npm ci)"
        if os.environ.get("REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return AXE.read_text(encoding="utf-8")


def page_paths(page, server: str) -> list[str]:
    """The app's pages as its navigation lists them (``/``, ``/learn``, …)."""
    page.goto(server)
    page.locator(f"{NAV} a").first.wait_for(timeout=120_000)
    more = page.locator("[data-testid='stSidebarNavViewButton']")
    if more.count() and "more" in more.first.inner_text().lower():  # long lists fold
        more.first.click()
    hrefs = page.locator(f"{NAV} a").evaluate_all("links => links.map(a => a.pathname)")
    return list(dict.fromkeys(hrefs))


def is_streamlit_nav(rule: dict) -> bool:
    """Whether a violation is the excepted one: a list rule, every node inside the nav."""
    return rule["id"] in STREAMLIT_NAV_RULES and all(node["in_nav"] for node in rule["nodes"])


AXE_RUN = """async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => {
      const el = document.querySelector(n.target.join(' '));
      return {target: n.target, html: n.html.slice(0, 160),
              summary: (n.failureSummary || '').slice(0, 200),
              in_nav: !!(el && el.closest("[data-testid='stSidebarNav']"))};
    }),
  }));
}"""


def violations(page, axe_source: str) -> list[dict]:
    """axe-core's critical and serious violations (and headings out of order) on the page as
    shown, the nav exception removed."""
    page.add_script_tag(content=axe_source)
    found = page.evaluate(AXE_RUN)
    blocking = [v for v in found if v["impact"] in BLOCKING or v["id"] in ALSO_BLOCKING]
    return [v for v in blocking if not is_streamlit_nav(v)]


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_every_page_passes_axe(server, browser, axe_source, dark):
    page = new_page(browser, width=1440, height=900, dark=dark)
    paths = page_paths(page, server)
    assert len(paths) == len(list((ROOT / "app_pages").glob("*.py"))), paths
    report: dict[str, list[str]] = {}
    for path in paths:
        page.goto(f"{server}{path}")
        settle(page)
        found = violations(page, axe_source)
        report[path] = [
            f"{v['impact']} {v['id']} ×{len(v['nodes'])}: {v['help']} — "
            f"{v['nodes'][0]['html']} ({v['nodes'][0]['summary']})"
            for v in found
        ]
    print("axe critical+serious rules per page:", {p: len(r) for p, r in report.items()})
    assert not any(report.values()), "\n".join(
        f"{path}: {line}" for path, lines in report.items() for line in lines
    )
    page.context.close()
