"""Figure builders and computed texts of the "Repeated releases" page (no Streamlit)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import dpcore
from figures.composition import (
    accountants_figure,
    accountants_text,
    ledger_text,
    profiles_figure,
    profiles_text,
)


def test_accountants_figure_draws_every_accountant_from_the_curve():
    curve = dpcore.epsilon_curve(4.0, max_releases=12, delta=1e-5)
    fig = accountants_figure(curve, current=5)
    assert len(fig.data) == len(dpcore.ACCOUNTANTS)
    for trace in fig.data:
        assert list(trace.x) == list(range(1, 13))
    exact = next(t for t in fig.data if t.name.startswith("exact"))
    expected = [dpcore.composed_epsilon(4.0, releases=t, delta=1e-5) for t in range(1, 13)]
    np.testing.assert_allclose(exact.y, expected, rtol=1e-12)


def _text(z, releases, delta, site=1):
    curve = dpcore.epsilon_curve(z, max_releases=releases, delta=delta)
    growth = dpcore.composition_growth(z, releases=releases, delta=delta)
    return curve, accountants_text(curve, growth, site=site, noise_multiplier=z, delta=delta)


def test_accountants_text_quotes_the_curve():
    curve, text = _text(50.0, 200, 1e-5, site=2)
    last = curve[curve.releases == 200].set_index("accountant").epsilon
    assert f"ε = {last['exact']:.3g}" in text and f"basic composition {last['basic']:.3g}" in text
    wide = curve.pivot(index="releases", columns="accountant", values="epsilon")
    first = int(wide.index[wide.advanced < wide.basic].min())
    assert f"beats basic from T = {first} on" in text
    assert "never beats basic" in _text(1.0, 3, 1e-5)[1]


@pytest.mark.parametrize(
    "z, releases, delta, linear", [(5.85, 50, 1e-3, False), (0.5, 200, 1e-3, True)]
)
def test_accountants_text_says_how_epsilon_grew_against_sqrt_t_and_t(z, releases, delta, linear):
    # issue #34: "about √T for many releases" was false (10.6× against √50 = 7.1 at the page's
    # default); the text now quotes the exact ratio, √T, T and the crossover T*
    curve, text = _text(z, releases, delta)
    assert "about √T" not in text
    one = curve[curve.releases == 1].set_index("accountant").epsilon["exact"]
    end = curve[curve.releases == releases].set_index("accountant").epsilon["exact"]
    assert f"cost {end / one:.1f}× one release exactly: more than √T = " in text
    assert f"less than T = {releases}×" in text
    crossover = 8 * z**2 * math.log(1 / delta)
    assert f"T* = 8(σ/Δ)² ln(1/δ) = {crossover:,.0f} releases" in text
    assert ("already turning linear" in text) == linear == (releases > crossover)


def _profiles():
    tau = dpcore.mean_noise_std([1000] * 4, epsilon=0.5, delta=1e-3, calibration="analytic")
    grid = sorted({*np.linspace(0.05, 2.0, 20), 0.5})
    return dpcore.view_profiles(
        tau, sensitivity=1e-3, site=0, colluding=[1], epsilons=grid, releases=1
    )


def test_profiles_figure_one_trace_per_view_and_design_and_the_promise():
    frame = _profiles()
    fig = profiles_figure(frame, promise=(0.5, 1e-3))
    # calibration once, three views × two designs, the star
    assert len(fig.data) == 1 + 3 * 2 + 1
    assert fig.data[-1].x == (0.5,) and fig.data[-1].y == (1e-3,)


def test_profiles_text_reads_delta_at_the_promise():
    frame = _profiles()
    text = profiles_text(frame, site=1, epsilon=0.5, delta=1e-3, releases=1)
    row = frame[(frame.design == "cape") & (frame.view == "aggregator's joint view")]
    at = float(row[row.epsilon == 0.5].delta.iloc[0])
    assert f"aggregator's joint view δ = {at:.3g}" in text
    assert at > 1e-3  # analytic: the paper's joint view breaks the promise


def test_ledger_text_names_the_most_spent_site_and_the_ones_over_budget():
    ledger = dpcore.PrivacyLedger(budget=[1.0, 5.0], delta=[1e-5, 1e-5]).add([3.0, 3.0], count=4)
    summary = ledger.summary()
    text = ledger_text(summary, releases=4, accountant="exact")
    assert "Site 1 has spent" in text and "Over budget: site 1." in text
    assert "No release" in ledger_text(summary, releases=0, accountant="exact")
    assert isinstance(summary, pd.DataFrame)


def test_notices_quote_the_numbers_on_the_charts():
    from figures.composition import accountants_notice, profiles_notice

    curve = dpcore.epsilon_curve(5.0, max_releases=25, delta=1e-5)
    end = curve[curve.releases == 25].set_index("accountant").epsilon
    one = curve[curve.releases == 1].set_index("accountant").epsilon
    text = accountants_notice(curve)
    assert f"{end['exact'] / one['exact']:.1f}× one release" in text and "about √T" not in text
    assert f"claims {end['basic'] / end['exact']:.1f}× that" in text
    frame = _profiles()
    joint = frame[(frame.view == "aggregator's joint view") & (frame.epsilon == 0.5)]
    cape = float(joint[joint.design == "cape"].delta.iloc[0])
    assert f"δ = {cape:.3g} in the paper's design" in profiles_notice(
        frame, epsilon=0.5, delta=1e-3
    )


def test_profiles_figure_draws_the_promise_and_the_curves_picked():
    # Issue #40 item 7: seven overlaid curves. By default the promise and two curves of the
    # paper's design; every curve can be picked by its legend name.
    from figures.composition import DEFAULT_PROFILE_CURVES, profile_curves

    frame = _profiles()
    offered = profile_curves(frame)
    assert len(offered) == 3 * 2 and "calibration τ_s" not in {v for _, v in offered.values()}
    fig = profiles_figure(frame, promise=(0.5, 1e-3), curves=DEFAULT_PROFILE_CURVES)
    names = [trace.name for trace in fig.data]
    assert len(names) == 1 + len(DEFAULT_PROFILE_CURVES) + 1  # promise band, curves, star
    assert set(names[1:-1]) == {n for n, c in offered.items() if c in DEFAULT_PROFILE_CURVES}
    one = next(iter(offered))
    fig = profiles_figure(frame, curves=[offered[one]])
    assert [trace.name for trace in fig.data][1:] == [one]
    assert len(profiles_figure(frame, curves=()).data) == 1  # the promise alone
    text = profiles_text(
        frame, site=1, epsilon=0.5, delta=1e-3, releases=1, curves=DEFAULT_PROFILE_CURVES
    )
    assert "own release δ" in text and "joint-view-safe" not in text  # the curves drawn only
    assert "aggregator + colluders" not in text
    assert profiles_text(frame, site=1, epsilon=0.5, delta=1e-3, releases=1, curves=()) == ""
