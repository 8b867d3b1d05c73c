"""Figure builders, tested directly (AppTest cannot read Plotly figures)."""

import numpy as np
import pandas as pd
import pytest

import dpcore
from figures.charts import (
    HISTOGRAM_BINS,
    figure_html,
    gain_figure,
    noise_histogram_figure,
    summarise,
    sweep_figure,
)
from figures.theme import style


@pytest.fixture
def frame():
    rows = []
    for alg, base in [("nonprivate", 1.0), ("cape", 0.8), ("conv", 0.5)]:
        for eps in (0.1, 1.0, 10.0):
            for run in range(4):
                rows.append(
                    {
                        "algorithm": alg,
                        "epsilon": eps,
                        "run": run,
                        "captured_energy_ratio": base * eps / (1 + eps) + 0.01 * run,
                    }
                )
    return pd.DataFrame(rows)


def test_summary_is_mean_and_std_per_point(frame):
    s = summarise(frame, "epsilon", "captured_energy_ratio")
    row = s[(s.algorithm == "cape") & (s.epsilon == 1.0)].iloc[0]
    vals = frame[(frame.algorithm == "cape") & (frame.epsilon == 1.0)].captured_energy_ratio
    assert row["mean"] == pytest.approx(vals.mean())
    assert row["std"] == pytest.approx(vals.std())
    assert row["count"] == 4


def test_sweep_figure_has_a_band_and_a_line_per_algorithm(frame):
    fig = sweep_figure(
        frame,
        axis="epsilon",
        metric="captured_energy_ratio",
        y_title="q",
        algorithms=["cape", "conv", "nonprivate"],
        marker=1.0,
    )
    lines = [t for t in fig.data if t.mode == "lines+markers"]
    assert [t.name for t in lines] == [style(a).label for a in ("cape", "conv", "nonprivate")]
    assert len(fig.data) == 6  # band + line for each
    cape = lines[0]
    np.testing.assert_allclose(cape.x, [0.1, 1.0, 10.0])
    assert cape.line.color == style("cape").color
    assert lines[2].line.dash == "dash"  # non-private is the dashed reference
    assert fig.layout.xaxis.type == "log"
    assert fig.layout.shapes  # the current-value marker
    band = fig.data[0]
    assert band.fill == "toself" and len(band.x) == 6


def test_sites_axis_is_linear(frame):
    df = frame.rename(columns={"epsilon": "sites"})
    fig = sweep_figure(df, axis="sites", metric="captured_energy_ratio", y_title="q")
    assert fig.layout.xaxis.type != "log"


def test_histogram_overlays_theoretical_density():
    rng = np.random.default_rng(0)
    fig = noise_histogram_figure(
        {"CAPE": rng.normal(0, 1, 500)}, {"CAPE": 1.0}, {"CAPE": "#D55E00"}
    )
    density = fig.data[1]
    # the overlaid curve is the N(0, 1) density: peak 1/sqrt(2π)
    assert max(density.y) == pytest.approx(1 / np.sqrt(2 * np.pi), rel=1e-3)


def test_histogram_is_sent_binned_its_bars_counting_every_draw():
    # Issue #36 item 4: every draw went to the browser (20,000 a trace: a 560 kB chart that
    # each rerun serialised and sent). Now one point per bin carries the bin's count.
    draws = np.random.default_rng(0).normal(0, 1, 20_000)
    fig = noise_histogram_figure({"CAPE": draws}, {"CAPE": 1.0}, {"CAPE": "#D55E00"})
    bars = fig.data[0]
    assert len(bars.x) == HISTOGRAM_BINS and bars.histfunc == "sum"
    counts, _ = np.histogram(draws, bins=HISTOGRAM_BINS)
    np.testing.assert_array_equal(bars.y, counts)
    assert sum(bars.y) == draws.size  # every draw counted once
    # each point falls inside its own bin of the bins drawn, so each bar is its count
    start, size = bars.xbins.start, bars.xbins.size
    assert start == draws.min() and start + HISTOGRAM_BINS * size == pytest.approx(draws.max())
    np.testing.assert_array_equal(
        np.floor((np.asarray(bars.x) - start) / size).astype(int), np.arange(HISTOGRAM_BINS)
    )
    # the bars drawn as a density (count / (N · size)) follow N(0, 1): a bin near 0 holds
    # p ≈ 0.4 · size ≈ 5 % of the draws, so its count's relative std is 1/sqrt(N p) ≈ 3 %;
    # 15 % is five of those
    peak = int(np.argmin(np.abs(np.asarray(bars.x))))
    density = counts[peak] / (draws.size * size)
    centre = bars.x[peak]
    assert density == pytest.approx(np.exp(-0.5 * centre**2) / np.sqrt(2 * np.pi), rel=0.15)
    assert len(fig.to_json()) < 30_000  # was ~380 kB for this one trace


