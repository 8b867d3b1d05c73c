"""The lecturer's demo in a real Chromium (issue #13): presets, sites and weights, page changes,
Back/Forward, shared links, presenter mode and the phone, light and dark, and the exports.

Screenshots go to artifacts/screenshots/ (presenter-*.png, phone-*.png): look at them.
"""

from __future__ import annotations

import io
from pathlib import Path

import browser_wait
import pandas as pd
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def settle(page, timeout: float = 120) -> None:
    """Wait until the script has finished (the rerun the last action asked for included) and
    the charts are painted (conditions, not sleeps: tests/browser_wait.py)."""
    browser_wait.settle(page, timeout)


# An element's box, unchanged this long, has finished moving (a scroll, the sidebar's slide).
STILL_MS = 200
_STILL = """([selector, quietMs]) => {
  const el = document.querySelector(selector);
  if (!el) return false;
  const r = el.getBoundingClientRect();
  const box = [r.x, r.y, r.width, r.height].join(",");
  const now = performance.now();
  if (window.__capeBox !== box) { window.__capeBox = box; window.__capeBoxSince = now; }
  return now - window.__capeBoxSince >= quietMs;
}"""


def still(page, selector: str) -> None:
    """Wait until the first element matching ``selector`` stops moving: its box the same for
    STILL_MS (a condition in place of a fixed sleep after a scroll, hover or slide)."""
    page.evaluate("() => { window.__capeBox = undefined; }")
    page.wait_for_function(_STILL, arg=[selector, STILL_MS], timeout=30_000, polling=50)


no_errors = browser_wait.assert_no_errors


def metrics(page) -> dict[str, str]:
    # CAPE averaging draws six metrics; read them only when all are there
    page.locator("[data-testid='stMetric']").nth(5).wait_for(timeout=60_000)
    out = {}
    for m in page.locator("[data-testid='stMetric']").all():
        name = m.locator("[data-testid='stMetricLabel']").inner_text().strip()
        out[name] = m.locator("[data-testid='stMetricValue']").inner_text().strip()
    return out


def sites(page, prefix: str = "avg_") -> list[list[float]]:
    """The sites table as the page holds it (its text form, also in the URL)."""
    field = page.locator(f".st-key-{prefix}sites input")
    if field.count() == 0:  # the expander draws its content when opened
        page.get_by_text("The sites as text").first.click()
        field.wait_for(timeout=30_000)
    text = field.input_value()
    return [[float(x) for x in row.split(",")] for row in text.split(";")]


def new_page(browser, *, width=1400, height=1000, dark=False):
    context = browser.new_context(
        viewport={"width": width, "height": height},
        color_scheme="dark" if dark else "light",
        accept_downloads=True,
        **browser_wait.CONTEXT,
    )
    return context.new_page()


def press_slider(page, key: str, presses: int) -> None:
    for _ in range(abs(presses)):  # one step at a time: a rerun redraws the slider
        page.locator(f".st-key-{key} input[type='range']").first.focus()
        page.keyboard.press("ArrowRight" if presses > 0 else "ArrowLeft")
        settle(page)


def click(page, name: str) -> None:
    page.get_by_role("button", name=name).first.click()
    settle(page)


PRESETS = {
    "equal": "Equal hospitals",
    "big": "One big site, many small",
    "mixed": "Different privacy needs",
}


# Presets in any order (each click shows a fresh browser's numbers and sites): every ordered
# pair of CAPE averaging's preset buttons in one session, against the Overview's links, in
# test_browser_presets.py::test_each_preset_after_any_other_gives_a_fresh_browsers_numbers.


def test_sites_up_and_down_keep_the_weights_the_rule_implies(server, tabs):
    page = tabs()
    page.goto(f"{server}/averaging")
    settle(page)
    press_slider(page, "avg_S", 3)  # 5 → 8 equal sites
    table = sites(page)
    assert len(table) == 8 and all(abs(row[3] - 1 / 8) < 1e-6 for row in table)
    press_slider(page, "avg_S", -5)  # 8 → 3
    table = sites(page)
    assert len(table) == 3 and all(abs(row[3] - 1 / 3) < 1e-6 for row in table)
    # ∝ N_s: the big-site preset, then two more sites of N_s = 1000
    click(page, PRESETS["big"])
    press_slider(page, "avg_S", 2)
    table = sites(page)
    total = sum(row[0] for row in table)
    assert len(table) == 8 and total == 10000 + 5 * 500 + 2 * 1000
    assert all(abs(row[3] - row[0] / total) < 1e-5 for row in table)
    no_errors(page)


