"""Random invalid inputs to the public core raise ValueError or TypeError — never anything else.

Also: random bytes as an uploaded CSV, and the privacy analysis on random valid designs
(zero-sum and anchors hold to rounding). Hypothesis draws the cases; the examples are kept
small so the file runs in seconds.
"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpcore
from dpcore.realdata import load_csv

pytestmark = pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")

BAD_NUMBERS = st.one_of(
    st.just(float("nan")),
    st.just(float("inf")),
    st.just(-float("inf")),
    st.floats(max_value=0.0, allow_nan=False),
    st.just("0.5"),
    st.none(),
    st.just([0.5]),
    st.just(True),
)
ANY_JUNK = st.one_of(
    BAD_NUMBERS,
    st.integers(min_value=-10, max_value=0),
    st.text(max_size=5),
    st.lists(st.floats(allow_nan=True), max_size=3),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)


def _only_value_or_type_errors(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call()
        except (ValueError, TypeError):
            return
    # returning normally is fine only for inputs that happen to be valid


@settings(max_examples=150, deadline=None)
@given(ANY_JUNK, ANY_JUNK, ANY_JUNK)
def test_gaussian_sigma_rejects_junk_cleanly(sensitivity, epsilon, delta):
    _only_value_or_type_errors(
        lambda: dpcore.gaussian_sigma(sensitivity, epsilon=epsilon, delta=delta)
    )
    _only_value_or_type_errors(
        lambda: dpcore.gaussian_sigma(1.0, epsilon=epsilon, delta=0.01, method="analytic")
    )
    _only_value_or_type_errors(
        lambda: dpcore.gaussian_epsilon(sensitivity, sensitivity=1.0, delta=delta)
    )


@settings(max_examples=100, deadline=None)
@given(st.lists(ANY_JUNK, max_size=4), st.one_of(st.none(), st.lists(ANY_JUNK, max_size=4)))
def test_cape_design_rejects_junk_cleanly(tau, weights):
    _only_value_or_type_errors(lambda: dpcore.cape_design(tau, weights=weights))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["epsilon", "delta", "sites", "n_per_site", "runs", "k", "dim", "seed"]),
    ANY_JUNK,
)
def test_sweeps_reject_junk_cleanly(name, value):
    small = {"dim": 6, "k": 2, "sites": 2, "n_per_site": 50, "runs": 1, "epsilon": 1.0}
    _only_value_or_type_errors(lambda: dpcore.pca_sweep(**{**small, "pool_size": 500, name: value}))
    _only_value_or_type_errors(lambda: dpcore.otd_sweep(**{**small, name: value}))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_random_bytes_as_csv_never_crash(raw):
    try:
        ds = load_csv(raw, name="fuzz.csv")
    except ValueError:
        return
    assert np.all(np.isfinite(ds.samples)) and ds.dim >= 2


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(
            st.one_of(
                st.floats(allow_nan=True, allow_infinity=True, width=32),
                st.text(alphabet="abc,;\t |\"'\n", max_size=3),
                st.integers(-5, 5),
            ),
            min_size=1,
            max_size=4,
        ),
        min_size=1,
        max_size=14,
    ),
    st.sampled_from([",", ";", "\t", "|", " "]),
)
def test_random_tables_as_csv_never_crash(rows, sep):
    raw = "\n".join(sep.join(str(v) for v in row) for row in rows).encode()
    try:
        ds = load_csv(raw, name="fuzz.csv")
    except ValueError:
        return
    assert np.all(np.isfinite(ds.samples))


@st.composite
def designs(draw):
    sites = draw(st.integers(2, 12))
    tau = np.array(draw(st.lists(st.floats(1e-4, 1e2), min_size=sites, max_size=sites)))
    raw = np.array(draw(st.lists(st.floats(0.01, 10), min_size=sites, max_size=sites)))
    return dpcore.cape_design(tau, weights=raw / raw.sum())


@settings(max_examples=100, deadline=None)
@given(designs(), st.data())
def test_privacy_analysis_on_random_designs(design, data):
    s = design.n_sites
    view = dpcore.coalition_view(design)
    np.testing.assert_allclose(view.release_std, design.tau_site, rtol=1e-9)
    assert np.all(view.joint_std <= view.release_std * (1 + 1e-9))
    assert np.all(np.isfinite(view.joint_std)) and np.all(view.joint_std > 0)
    colluding = data.draw(st.lists(st.integers(0, s - 1), unique=True, max_size=s - 1))
    partial = dpcore.coalition_view(design, colluding)
    honest = partial.honest
    assert np.all(partial.release_std >= np.sqrt(design.var_g[honest]) * (1 - 1e-9))
    assert np.all(partial.release_std <= design.tau_site[honest] * (1 + 1e-9))
    dropped = data.draw(st.lists(st.integers(0, s - 1), unique=True, min_size=1, max_size=s - 1))
    drop = dpcore.dropout_analysis(design, dropped)
    assert drop.std["cape"] >= drop.required_std * (1 - 1e-9)
    assert all(math.isfinite(v) for v in drop.std.values())


EXTREMES = [
    {"epsilon": [1e-4, 1e4]},
    {"epsilon": 1.0, "n_per_site": 1},
    {"epsilon": 1.0, "k": 6},  # K = D
    {"epsilon": 1.0, "sites": 2},
    {"epsilon": 1.0, "delta": [1e-12, 0.5]},
    {"epsilon": 1.0, "weighting": "equal", "site_shares": [100, 1, 1]},
]


@pytest.mark.parametrize("extra", EXTREMES, ids=lambda e: ",".join(e))
def test_extreme_but_valid_settings_give_finite_results(extra):
    base = {"dim": 6, "k": 2, "sites": 3, "n_per_site": 50, "runs": 2}
    pca = dpcore.pca_sweep(**{**base, "pool_size": 500, **extra})
    assert np.all(np.isfinite(pca.select_dtypes("number").to_numpy()))
    otd = dpcore.otd_sweep(**{**base, **extra, "k": min(extra.get("k", 2), 6)})
    assert np.all(np.isfinite(otd.select_dtypes("number").to_numpy()))


@pytest.mark.parametrize("weights", [[0.0, 0.0, 1.0], [0.5, 0.0, 0.5]])
def test_zero_weights_give_finite_designs_and_analyses(weights):
    design = dpcore.cape_design([1.0, 2.0, 3.0], weights=weights)
    assert design.feasible and np.isfinite(design.tau_agg)
    view = dpcore.coalition_view(design)
    assert np.all(np.isfinite(view.joint_std)) and np.all(view.joint_std > 0)
    drop = dpcore.dropout_analysis(design, [0])
    assert all(np.isfinite(v) for v in drop.std.values())


JUNK = [None, "x", -1, 0, float("nan"), float("inf"), [1.0, "a"], {}, True, np.zeros((2, 3)), []]


@pytest.mark.parametrize("name", [n for n in dpcore.__all__ if callable(getattr(dpcore, n))])
def test_every_public_function_rejects_junk_with_value_or_type_errors(name):
    # 1–3 positional junk arguments, a fixed sample of the combinations: the public API
    # answers with ValueError/TypeError (or a result), never AttributeError, IndexError, …
    import itertools

    fn = getattr(dpcore, name)
    if isinstance(fn, type) and issubclass(fn, Warning):
        return
    for n in (1, 2, 3):
        for args in itertools.islice(itertools.product(JUNK, repeat=n), 0, 300, 7):
            _only_value_or_type_errors(lambda a=args: fn(*a))


def test_otd_sweep_validates_k_before_estimating_work():
    # Found by hypothesis in CI: the work estimate ran before k was validated and raised
    # OverflowError for k = -5.6e102.
    for k in (-5.6e102, -3, 10**30):
        with pytest.raises((ValueError, TypeError), match="k must"):
            dpcore.otd_sweep(dim=6, k=k, sites=2, n_per_site=50, runs=1, epsilon=1.0)
