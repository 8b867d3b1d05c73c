"""The "Repeated releases" page through its keyed widgets (AppTest)."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import dpcore

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.app


def page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    return at.switch_page("app_pages/composition.py")


def _ledger(at: AppTest):
    return next(d.value for d in at.dataframe if "spent" in d.value.columns)


def _statement(at: AppTest) -> str:
    return next(c.value for c in at.code if "PRIVACY STATEMENT" in c.value)


def _site_z(design: str, view: str):
    """Noise multipliers of the default sites (5 × N = 1000, ε = 0.5, δ = 1e-3, classic)."""
    tau = dpcore.mean_noise_std([1000] * 5, epsilon=0.5, delta=1e-3)
    made = dpcore.cape_design(tau) if design == "cape" else dpcore.joint_safe_design(tau)
    return dpcore.view_noise_multipliers(
        made, sensitivity=dpcore.mean_sensitivity([1000] * 5), view=view
    )


def test_release_again_adds_up_and_warns_before_the_budget():
    at = page().run()
    assert not at.exception and not at.error
    assert _ledger(at)["spent"].eq(0).all()
    assert "Releases on the same data: 0" in _statement(at)
    at.button(key="rr_release").click().run()
    at.button(key="rr_release").click().run()
    assert at.number_input(key="rr_made").value == 2
    ledger = _ledger(at)
    z = _site_z("cape", "aggregator's joint view")
    expected = dpcore.composed_epsilon(float(z[0]), releases=2, delta=1e-3)
    assert ledger["spent"].iloc[0] == pytest.approx(expected, rel=1e-12)
    assert "Releases on the same data: 2" in _statement(at)
    assert not at.warning or all("exceed" not in w.value for w in at.warning)
    # a budget of 1 × ε_s = 0.5: one release of the paper's design's joint view costs 0.376
    # (classic, 5 sites), so 20 releases (exact: ε grows about like sqrt(T)) are far over it
    at.slider(key="rr_budget").set_value(1.0).run()
    at.number_input(key="rr_made").set_value(20).run()
    assert any("already over budget" in w.value.lower() for w in at.warning)
    assert _ledger(at)["status"].eq("over budget").all()
    assert "EXCEEDED" in _statement(at)
    at.button(key="rr_reset").click().run()
    assert at.number_input(key="rr_made").value == 0
    assert _ledger(at)["spent"].eq(0).all()


def test_every_chart_has_a_collapsed_explanation_with_numbers():
    at = page().run()
    explanations = [e for e in at.expander if e.label == "What am I looking at?"]
    assert len(explanations) == len(at.get("plotly_chart")) == 2
    for e in explanations:
        assert not e.proto.expanded
        assert "The one thing to notice" in " ".join(m.value for m in e.markdown)


def test_accountant_design_and_view_reach_the_ledger():
    at = page().run()
    at.number_input(key="rr_made").set_value(10).run()
    at.radio(key="rr_acct").set_value("basic").run()
    at.radio(key="rr_design").set_value("joint").run()
    at.radio(key="rr_view").set_value("own release").run()
    assert not at.exception and not at.error
    z = _site_z("joint", "own release")
    expected = dpcore.composed_epsilon(float(z[2]), releases=10, delta=1e-3, accountant="basic")
    assert _ledger(at)["spent"].iloc[2] == pytest.approx(expected, rel=1e-12)
    text = _statement(at)
    assert "basic composition" in text and "joint-view-safe" in text and "own release" in text


def test_site_and_chart_length_come_from_the_url():
    at = page()
    at.query_params.update({"rr_site": "site 3", "rr_tmax": "20", "rr_S": "3"})
    at.run()
    assert not at.exception and not at.error
    assert at.selectbox(key="rr_site").value == 3
    assert at.slider(key="rr_tmax").value == 20
    words = " ".join(m.value for m in at.markdown)
    assert "after T = 20 releases" in words and "site 3" in words


def test_over_budget_the_ledger_reads_the_true_share_and_says_already_over():
    # Issue #40 item 7: over budget the bar read 100 % for 115 % (the column was clipped to
    # [0, 1]) and the warning still said the *next* release "would exceed". The ProgressColumn
    # labels the raw value and caps only the bar, so the column must carry spent/budget.
    at = page().run()
    at.slider(key="rr_budget").set_value(1.0).run()
    at.number_input(key="rr_made").set_value(20).run()
    ledger = _ledger(at)
    assert (ledger["used"] > 1).all()  # 20 releases at 0.376 each: far over a budget of 0.5
    assert ledger["used"].to_numpy() == pytest.approx(ledger["spent"] / ledger["budget"])
    warnings = " ".join(w.value for w in at.warning).lower()
    assert "already over budget" in warnings and "would exceed" not in warnings
    z = _site_z("cape", "aggregator's joint view")
    share = dpcore.composed_epsilon(float(z[0]), releases=20, delta=1e-3) / 0.5
    assert f"{share:.0%}" in warnings  # the true share, from the core
    # one release (0.376 of 0.5): within budget, so no site is "already over"; two would be
    # above 0.5 (checked from the core below), so the warning is about the next one
    at.number_input(key="rr_made").set_value(1).run()
    ledger = _ledger(at)
    assert (ledger["used"] <= 1).all()
    warnings = " ".join(w.value for w in at.warning).lower()
    assert "already over budget" not in warnings
    two = dpcore.composed_epsilon(float(z[0]), releases=2, delta=1e-3)
    assert ("would exceed" in warnings) == (two > 0.5)


def test_accountant_buttons_read_as_words_and_each_is_explained():
    # Issue #40 item 7: the buttons said "rdp"/"zcdp"; the methods were cited, never explained.
    from figures.composition import accountant_styles
    from learning.explanations import ACCOUNTANTS_IN_WORDS

    at = page().run()
    labels = at.radio(key="rr_acct").options
    assert labels == [label for _, _, label in accountant_styles().values()]
    assert "rdp" not in labels and "zcdp" not in labels
    how = next(e for e in at.expander if e.label.startswith("How it works"))
    shown = " ".join(m.value for m in how.markdown)
    for name in ("exact", "rdp", "zcdp", "advanced"):
        assert ACCOUNTANTS_IN_WORDS[name] in shown, name
