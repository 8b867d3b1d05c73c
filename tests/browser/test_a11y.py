"""Every page renders, is accessible and presents: each page of the real app opened in
Chromium, light and dark theme, shows no error and its charts (a screenshot per page under
artifacts/screenshots/), and axe-core (the npm package, pinned in package-lock.json, installed
by scripts/setup.sh), injected into that same page, finds no critical and no serious
violation and headings in order (issue #22); no table scrolls sideways at 1400×1000 (issue
#40 item 4); and the page opened in presenter mode at 1280×720 shows its main chart whole on
the first screen (tests/presenter_checks.py). One test per page does every check in both
schemes (the second scheme by switching the open page, see the test), and the failure lists
each page's failed checks by scheme and name: a fresh page costs the browser
2-4 CPU-seconds (docs/performance.md), and the suite loads enough of them.

Every page: the app's own navigation must list exactly the pages tested here, and those are
app_pages/*.py, so a new page is covered (or this test fails) the day it is added.

No exception, the navigation included: Streamlit's own navigation list (``stSidebarNav``)
nests each section in a ``<div>`` inside its ``<ul>``, which axe's ``list``/``listitem`` rules
flag as serious on every page; until issue #49 this test excepted them. ``ui/nav_a11y.js``
(installed by app.py) gives that markup list roles a screen reader accepts, and
:func:`test_the_navigation_is_lists_a_screen_reader_accepts` checks its structure.
"""

from __future__ import annotations

import os
from pathlib import Path

import browser_wait
import presenter_checks
import pytest
from test_browser import CHARTS, PAGES, SHOTS, _settle, errors_shown

from figures.theme import AA_CONTRAST, contrast_ratio

ROOT = Path(__file__).resolve().parents[2]
LECTURER_KEY = os.environ["CAPE_LECTURER_KEY"]  # tests/conftest.py: the lecturer's page
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
NAV = "[data-testid='stSidebarNav']"
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
    return nav_paths(page)


AXE_RUN = """async (only) => {
  const options = {resultTypes: ['violations']};
  if (only) options.runOnly = {type: 'rule', values: only};
  const result = await axe.run(document, options);
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


# The rules whose verdict depends on the colours: all a scheme switch can change. The switch
# reruns the page's script with the same settings; the dark flag reaches only the charts'
# colours (ui/presenter.py), so the markup the other rules read is the same. :func:`axe_problems`
# checks that it is (STRUCTURE) before it runs only these after a switch; each axe run costs
# Chromium about 2 CPU-seconds (docs/performance.md).
COLOUR_RULES = ["color-contrast", "link-in-text-block"]
# The markup axe's other rules read: elements by tag, role and aria-* attribute names, and the
# images' alt texts; the charts' SVG and the data grids' canvases left out (colours and
# redraws only).
STRUCTURE = """() => {
  const count = {};
  for (const el of document.querySelectorAll('body *')) {
    if (el.closest("svg, [data-testid='stPlotlyChart'], [data-testid='stDataFrame']")) continue;
    const aria = [...el.attributes].map(a => a.name).filter(n => n.startsWith('aria-')).sort();
    const key = [el.tagName, el.getAttribute('role') || '', aria.join(','),
                 el.tagName === 'IMG' ? el.getAttribute('alt') : ''].join('|');
    count[key] = (count[key] || 0) + 1;
  }
  return count;
}"""


def violations(page, axe_source: str, only: list[str] | None = None) -> list[dict]:
    """axe-core's critical and serious violations (and headings out of order) on the page as
    shown, the navigation's included; ``only``: those rules alone."""
    if not page.evaluate("() => typeof axe !== 'undefined'"):  # once per document
        page.add_script_tag(content=axe_source)
    found = page.evaluate(AXE_RUN, only)
    return [v for v in found if v["impact"] in BLOCKING or v["id"] in ALSO_BLOCKING]


