"""The trust-models comparison (dpcore.analysis.trust_models): each row is its scheme's own
number."""

import dataclasses
import math
import re
from datetime import timedelta

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import dpcore
from dpcore.analysis.secagg_views import secagg_cost, secagg_dropouts, secagg_views
from dpcore.analysis.trust_iterative import iterative_trust_table
from dpcore.analysis.trust_models import (
    PCA_SCHEMES,
    REGISTRY,
    SCHEMES,
    TrustRow,
    shuffle_epsilon,
    shuffle_min_parties,
    trust_overview,
    trust_pca,
    trust_scheme,
    trust_secagg_design,
    trust_table,
)
from dpcore.mechanisms.discrete import MAX_EXACT_EPSILON

EQUAL = {"n_per_site": [1000] * 5, "epsilon": 0.5, "delta": 1e-3}


def _random_sites(seed: int):
    rng = np.random.default_rng(seed)
    s = int(rng.integers(2, 9))
    w = rng.uniform(0.05, 1, s)
    return {
        "n_per_site": rng.integers(50, 5000, s).tolist(),
        "epsilon": rng.uniform(0.1, 4, s),
        "delta": 10 ** rng.uniform(-7, -2, s),
        "weights": w / w.sum(),
    }


def _row(table: pd.DataFrame, scheme: str) -> pd.Series:
    return table.set_index("scheme").loc[scheme]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("calibration", ["classic", "analytic"])
