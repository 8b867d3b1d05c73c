"""dpcore.factorization.datasets: the paper's synthetic pool, site sizes and the per-site draw."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.factorization.datasets import (
    Dataset,
    draw_sites,
    normalise_to_unit_ball,
    second_moments,
    split_sizes,
    synthetic_covariance,
    synthetic_dataset,
)


def test_synthetic_covariance_is_the_papers_spectrum():
    cov = synthetic_covariance(20, 5, rng=np.random.default_rng(0))
    diag = np.diag(cov)
    np.testing.assert_array_equal(cov, np.diag(diag))  # diagonal
    np.testing.assert_allclose(diag[:5], np.linspace(10.0, 1.0, 5), rtol=0)
    assert np.all((diag[5:] >= 0) & (diag[5:] <= 0.5))  # 0.5·U(0, 1)


def test_synthetic_pool_is_in_the_unit_ball_and_seeded():
    a = synthetic_dataset(dim=8, k=3, n_samples=500, rng=1)
    b = synthetic_dataset(dim=8, k=3, n_samples=500, rng=1)
    np.testing.assert_array_equal(a.samples, b.samples)  # same seed, same pool
    norms = np.linalg.norm(a.samples, axis=1)
    assert norms.max() == pytest.approx(1.0, rel=1e-12)  # divided by the largest norm
    assert (a.n_samples, a.dim) == (500, 8)
    assert not a.samples.flags.writeable  # frozen: a cached pool cannot be changed


def test_sample_covariance_follows_the_reference_up_to_the_scaling():
    # Var of sample column j is cov_jj / c² (c = the largest norm); with n = 20 000 each
    # column's variance estimate has relative sd sqrt(2/n) ≈ 0.01: 5 sd is 5 %.
    d = synthetic_dataset(dim=5, k=2, n_samples=20_000, rng=2)
    scale = np.var(d.samples[:, 0]) / d.reference[0, 0]
    np.testing.assert_allclose(np.var(d.samples, axis=0), scale * np.diag(d.reference), rtol=0.05)


@pytest.mark.parametrize(
    ("shares", "expected"),
    [
        (None, [10, 10, 10]),
        ([1, 1, 2], [8, 7, 15]),  # ideal 7.5, 7.5, 15: largest remainder, stable order
        ([1e-9, 1, 1], [1, 14, 15]),  # every site keeps one sample, taken from the largest
    ],
)
def test_split_sizes_sum_to_the_total_and_follow_the_shares(shares, expected):
    sizes = split_sizes(10, 3, shares)
    assert sizes.sum() == 30
    np.testing.assert_array_equal(sizes, expected)


def test_split_sizes_survive_huge_shares():
    sizes = split_sizes(100, 2, [1e308, 1e308])
    np.testing.assert_array_equal(sizes, [100, 100])


def test_draw_sites_centres_splits_and_keeps_the_unit_ball():
    pool = synthetic_dataset(dim=4, k=2, n_samples=1000, rng=3)
    blocks = draw_sites(pool, np.array([100, 200, 50]), rng=np.random.default_rng(4))
    assert [b.shape for b in blocks] == [(100, 4), (200, 4), (50, 4)]
    x = np.vstack(blocks)
    np.testing.assert_allclose(x.mean(axis=0), 0.0, atol=1e-15)
    assert np.linalg.norm(x, axis=1).max() <= 1.0 + 1e-15
    assert len({tuple(r) for r in x}) == 350  # without replacement


def test_second_moments_per_site():
    blocks = [np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[1.0, 1.0]])]
    np.testing.assert_allclose(second_moments(blocks), [np.eye(2) / 2, np.ones((2, 2))])


def test_normalise_leaves_an_all_zero_pool_alone():
    zero = np.zeros((3, 2))
    out = normalise_to_unit_ball(zero)
    np.testing.assert_array_equal(out, zero)
    assert out is not zero


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: split_sizes(0, 3), r"n_per_site must be an integer in \[1, "),
        (lambda: split_sizes(10, 3, [1, 2]), "shares .* must be 3 positive finite numbers"),
        (lambda: split_sizes(10, 2, [1, -1]), "shares"),
        (lambda: synthetic_dataset(dim=5, k=6), r"k must be an integer in \[1, 5\]"),
        (lambda: synthetic_dataset(n_samples=1), r"n_samples must be an integer in \[2, "),
        (lambda: synthetic_dataset(dim=1000, n_samples=10**9), "needs .* GiB"),
        (lambda: Dataset("x", np.ones((1, 2)), np.eye(2)), r"samples must have shape \(n >= 2"),
        (lambda: Dataset("x", np.ones((3, 2)), np.eye(3)), r"reference must have shape \(D, D\)"),
        (lambda: Dataset(1, np.ones((3, 2)), np.eye(2)), "name must be a str"),
        (
            lambda: draw_sites(
                synthetic_dataset(dim=2, k=1, n_samples=10, rng=0),
                np.array([6, 6]),
                rng=np.random.default_rng(0),
            ),
            "at most the pool size 10; got 12",
        ),
    ],
)
def test_bad_inputs_name_the_parameter(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()
