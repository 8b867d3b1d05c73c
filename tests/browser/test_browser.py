"""The real app in headless Chromium: the ε control changes the chart, links, uploads, a fresh
server (every page's render, with its accessibility, presenter-mode and table-width checks, is
in tests/browser/test_a11y.py).

Starts `streamlit run app.py` on a free local port, drives it with Playwright in Debian's
Chromium, and saves screenshots under artifacts/screenshots/. Skipped
when Chromium or Playwright is missing, unless REQUIRE_BROWSER=1 (set by .ci/run), which
turns a missing browser into a failure.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path

import browser_wait
import numpy as np
import pytest

from benchmarks.server import streamlit_server as app_server
from figures.theme import VERDICT_SYMBOL

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"
PAGES = {
    "overview": "",
    "averaging": "averaging",
    "protocol": "protocol",
    "learn": "learn",
    "privacy": "privacy",
    "pca": "pca",
    "tensor": "tensor",
    "paper_figures": "paper_figures",
    "trust_models": "trust_models",
    "composition": "composition",
    "audit": "audit",
    "glossary": "glossary",
    "classroom": "classroom",
}
CHARTS = {  # Plotly charts per page on first load
    "overview": 0,
    "averaging": 2,
    "protocol": 1,
    "learn": 1,
    "privacy": 2,
    "pca": 1,
    "tensor": 1,
    "paper_figures": 1,  # the shared legend
    "trust_models": 1,
    "composition": 1,
    "audit": 2,  # the audit in bars, and as trade-off curves
    "glossary": 0,
    "classroom": 0,
}

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@contextmanager
def streamlit_server():
    """The real app on a free loopback port (benchmarks/server.py); yields its base URL."""
    try:
        with app_server() as (url, _):
            yield url
    except RuntimeError as err:
        pytest.fail(str(err))


def _settle(page, charts: int = 0, timeout: float = 90) -> None:
    """Wait until the script has finished (the rerun the last action asked for included):
    title shown, ``charts`` Plotly charts painted (conditions: tests/browser_wait.py)."""
    browser_wait.settle(page, timeout, charts=charts)


errors_shown = browser_wait.errors_shown  # the pages' verdicts (by their icon) are no error


_assert_no_errors = browser_wait.assert_no_errors


def _shot(page, name: str, height: int) -> None:
    """A full-page screenshot (artifacts/screenshots/``name``.png) of the settled page with the
    window grown to ``height``: Streamlit scrolls inside its main container, so the shot is the
    window. The tests open their pages at 1000 px and grow them only here
    (browser_wait.resize: a tall window costs the browser while a page opens and runs)."""
    browser_wait.resize(page, page.viewport_size["width"], height)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def _chart_data(page) -> str:
    return page.evaluate(
        "() => JSON.stringify([...document.querySelectorAll('.js-plotly-plot')]"
        ".map(p => [(p.data || []).map(t => [t.x, t.y]),"
        " ((p.layout || {}).shapes || []).map(s => s.x0)]))"
    )


def test_moving_epsilon_changes_the_pca_chart(server, tabs):
    page = tabs(width=1400, height=1000)
    page.goto(f"{server}/pca")
    _settle(page, charts=1)
    before = _chart_data(page)
    assert json.loads(before) and json.loads(before)[0][0], "no chart on the PCA page"
    eps = page.locator("[data-testid='stSlider']").filter(has_text="Privacy ε")
    eps.locator("input[type='range']").first.focus()
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    _settle(page, charts=1)  # waits for the rerun the keys asked for
    after = _chart_data(page)
    assert "pca_eps=" in page.url, f"ε did not move: {page.url}"
    assert after != before, "the chart did not change after moving ε"
    assert "pca_eps=" in page.url  # the new value is in the URL
    _assert_no_errors(page)
    _shot(page, "pca-after-epsilon", 2200)


def test_a_shared_link_is_the_first_request_to_a_fresh_server(tabs):
    # A copied URL must reproduce the view even when nobody opened the app before: the
    # page runs through app.py's navigation (sections shown) with the URL's settings.
    with streamlit_server() as url:
        page = tabs(width=1400, height=1000)
        page.goto(f"{url}/pca?pca_eps=2&pca_calib=analytic&pca_seed=3")
        _settle(page, charts=1)
        nav = page.locator("[data-testid='stSidebarNav']").inner_text()
        assert "Experiments" in nav and "Tensor decomposition" in nav
        eps = page.locator("[data-testid='stSlider']").filter(has_text="Privacy ε")
        assert eps.locator("input[type='range']").first.get_attribute("aria-valuetext") == "2"
        seed = page.locator("[data-testid='stNumberInput']").filter(has_text="Seed")
        assert seed.locator("input").first.input_value() == "3"
        _assert_no_errors(page)


def test_privacy_page_collusion_from_a_link(server, tabs):
    # The coalition lives in the URL: a link with sites 2–5 colluding shows one honest site.
    page = tabs(width=1400, height=1000)
    page.goto(
        f"{server}/privacy?prv_colluders=site+2&prv_colluders=site+3&prv_colluders=site+4"
        "&prv_colluders=site+5&prv_dropped=site+2"
    )
    _settle(page, charts=2)
    _assert_no_errors(page)
    text = page.locator("[data-testid='stMultiSelect']").first.inner_text()
    assert "site 5" in text and "site 1" not in text
    _shot(page, "privacy-collusion", 2600)


# A copy of the page's first error box with its icon's text (and its words, if given) changed,
# added to the page outside Streamlit's tree (nothing redraws it); returns the copy's words.
PLANT_BOX = """([symbol, words]) => {
  const box = document.querySelector("[data-testid='stAlertContentError']");
  const copy = box.closest("[data-testid='stAlert']").cloneNode(true);
  copy.querySelector("[data-testid='stAlertDynamicIcon']").textContent = symbol;
  const text = copy.querySelector("[data-testid='stMarkdownContainer']");
  if (words !== null) text.textContent = words;
  document.body.appendChild(copy);
  return text.innerText;
}"""


def test_a_verdict_is_told_from_an_error_box_by_its_icon(server, tabs):
    # The Privacy explorer opens on its verdict (the paper's design breaks the default sites'
    # joint view): an error box drawn with the verdict's icon, which no error check counts.
    page = tabs(width=1400, height=1000)
    page.goto(f"{server}/privacy")
    _settle(page, charts=2)
    boxes = page.locator("[data-testid='stAlertContentError']")
    assert boxes.count() == 1
    assert boxes.locator("[data-testid='stAlertDynamicIcon']").inner_text() == VERDICT_SYMBOL
    assert errors_shown(page) == []
    # planted: the same box, every word the same, with another icon: an error, counted
    words = page.evaluate(PLANT_BOX, ["error", None])
    shown = errors_shown(page)
    assert len(shown) == 1 and words.strip() and words in shown[0], (words, shown)
    # and a box with the verdict's icon counts as none, whatever it says
    page.evaluate(PLANT_BOX, [VERDICT_SYMBOL, "A reworded finding: the promise is broken."])
    assert errors_shown(page) == shown


def test_paper_figure_regenerates_in_the_browser(server, tabs):
    page = tabs(width=1400, height=1000)
    page.goto(f"{server}/paper_figures?fig_figure=3&fig_runs=3")
    _settle(page)
    page.get_by_role("button", name="Regenerate").click()
    _settle(page, charts=3)
    _assert_no_errors(page)
    assert page.locator("[data-testid='stPlotlyChart']").count() == 3  # legend + 2 panels
    assert page.get_by_text("capeAGN outperforms conv and local").count() >= 1
    _shot(page, "paper-figure-3", 2000)


def test_csv_upload_on_the_pca_page(server, tabs, tmp_path):
    # A bad file gives one clear error; a good one becomes the data set.
    bad = tmp_path / "bad.csv"
    bad.write_text("a,name\n" + "\n".join(f"{i},x{i}" for i in range(20)))
    rng = np.random.default_rng(0)
    good = tmp_path / "good.csv"
    rows = rng.normal(size=(400, 6)) * np.arange(1, 7)
    good.write_text(
        "f1,f2,f3,f4,f5,f6\n" + "\n".join(",".join(f"{v:.4f}" for v in r) for r in rows)
    )
    page = tabs(width=1400, height=1000)
    page.goto(f"{server}/pca?pca_data=CSV+upload&pca_k=2&pca_sites=2&pca_ns=100")
    _settle(page)
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(bad))
    page.locator("[data-testid='stAlertContentError']").wait_for(timeout=30_000)
    assert (
        "non-numeric columns: name"
        in page.locator("[data-testid='stAlertContentError']").inner_text()
    )
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(good))
    _settle(page, charts=1)
    _assert_no_errors(page)
    assert page.get_by_text("not private").count() >= 1
    _shot(page, "pca-upload", 2000)


def test_markdown_in_a_link_stays_text(server, tabs):
    # Issue #12: a shared link put a working phishing link (and a remote image) into an error
    # box. URL keys are echoed in the "ignored" notice: they must read as typed, inert.
    from urllib.parse import quote

    link, image = "[Log in again](https://evil.example/login)", "![x](http://127.0.0.1:9/t.png)"
    page = tabs(width=1400, height=1000)
    page.goto(f"{server}/pca?{quote(link)}=1e400&{quote(image)}=inf")
    _settle(page, charts=1)
    alerts = page.locator("[data-testid='stAlert']")
    assert alerts.count() >= 1
    text = " ".join(alerts.all_inner_texts()).replace("\u200b", "")  # see ui.guard.plain
    assert link in text and image in text  # shown as written
    assert alerts.locator("a").count() == 0 and alerts.locator("img").count() == 0
    page.goto(f"{server}/averaging?S=2&sites_table={quote(link)}")
    _settle(page)
    alerts = page.locator("[data-testid='stAlert']")
    assert alerts.count() >= 1
    assert alerts.locator("a").count() == 0 and alerts.locator("img").count() == 0
    assert "evil" not in " ".join(alerts.all_inner_texts())
    _shot(page, "markdown-in-a-link", 1400)


# Milliseconds from each change of the system's scheme to the rerun ui/scheme.js asks for (its
# R key, marked by window.__capeRerunKey), in window.__capeDelays.
RERUN_DELAYS = """() => {
  window.__capeDelays = [];
  let changed = null;
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
    changed = performance.now(); });
  document.addEventListener("keydown", e => {
    if (e.key === "r" && window.__capeRerunKey && changed !== null) {
      window.__capeDelays.push(Math.round(performance.now() - changed));
      changed = null;
    }
  }, true);
}"""


def test_charts_follow_the_systems_scheme_while_a_page_is_open(server, tabs):
    # Streamlit repaints the page when the system's light/dark setting changes but reruns
    # nothing; the charts' lettering follows the theme of the last run (ui/presenter.py), so it
    # stayed dark grey on a dark page (#4a4e5a on #171614, far below 4.5:1) until ui/scheme.js
    # asked for a rerun. Back and forth twice (a rerun asked too early repaints the old scheme's
    # lettering), and the system's change is no history entry (no user action).
    from figures.theme import CHART_TEXT

    page = tabs(width=1400, height=1000)
    page.goto(f"{server}/pca")
    _settle(page, charts=1)
    entries = page.evaluate("history.length")
    page.evaluate(RERUN_DELAYS)
    tick = "[data-testid='stPlotlyChart'] .xtick text"
    for scheme in ("dark", "light", "dark", "light"):
        page.emulate_media(color_scheme=scheme)
        rgb = tuple(int(CHART_TEXT[scheme][i : i + 2], 16) for i in (1, 3, 5))
        # The chart is redrawn by the rerun: between the old and the new drawing no tick
        # exists, and getComputedStyle(null) would end the wait with a TypeError (CI, stop 44).
        page.wait_for_function(
            f"() => {{ const t = document.querySelector({tick!r}); return t !== null && "
            f"getComputedStyle(t).fill === 'rgb({rgb[0]}, {rgb[1]}, {rgb[2]})'; }}",
            timeout=60_000,
            polling=200,
        )
    assert page.evaluate("history.length") == entries
    # The rerun is asked for at once, the page's first change included: it waited out the
    # 3 s limit there (60 polls of 50 ms; Streamlit had taken the new theme before the
    # listener ran). 1.5 s leaves a loaded machine 30 late polls.
    delays = page.evaluate("window.__capeDelays")
    assert len(delays) == 4 and max(delays) < 1500, delays
    _assert_no_errors(page)


def test_a_wait_that_runs_out_says_what_the_page_showed(server, tabs):
    """A settle that cannot be met (more charts asked than the glossary draws) fails with the
    page's state, not a bare Playwright timeout: the address, the script's state, how many
    charts are there and painted, and a screenshot to look at."""
    page = tabs(width=1400, height=1000)
    page.goto(f"{server}/glossary")
    _settle(page)
    with pytest.raises(AssertionError) as failed:
        browser_wait.settle(page, 1, charts=1)
    said = str(failed.value)
    assert "/glossary" in said and "'script': 'notRunning'" in said, said
    assert "'charts': 0" in said and "screenshot " in said, said
    shot = Path(said.rsplit("screenshot ", 1)[1])
    assert shot.exists()
    shot.unlink()