def test_table_values_are_each_schemes_own(seed, calibration):
    sites = _random_sites(seed)
    table = trust_table(**sites, dim=8, calibration=calibration, secagg_calibration="ddg")
    assert list(table["scheme"]) == list(SCHEMES)
    tau = dpcore.site_noise_std(
        sites["n_per_site"], epsilon=sites["epsilon"], delta=sites["delta"], calibration=calibration
    )
    paper = dpcore.cape_design(tau, weights=sites["weights"])
    joint = dpcore.joint_safe_design(tau, weights=sites["weights"])
    design = dpcore.secagg_design(
        dpcore.second_moment_sensitivity(sites["n_per_site"]),
        epsilon=sites["epsilon"],
        delta=sites["delta"],
        weights=sites["weights"],
        coordinates=8 * 9 // 2,
    )
    expected = {
        "central": paper.tau_pool,
        "local": tau[0],
        "conventional": paper.tau_conv,
        "cape": paper.tau_agg,
        "cape_joint": joint.tau_agg,
        "secagg": design.tau_agg,
        "shuffle": paper.tau_conv,
    }
    got = table.set_index("scheme")["noise_std"]
    for scheme, value in expected.items():
        np.testing.assert_allclose(got[scheme], value, rtol=1e-12, err_msg=scheme)
    np.testing.assert_allclose(table["std_ratio"], table["noise_std"] / paper.tau_pool, rtol=1e-12)
    sa = _row(table, "secagg")
    s = len(sites["n_per_site"])
    assert sa.masks_tolerated == design.threshold - 1
    assert sa.bits_per_site == secagg_cost(sites=s, coordinates=36, bits=32).bits_per_site
    server = secagg_views(design).iloc[0]
    assert sa.aggregator_epsilon == pytest.approx(server.epsilon, rel=1e-12)
    # the dropout columns: the site the table names (the worst one, issue #52)
    gone = (int(sa.dropout_site) - 1,)
    drop = secagg_dropouts(design, dropped=gone).set_index("remedy")
    assert sa.dropout_epsilon == pytest.approx(drop.loc["none", "epsilon"], rel=1e-12)
    assert sa.remedy_std_ratio == pytest.approx(drop.loc["over-provisioned", "std_ratio"])
    cape = _row(table, "cape")
    analysis = dpcore.dropout_analysis(paper, (int(cape.dropout_site) - 1,))
    assert cape.dropout_std_ratio == pytest.approx(analysis.noise_ratio["none"], rel=1e-12)
    assert cape.remedy_std_ratio == pytest.approx(analysis.noise_ratio["cape"], rel=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_noise_levels_are_ordered_as_theory_says(seed):
    # τ_pool = max μ_s τ_s ≤ sqrt(Σ μ_s² τ_s²) (conventional); CAPE's paper design attains
    # τ_pool exactly; the joint-view-safe design lies between τ_pool and 1.05 τ_pool
    # (docs/privacy.md). Secure aggregation calibrated like the others (analytic) at the
    # rounded sensitivity Δ̃ ≤ 1.01 Δ and δ_s − δ_s/10: at least τ_pool, and at most 1.01 ×
    # the analytic σ at δ_s·0.9 — below 1.1 τ_pool for these ε, δ.
    sites = _random_sites(100 + seed)
    table = trust_table(**sites, dim=6, calibration="analytic", secagg_calibration="analytic")
    r = table.set_index("scheme")["std_ratio"]
    assert r["central"] == 1.0
    assert r["cape"] == pytest.approx(1.0, rel=1e-12)
    assert 1.0 - 1e-12 <= r["cape_joint"] <= 1.05 + 1e-9
    assert r["conventional"] >= 1.0 - 1e-12
    assert r["cape_joint"] <= max(r["conventional"], 1.05) + 1e-9
    assert 1.0 <= r["secagg"] <= 1.1
    assert r["shuffle"] == r["conventional"]


def test_equal_sites_conventional_pays_sqrt_s_and_local_pays_s():
    # S equal sites, μ = 1/S: τ_pool = τ/S, conventional τ/√S, local τ.
    table = trust_table(**EQUAL, dim=10)
    r = table.set_index("scheme")["std_ratio"]
    assert r["conventional"] == pytest.approx(math.sqrt(5), rel=1e-12)
    assert r["local"] == pytest.approx(5.0, rel=1e-12)


def test_views_and_collusion_follow_the_core():
    # Analytic calibration: the paper design's aggregator joint view breaks the promise with
    # no colluder (docs/privacy.md), so it tolerates none; the joint-view-safe design meets.
    table = trust_table(**EQUAL, dim=10, calibration="analytic")
    cape, joint = _row(table, "cape"), _row(table, "cape_joint")
    assert cape.aggregator_epsilon > cape.aggregator_promised
    assert cape.colluders_tolerated == -1
    assert joint.aggregator_epsilon <= joint.aggregator_promised * (1 + 1e-7)
    assert joint.colluders_tolerated >= 0
    # with the KLS accountant tight at ε_s, removing one share breaks the promise
    sa = _row(table, "secagg")
    assert sa.colluders_tolerated == 0
    assert sa.dropout_epsilon > sa.aggregator_promised
    assert sa.remedy_std_ratio > sa.dropout_std_ratio
    assert _row(table, "central").aggregator_epsilon == math.inf
    assert _row(table, "local").messages == 0


def test_bits_and_scale_change_secagg_only():
    base = trust_table(**EQUAL, dim=10)
    coarse = trust_table(**EQUAL, dim=10, scale=1e-3, bits=16)
    others = [s for s in SCHEMES if s != "secagg"]
    pd.testing.assert_series_equal(
        base.set_index("scheme").loc[others, "noise_std"],
        coarse.set_index("scheme").loc[others, "noise_std"],
    )
    # rounding at γ = 10⁻³ ≫ μΔ = 2·10⁻⁴ dominates the sensitivity (Δ̃ ≈ √d/2 steps)
    assert _row(coarse, "secagg").std_ratio > 3 * _row(base, "secagg").std_ratio
    assert _row(coarse, "secagg").bits_per_site < _row(base, "secagg").bits_per_site


# --- the shuffle model ------------------------------------------------------------------


def _paper_form(eps0: float, n: int, delta: float) -> float:
    """FMT 2021 Thm. 3.1 as printed: log(1 + (e^ε₀−1)/(e^ε₀+1)·(8√(e^ε₀ ln(4/δ)/n) + 8e^ε₀/n))."""
    a = 8 * math.sqrt(math.exp(eps0) * math.log(4 / delta) / n) + 8 * math.exp(eps0) / n
    return math.log(1 + (math.exp(eps0) - 1) / (math.exp(eps0) + 1) * a)


@pytest.mark.parametrize("eps0", [0.1, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("n", [10**4, 10**5, 10**6])
def test_shuffle_bound_is_the_conservative_form_of_the_theorem(eps0, n):
    delta = 1e-6
    got = shuffle_epsilon(eps0, parties=n, delta=delta)
    if n < shuffle_min_parties(eps0, delta=delta):
        assert got == eps0
        return
    printed = _paper_form(eps0, n, delta)
    # the reference code's factor (1 − e^{−ε₀})/(1 + e^{−ε₀−e₁}) ≥ (e^ε₀ − 1)/(e^ε₀ + 1)
    assert printed <= got <= eps0
    # and at most that factor ratio above it: log(1 + kx) ≤ k log(1 + x) for k ≥ 1, with
    # k = (1 + e^{−ε₀})/(1 + e^{−ε₀−e₁}), e₁ = log(1 + a + c)
    a = 8 * math.sqrt(math.exp(eps0) * math.log(4 / delta) / n) + 8 * math.exp(eps0) / n
    k = (1 + math.exp(-eps0)) / (1 + math.exp(-eps0 - math.log(1 + a)))
    assert got <= k * printed * (1 + 1e-12)


def test_shuffle_needs_many_parties_and_does_nothing_with_few():
    for eps0, delta in [(0.1, 0.1), (0.5, 1e-3), (2.0, 1e-8)]:
        n = shuffle_min_parties(eps0, delta=delta)
        assert n > 20  # the app's sites never reach it
        assert shuffle_epsilon(eps0, parties=n - 1, delta=delta) == eps0
        assert shuffle_epsilon(eps0, parties=n, delta=delta) <= eps0
        assert shuffle_epsilon(eps0, parties=100 * n, delta=delta) < eps0
    table = trust_table(**EQUAL, dim=4)
    assert _row(table, "shuffle").shuffle_epsilon == 0.5


def test_shuffle_bound_decreases_with_parties():
    grid = np.geomspace(1e3, 1e8, 12)
    values = [shuffle_epsilon(1.0, parties=int(n), delta=1e-6) for n in grid]
    assert np.all(np.diff(values) <= 0)
    assert values[-1] < 0.01


# --- PCA --------------------------------------------------------------------------------


def test_a_scheme_registered_first_changes_no_other_schemes_numbers(monkeypatch):
    # issue #51: each scheme's stream is keyed by its name, not its place in the registry (the
    # algorithms' rule): a new scheme put first leaves every existing scheme's runs to the bit.
    from dpcore.analysis import trust_models

    before = trust_pca(**EQUAL, dim=8, k=3, runs=3, rng=7)
    first = dataclasses.replace(trust_models.REGISTRY[2], name="a_new_scheme")
    monkeypatch.setattr(trust_models, "REGISTRY", (first, *trust_models.REGISTRY))
    after = trust_pca(**EQUAL, dim=8, k=3, runs=3, rng=7)
    assert len(after) == len(before)  # PCA_SCHEMES, fixed at import, lists the old ones
    pd.testing.assert_frame_equal(before, after, check_exact=True)


def test_pca_is_deterministic_and_complete():
    a = trust_pca(**EQUAL, dim=8, k=3, runs=3, rng=7)
    b = trust_pca(**EQUAL, dim=8, k=3, runs=3, rng=7)
    pd.testing.assert_frame_equal(a, b)
    assert set(a["scheme"]) == set(PCA_SCHEMES)
    assert len(a) == 3 * len(PCA_SCHEMES)
    ratio = a["captured_energy_ratio"]
    assert ((ratio > 0) & (ratio <= 1 + 1e-9)).all()


def test_secagg_pca_matches_cape_at_default_bits_and_degrades_with_few():
    # analytic calibration for both: secure aggregation's noise std is ≤ 1.1× CAPE's
    # (test above), so their mean captured energies agree within 3 standard errors of the
    # difference of two means over 40 runs (plus the small bias of 10% more noise).
    kw = {**EQUAL, "dim": 10, "k": 3, "calibration": "analytic", "secagg_calibration": "analytic"}
    pca = trust_pca(**kw, runs=40, rng=0)
    g = pca.groupby("scheme")["captured_energy_ratio"]
    mean, std = g.mean(), g.std()
    se = math.sqrt((std["secagg"] ** 2 + std["cape"] ** 2) / 40)
    assert abs(mean["secagg"] - mean["cape"]) <= 3 * se + 0.01
    sa = pca[pca["scheme"] == "secagg"]
    assert (sa["wraparounds"] == 0).all()
    # rounding: per coordinate the sum of S roundings has variance ≤ S/4 steps²; the RMS
    # over d = 55 coordinates stays below 1.5 × γ√(S/4) (relative spread of a mean of 55
    # squares ≈ √(2/55) ≈ 0.19)
    assert (sa["quantisation_rms"] <= 1.5 * sa["quantisation_bound"]).all()
    assert (sa["quantisation_rms"] > 0).all()
    few = trust_pca(**kw, runs=10, rng=0, bits=12)
    fsa = few[few["scheme"] == "secagg"]
    assert (fsa["wraparounds"] > 0).all()
    assert fsa["captured_energy_ratio"].mean() < mean["cape"] - 5 * std["cape"]


def test_secagg_design_is_the_tables():
    design = trust_secagg_design(**EQUAL, dim=10, bits=20)
    assert design.coordinates == 55 and design.bits == 20
    table = trust_table(**EQUAL, dim=10, bits=20)
    assert _row(table, "secagg").noise_std == design.tau_agg


# --- bad inputs ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"n_per_site": [1000]}, "n_per_site"),
        ({"n_per_site": [1000, 0, 5]}, "n_per_site"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"delta": 1.0}, "delta"),
        ({"dim": 0}, "dim"),
        ({"dim": 500}, "dim"),
        ({"bits": 1}, "bits"),
        ({"scale": -1.0}, "scale"),
        ({"calibration": "exact"}, "calibration"),
        ({"secagg_calibration": "skellam"}, "secagg_calibration"),
        ({"weights": [-0.5, 0.5, 0.5, 0.5, 0.5]}, "weights"),  # any positive sum is μ
    ],
)
def test_bad_inputs_name_the_parameter(change, name):
    with pytest.raises(ValueError, match=name):
        trust_table(**{**EQUAL, **change})


