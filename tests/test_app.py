"""AppTest smoke and interaction tests of every page."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(p.name for p in (ROOT / "pages").glob("*.py"))


def test_entry_point_runs_without_exception():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30).run()
    assert not at.exception
    assert at.title[0].value == "CAPE Lab"


@pytest.mark.parametrize("page", PAGES)
def test_every_page_runs_without_exception(page):
    at = AppTest.from_file(str(ROOT / "pages" / page), default_timeout=30).run()
    assert not at.exception
    assert not at.error


def test_overview_metrics_follow_the_sliders():
    at = AppTest.from_file(str(ROOT / "pages" / "overview.py"), default_timeout=30).run()
    at.slider(key="sites").set_value(4).run()
    # With S equal sites CAPE has S times less variance than conventional averaging.
    assert at.metric[2].delta == "4.0× less variance"
    at.slider(key="sites").set_value(25).run()
    assert at.metric[2].delta == "25.0× less variance"
