"""Sweep specs: validated once, hashable cache keys; SPEC 7 randomness; metrics by name."""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest

import dpcore
from dpcore.sweeps import OTD_METRICS, PCA_METRICS, SweepGrid, otd_spec
from dpcore.sweeps.otd import otd_sweep

pytestmark = pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")
SMALL = {"dim": 8, "k": 2, "sites": 3, "n_per_site": 40, "runs": 2, "pool_size": 600}
TENSOR = {"dim": 4, "k": 2, "sites": 2, "n_per_site": 300, "runs": 1}


def test_equal_specs_are_equal_and_hash_alike():
    a = otd_spec(epsilon=[0.5, 1.0], sites=3, site_shares=[2, 1, 1])
    b = otd_spec(epsilon=(0.5, 1.0), sites=3, site_shares=np.array([2.0, 1.0, 1.0]))
    assert a == b and hash(a) == hash(b)
    assert a != otd_spec(epsilon=[0.5, 1.0], sites=3)
    assert {a: "cached"}[b] == "cached"  # usable as a cache key


def test_grid_finds_the_swept_axis_and_validates_every_value():
    g = SweepGrid.of(epsilon=0.5, delta=0.01, n_per_site=np.array([10, 20]), sites=3)
    assert (g.axis, g.values, g.largest("n_per_site"), g.resamples) == (
        "n_per_site", (10, 20), 20, True
    )
    with pytest.raises(ValueError, match="at most one"):
        SweepGrid.of(epsilon=[1.0], delta=[0.1], n_per_site=1, sites=2)
    with pytest.raises(ValueError, match="sites must be an integer in"):
        SweepGrid.of(epsilon=1.0, delta=0.1, n_per_site=1, sites=[2, 1])


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"k": 5, "dim": 4}, "k must be an integer in"),
        ({"site_shares": [1, 2]}, "site_shares"),  # shares fix S: S cannot be swept
        ({"budget_split": 1.0}, "budget_split"),
        ({"restarts": 0}, "restarts"),
        ({"metrics": ["captured_energy"]}, "metrics must be one of"),
        ({"algorithms": []}, "at least one"),
        ({"scaling": "nope"}, "scaling"),
    ],
)
def test_bad_specs_fail_before_any_work(params, match):
    base = {**TENSOR, "epsilon": 1.0}
    if "site_shares" in params:
        base["sites"] = [2, 3]
    with pytest.raises(ValueError, match=match):
        otd_spec(**{**base, **params})


def test_sweep_front_and_spec_builder_share_their_defaults():
    front = inspect.signature(inspect.unwrap(otd_sweep)).parameters
    builder = inspect.signature(otd_spec).parameters
    assert {n: p.default for n, p in builder.items()} == {
        n: front[n].default for n in builder
    }


def test_metrics_are_the_columns_named_in_that_order():
    df = dpcore.pca_sweep(**SMALL, epsilon=1.0, metrics=["subspace_distance", "captured_energy"])
    assert list(df.columns[-2:]) == ["subspace_distance", "captured_energy"]
    full = dpcore.pca_sweep(**SMALL, epsilon=1.0)
    assert list(full.columns[6:]) == list(PCA_METRICS)
    np.testing.assert_array_equal(df.captured_energy, full.captured_energy)
    tensor = dpcore.otd_sweep(**TENSOR, epsilon=1.0, metrics=["iterations"])
    assert list(tensor.columns[6:]) == ["iterations", "private_preprocessing"]
    assert set(OTD_METRICS) >= {"component_error", "weight_error"}


@pytest.mark.parametrize(
    "sweep",
    [
        lambda **kw: dpcore.pca_sweep(**SMALL, epsilon=[0.5, 2.0], **kw),
        lambda **kw: dpcore.otd_sweep(**TENSOR, epsilon=[0.5, 2.0], **kw),
        lambda **kw: dpcore.dropout_pca(
            n_per_site=[50, 60],
            epsilon=[1.0, 1.0],
            delta=[0.01, 0.01],
            weights=[0.5, 0.5],
            dropped=[0],
            dim=6,
            k=2,
            runs=2,
            pool_size=400,
            **kw,
        ),
    ],
    ids=["pca_sweep", "otd_sweep", "dropout_pca"],
)
def test_rng_is_a_seed_or_a_generator_and_seed_still_works(sweep):
    by_seed = sweep(seed=7)
    pd.testing.assert_frame_equal(sweep(rng=7), by_seed)
    pd.testing.assert_frame_equal(sweep(rng=np.random.default_rng(7)), by_seed)
    assert not sweep(rng=8).equals(by_seed)
    with pytest.raises(ValueError, match="not both"):
        sweep(rng=3, seed=7)
    with pytest.raises(TypeError, match="rng must be"):
        sweep(rng="7")
