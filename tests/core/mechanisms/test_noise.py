"""Symmetric noise (dpcore.mechanisms.noise): the closed-form index map and the sampler's shape."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dpcore.mechanisms.noise import (
    CACHED_MAP_ENTRIES,
    _index_map,
    expand_symmetric,
    n_free_entries,
    symmetric_index_map,
    symmetric_noise,
)


def _unique_map(dim: int, order: int) -> np.ndarray:
    """The former map: np.unique's inverse over the sorted index tuples (lexicographic)."""
    grids = np.indices((dim,) * order).reshape(order, -1)
    _, inverse = np.unique(np.sort(grids, axis=0).T, axis=0, return_inverse=True)
    return inverse.reshape((dim,) * order)


@pytest.mark.parametrize("order", [1, 2, 3])
@pytest.mark.parametrize("dim", [1, 2, 3, 5, 8, 17, 40])
def test_the_closed_form_map_is_the_former_one(dim, order):
    np.testing.assert_array_equal(_index_map(dim, order), _unique_map(dim, order))


@pytest.mark.parametrize("order", [2, 3])
def test_the_map_ranks_sorted_tuples_in_lexicographic_order(order):
    # the enumeration the docstring promises: itertools.combinations_with_replacement
    dim = 6
    m = symmetric_index_map(dim, order)
    tuples = list(itertools.combinations_with_replacement(range(dim), order))
    assert [int(m[t]) for t in tuples] == list(range(n_free_entries(dim, order)))


def test_a_large_map_is_computed_not_cached_and_is_read_only():
    dim = 1500  # D² > CACHED_MAP_ENTRIES: the former np.unique path took seconds here
    assert dim**2 > CACHED_MAP_ENTRIES
    m = symmetric_index_map(dim, 2)
    assert not m.flags.writeable
    i = np.array([0, 7, 1499, 1499])
    j = np.array([1499, 3, 0, 1499])
    # rank of (min, max) = i·D − i(i−1)/2 + (j − i)
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    np.testing.assert_array_equal(m[i, j], lo * dim - lo * (lo - 1) // 2 + (hi - lo))
    assert m[1499, 1499] == n_free_entries(dim, 2) - 1


def test_order_and_scale_are_keyword_only():
    with pytest.raises(TypeError):
        symmetric_noise(3, 2, 1.0, rng=0)  # type: ignore[misc]
    g = symmetric_noise(4, order=3, scale=2.0, size=(2,), rng=0)
    assert g.shape == (2, 4, 4, 4)
    np.testing.assert_array_equal(g, np.swapaxes(g, 1, 3))
    free = np.arange(n_free_entries(4, 2), dtype=float)
    np.testing.assert_array_equal(expand_symmetric(free, 4, 2), expand_symmetric(free, 4, 2).T)