def test_gain_figure_one_chart_every_gain_labelled():
    from ui.cached import GAINS, gain_curve

    curve = gain_curve(total=1300, sites=4, points=5)
    labels = {k: v[0] for k, v in GAINS.items()}
    current = {
        "same_weights": 4.0,
        "joint_same_weights": 3.6,
        "best_conventional": 1.64,
        "paper_g": 31.8,
    }
    fig = gain_figure(curve, labels=labels, current=current, share=1000 / 1300)
    lines = [t for t in fig.data if t.mode == "lines"]
    assert [t.name for t in lines] == list(labels.values())  # every gain named in the legend
    np.testing.assert_allclose(curve.same_weights, 4.0, rtol=1e-12)  # exactly S
    np.testing.assert_allclose(curve.joint_same_weights, 4.0 / 1.05**2, rtol=1e-9)
    assert curve.best_conventional.iloc[0] == pytest.approx(4.0)  # equal sizes: S
    assert curve.paper_g.iloc[0] == pytest.approx(4.0)
    markers = [t for t in fig.data if t.mode == "markers"]
    assert sorted(m.y[0] for m in markers) == sorted(current.values())


def test_html_export_is_standalone(frame):
    html = figure_html(
        sweep_figure(frame, axis="epsilon", metric="captured_energy_ratio", y_title="q")
    )
    assert html.lower().startswith("<!doctype html>") and "</html>" in html
    assert '<script src="http' not in html  # plotly.js is embedded: works offline
    assert len(html) > 1_000_000


def test_collusion_figure_draws_both_views_bound_and_promise():
    import dpcore
    from figures.charts import collusion_figure

    design = dpcore.cape_design(np.full(6, 0.01))
    curve = dpcore.collusion_curve(design, sensitivity=0.002, delta=1e-5, epsilon=0.3)
    fig = collusion_figure(curve, bound=dpcore.collusion_bound(6), chosen=(2, 0.4, 0.5))
    assert [len(t.x) for t in fig.data] == [6, 6, 1, 1]  # both views + the chosen coalition
    assert fig.data[2].x == (2,) and fig.data[3].y == (0.5,)
    shapes = fig.layout.shapes
    assert any(s.x0 == 1 and s.x1 == 1 for s in shapes)  # ⌈6/3⌉ − 1 = 1
    assert any(s.y0 == 0.3 for s in shapes)  # the promised ε_s
    # unequal promises are drawn per point, not as one misleading line (here the most exposed
    # site is a 0.3-site for some sizes and a 1-site for others)
    mixed = dpcore.cape_design(np.array([0.01] * 3 + [0.003] * 3))
    unequal = dpcore.collusion_curve(
        mixed, sensitivity=0.002, delta=1e-5, epsilon=[0.3, 0.3, 0.3, 1, 1, 1]
    )
    assert unequal.promised_epsilon.nunique() == 2
    fig = collusion_figure(unequal, bound=1)
    assert len(fig.data) == 4 and not any(s.y0 == 0.3 for s in fig.layout.shapes)


def test_collusion_figure_marks_lower_bounds():
    import dpcore
    from figures.charts import collusion_figure

    curve = dpcore.collusion_curve(
        dpcore.cape_design(np.full(14, 0.01)), sensitivity=0.002, delta=1e-5, epsilon=0.3
    )
    fig = collusion_figure(curve, bound=dpcore.collusion_bound(14))
    own = fig.data[0]
    exact = curve[curve.view == "own release"].exact.to_numpy()
    assert not exact.all() and exact.any()
    assert list(own.marker.symbol) == ["circle" if e else "circle-open" for e in exact]
    assert any("lower bound" in (t.name or "") for t in fig.data)  # named in the legend
    exact_only = dpcore.collusion_curve(
        dpcore.cape_design(np.full(5, 0.01)), sensitivity=0.002, delta=1e-5, epsilon=0.3
    )
    fig = collusion_figure(exact_only, bound=1)
    assert not any("lower bound" in (t.name or "") for t in fig.data)