def open_cell_editor(page, grid, position: dict, attempts: int = 4) -> None:
    """Click a cell of the sites table and press Enter until its editor has the focus (the
    grid's ``input.gdg-input``). On a busy machine the first click can land while the grid is
    still drawing its rows, and the Enter then opens nothing."""
    for _ in range(attempts):
        grid.click(position=position)
        page.keyboard.press("Enter")
        try:
            page.wait_for_function(
                "() => document.activeElement?.classList.contains('gdg-input')", timeout=5_000
            )
            return
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
            settle(page)
    raise AssertionError(f"the cell editor did not open after {attempts} clicks")


def test_table_edits_survive_the_weighting_rule(server, tabs):
    page = tabs()
    page.goto(f"{server}/averaging")
    settle(page)
    grid = page.locator("[data-testid='stDataFrame']").first
    open_cell_editor(page, grid, {"x": 60, "y": 35 + 17})  # first body row, first column (N_s)
    page.keyboard.press("Control+A")
    page.keyboard.type("4000", delay=80)
    # the editor holds the typed text before Enter commits it (a busy browser renders late)
    page.wait_for_function("() => document.activeElement?.value === '4000'", timeout=30_000)
    page.keyboard.press("Enter")
    settle(page)
    assert sites(page)[0][0] == 4000
    page.get_by_text("∝ N_s", exact=True).click()
    settle(page)
    table = sites(page)
    assert table[0][0] == 4000  # the edit survived
    assert abs(table[0][3] - 4000 / 8000) < 1e-6  # and weighs N_s/N
    page.get_by_text("equal", exact=True).click()
    settle(page)
    assert sites(page)[0][0] == 4000 and abs(sites(page)[0][3] - 0.2) < 1e-6
    no_errors(page)


def slider_text(page, key: str) -> str:
    return page.locator(f".st-key-{key} input[type='range']").first.get_attribute("aria-valuetext")


def test_pages_keep_their_own_settings_and_back_forward_restore_them(server, browser):
    page = new_page(browser)
    page.goto(f"{server}/pca")
    settle(page)
    press_slider(page, "pca_eps", 2)  # 0.5 → 1 → 2
    assert slider_text(page, "pca_eps") == "2" and "pca_eps=2" in page.url
    page.locator("[data-testid='stSidebarNav'] a", has_text="Tensor decomposition").click()
    settle(page)
    assert slider_text(page, "td_eps") == "0.5" and "pca_" not in page.url  # its own defaults
    press_slider(page, "td_eps", -1)
    assert "td_eps=0.2" in page.url
    page.locator("[data-testid='stSidebarNav'] a", has_text="PCA").click()
    settle(page)
    assert slider_text(page, "pca_eps") == "2" and "pca_eps=2" in page.url  # PCA as left
    page.go_back()
    settle(page)
    assert "/tensor" in page.url and slider_text(page, "td_eps") == "0.2"
    page.go_back()
    settle(page)
    assert "/tensor" in page.url and slider_text(page, "td_eps") == "0.5"
    page.go_back()
    settle(page)
    assert "/pca" in page.url and slider_text(page, "pca_eps") == "2"
    page.go_back()
    settle(page)
    assert slider_text(page, "pca_eps") == "1"
    page.go_forward()
    settle(page)
    assert slider_text(page, "pca_eps") == "2"
    no_errors(page)
    page.context.close()


def test_a_copied_url_reproduces_the_screen_in_a_fresh_context(server, browser, tabs):
    page = tabs()
    page.goto(f"{server}/averaging")
    settle(page)
    click(page, PRESETS["mixed"])
    press_slider(page, "avg_S", 1)
    page.get_by_text("∝ N_s", exact=True).click()
    settle(page)
    shown = (metrics(page), sites(page))
    other = new_page(browser)  # a fresh browser context, as the link's receiver has
    other.goto(page.url)
    settle(other)
    assert (metrics(other), sites(other)) == shown
    other.context.close()


