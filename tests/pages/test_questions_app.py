"""The questions the pages answer, through the real pages (AppTest)."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.app


def page(name: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    return at.switch_page(f"app_pages/{name}")


def _crossings(at: AppTest):
    return next(d.value for d in at.dataframe if "±1 s.e." in d.value.columns)


@pytest.mark.slow
def test_pca_target_line_reports_a_crossing_per_algorithm():
    at = page("pca.py").run()
    assert not at.exception and not at.error
    table = _crossings(at).set_index("algorithm")
    # CAPE carries S times less noise variance than conventional averaging, so it reaches
    # 90 % of the non-private energy at a smaller ε.
    assert float(table.loc["CAPE", "ε"]) < float(table.loc["Conventional", "ε"])
    at.number_input(key="pca_target").set_value(100).run()  # only noise-free PCA reaches 100 %
    assert set(_crossings(at)["ε"]) == {"not reached"}
    at.number_input(key="pca_target").set_value(1).run()  # 1 % is met everywhere
    assert set(_crossings(at)["ε"]) == {"≤ 0.001"}


@pytest.mark.slow
def test_tensor_target_line_reports_crossings():
    at = page("tensor.py").run()
    assert not at.exception and not at.error
    table = _crossings(at).set_index("algorithm")
    assert float(table.loc["CAPE", "ε"]) < float(table.loc["Conventional", "ε"])


def test_averaging_answers_how_many_sites_for_an_advantage():
    at = page("averaging.py").run()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Sites for that variance ratio"] == "S = 10"
    assert metrics["Sites for that std ratio"] == "S = 100"
    at.number_input(key="avg_adv").set_value(3.5).run()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Sites for that variance ratio"] == "S = 4"
    assert metrics["Sites for that std ratio"] == "S = 13"