def test_calibration_figure_shades_where_classic_is_no_proof():
    import dpcore
    from figures.charts import calibration_figure

    table = dpcore.calibration_comparison([0.1, 1.0, 10.0], delta=1e-5)
    fig = calibration_figure(table, current=[0.5, 0.5, 2.0])
    rect = [s for s in fig.layout.shapes if s.type == "rect"]
    assert len(rect) == 1 and rect[0].x0 == 1.0 and rect[0].x1 == 10.0
    assert sum(s.type == "line" for s in fig.layout.shapes) == 2  # one line per distinct ε


def test_current_marker_label_sits_on_its_line_on_log_and_linear_axes(frame):
    # Plotly reads annotation x on a log axis in log10 units: the label of ε = 0.5 must be
    # at log10(0.5), not at 0.5 (which Plotly would draw at ε = 10^0.5 ≈ 3.2).
    fig = sweep_figure(
        frame, axis="epsilon", metric="captured_energy_ratio", y_title="q", marker=0.5
    )
    (label,) = [a for a in fig.layout.annotations if a.text == "current"]
    assert label.x == pytest.approx(np.log10(0.5))
    assert fig.layout.shapes[0].x0 == 0.5
    # Beside the line, in the widest gap between the curves where they cross ε = 0.5: no
    # mean line within 0.1 of the plot's height (a label is ≈ 0.06 of a 300-px plot) of it,
    # in the figure's data range padded 5 % as Plotly pads it.
    assert (label.yref, label.yanchor) == ("paper", "middle")
    stats = summarise(frame, "epsilon", "captured_energy_ratio")
    ys = np.concatenate([np.asarray(t.y, dtype=float) for t in fig.data])
    lo, hi = ys.min(), ys.max()
    pad = 0.05 * (hi - lo)
    for alg, part in stats.groupby("algorithm"):
        at = np.interp(np.log10(0.5), np.log10(part.epsilon), part["mean"])
        assert abs((at - lo + pad) / (hi - lo + 2 * pad) - label.y) > 0.1, alg
    linear = sweep_figure(
        frame.rename(columns={"epsilon": "sites"}),
        axis="sites",
        metric="captured_energy_ratio",
        y_title="q",
        marker=1.0,
    )
    assert [a.x for a in linear.layout.annotations if a.text == "current"] == [1.0]


def test_current_label_avoids_curves_at_the_foot_and_the_top():
    # The tensor page: non-private near 0 at the foot, random vectors near 1.1 at the top,
    # CAPE between. At the foot the label sat on the non-private line; at the top it would
    # sit on random vectors (and under the toolbar). It must land in a gap between them.
    rows = []
    for eps in (0.01, 0.1, 0.5, 1.0, 10.0):
        for alg, value in (("nonprivate", 0.02), ("random", 1.1), ("cape", 0.6 / (1 + eps))):
            rows.append({"algorithm": alg, "epsilon": eps, "run": 0, "component_error": value})
    fig = sweep_figure(
        pd.DataFrame(rows), axis="epsilon", metric="component_error", y_title="q", marker=0.5
    )
    (label,) = [a for a in fig.layout.annotations if a.text == "current"]
    lo, hi = 0.02 - 0.054, 1.1 + 0.054  # the data range padded 5 %
    for value in (0.02, 1.1, 0.4):  # the three curves where they cross ε = 0.5
        assert abs((value - lo) / (hi - lo) - label.y) > 0.1, value


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_chart_lettering_reaches_wcag_aa_in_both_themes(scheme):
    # Issue #40 item 5: Streamlit's Plotly theme letters charts in #808495, 3.72:1 on white
    # (axe cannot see inside a chart's SVG). The theme's chart text against the page, by the
    # WCAG 2.1 formula; and every axis, legend and note of a figure gets it unless the figure
    # chose a colour itself.
    from plotly.subplots import make_subplots

    from figures.theme import AA_CONTRAST, BACKGROUND, CHART_TEXT, contrast_ratio
    from ui.presenter import _lettering

    color = CHART_TEXT[scheme]
    assert contrast_ratio(color, BACKGROUND[scheme]) >= AA_CONTRAST
    assert contrast_ratio("#808495", BACKGROUND["light"]) < AA_CONTRAST  # what it was
    fig = make_subplots(rows=1, cols=2)
    fig.add_scatter(x=[1, 2], y=[1, 2], row=1, col=1)
    fig.add_scatter(x=[1, 2], y=[2, 1], row=1, col=2)
    fig.add_annotation(text="note", x=1, y=1)
    fig.add_annotation(text="own colour", x=2, y=2, font={"color": "#123456"})
    spec = _lettering(fig.to_dict(), scheme == "dark")
    layout = spec["layout"]
    axes = [v for k, v in layout.items() if k.startswith(("xaxis", "yaxis"))]
    assert len(axes) == 4
    for axis in axes:
        assert axis["tickfont"]["color"] == axis["title"]["font"]["color"] == color
    assert layout["font"]["color"] == layout["legend"]["font"]["color"] == color
    assert [a["font"]["color"] for a in layout["annotations"]] == [color, "#123456"]