@pytest.mark.parametrize("delta", [5e-324, 1e-310, 1e-301])
def test_a_vanishing_delta_is_refused_under_its_own_name(delta):
    # issue #36: δ/10 (the secure-aggregation rounding's failure share β) underflowed and the
    # message named the internal beta, or an automatic scale of 0 that nobody had given
    from dpcore.protocol.secagg import MIN_DELTA

    want = rf"^every entry of delta must be in \[{MIN_DELTA:g}, 1\); got {delta!r}$"
    with pytest.raises(ValueError, match=want):
        trust_table(**{**EQUAL, "delta": delta})


def test_the_smallest_delta_allowed_gives_a_table():
    from dpcore.protocol.secagg import MIN_DELTA

    table = trust_table(**{**EQUAL, "delta": MIN_DELTA})
    assert np.isfinite(table["noise_std"]).all()


@pytest.mark.parametrize(
    ("change", "name"),
    [({"runs": 0}, "runs"), ({"k": 11}, "k"), ({"n_per_site": [200_000] * 3}, "n_per_site")],
)
def test_bad_pca_inputs_name_the_parameter(change, name):
    with pytest.raises(ValueError, match=name):
        trust_pca(**{**EQUAL, "dim": 10, **change})


def test_bad_shuffle_inputs():
    with pytest.raises(ValueError, match="epsilon0"):
        shuffle_epsilon(0.0, parties=10, delta=0.1)
    with pytest.raises(ValueError, match="parties"):
        shuffle_epsilon(1.0, parties=0, delta=0.1)
    with pytest.raises(ValueError, match="delta"):
        shuffle_min_parties(1.0, delta=0.0)
    with pytest.raises(TypeError, match="n_per_site"):
        trust_table({"a": 1}, epsilon=1.0, delta=0.1)


