"""Privacy statements on screen say what the numbers say (issue #22, item 10; AppTest)."""

import re
from pathlib import Path

import pandas as pd
import pytest
from streamlit.proto.Metric_pb2 import Metric
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.app
LABEL = "What am I looking at?"
EQUAL_WEIGHTS = "CAPE vs conventional with equal weights 1/S (Prop. 1; G(n) at a common ε)"


def page(name: str, **query: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page(f"app_pages/{name}")
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


def explanation(at: AppTest, starts: str) -> str:
    """The 'What am I looking at?' paragraph that begins with ``starts``."""
    texts = [" ".join(m.value for m in e.markdown) for e in at.expander if e.label == LABEL]
    return next(t for t in texts if t.startswith(starts))


def aggregator_cell(at: AppTest) -> str:
    views = next(df.value for df in at.dataframe if "receives" in df.value.columns)
    return views.loc["aggregator", "site 1"]


def worst_table(at: AppTest):
    return next(df.value for df in at.dataframe if "search" in df.value.columns)


def _aggregator_joint(calibration: str, design: str = "cape") -> float:
    """The aggregator's joint-view ε of site 1 for the default sites (5 × N = 1000,
    ε = 0.5, δ = 1e-3, equal weights), straight from the core."""
    import dpcore
    from ui.sites_table import default_table

    rows = default_table()
    sites = dpcore.Sites(
        tuple(int(n) for n in rows["N_s"]), tuple(rows["ε_s"]), tuple(rows["δ_s"]),
        tuple(rows["μ_s"]), calibration,
    )  # fmt: skip
    views = dpcore.party_views(
        sites.design(design), sensitivity=sites.sensitivities, delta=sites.delta,
        epsilon=sites.epsilon,
    )  # fmt: skip
    return float(views[views.party == "aggregator"].epsilon_joint.iloc[0])


def test_collusion_explanation_states_what_the_tables_show():
    # The old fixed sentence said "the joint view is above the promise even with no colluder"
    # while the table showed 0.376 ≤ 0.5 ✓ (then the defaults: 5 equal sites, classic ε = 0.5).
    # Since issue #51 the default is analytic: the joint view breaks it with no colluder.
    import dpcore

    at = page("privacy.py")
    assert not at.exception
    assert at.radio(key="prv_calib").value == dpcore.DEFAULT_CALIBRATION.kind == "analytic"
    exact = _aggregator_joint("analytic")  # 0.678
    assert exact > 0.5
    assert aggregator_cell(at) == f"{exact:.3g} > 0.5 ✗"
    text = explanation(at, "Each point is the **worst coalition")
    assert f"the joint view breaks the promise even with no colluder ({exact:.3g} > 0.5 ✗)" in text
    assert "Every point is exact: all 31 coalitions" in text
    # classic: its slack keeps the joint view within the promise, and the text says so
    at.radio(key="prv_calib").set_value("classic").run()
    assert not at.exception and not at.error
    slack = _aggregator_joint("classic")  # 0.376
    assert slack <= 0.5
    assert aggregator_cell(at) == f"{slack:.3g} ≤ 0.5 ✓"
    text = explanation(at, "Each point is the **worst coalition")
    assert f"with no colluder the joint view keeps the promise ({slack:.3g} ≤ 0.5 ✓)" in text
    assert "even with no colluder" not in text
    # the first break it names is the table's first ✗ of the joint view
    table = worst_table(at)
    first = table[table["promise, all releases"].str.endswith("✗")].iloc[0]
    n = first["colluding sites"]
    assert f"first breaks it with {n} colluding sites ({first['worst ε, all releases'][:4]}" in text


def test_the_default_sites_show_the_joint_view_breach_and_what_hid_it():
    # Issue #51: the page's default calibration became the core's (analytic). At the default
    # sites the paper's design breaks the aggregator's joint view; classic's slack hid it. The
    # page says so with the computed ε of both calibrations and of the joint-view-safe design.
    import dpcore

    at = page("privacy.py")
    assert not at.exception
    exact, slack = _aggregator_joint("analytic"), _aggregator_joint("classic")
    safe = _aggregator_joint("analytic", "joint")
    assert slack <= 0.5 < exact and safe <= 0.5 * (1 + 1e-9)  # what the words below claim
    (error,) = at.error
    text = error.value
    assert text.startswith(
        "**The paper's design: the aggregator's joint view breaks the promise.** Each release "
        "on its own keeps it"
    )
    assert f"give every site ε = {exact:.3g} > ε_s = 0.5 at δ_s" in text
    assert f"With classic τ_s the same view gives every site ε = {slack:.3g} ≤ ε_s = 0.5" in text
    assert "only through classic's slack" in text
    ratio = dpcore.mean_release_designs([1000] * 5, epsilon=0.5, delta=1e-3)
    ratio = ratio.joint.tau_agg / ratio.cape.tau_pool  # p = 1.05 (docs/privacy.md)
    assert (
        f"the joint-view-safe design above, every site ε = {safe:.3g} ≤ ε_s = 0.5 in the same "
        f"view, for an aggregate std {ratio:.2f}× the pooled requirement" in text
    )
    # the dropout caption says the same of the normal run, computed
    assert any(f"joint view already (every site ε = {exact:.3g} > ε_s = 0.5)" in c.value
               for c in at.caption)  # fmt: skip
    # the joint-view-safe design: no breach, the success message
    at.radio(key="prv_design").set_value("joint").run()
    assert not at.error and any("holds in the aggregator" in m.value for m in at.success)


def test_calibration_explanation_follows_the_sites_epsilon():
    at = page("privacy.py")
    text = explanation(at, "The noise σ")
    assert "your sites' ε (0.5), none in the grey region" in text
    assert "the exact σ is 0.61× the classic one" in text  # docs/privacy.md: 0.61 at ε = 0.5
    at = page("privacy.py", prv_S="2", prv_sites="1000,10,0.001,0.5;1000,10,0.001,0.5")
    text = explanation(at, "The noise σ")
    assert "(10), 1 of them in the grey region" in text
    assert "too small to give (ε, δ)-DP" in text


def test_collusion_beyond_twelve_sites_shows_lower_bounds_without_a_tick():
    at = page("privacy.py", prv_S="14", prv_design="joint")  # (no joint-view breach shown)
    assert not at.exception and not at.error
    table = worst_table(at)
    lower = table[table["search"].str.startswith("lower bound")]
    exact = table[table["search"].str.startswith("exact")]
    assert len(lower) and len(exact) and len(lower) + len(exact) == 14
    for view in ("own release", "all releases"):
        assert lower[f"worst ε, {view}"].str.startswith("≥ ").all()
        assert not lower[f"promise, {view}"].str.contains("✓").any()
        assert not exact[f"worst ε, {view}"].str.startswith("≥").any()
    text = explanation(at, "Each point is the **worst coalition")
    lo, hi = lower["colluding sites"].min(), lower["colluding sites"].max()
    assert f"open markers, n = {lo}–{hi}, are **lower bounds**" in text


def _tile(at: AppTest, starts: str):
    return next(m for m in at.metric if m.label.startswith(starts))


def test_no_remedy_dropout_tile_tells_the_truth():
    # Without a remedy the E's of the dropped site no longer cancel: enough noise for privacy
    # but more than needed — the tile showed a green "meets".
    at = page("privacy.py")
    none = _tile(at, "no remedy")
    required = float(_tile(at, "Noise required").value)
    ratio = float(none.value) / required
    assert none.proto.delta.startswith("private, but") and ratio > 1.2
    # its stated ratio is the tiles' own numbers (3 significant digits shown)
    stated = float(re.search(r"([0-9.]+)×", none.proto.delta).group(1))
    assert stated == pytest.approx(ratio, abs=0.01)
    assert none.proto.color == Metric.MetricColor.RED
    remedy = _tile(at, "… plus stand-in G's")
    assert remedy.proto.delta == "meets" and remedy.proto.color == Metric.MetricColor.GREEN
    naive = _tile(at, "noise generator sends")
    assert naive.proto.delta == "too little noise" and naive.proto.color == Metric.MetricColor.RED


ISSUE_SITES = "100,2,0.001,0.25;100,2,0.001,0.25;100,2,0.001,0.25;1000,0.1,0.001,0.25"


def _gains(at: AppTest) -> dict[str, float]:
    table = next(t.value for t in at.table if "gain for your sites" in t.value.columns)
    return {c: float(g.rstrip("×")) for c, g in table["gain for your sites"].items()}


def test_papers_g_is_not_shown_as_the_gain_for_sites_with_other_epsilons():
    # Sizes [100, 100, 100, 1000], ε = [2, 2, 2, 0.1], analytic, μ ∝ N_s: the paper's G(n)
    # is 31.8×, but on these sites CAPE is worse than equal-weight averaging (0.324×).
    query = {"avg_sites": ISSUE_SITES, "avg_S": "4", "avg_weights": "∝ N_s"}
    at = page("averaging.py", **query, avg_calib="analytic")
    assert not at.exception and not at.error
    gains = _gains(at)
    assert gains[EQUAL_WEIGHTS] == pytest.approx(0.324)
    assert 31.8 not in gains.values()
    note = next(m.value for m in at.markdown if m.value.startswith("**The paper's G(n)**"))
    assert "31.8×" in note and "**not your sites' gain**" in note and "the sites' ε differ" in note
    assert "0.324×: CAPE is the noisier" in note
    text = explanation(at, "Each line is one way")
    assert "the paper's formula would say 31.8×" in text and "0.324×" in text


def test_papers_g_is_the_equal_weights_gain_when_its_conditions_hold():
    sites = "100,0.5,0.001,0.25;100,0.5,0.001,0.25;100,0.5,0.001,0.25;1000,0.5,0.001,0.25"
    at = page("averaging.py", avg_sites=sites, avg_S="4", avg_weights="∝ N_s")
    assert _gains(at)[EQUAL_WEIGHTS] == pytest.approx(31.8)
    note = next(m.value for m in at.markdown if m.value.startswith("**The paper's G(n)**"))
    assert "not your sites' gain" not in note and "it is your sites' equal-weights gain" in note
    text = explanation(at, "Each line is one way")
    assert "the paper's G(n), 31.8× here" in text


def test_each_export_downloads_the_numbers_of_its_own_chart(monkeypatch):
    # Issue #40 item 6: the collusion chart's "Numbers (CSV)" gave the calibration curve, as
    # the page rebound `curve` after the lambda had captured the name. The CSV is built on
    # click, so record each export's callable and call it after the whole script has run.
    import ui.export

    exports: dict = {}
    monkeypatch.setattr(
        ui.export, "export_controls", lambda _c, _f, data, spec: exports.update({spec.stem: data})
    )
    page("privacy.py")
    collusion = exports["cape_collusion"]()
    calibration = exports["calibration"]()
    assert "colluding" in collusion.columns, list(collusion.columns)
    assert "colluding" not in calibration.columns


ROUND_VIEWS = ("rounds_party_views", "rounds_coalition_report", "rounds_collusion_curve")


def test_rounds_put_cape_per_round_into_the_coalition_analysis(monkeypatch):
    # Issue #38: the rounds control T. At T = 1 the page is the one-shot screen and computes no
    # view over rounds (no extra work per move); at T > 1 every view is over all T rounds
    # (dpcore.analysis.round_views), and since CAPE's design is linear in τ the numbers equal
    # the one-shot ones — what the page's note says.
    import streamlit as st

    import dpcore  # the page reads dpcore.rounds_*: the spies go there

    calls: list[str] = []
    for name in ROUND_VIEWS:
        real = getattr(dpcore, name)

        def spy(*a, _real=real, _name=name, **k):
            calls.append(_name)
            return _real(*a, **k)

        monkeypatch.setattr(dpcore, name, spy)
    st.cache_data.clear()  # a cached result from another test would hide a call
    at = page("privacy.py")
    at.radio(key="prv_calib").set_value("analytic").run()
    assert not at.exception and calls == []
    assert not [i for i in at.info if "Hardt & Price" in i.value]
    one_cell, one_worst = aggregator_cell(at), worst_table(at)
    assert one_cell == "0.678 > 0.5 ✗"
    at.select_slider(key="prv_rounds").set_value(11).run()
    assert not at.exception
    assert set(calls) == set(ROUND_VIEWS)
    note = next(i.value for i in at.info if "Hardt & Price" in i.value)
    assert "T = 11" in note and "√11·τ_s" in note and "Dong, Roth & Su" in note
    assert "over all 11 rounds" in at.error[0].value  # the aggregator's joint view breaks
    assert aggregator_cell(at) == one_cell
    # equal sites tie, so which coalition is "worst" may differ by rounding; its ε may not
    ties = [c for c in one_worst.columns if c.startswith("worst coalition")]
    pd.testing.assert_frame_equal(worst_table(at).drop(columns=ties), one_worst.drop(columns=ties))


def test_the_dropout_section_shows_what_a_lying_aggregator_could_hold():
    # Issue #48: the remedy's worst cases, per design, as dpcore.remedy_worst_case computes
    # them for the page's sites (defaults: the default sites table, site 1 drops), with the
    # analytic calibration (the default; exact: the late release breaks the promise) and the
    # classic one (whose slack at ε = 0.5 hides the late release's leak).
    import dpcore
    from ui.sites_table import default_table

    rows = default_table()
    at = page("privacy.py")  # (its st.error: the paper's design breaks the joint view)
    for calibration in ("analytic", "classic"):
        if calibration == "classic":
            at.radio(key="prv_calib").set_value("classic").run()
        assert not at.exception
        table = next(df.value for df in at.dataframe if "the aggregator holds" in df.value.columns)
        assert len(table) == 3
        sites = dpcore.Sites(
            tuple(int(n) for n in rows["N_s"]), tuple(rows["ε_s"]), tuple(rows["δ_s"]),
            tuple(rows["μ_s"] / rows["μ_s"].sum()), calibration,
        )  # fmt: skip
        for column, kind in (("paper's design", "cape"), ("joint-view-safe design", "joint")):
            case = dpcore.remedy_worst_case(
                sites.design(kind), (0,), sensitivity=sites.sensitivities,
                epsilon=sites.epsilon, delta=sites.delta,
            )  # fmt: skip
            for cell, row in zip(table[column], case.table().to_dict("records"), strict=True):
                assert cell.startswith("✓" if row["meets"] else "✗"), (cell, row)
                assert f"ε {row['epsilon']:.3g} (site {row['worst site']}," in cell
        safe = table["joint-view-safe design"].tolist()
        assert safe[0].startswith("✓")  # the sealed remedy keeps every promise
        if calibration == "analytic":  # exactly calibrated, a late release readable to the
            # aggregator breaks site 1's promise
            assert safe[1].startswith("✗ ") and "(site 1," in safe[1]
            assert safe[2].startswith("✗ ")
