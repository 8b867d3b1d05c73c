"""The block-size table (dpcore.experiments.block_size): p = K against p = 2K."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.experiments.block_size import METHODS, block_table

SMALL = dict(dim=8, k=2, sites=3, n_per_site=200, rounds=(4,), draws=2, runs=2)


def test_one_row_per_method_and_rounds_with_the_gain_paired_by_draw():
    table = block_table(**SMALL, epsilon=0.5, delta=0.01, seed=1)
    assert list(table["algorithm"]) == list(METHODS)
    assert (table["rounds"] == 4).all()
    # captured energy over the optimum lies in [0, 1] (up to rounding of the ratio)
    assert table[["p=K", "p=2K"]].to_numpy().min() >= 0.0
    assert table[["p=K", "p=2K"]].to_numpy().max() <= 1.0 + 1e-9
    # the gain's range holds its median, and with 2 draws the median is their mean
    assert (table["gain min"] <= table["gain"]).all() and (table["gain"] <= table["gain max"]).all()
    assert np.allclose(table["gain"], (table["gain min"] + table["gain max"]) / 2)


def test_at_a_vast_epsilon_both_blocks_recover_the_subspace():
    # ε = 10⁶: the noise is negligible, so what is left is the power method's own error,
    # shrinking as (σ_{p+1}/σ_K)^T: after T = 16 rounds on the synthetic spectrum it is far
    # below 1 % at either block size (at T = 4 it is not yet: p = K then reaches ~0.987)
    table = block_table(**{**SMALL, "rounds": (16,)}, epsilon=1e6, delta=0.01, seed=2)
    assert table[["p=K", "p=2K"]].to_numpy().min() > 0.99


def test_same_seed_same_table_and_bad_draws_refused_by_name():
    a = block_table(**SMALL, epsilon=0.5, delta=0.01, seed=3)
    b = block_table(**SMALL, epsilon=0.5, delta=0.01, seed=3)
    assert a.equals(b)
    with pytest.raises(ValueError, match="draws"):
        block_table(**{**SMALL, "draws": 0}, epsilon=0.5, delta=0.01)