def test_contrast_ratio_rejects_what_is_not_a_colour():
    from figures.theme import contrast_ratio

    with pytest.raises(ValueError, match="#RRGGBB"):
        contrast_ratio("red", "#FFFFFF")


@pytest.mark.parametrize("sites", [3, 4, 5])
@pytest.mark.parametrize("seed", range(8))
def test_protocol_waterfall_shows_every_bar_whole(sites, seed):
    # Issue #40 item 8: protocol step 17's chart cut off the E bars — the y-range ran from
    # the lowest running sum to max(start, estimate), missing E's that climb above both.
    from dpcore import protocol_demo
    from figures.protocol import cancel_figure

    fig = cancel_figure(protocol_demo(sites=sites, seed=seed))
    trace = fig.data[0]
    running = np.cumsum([y for y, m in zip(trace.y, trace.measure, strict=True) if m != "total"])
    lo, hi = fig.layout.yaxis.range
    assert lo <= running.min() and running.max() <= hi


def test_privacy_views_table_is_one_verdict_per_party_kind_and_site():
    # figures/privacy.py (moved out of the Privacy explorer, issue #35): each cell is the
    # party's joint-view ε against the promise, ✓ exactly when the core says it meets it.
    from figures.privacy import verdict, views_table

    sites = dpcore.Sites((100, 200, 300), (0.5, 1.0, 2.0), (0.01, 0.01, 0.001))
    parties = dpcore.party_views(
        sites.design(), sensitivity=sites.sensitivities, delta=sites.delta, epsilon=sites.epsilon
    )
    table = views_table(parties)
    assert list(table.index) == [
        "noise generator",
        "aggregator",
        "each other site",
        "anyone (final output)",
    ]
    assert list(table.columns) == ["receives", "site 1", "site 2", "site 3"]
    agg = parties[parties.party == "aggregator"].set_index("site")
    for s in (1, 2, 3):
        r = agg.loc[s]
        assert table.loc["aggregator", f"site {s}"] == verdict(
            r.epsilon_joint, r.promised_epsilon, r.meets
        )
        assert table.loc["aggregator", f"site {s}"].endswith("✓" if r.meets else "✗")
    assert verdict(0.0, 1.0, True) == "sees nothing ✓"
    assert verdict(2.0, 1.0, False) == "2 > 1 ✗"


@pytest.fixture(scope="module")
def gap_tradeoff():
    """The joint-view-gap preset's trade-off rows and curves (10 equal sites, ε_s = 0.5,
    δ_s = 10⁻³, analytic, 400,000 games): the paper's joint view dips under its promise."""
    from ui.cached import audit_tradeoff

    sites = dpcore.Sites((1000,) * 10, 0.5, 1e-3, (0.1,) * 10, "analytic")
    return audit_tradeoff(sites, site=0, colluding=(), trials=400_000, seed=2026)


SUPERSCRIPT_POWER = r"^(?:[1-9]·)?10[⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+$|^[1-9]$"  # 10⁻⁴, 2·10⁻², 1