@pytest.mark.parametrize("seed", range(3))
def test_overview_is_the_table_the_round_and_the_shuffle_threshold(seed):
    sites = _random_sites(seed)
    settings = {"dim": 6, "calibration": "classic", "bits": 24, "secagg_calibration": "analytic"}
    view = trust_overview(**sites, **settings)
    pd.testing.assert_frame_equal(view.table, trust_table(**sites, **settings))
    round_ = trust_secagg_design(
        **sites, dim=6, bits=24, calibration="analytic"
    )  # the round the table's secure-aggregation row is of
    assert view.secagg.sigma == round_.sigma and view.secagg.scale == round_.scale
    assert view.secagg.threshold == round_.threshold and view.secagg.coordinates == 6 * 7 // 2
    assert view.accounted_epsilon == float(round_.epsilons().max())
    eps0, delta0 = np.atleast_1d(sites["epsilon"])[0], np.atleast_1d(sites["delta"])[0]
    assert view.shuffle_parties == shuffle_min_parties(float(eps0), delta=float(delta0))


def test_secagg_error_ratio_is_the_designed_noise_until_the_sum_wraps():
    # Issue #40 item 1: the headline must show what wrap-around and rounding do. error_ratio
    # is the RMS over the d coordinates of (decoded estimate − Σ μ_s a_s) over central's τ_pool.
    kw = {**EQUAL, "dim": 10, "calibration": "analytic", "secagg_calibration": "analytic"}
    table = trust_table(**kw)
    designed = _row(table, "secagg").std_ratio  # noise only, no rounding
    d = 55
    for bits in (32, 20, 12):
        pca = trust_pca(**kw, k=3, runs=6, rng=3, bits=bits)
        sa = pca[pca["scheme"] == "secagg"]
        # the sum wraps exactly when its largest integer leaves [−2^(b−1), 2^(b−1))
        assert ((sa["range_used"] > 1) == (sa["wraparounds"] > 0)).all(), bits
        if (sa["wraparounds"] == 0).all():
            # noise and rounding only, independent: mean square = noise² + rounding². The RMS
            # over d = 55 coordinates × 6 runs has relative spread ≈ 1/√(2·330) ≈ 0.039: 4 of it
            rounding = sa["quantisation_rms"] / _row(table, "central").noise_std
            expect = math.sqrt(designed**2 + float(np.mean(rounding**2)))
            got = math.sqrt(float(np.mean(sa["error_ratio"] ** 2)))
            assert got == pytest.approx(expect, rel=4 / math.sqrt(2 * d * 6)), bits
        else:
            # a wrapped coordinate is off by 2^b integer steps, far above the noise
            assert (sa.loc[sa["wraparounds"] > 0, "error_ratio"] > 10 * designed).all()
    others = pca[pca["scheme"] != "secagg"]
    assert (others[["error_ratio", "range_used"]] == 0).all().all()