# The lettering the theme sets on every chart (ui.presenter._lettering): axe cannot see into a
# chart's SVG, so its colours are read here, with the page's background (issue #40, item 5).
CHART_LETTERING = """() => {
  const hex = c => '#' + c.match(/\\d+/g).slice(0, 3)
    .map(v => Number(v).toString(16).padStart(2, '0')).join('');
  const app = document.querySelector("[data-testid='stApp']");
  const sel = ['.xtick text', '.ytick text', '.g-xtitle text', '.g-ytitle text', '.legendtext']
    .map(s => "[data-testid='stPlotlyChart'] " + s).join(', ');
  const texts = [...document.querySelectorAll(sel)];
  const fills = new Set(texts.map(t => hex(getComputedStyle(t).fill)));
  return {background: hex(getComputedStyle(app).backgroundColor), fills: [...fills]};
}"""


def lettering_contrast(page) -> dict[str, float]:
    """Each colour of the charts' lettering and its contrast ratio on the page's background."""
    seen = page.evaluate(CHART_LETTERING)
    return {c: contrast_ratio(c, seen["background"]) for c in seen["fills"]}


def nav_paths(page) -> list[str]:
    """The pages the open page's navigation lists (``/``, ``/learn``, …), long lists unfolded."""
    page.locator(f"{NAV} a").first.wait_for(timeout=120_000)
    more = page.locator("[data-testid='stSidebarNavViewButton']")
    if more.count() and "more" in more.first.inner_text().lower():  # long lists fold
        more.first.click()
    hrefs = page.locator(f"{NAV} a").evaluate_all("links => links.map(a => a.pathname)")
    return list(dict.fromkeys(hrefs))


def test_the_pages_tested_are_the_apps_pages():
    assert set(PAGES) == {p.stem for p in (ROOT / "app_pages").glob("*.py")}
    # the lecturer's pages whose control sits beside the chart are among them
    assert set(presenter_checks.BESIDE) <= {f"/{path}" for path in PAGES.values()}


# Every table's scroll box against its visible box (data grids scroll inside .dvn-scroller;
# st.table inside its own wrapper).
TABLE_WIDTHS = """() => [
  ...[...document.querySelectorAll("[data-testid='stDataFrame']")].map(d => {
    const s = d.querySelector('.dvn-scroller');
    return {kind: 'grid', scroll: s.scrollWidth, client: s.clientWidth};
  }),
  ...[...document.querySelectorAll("[data-testid='stTable']")].map(t =>
    ({kind: 'table', scroll: t.scrollWidth, client: t.clientWidth})),
]"""
# Issue #40 item 4: 61 % of the Trust-models table was off-screen at 1400 px, and the Audit
# table cut 'verdict'. On these pages (formerly tests/browser/test_browser.py's own loads of
# them) no table scrolls sideways at 1400×1000, and there are tables.
WIDE_TABLES = {"trust_models", "audit"}


def axe_problems(page, axe_source: str, name: str, before: dict | None = None) -> list[str]:
    """axe's blocking violations, and chart lettering missing or below AA contrast.

    ``before``: the same page before a scheme switch, as a dict this fills on its first use
    with the page's markup (STRUCTURE); if the markup now is the same, only the colour rules
    run (COLOUR_RULES), else every rule, and the difference is not itself a problem."""
    only = None
    if before is not None:
        structure = page.evaluate(STRUCTURE)
        if before.get("structure") == structure:
            only = COLOUR_RULES
        before.setdefault("structure", structure)
    problems = [
        f"axe: {v['impact']} {v['id']} ×{len(v['nodes'])}: {v['help']} — "
        f"{v['nodes'][0]['html']} ({v['nodes'][0]['summary']})"
        + (" [in the navigation: ui/nav_a11y.js]" if v["nodes"][0]["in_nav"] else "")
        for v in violations(page, axe_source, only)
    ]
    ratios = lettering_contrast(page)
    # the protocol's network is drawn without axes or legend (its labels sit on the nodes)
    if not (ratios or not CHARTS[name] or name == "protocol"):
        problems.append("contrast: no chart lettering")
    low = {c: round(r, 2) for c, r in ratios.items() if r < AA_CONTRAST}
    if low:
        problems.append(f"contrast: chart lettering below {AA_CONTRAST}:1: {low}")
    return problems