@pytest.mark.slow
def test_tradeoff_chart_shows_the_dip_and_its_box_in_a_zoom(gap_tradeoff):
    """Issue #49: the 0.006 dip and the attack's 95 % box are visible (a zoom, linear in the
    gap), every log axis is labelled in powers of ten (not Plotly's SI "100μ"), and the
    mirror dip near α = 1 is out of the zoom (the words say where it is)."""
    import re

    from scipy.stats import norm

    from figures.tradeoff import mirror_alpha, tradeoff_figure, zoom_window

    views, curves = gap_tradeoff
    fig = tradeoff_figure(views, curves)
    layout = fig.layout
    xaxes = [layout[k] for k in layout if k.startswith("xaxis")]
    assert len(xaxes) == 4  # 2 designs × (whole curves, zoom)
    for axis in xaxes:
        assert axis.type == "log" and axis.exponentformat == "power"
        assert axis.ticktext and all(re.match(SUPERSCRIPT_POWER, t) for t in axis.ticktext)
        for value, text in zip(axis.tickvals, axis.ticktext, strict=True):  # says its value
            mantissa, _, power = text.partition("·") if "·" in text else ("1", "", text)
            shown = float(mantissa) * (
                10.0 ** int(power[2:].translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")))
                if power.startswith("10")
                else float(power)
            )
            np.testing.assert_allclose(shown, value, rtol=1e-12)
    x0, x1, y0, y1 = zoom_window(views)
    paper_joint = views[(views.design == "cape") & (views.view == "joint")].iloc[0]
    assert paper_joint.breaks
    # the zoom (row 2): its α range is [x0, x1] on a log scale, its gap range [y0, y1]
    zoom_x = [a for a in xaxes if a.range is not None and np.isclose(10 ** a.range[0], x0)]
    assert len(zoom_x) == 2
    span_x = np.log10(x1) - np.log10(x0)
    box = next(
        t
        for t in fig.data
        if t.name == "aggregator: all releases: attack, 95 % box"
        and t.xaxis == "x3"  # the paper's design, bottom row (x, x2 top; x3, x4 bottom)
    )
    assert layout.xaxis3.range == zoom_x[0].range
    # drawn size in the zoom: the box's FPR side ±1.96·√(p(1−p)/n) at p = 0.008,
    # n = 200,000 is ±5 % of p: 0.04 decades, 4.4 % of the 0.95-decade window; its gap side
    # (≈ 0.0025) is 22-25 % of the window's 0.010-0.011 (seeds 0-4 and 2026). "Visible": at
    # least 3 % and 10 %, about 12 and 20 px of the page's ~400 px × 200 px panel (sub-pixel
    # on the old 6-decade axis).
    width = (np.log10(max(box.x)) - np.log10(min(box.x))) / span_x
    height = (max(box.y) - min(box.y)) / (y1 - y0)
    assert width >= 0.03 and height >= 0.10, (width, height)
    assert x0 <= min(box.x) and max(box.x) <= x1 and y0 <= min(box.y) and max(box.y) <= y1
    assert x0 <= paper_joint.dip_alpha <= x1 and paper_joint.dip_depth <= y1  # the dip in view
    assert min(box.y) > 0  # the proof: the whole box above 0
    # α → 1: the mirror dip lies at α′ = G_μ(α*) (the curves are symmetric about β = α);
    # checked against scipy, it is beyond the zoom, and no zoomed curve gets near it
    mu = paper_joint.mu
    mirror = norm.cdf(norm.ppf(1 - paper_joint.dip_alpha) - mu)
    assert mirror_alpha(views) == pytest.approx(mirror, rel=1e-9)
    assert x1 < 0.5 < mirror
    for t in fig.data:
        if t.xaxis in ("x3", "x4") and t.x is not None and len(t.x) > 1:
            assert max(t.x) < 0.5, t.name  # one grid point past x1 at most


@pytest.mark.slow
def test_tradeoff_words_say_boxes_not_points_and_count_them(gap_tradeoff):
    """The sentence under the chart is true of its rows: points fall under their curves by
    chance (counted here against scipy's G_μ), the boxes are what reach them; the mirror
    dip's α and the deepest dip are the core's."""
    from scipy.stats import norm

    from figures.tradeoff import tradeoff_words

    views, _ = gap_tradeoff
    words = tradeoff_words(views)
    assert "sit on or above their curves, as they must" not in words
    curve = lambda a, mu: norm.cdf(norm.ppf(1 - a) - mu)  # noqa: E731 - G_μ(α), DRS Def. 2.6
    under = sum(r.fnr < curve(r.fpr, r.mu) for r in views.itertuples())
    reach = sum(r.fnr_high >= curve(r.fpr_high, r.mu) for r in views.itertuples())
    n = len(views)
    assert f"(here {under} of {n})" in words
    assert f"here {reach} of {n} do" in words
    deep = views[views.breaks].iloc[0]
    assert f"deepest: {deep.dip_depth:.3g} at α = {deep.dip_alpha:.3g}" in words
    assert f"at α = {curve(deep.dip_alpha, deep.mu):.3g})" in words  # the mirror dip
    assert "sits wholly above 0 in the zoom for 1 of them" in words
    safe = tradeoff_words(views[views.design == "joint"])  # no dip: no mirror sentence
    assert "no curve dips under the promise's" in safe and "mirror" not in safe