# --- every legal input of the Trust models page's core calls (issue #52) ----------------------

PAGE_PARAMETERS = (
    "n_per_site",
    "epsilon",
    "delta",
    "weights",
    "dim",
    "k",
    "bits",
    "scale",
    "calibration",
    "secagg_calibration",
)


def _log_uniform(lo: float, hi: float):
    return st.floats(math.log(lo), math.log(hi)).map(math.exp)


@st.composite
def _trust_inputs(draw):
    """The doors' legal range: S in [2, 8] (the page goes to 20: the same code, more coalitions),
    N_s in [1, 10⁹], ε_s in (0, 10⁶) with its ends, δ_s in [1e-12, 0.99], μ_s > 0, D in
    [1, 60], b in [2, 64], γ automatic or 10⁻⁹…10⁻², every calibration."""
    s = draw(st.integers(2, 8))

    def per_site(values):
        return draw(st.lists(values, min_size=s, max_size=s))

    sizes = per_site(_log_uniform(1, 1e9).map(lambda x: min(10**9, max(1, round(x)))))
    eps = per_site(st.one_of(_log_uniform(1e-4, 999_999.0), st.sampled_from([100.0, 1000.0])))
    raw = per_site(st.one_of(st.just(0.0), st.floats(0.01, 1.0)))  # μ_s = 0: a site not used
    if sum(raw) == 0:
        raw[0] = 1.0
    return {
        "n_per_site": sizes,
        "epsilon": eps,
        "delta": per_site(_log_uniform(1e-12, 0.99)),
        "weights": [w / sum(raw) for w in raw],
        "dim": draw(st.integers(1, 60)),
        "bits": draw(st.integers(2, 64)),
        "scale": draw(st.one_of(st.none(), _log_uniform(1e-9, 1e-2))),
        "calibration": draw(st.sampled_from(["classic", "analytic"])),
        "secagg_calibration": draw(st.sampled_from(["ddg", "classic", "analytic"])),
    }


def _refused_by_name(err: ValueError) -> bool:
    """A refusal the page can show (st.error): it names one of the caller's parameters (not
    an internal one such as ``sigma``, ``dropped`` or ``epsilon0``)."""
    return any(re.search(rf"\b{name}\b", str(err)) for name in PAGE_PARAMETERS)


