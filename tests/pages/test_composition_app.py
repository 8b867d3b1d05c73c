"""The "Repeated releases" page through its keyed widgets (AppTest)."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import dpcore

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.app


def page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    return at.switch_page("app_pages/composition.py")


def _ledger(at: AppTest):
    return next(d.value for d in at.dataframe if "spent" in d.value.columns)


def _statement(at: AppTest) -> str:
    return next(c.value for c in at.code if "PRIVACY STATEMENT" in c.value)


def _site_z(design: str, view: str):
    """Noise multipliers of the default sites (5 × N = 1000, ε = 0.5, δ = 1e-3, the page's
    default calibration: the core's, dpcore.DEFAULT_CALIBRATION, analytic since issue #51)."""
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
    # a budget of 1 × ε_s = 0.5: one release of the paper's design's joint view costs 0.678
    # (analytic, 5 sites), so 20 releases (exact: ε grows about like sqrt(T)) are far over it
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
    assert (ledger["used"] > 1).all()  # 20 releases at 0.678 each: far over a budget of 0.5
    assert ledger["used"].to_numpy() == pytest.approx(ledger["spent"] / ledger["budget"])
    warnings = " ".join(w.value for w in at.warning).lower()
    assert "already over budget" in warnings and "would exceed" not in warnings
    z = _site_z("cape", "aggregator's joint view")
    share = dpcore.composed_epsilon(float(z[0]), releases=20, delta=1e-3) / 0.5
    assert f"{share:.0%}" in warnings  # the true share, from the core
    # a budget of 1.5 × ε_s = 0.75 and one release (0.678, the core's, checked below): within
    # budget, so no site is "already over"; two would be above 0.75, so the warning is about
    # the next one
    one, two = (dpcore.composed_epsilon(float(z[0]), releases=t, delta=1e-3) for t in (1, 2))
    assert one <= 0.75 < two
    at.slider(key="rr_budget").set_value(1.5).run()
    at.number_input(key="rr_made").set_value(1).run()
    ledger = _ledger(at)
    assert (ledger["used"] <= 1).all()
    warnings = " ".join(w.value for w in at.warning).lower()
    assert "already over budget" not in warnings
    assert "would exceed" in warnings


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


def test_epsilon_reaches_the_accountant_record_in_five_typed_hops():
    """ε on this page, hop by hop (docs/architecture.md, issue #35: it took 10, bouncing back
    through the page, which read z out of one cached call and handed the float to the next):
    (1) the sites table → one ``dpcore.Sites`` (ui/sites_table.py); (2) the page →
    ``ui.cached.accountant_curve(sites, design=…, view=…, site=…, max_releases=T)``; (3) →
    ``SiteReleases.epsilon_curve`` (z_s and δ_s from the record); (4) → ``dpcore.epsilon_curve``;
    (5) → ``composed_epsilon`` → the ``Accountant`` record's ε function on a ``Composition``.
    A test-only record spies on the frames (and their arguments' types) that call it."""
    import math
    import sys

    import streamlit as st

    from dpcore import Accountant, register_accountant, unregister_accountant

    calls = []

    def spy(c):
        frames, frame = [], sys._getframe(1)
        while frame is not None:
            path = Path(frame.f_code.co_filename).resolve()
            if path.is_relative_to(ROOT) and ".venv" not in path.parts:
                code = frame.f_code
                args = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
                types = tuple(type(frame.f_locals[a]).__name__ for a in args if a != "self")
                frames.append((path.relative_to(ROOT).as_posix(), code.co_name, types))
            frame = frame.f_back
        calls.append(frames[::-1])
        return c.rho + 2.0 * math.sqrt(c.rho * math.log(1.0 / c.delta))  # zCDP's bound

    register_accountant(
        Accountant(name="spy", label="spy (test only)", citation="a test's spy", epsilon=spy)
    )
    st.cache_data.clear()  # a curve cached before the spy existed would not call it
    try:
        at = page().run()
    finally:
        unregister_accountant("spy")
        st.cache_data.clear()
    assert not at.exception and not at.error
    assert calls, "the page never reached the spy accountant"
    hops = set()
    for frames in calls:
        start = max(i for i, f in enumerate(frames) if f[0].startswith("app_pages/"))
        # ui.cached.call_core (ui/cached/core.py, its body _run) is the error boundary around
        # a call, not a hop
        hops.add(tuple(f for f in frames[start:] if f[0] != "ui/cached/core.py"))
    assert hops == {
        (
            ("app_pages/composition.py", "<module>", ()),
            ("ui/cached/sites.py", "accountant_curve", ("Sites", "str", "str", "int", "int")),
            ("dpcore/analysis/site_releases.py", "epsilon_curve", ("int", "int")),
            ("dpcore/analysis/accounting.py", "epsilon_curve", ("float", "int", "float", "tuple")),
            ("dpcore/analysis/accounting.py", "composed_epsilon", ("float", "int", "float", "str")),
        )
    }