def page_problems(
    page, axe_source: str, name: str, scheme: str, before: dict | None = None
) -> list[str]:
    """Everything wrong with ``name``'s page, settled at 1400×1000 in ``scheme``: an error or
    no title, a wide table (WIDE_TABLES), axe's blocking violations and chart lettering
    (:func:`axe_problems`), a navigation that does not list the pages tested. Saves the
    full-page screenshot; leaves the window at its tall size."""
    problems = [f"error shown: {e}" for e in errors_shown(page)]
    if page.locator("h1").count() < 1:
        problems.append("no title (h1)")
    if name in WIDE_TABLES:
        tables = page.evaluate(TABLE_WIDTHS)
        wide = [t for t in tables if t["scroll"] > t["client"] + 1]
        if not tables or wide:
            problems.append(f"tables: none, or some scroll sideways at 1400×1000: {tables}")
    # As tall as the longest page for the full-page shot (Streamlit scrolls inside its main
    # container, so that is the viewport) and for axe, which reads the elements on screen;
    # only now: a taller window costs the browser while the page opens (browser_wait.resize).
    browser_wait.resize(page, 1400, 3800 if name == "privacy" else 2200)
    SHOTS.mkdir(parents=True, exist_ok=True)
    dark = "-dark" if scheme == "dark" else ""
    page.screenshot(path=str(SHOTS / f"{name}{dark}.png"), full_page=True)
    problems += axe_problems(page, axe_source, name, before)
    listed = sorted(nav_paths(page))
    offered = [path for key, path in PAGES.items() if key != "classroom" or name == key]
    if listed != sorted(f"/{path}" for path in offered):  # a student's lacks the lecturer's
        problems.append(f"navigation: lists {listed}, the pages tested are {sorted(PAGES)}")
    return problems


def presenter_problems(
    page, path: str, scheme: str, axe_source: str, name: str, before: dict | None = None
) -> list[str]:
    """Everything wrong with ``path`` settled in presenter mode at 1280×720 in ``scheme``
    (tests/presenter_checks.py), then axe's blocking violations and the charts' lettering
    there too (issue #49: 0 serious in presenter mode as well; its larger lettering and
    folded sections are other markup), the window made tall for axe as on a normal load and
    put back to the projector's size."""
    problems = [f"error shown: {e}" for e in errors_shown(page)]
    problems += presenter_checks.first_screen_problems(page, path, scheme)
    browser_wait.resize(page, presenter_checks.WIDTH, 2200)
    problems += axe_problems(page, axe_source, name, before)
    page.set_viewport_size({"width": presenter_checks.WIDTH, "height": presenter_checks.HEIGHT})
    return problems