# the page's crash of issue #52: every ε_s = 100, classic, "same as the others"; and ε_s = 1000,
# which the shuffle bound refused although the table took it
PAGE_CRASH = {
    **EQUAL,
    "epsilon": [100.0] * 5,
    "weights": [0.2] * 5,
    "dim": 20,
    "bits": 32,
    "scale": None,
    "calibration": "classic",
    "secagg_calibration": "classic",
}


@pytest.mark.slow  # 2–10 s: 20 tables, some at ε_s = 10⁶ and N_s = 10⁹
@pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")
@settings(max_examples=20, deadline=timedelta(seconds=30))
@given(_trust_inputs())
@example(PAGE_CRASH)
@example({**PAGE_CRASH, "epsilon": [1000.0] * 5, "calibration": "analytic"})
@example({  # b = 63: decoding subtracted 2^63, past int64 (OverflowError before the fix)
    "n_per_site": [1, 1], "epsilon": [1.0, 1.0], "delta": [math.exp(-1.0)] * 2,
    "weights": [1.0, 0.0], "dim": 1, "bits": 63, "scale": None, "calibration": "classic",
    "secagg_calibration": "ddg",
})  # fmt: skip
def test_the_trust_pages_core_calls_answer_every_legal_input(case):
    try:
        view = trust_overview(**case)
    except ValueError as err:  # a setting the scheme cannot serve: said, naming a parameter
        assert _refused_by_name(err), err
        return
    table = view.table
    assert list(table["scheme"]) == list(SCHEMES)
    for column in ("noise_std", "aggregator_epsilon", "dropout_epsilon", "shuffle_epsilon"):
        assert not table[column].isna().any() and (table[column] >= 0).all(), column
    # every Gaussian scheme adds noise; secure aggregation's share σ may round to none (ε_s in
    # the thousands at N_s = 1: below MIN_SIGMA), and then says ∞
    assert (table.loc[table["scheme"] != "secagg", "noise_std"] > 0).all()
    # the shuffle of ε_1-DP reports is post-processing: never above ε_1
    assert _row(table, "shuffle").shuffle_epsilon <= case["epsilon"][0]
    # secure aggregation: the exact ε of a one-coordinate move is a lower bound on the worst
    # case, KLS's certificate an upper bound (both bisections to ~1e-12 relative)
    # (∞ for the exact one means beyond 10⁶, MAX_EXACT_EPSILON: then so is the certificate)
    exact, certified = view.secagg.exact_epsilons(), view.secagg.epsilons()
    within = exact <= certified * (1 + 1e-9)
    below = np.where(np.isinf(exact), certified > MAX_EXACT_EPSILON, within)
    assert below.all(), (exact, certified)
    assert view.shuffle_parties >= 1
    iterative = iterative_trust_table(
        case["n_per_site"], epsilon=case["epsilon"], delta=case["delta"],
        weights=case["weights"], dim=case["dim"], calibration=case["calibration"],
    )  # fmt: skip
    assert not iterative["aggregator_epsilon"].isna().any()
    if sum(case["n_per_site"]) <= 20_000:  # the PCA pool: Σ N_s rows (limit 400,000)
        pca = trust_pca(**case, k=min(3, case["dim"]), runs=1, rng=0)
        assert pca["captured_energy_ratio"].between(-1e-9, 1 + 1e-9).all()


def test_shuffle_bound_takes_the_tables_epsilon_range():
    # issue #52: ε_s = 1000 passed trust_table's check and failed here (ε₀ ≤ 700)
    for eps0 in (700.5, 1000.0, 999_999.0):
        assert shuffle_epsilon(eps0, parties=5, delta=1e-3) == eps0  # no amplification
        n = shuffle_min_parties(eps0, delta=1e-3)
        # n = ⌈16 ln(4/δ) e^{ε₀}⌉ to float64's precision, compared in logs (n has ~10^5 digits)
        want = math.log(16 * math.log(4e3)) + eps0
        assert math.log(n) == pytest.approx(want, rel=1e-15)
    assert shuffle_min_parties(0.5, delta=1e-3) == math.ceil(16 * math.log(4e3) * math.exp(0.5))
    with pytest.raises(ValueError, match=r"epsilon0 must be a float in \(0, 1e\+06\)"):
        shuffle_min_parties(1e6, delta=1e-3)
    with pytest.raises(ValueError, match=r"every entry of epsilon must be in \(0, 1e\+06\)"):
        trust_table(**{**EQUAL, "epsilon": 1e6})
    with pytest.raises(ValueError, match=r"every entry of epsilon must be in \(0, 1e\+06\)"):
        iterative_trust_table([1000] * 3, epsilon=1e6, delta=1e-3)