def test_presenter_mode_fits_a_projector(server, tabs):
    """The collusion demo's controls beside its chart, light, then the same page switched to
    dark (browser_wait.switch_scheme: a rerun, as on a page opened dark; a page load costs the
    browser more). PCA's and CAPE averaging's projector layout (control beside the chart, above
    the fold, sidebar collapsed) is checked on the same load as their first screen:
    tests/browser/test_a11y.py::test_page_renders_passes_axe_fits_and_presents
    (tests/presenter_checks.py)."""
    page = tabs(width=1280, height=720)
    SHOTS.mkdir(parents=True, exist_ok=True)
    # Privacy explorer: the collusion demo's controls beside its chart, scrolled to
    page.goto(f"{server}/privacy?present=true&prv_colluders=site+1")
    settle(page)
    for theme in ("light", "dark"):
        if theme == "dark":
            browser_wait.switch_scheme(page, theme)
        no_errors(page)
        control = page.locator(".st-key-prv_colluders").first
        page.get_by_role("heading", name="Collusion").first.evaluate(
            "e => e.scrollIntoView({block: 'start'})"
        )
        still(page, ".st-key-prv_colluders")
        # the link's coalition, as a lecturer shares it
        assert "site 1" in control.inner_text(), theme
        box = control.bounding_box()
        toggle = page.locator(".st-key-prv_ng").first.bounding_box()
        chart = page.locator(".st-key-collusion_chart").first.bounding_box()
        assert box and toggle and chart, theme
        assert max(box["x"] + box["width"], toggle["x"] + toggle["width"]) <= chart["x"], theme
        assert chart["y"] < box["y"] + box["height"], theme  # side by side, not stacked
        page.screenshot(path=str(SHOTS / f"presenter-privacy-{theme}.png"))


TO_TOP = "() => document.querySelectorAll('*').forEach(e => { if (e.scrollTop) e.scrollTop = 0; })"


