"""Every chart has its 'What am I looking at?' paragraph, collapsed by default."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.app
LABEL = "What am I looking at?"


@pytest.mark.parametrize(
    "name",
    ["averaging.py", "privacy.py", "pca.py", "tensor.py", "protocol.py", "learn.py", "audit.py"],
)
def test_one_collapsed_explanation_per_chart(name):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page(f"app_pages/{name}").run()
    assert not at.exception
    explanations = [e for e in at.expander if e.label == LABEL]
    assert len(explanations) == len(at.get("plotly_chart")) >= 1
    for e in explanations:
        assert not e.proto.expanded  # collapsed by default
        text = " ".join(m.value for m in e.markdown)
        assert "The one thing" in text or "the one thing" in text


def test_paper_figures_explain_their_panels_once():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page("app_pages/paper_figures.py").run()
    assert [e.label for e in at.expander].count(LABEL) == 1