# --- the dropout column: the worst dropped site (issue #52) ----------------------------------


def _balle_wang_epsilon(sensitivity: float, std: float, delta: float) -> float:
    """Exact ε of the Gaussian mechanism at δ (Balle & Wang 2018, Thm. 8), written here:
    δ(ε) = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ), decreasing in ε, solved by brentq."""
    from scipy import optimize, special

    if sensitivity == 0:
        return 0.0
    a = sensitivity / (2 * std)

    def excess(e: float) -> float:
        b = e * std / sensitivity
        return float(special.ndtr(a - b) - np.exp(e + special.log_ndtr(-a - b))) - delta

    if excess(0.0) <= 0:
        return 0.0
    hi = 1.0
    while excess(hi) > 0:
        hi *= 2
    return float(optimize.brentq(excess, 0.0, hi, xtol=1e-14, rtol=1e-13))


def _brute_force_dropouts(sites: dict, calibration: str) -> dict[str, tuple[int, float, float]]:
    """(dropped site, std ratio, worst survivor's ε) of every scheme's worst single dropout.

    Written from the definitions: site d leaves; the output is Σ_{t≠d} μ_t a_t / W plus the
    scheme's remaining noise (conventional and shuffle: every survivor's own τ_t; central:
    what one curator adds for the survivors, max μ_t τ_t / W; CAPE: the survivors' E_t no
    longer cancel, μ_Rᵀ Cov(E)_RR μ_R + Σ_R μ_t² var G_t; secure aggregation: S − 1 shares,
    KLS's ε for each survivor). Each survivor's ε is the Gaussian's exact one at sensitivity
    μ_t Δ_t / W; d is the site whose worst survivor has the largest ε/ε_t (then std ratio,
    then the lowest index; values within 1e-9 are equal: both sides solve for ε numerically)."""
    n = np.asarray(sites["n_per_site"])
    s = n.size
    eps = np.broadcast_to(np.asarray(sites["epsilon"], float), (s,))
    dlt = np.broadcast_to(np.asarray(sites["delta"], float), (s,))
    mu = np.asarray(sites.get("weights", np.full(s, 1 / s)), float)
    tau = dpcore.site_noise_std(n, epsilon=eps, delta=dlt, calibration=calibration)
    sens = dpcore.second_moment_sensitivity(n)
    designs = {
        "cape": dpcore.cape_design(tau, weights=mu),
        "cape_joint": dpcore.joint_safe_design(tau, weights=mu),
    }
    sa = trust_secagg_design(
        n, epsilon=eps, delta=dlt, weights=mu, dim=sites.get("dim", 20), calibration="ddg"
    )
    kls = sa.epsilons(s - 1)  # every survivor's certificate with one share missing
    out: dict[str, tuple[int, float, float]] = {}
    for scheme in ("central", "conventional", "cape", "cape_joint", "shuffle", "secagg"):
        cases = []
        for d in range(s):
            rest = np.array([t for t in range(s) if t != d])
            w = mu[rest].sum()
            if w <= 0:
                continue  # nothing of the survivors is released
            need = np.max(mu[rest] * tau[rest]) / w
            if scheme == "central":
                std = need
            elif scheme in ("conventional", "shuffle"):
                std = np.sqrt(np.sum(mu[rest] ** 2 * tau[rest] ** 2)) / w
            elif scheme == "secagg":
                std = sa.noise_std(s - 1) / w
                curator = [
                    dpcore.gaussian_sigma(
                        sa.sensitivity[t], epsilon=eps[t], delta=dlt[t], calibration="analytic"
                    )
                    * mu[t]
                    / w
                    for t in rest
                ]
                need = max(curator)
            else:
                design = designs[scheme]
                m = mu[rest]
                cov = design.e_covariance[np.ix_(rest, rest)]
                std = math.sqrt(m @ cov @ m + np.sum(m**2 * design.var_g[rest])) / w
            worst = None
            for t in rest[mu[rest] > 0]:
                if scheme == "secagg":
                    e = float(kls[t])
                else:
                    e = _balle_wang_epsilon(mu[t] * sens[t] / w, std, dlt[t])
                if worst is None or e / eps[t] > worst[0]:
                    worst = (e / eps[t], e)
            cases.append((worst[0], std / need, d + 1, worst[1]))
        top = max(c[0] for c in cases)
        cases = [c for c in cases if c[0] >= top * (1 - 1e-9)]
        top = max(c[1] for c in cases)
        ratio, site, epsilon = next((c[1], c[2], c[3]) for c in cases if c[1] >= top * (1 - 1e-9))
        out[scheme] = (site, ratio, epsilon)
    return out