def test_phone_width_keeps_the_chart_visible(server, tabs):
    """PCA at a phone's width, light, then the same page switched to dark
    (browser_wait.switch_scheme: a rerun, as on a page opened dark; one page load fewer, #35):
    the chart shown, its toolbar clear of the legend; then the sidebar opened over the chart
    in dark, and switched back to light, leaves the chart visible under it."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = tabs(width=390, height=844)
    page.goto(f"{server}/pca")
    page.locator("[data-testid='stPlotlyChart'] .main-svg").first.wait_for(timeout=120_000)
    settle(page)
    chart = page.locator("[data-testid='stPlotlyChart']").first
    for theme in ("light", "dark"):
        if theme == "dark":
            page.mouse.move(0, 0)  # off the chart: its toolbar hides until hovered again
            page.evaluate(TO_TOP)  # the first screen again, as a page opened dark shows it
            browser_wait.switch_scheme(page, theme)
        no_errors(page)
        page.screenshot(path=str(SHOTS / f"phone-pca-{theme}.png"))
        # the toolbar (modebar), shown on touch or hover, never covers legend entries
        chart.evaluate("e => e.scrollIntoView({block: 'end'})")  # the chart at the bottom
        chart.hover()
        page.locator(".modebar").first.wait_for(state="visible", timeout=30_000)
        still(page, ".modebar")
        legend = page.locator(".legend").first.bounding_box()
        modebar = page.locator(".modebar").first.bounding_box()
        assert legend and modebar, theme
        apart_x = min(legend["x"] + legend["width"], modebar["x"] + modebar["width"]) <= max(
            legend["x"], modebar["x"]
        )
        apart_y = min(legend["y"] + legend["height"], modebar["y"] + modebar["height"]) <= max(
            legend["y"], modebar["y"]
        )
        assert apart_x or apart_y, theme
    # the sidebar opened over the chart in view: the chart stays visible under it
    page.locator("[data-testid='stExpandSidebarButton']").first.click()
    page.wait_for_function(  # in view: slid in from the left (collapsed, it sits left of 0)
        """() => { const r = document.querySelector("[data-testid='stSidebar']")
                     ?.getBoundingClientRect(); return r && r.width > 0 && r.left >= 0; }""",
        timeout=30_000,
        polling=50,
    )
    for theme in ("dark", "light"):
        if theme == "light":
            browser_wait.switch_scheme(page, theme)
        no_errors(page)
        still(page, "[data-testid='stSidebar']")
        page.screenshot(path=str(SHOTS / f"phone-pca-sidebar-{theme}.png"))
        sheet = page.locator("[data-testid='stSidebar']").first.bounding_box()
        plot = chart.locator(".main-svg").first.bounding_box()
        assert sheet["y"] + sheet["height"] <= plot["y"] + 40, theme  # at most the toolbar


def test_a_presenter_link_opened_on_a_phone_keeps_a_readable_chart(server, tabs):
    # A student opens the lecturer's shared presenter link on a phone: the projector's large
    # lettering (its legend alone was taller than the plot) gives way to the phone layout.
    # Light, then the same page switched to dark (browser_wait.switch_scheme).
    page = tabs(width=390, height=844, phone=True)
    page.goto(f"{server}/pca?present=true")
    page.locator("[data-testid='stPlotlyChart'] .main-svg").first.wait_for(timeout=120_000)
    settle(page)
    for theme in ("light", "dark"):
        if theme == "dark":
            browser_wait.switch_scheme(page, theme)
        no_errors(page)
        chart = page.locator("[data-testid='stPlotlyChart']").first
        chart.evaluate("e => e.scrollIntoView({block: 'center'})")
        still(page, "[data-testid='stPlotlyChart']")
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"phone-pca-present-{theme}.png"))
        plot = chart.locator(".nsewdrag").first.bounding_box()  # the plot area itself
        legend = chart.locator(".legend").first.bounding_box()
        assert plot and legend, theme
        # The normal phone chart's plot area is ~300 px of its 480; under the projector's
        # lettering it was ~90 px, squeezed by a five-row legend.
        assert plot["height"] >= 240, (theme, plot)
        # the legend below, not over the plot
        assert legend["y"] >= plot["y"] + plot["height"], theme


def test_on_a_phone_epsilon_is_on_the_first_screen_of_pca_and_tensor(server, tabs):
    # Issue #40 item 8: on a phone ε sat three screens deep in the sidebar's sheet. The
    # page's key controls (S, N_s, ε, δ) now open on the page itself, above the chart.
    page = tabs(width=390, height=844, phone=True)
    for path in ("pca", "tensor"):
        page.goto(f"{server}/{path}")
        page.locator("[data-testid='stPlotlyChart'] .main-svg").first.wait_for(timeout=120_000)
        settle(page)
        no_errors(page)
        eps = page.locator("[data-testid='stSlider']").filter(has_text="Privacy ε").first
        box = eps.bounding_box()
        assert eps.is_visible() and box, path
        assert box["y"] + box["height"] <= 844, (path, box)


def download(page, name: str) -> bytes:
    with page.expect_download(timeout=120_000) as info:
        page.get_by_role("button", name=name).first.click()
    return Path(info.value.path()).read_bytes()


@pytest.mark.parametrize(
    ("path", "title"),
    [
        ("pca", "Distributed private PCA"),
        ("averaging", "CAPE averaging: noise in the aggregate"),
        ("privacy", "Privacy explorer: effective ε"),
        ("paper_figures", "Figure 2a"),
    ],
)
def test_every_kind_of_figure_exports_numbers_and_a_stamped_figure(server, tabs, path, title):
    page = tabs()
    page.goto(f"{server}/{path}")
    settle(page)
    # the downloads are drawn on demand (ui/export.py): the first figure's "Export" button
    page.get_by_role("button", name="Export").first.click()
    settle(page)
    table = pd.read_csv(io.BytesIO(download(page, "Numbers (CSV)")))
    assert len(table) > 0
    html = download(page, "Figure (HTML)").decode("utf-8")
    assert title in html and "Parameters:" in html
    assert f"/{path}" in html and "Reproduce in Python" in html
