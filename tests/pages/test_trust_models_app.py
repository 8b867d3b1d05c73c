"""The Trust models page (AppTest): its keyed controls change what the core computes."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import dpcore
from dpcore import TRUST_SCHEMES as SCHEMES
from dpcore import trust_table
from figures.trust import LABELS

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.app
EXPLAIN = "What am I looking at?"


def page(**query: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page("app_pages/trust_models.py")
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def schemes(at: AppTest):
    return next(df.value for df in at.dataframe if "scheme" in df.value.columns)


def explanation(at: AppTest) -> str:
    return " ".join(m.value for e in at.expander if e.label == EXPLAIN for m in e.markdown)


def test_page_shows_every_scheme_with_the_cores_numbers():
    at = page()
    assert not at.exception and not at.error
    table = schemes(at)
    assert list(table["scheme"]) == [LABELS[s] for s in SCHEMES]
    # defaults: 5 equal sites, N_s = 1000, ε = 0.5, δ = 10⁻³, the core's calibration
    # (analytic since issue #51; secure aggregation "same as the others"), D = 20, b = 32
    kind = dpcore.DEFAULT_CALIBRATION.kind
    core = trust_table([1000] * 5, epsilon=0.5, delta=1e-3, dim=20, calibration=kind,
                       secagg_calibration=kind)  # fmt: skip
    assert table["noise std ÷ central"].tolist() == pytest.approx(core["std_ratio"].tolist())
    assert metric(at, "Wrap-arounds") == "0 of 210"
    text = explanation(at)
    assert "no coordinate wrapped around" in text
    assert f"{core.set_index('scheme').loc['conventional', 'std_ratio']:.2f}×" in text


def test_bits_control_changes_wraparounds_and_energy():
    at = page()
    energy = float(metric(at, "Secure agg.: PCA energy"))
    at.slider(key="tm_bits").set_value(12).run()
    assert not at.exception and not at.error
    wraps = metric(at, "Wrap-arounds")
    assert not wraps.startswith("0 of"), wraps
    assert float(metric(at, "Secure agg.: PCA energy")) < energy - 0.2
    assert "wrapped around" in explanation(at) and "b = 12 bits" in explanation(at)
    # the same setting from a shared link (the key is bound to the URL)
    linked = page(tm_bits="12")
    assert metric(linked, "Wrap-arounds") == wraps


def test_scale_control_changes_quantisation_error_and_noise():
    at = page()
    error = float(metric(at, "Rounding error (RMS)"))
    ratio = float(metric(at, "Secure agg.: error ÷ central noise").rstrip("×"))
    at.select_slider(key="tm_scale").set_value("1e-3").run()
    assert not at.exception and not at.error
    # γ = 10⁻³ against the automatic ~10⁻⁸: rounding error grows with γ (≤ γ√(S/4))
    assert float(metric(at, "Rounding error (RMS)")) > 100 * error
    assert float(metric(at, "Secure agg.: error ÷ central noise").rstrip("×")) > 2 * ratio


def test_accountant_choice_and_a_preset():
    at = page()
    matched = float(metric(at, "Secure agg.: error ÷ central noise").rstrip("×"))
    at.radio(key="tm_sacal").set_value("ddg").run()
    assert not at.exception and not at.error
    assert float(metric(at, "Secure agg.: error ÷ central noise").rstrip("×")) != matched
    at.button(key="tm_preset_mixed").click().run()
    assert not at.exception and not at.error
    assert len(schemes(at)) == len(SCHEMES)


def test_headline_shows_what_wraparound_does_to_the_sum():
    # Issue #40 item 1: from 32 to 20 bits nothing on screen moved, and at 16 bits the
    # headline still read the designed 1.02× while PCA energy fell from 0.948 to 0.248.
    label = "Secure agg.: error ÷ central noise"
    at = page()
    wide = float(metric(at, label).rstrip("×"))
    wide_range = next(m.proto.delta for m in at.metric if m.label == "Wrap-arounds")
    at.slider(key="tm_bits").set_value(20).run()
    assert next(m.proto.delta for m in at.metric if m.label == "Wrap-arounds") != wide_range
    assert float(metric(at, label).rstrip("×")) == wide  # no wrap: the same error, same seed
    at.slider(key="tm_bits").set_value(16).run()
    assert not metric(at, "Wrap-arounds").startswith("0 of")
    # a wrapped coordinate is off by 2^b·γ (twice the representable range, far above the
    # noise): the headline leaves the designed ratio (the core's test checks the algebra)
    assert float(metric(at, label).rstrip("×")) > 2 * wide
    energy = next(m for m in at.metric if m.label == "Secure agg.: PCA energy")
    assert "vs central" in energy.proto.delta and energy.proto.delta.startswith("-")


def test_the_worded_table_gains_the_iterative_methods_rows():
    # issue #38: one row per iterative method below the one-shot schemes, none of it blank
    from dpcore import ITERATIVE_SCHEMES

    at = page()
    assert not at.exception
    worded = next(t.value for t in at.table if "what the aggregator sees" in t.value.columns)
    assert len(worded) == len(SCHEMES) + len(ITERATIVE_SCHEMES)
    tail = worded.iloc[len(SCHEMES) :]
    assert all("round(s)" in cell for cell in tail["what the aggregator sees"])
    assert all(str(cell).strip() for cell in tail.to_numpy().ravel())


def test_every_site_at_epsilon_100_classic_matched_renders():
    # Issue #52: every ε_s = 100, classic calibration, secure aggregation "same as the
    # others" showed a traceback (the exact ε of its one-coordinate move, about 520 at
    # σ = 3.98 per share, n = 4, v = 233, formed e^ε and overflowed past e^709).
    sites = ";".join(["1000,100,0.001,0.2"] * 5)
    at = page(tm_S="5", tm_sites=sites, tm_calib="classic", tm_sacal="matched")
    assert not at.exception and not at.error
    assert len(schemes(at)) == len(SCHEMES)
    core = trust_table([1000] * 5, epsilon=100.0, delta=1e-3, dim=20, calibration="classic",
                       secagg_calibration="classic")  # fmt: skip
    assert schemes(at)["noise std ÷ central"].tolist() == pytest.approx(core["std_ratio"].tolist())


def test_the_federation_section_shows_the_cores_cases_for_both_designs():
    # Issue #48: the late release, the repeated remedy, one colluding site, and the pairwise
    # scheme, each cell the worst site's ε from dpcore's federation_trust at the page's sites.
    import dpcore
    from dpcore import FEDERATION_CASES as CASES
    from dpcore import federation_trust
    from ui.sites_table import default_table

    at = page()
    assert not at.exception and not at.error
    shown = next(
        t.value.reset_index() for t in at.table if "the aggregator holds" in t.value.columns
    )
    assert list(shown["case"]) == [c for c, _, _ in CASES]
    rows = default_table()
    calibration = next(r.value for r in at.radio if r.label == "Noise calibration")
    sites = dpcore.Sites(
        tuple(int(n) for n in rows["N_s"]), tuple(rows["ε_s"]), tuple(rows["δ_s"]),
        tuple(rows["μ_s"] / rows["μ_s"].sum()), calibration,
    )  # fmt: skip
    want = federation_trust(
        sites.n_per_site, epsilon=sites.epsilon, delta=sites.delta, weights=sites.weights,
        calibration=calibration,
    )  # fmt: skip
    for cell, r in zip(shown["joint-view-safe design"], want.to_dict("records"), strict=True):
        if r["joint site"] == 0:
            assert cell == "✓ nothing released"
        else:
            assert cell.startswith("✓" if r["joint meets"] else "✗"), (cell, r)
            assert f"ε {r['joint epsilon']:.3g} (site {r['joint site']}," in cell
    assert shown.set_index("case").loc["helper, sealed remedy", "joint-view-safe design"][0] == "✓"