@pytest.mark.parametrize("name", list(PAGES))
def test_page_renders_passes_axe_fits_and_presents(server, tabs, axe_source, name):
    """Every check of one page in both schemes, on two loads: the page opened in light (at
    1400×1000: the width lays the page out) and switched to dark, then opened in presenter
    mode in dark and switched to light, axe run in all four (browser_wait.switch_scheme
    reruns the script, so each scheme's charts are drawn as on a page opened in it; each
    scheme is also the one a load opens in, so the theme a first run sees is checked too).
    A page load costs the browser more than a rerun (docs/performance.md). The failure
    names page, scheme and check of each problem."""
    path = f"/{PAGES[name]}"
    key = f"lecturer={LECTURER_KEY}&" if name == "classroom" else ""  # the lecturer's page
    problems = []
    page = tabs(width=1400, height=1000)
    page.goto(f"{server}{path}?{key}")
    _settle(page, CHARTS[name])
    loaded: dict = {}  # every rule on the load; after the switch, the colours' (COLOUR_RULES)
    problems += [f"light: {p}" for p in page_problems(page, axe_source, name, "light", loaded)]
    page.set_viewport_size({"width": 1400, "height": 1000})
    browser_wait.switch_scheme(page, "dark")
    problems += [f"dark: {p}" for p in page_problems(page, axe_source, name, "dark", loaded)]
    # presenter mode on a projector (issue #22), the same page
    page = tabs(width=presenter_checks.WIDTH, height=presenter_checks.HEIGHT, dark=True)
    page.goto(f"{server}{path}?{key}present=true")
    browser_wait.settle(page, 120)
    loaded = {}
    dark = presenter_problems(page, path, "dark", axe_source, name, loaded)
    problems += [f"dark: presenter: {p}" for p in dark]
    browser_wait.switch_scheme(page, "light")
    light = presenter_problems(page, path, "light", axe_source, name, loaded)
    problems += [f"light: presenter: {p}" for p in light]
    assert not problems, f"{name}:\n" + "\n".join(problems)


# The navigation as a screen reader gets it: each list's role, name and items (ui/nav_a11y.js)
NAV_LISTS = """() => [...document.querySelectorAll(
    "[data-testid='stSidebarNav'] [role='list'], [data-testid='stSidebarNav'] ul:not([role])")]
  .map(l => ({name: (document.getElementById(l.getAttribute('aria-labelledby') || '') || {})
                      .innerText || '',
              items: [...l.querySelectorAll(':scope > li')]  // each title, after its icon
                .map(li => li.innerText.trim().split('\\n').pop())}))"""
NAV_RULES = {"runOnly": ["list", "listitem", "aria-required-children", "aria-required-parent"]}


def test_the_navigation_is_lists_a_screen_reader_accepts(server, tabs, axe_source):
    """Issue #49: axe found two serious violations on every page, both in Streamlit's
    navigation (a <ul> holding <div>s, <li>s outside any list). With ui/nav_a11y.js each
    section is a list named by its header, holding its pages, and axe's list rules pass —
    also after a click in the navigation opens another page (Streamlit redraws the list), and
    in presenter mode, whose top navigation is Streamlit's other markup."""
    import ast

    tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    sections = next(  # the sections and pages app.py gives st.navigation
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "SECTIONS"
    )
    page = tabs(width=1400, height=1000)
    page.goto(f"{server}/glossary")
    browser_wait.settle(page, 120)
    want = [  # a student's navigation: the lecturer's page needs the lecturer's key (#49)
        {"name": section, "items": [t for script, t, _ in entries if script != "classroom"]}
        for section, entries in sections.items()
    ]
    for moved in (False, True):
        if moved:  # another page through the navigation itself
            page.locator(f"{NAV} a", has_text="Repeated releases").click()
            page.wait_for_url("**/composition", timeout=60_000)
            browser_wait.settle(page, 120)
        assert page.evaluate(NAV_LISTS) == want, moved
        if not page.evaluate("() => typeof axe !== 'undefined'"):
            page.add_script_tag(content=axe_source)
        found = page.evaluate(
            "async (o) => (await axe.run(document.querySelector(\"[data-testid='stSidebarNav']\"),"
            " o)).violations.map(v => v.id)",
            NAV_RULES,
        )
        assert found == [], (moved, found)
    # presenter mode puts Streamlit's top navigation in its place (its own markup, no fix)
    page = tabs(width=presenter_checks.WIDTH, height=presenter_checks.HEIGHT)
    page.goto(f"{server}/glossary?present=true")
    browser_wait.settle(page, 120)
    assert page.locator("[data-testid='stTopNav']").count() == 1
    page.add_script_tag(content=axe_source)
    found = page.evaluate("async (o) => (await axe.run(document, o)).violations.map(v => v.id)",
                          NAV_RULES)  # fmt: skip
    assert found == [], ("presenter", found)