DROPOUT_CASES = {
    "different privacy needs": dict(
        n_per_site=[1000] * 4, epsilon=[0.1, 0.5, 1.0, 2.0], delta=[1e-4, 1e-3, 1e-3, 1e-2]
    ),
    "one big site": dict(
        n_per_site=[10000, *[500] * 5], epsilon=0.5, delta=1e-3, weights=[0.8, *[0.04] * 5]
    ),
    "a zero weight": dict(
        n_per_site=[300, 1000, 2000], epsilon=[1.0, 0.3, 2.0], delta=1e-3, weights=[0, 0.5, 0.5]
    ),
    **{f"random {seed}": _random_sites(seed) for seed in range(3)},
}


@pytest.mark.parametrize("calibration", ["classic", "analytic"])
@pytest.mark.parametrize("name", list(DROPOUT_CASES))
@pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")
def test_dropout_column_is_the_worst_dropped_site(name, calibration):
    sites = DROPOUT_CASES[name]
    table = trust_table(**sites, dim=20, calibration=calibration, secagg_calibration="ddg")
    want = _brute_force_dropouts(sites, calibration)
    for scheme, (site, ratio, epsilon) in want.items():
        row = _row(table, scheme)
        assert row.dropout_site == site, scheme
        # both solve the same Gaussian ε by bisection (1e-12) or brentq (1e-13)
        assert row.dropout_epsilon == pytest.approx(epsilon, rel=1e-7, abs=1e-12), scheme
        assert row.dropout_std_ratio == pytest.approx(ratio, rel=1e-9), scheme


def test_dropout_column_on_the_mixed_preset_names_site_2():
    # issue #52: the column dropped site 1 only (ε 0.083, a survivor promised 0.5); if site 2
    # drops, site 1 is at 0.1175 > its 0.1 with the KLS accountant
    table = trust_table(**DROPOUT_CASES["different privacy needs"], calibration="classic",
                        secagg_calibration="ddg")  # fmt: skip
    row = _row(table, "secagg")
    assert row.dropout_site == 2 and row.dropout_promised == 0.1
    assert row.dropout_epsilon == pytest.approx(0.11746, abs=5e-6)


# --- the schemes as records (issue #51) ----------------------------------------------------


def test_schemes_are_the_registry_in_order_and_looked_up_by_name():
    assert SCHEMES == tuple(record.name for record in REGISTRY)
    assert len(set(SCHEMES)) == len(SCHEMES)
    assert dpcore.TRUST_SCHEMES == SCHEMES
    assert dpcore.TRUST_LABELS == {record.name: record.label for record in REGISTRY}
    for record in REGISTRY:
        assert trust_scheme(record.name) is record
    with pytest.raises(ValueError, match=r"scheme must be one of \['central'.*got 'helper'"):
        trust_scheme("helper")
    with pytest.raises(TypeError, match="scheme must be one of"):
        trust_scheme(None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        REGISTRY[0].name = "other"  # type: ignore[misc]


@pytest.mark.parametrize("seed", range(3))
def test_table_rows_are_the_typed_rows_and_the_records_words(seed):
    # the table is TrustRow's fields in order, one row per record in registry order, and each
    # row's remedy and source are its record's (who is trusted too, but for secure
    # aggregation, whose record speaks of t and whose row names it)
    view = trust_overview(**_random_sites(seed), dim=5)
    table = view.table
    assert list(table.columns) == [f.name for f in dataclasses.fields(TrustRow)]
    assert list(table["scheme"]) == list(SCHEMES)
    for record, row in zip(REGISTRY, table.itertuples(index=False), strict=True):
        assert (row.remedy, row.source) == (record.remedy, record.source)
        if record.name == "secagg":
            assert row.trusted == record.trusted.replace(" t ", f" t = {view.secagg.threshold} ")
        else:
            assert row.trusted == record.trusted
