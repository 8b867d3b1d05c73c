"""dpcore.experiments.sweeps.dropout: capePCA when sites drop out, with and without a remedy."""

from __future__ import annotations

import warnings

import pytest

from dpcore import dropout_pca

SMALL = {
    "n_per_site": [200, 300, 400],
    "epsilon": [1.0] * 3,
    "delta": [1e-3] * 3,
    "weights": [1 / 3] * 3,
    "dropped": [1],
    "dim": 6,
    "k": 2,
    "runs": 3,
    "pool_size": 2000,
}


def test_dropout_pca_remedy_beats_no_remedy_and_stays_below_full_run():
    # 20 runs each; the three means differ by ≥ 0.02 where their standard errors are
    # ≈ 0.02/√20 ≈ 0.005, so the ordering is decided by ≥ 4 standard errors.
    df = dropout_pca(
        n_per_site=[1000] * 5,
        epsilon=[0.5] * 5,
        delta=[1e-3] * 5,
        weights=[0.2] * 5,
        dropped=[0],
        runs=20,
        rng=1,
    )
    means = df.groupby("case").captured_energy_ratio.mean()
    assert means["none"] + 0.02 < means["cape"] < means["no dropout"] - 0.02
    assert set(df.case) == {"no dropout", "none", "naive", "cape"}


def test_same_rng_same_frame_on_any_number_of_workers():
    a = dropout_pca(**SMALL, rng=5, workers=1)
    b = dropout_pca(**SMALL, rng=5, workers=2)
    assert a.equals(b)
    assert not a.equals(dropout_pca(**SMALL, rng=6, workers=1))
    assert list(a.columns) == ["case", "run", "captured_energy_ratio"]
    assert len(a) == 4 * SMALL["runs"]
    assert a.captured_energy_ratio.between(0, 1 + 1e-12).all()


def test_seed_is_the_older_name_of_rng():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = dropout_pca(**SMALL, seed=5)
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
    assert old.equals(dropout_pca(**SMALL, rng=5))


def test_infinite_epsilon_loses_nothing_without_dropout():
    # ε = 10⁵, near the sites' ceiling (dpcore.Sites): τ_s ≈ 10⁻⁴/N_s, no noise to speak of, so
    # the run without dropout captures the top-k subspace of the pooled sample second
    # moment, within sampling error of the optimum of the reference
    df = dropout_pca(**(SMALL | {"epsilon": [1e5] * 3}), rng=0)
    full = df[df.case == "no dropout"].captured_energy_ratio
    assert (full > 0.95).all()


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"n_per_site": "100"}, "n_per_site must be a sequence"),
        ({"n_per_site": [100]}, r"n_per_site must be S >= 2 integers"),
        ({"calibration": "exact"}, "calibration must be one of"),
        ({"dropped": [7]}, "dropped"),
        ({"k": 7}, r"k must be an integer in \[1, 6\]"),
        ({"pool_size": 100}, r"pool_size must be an integer in \[900, "),
        ({"weights": [0.5, 0.5]}, "weights must be one number per site"),
    ],
)
def test_bad_inputs_name_the_parameter(change, match):
    with pytest.raises((ValueError, TypeError), match=match):
        dropout_pca(**(SMALL | change), rng=0)
