"""dpcore.factorization.moments: the second and third moments of each site, their sensitivities
(checked against brute-force neighbours) and the streamed computation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.factorization.models import mog_model, sample_mog, sample_stm, stm_model
from dpcore.factorization.moments import (
    cube_sum,
    cube_sum_free,
    mog_moments,
    mog_site_moments,
    moment_sensitivities,
    public_bound,
    stm_moments,
    stm_site_moments,
)
from dpcore.mechanisms.noise import n_free_entries

pytestmark = pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")


def _max_moment_change(moments_of, data, neighbour_of, trials, rng):
    worst2 = worst3 = 0.0
    for _ in range(trials):
        m2, m3 = moments_of(data)
        n2, n3 = moments_of(neighbour_of(data, rng))
        worst2 = max(worst2, float(np.linalg.norm(m2 - n2)))
        worst3 = max(worst3, float(np.linalg.norm(m3 - n3)))
        data = neighbour_of(data, rng)
    return worst2, worst3


def _unit_ball(x):
    return x / np.maximum(1.0, np.linalg.norm(x, axis=-1, keepdims=True))


def test_empirical_mog_sensitivity_never_exceeds_stated_delta():
    # Add/remove with N public = a sample replaced by the zero vector; replace = by another
    # sample in the unit ball, including the worst case t' = −t.
    rng = np.random.default_rng(3)
    n, d, sigma2 = 40, 6, 0.05

    def remove(x, r):
        y = x.copy()
        y[r.integers(n)] = 0.0
        return y

    def replace(x, r):
        y = x.copy()
        i = r.integers(n)
        y[i] = -x[i] if r.uniform() < 0.5 else _unit_ball(r.standard_normal(d))
        return y

    x = _unit_ball(rng.standard_normal((n, d)) * 0.6)
    x[0] /= np.linalg.norm(x[0])  # include unit-norm samples
    moments = lambda data: mog_moments(data, sigma2)  # noqa: E731
    for relation, neighbour in [("paper", remove), ("add-remove", remove), ("replace", replace)]:
        d2, d3 = moment_sensitivities("mog", n, dim=d, sigma2=sigma2, relation=relation)
        w2, w3 = _max_moment_change(moments, x, neighbour, 300, rng)
        assert w2 <= d2 * (1 + 1e-12) and w3 <= d3 * (1 + 1e-12), relation


def test_mog_third_moment_sensitivity_is_exact():
    # issue #14: the docs called (1 + 3√D σ²)/N "tight"; at D = 10 with the public scaling
    # (σ² = 0.05/B²) it is 1.097/N while the exact sup is 0.971/N — now the value used.
    # Exactness: removing a unit-norm sample attains it, for any direction.
    n, d = 25, 10
    sigma2 = 0.05 / public_bound(d, 0.05) ** 2
    _, d3 = moment_sensitivities("mog", n, dim=d, sigma2=sigma2, relation="add-remove")
    assert d3 * n == pytest.approx(0.9709, abs=1e-4)
    assert 1 + 3 * math.sqrt(d) * sigma2 == pytest.approx(1.0966, abs=1e-4)
    rng = np.random.default_rng(8)
    x = _unit_ball(rng.standard_normal((n, d)) * 0.5)
    for _ in range(3):
        x[0] = rng.standard_normal(d)
        x[0] /= np.linalg.norm(x[0])
        full, less = mog_moments(x, sigma2)[1], mog_moments(x[1:], sigma2)[1]
        assert np.linalg.norm(full - less * (n - 1) / n) == pytest.approx(d3, rel=1e-9)
    _, r3 = moment_sensitivities("mog", n, dim=d, sigma2=sigma2, relation="replace")
    assert r3 == pytest.approx(2 * d3, rel=1e-12)


def test_empirical_stm_sensitivity_never_exceeds_stated_delta():
    rng = np.random.default_rng(4)
    n, d = 30, 5

    def replace(words, r):
        y = words.copy()
        y[r.integers(n)] = r.integers(d, size=3)
        return y

    words = rng.integers(d, size=(n, 3))
    for relation in ("paper", "replace"):
        d2, d3 = moment_sensitivities("stm", n, dim=d, relation=relation)
        w2, w3 = _max_moment_change(lambda w: stm_moments(w, d), words, replace, 300, rng)
        assert w2 <= d2 * (1 + 1e-12) and w3 <= d3 * (1 + 1e-12)
    # add/remove (N public): dropping a document's counts changes each moment by ≤ 1/N
    d2, d3 = moment_sensitivities("stm", n, dim=d, relation="add-remove")
    full2, full3 = stm_moments(words, d)
    less2, less3 = stm_moments(words[1:], d)
    assert np.linalg.norm(full2 - less2 * (n - 1) / n) <= d2 * (1 + 1e-12)
    assert np.linalg.norm(full3 - less3 * (n - 1) / n) <= d3 * (1 + 1e-12)


def test_sites_hold_disjoint_samples_and_streaming_is_exact():
    model = mog_model(5, 2, rng=np.random.default_rng(6))
    sizes = np.array([300, 300])
    a = mog_site_moments(model, sizes, rng=np.random.default_rng(7), chunk=7)
    b = mog_site_moments(model, sizes, rng=np.random.default_rng(7), chunk=10_000)
    assert not np.allclose(a.m2[0], a.m2[1])  # the authors' bug gave every site the same data
    np.testing.assert_allclose(a.m3, b.m3, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(a.m2, b.m2, rtol=1e-12, atol=1e-15)


def test_cube_sum_is_the_exactly_symmetric_third_moment():
    x = np.random.default_rng(12).normal(size=(257, 9))
    cube = cube_sum(x)
    # each entry one sum of n products of magnitude ≲ 30: agreement to ~1e-12 relative
    np.testing.assert_allclose(cube, np.einsum("ni,nj,nk->ijk", x, x, x), rtol=1e-12, atol=1e-11)
    for axes in [(0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]:
        np.testing.assert_array_equal(cube.transpose(axes), cube)  # bit for bit
    assert cube_sum_free(x).shape == (n_free_entries(9, 3),)


def test_streamed_moments_match_direct_computation():
    model = mog_model(5, 2, rng=np.random.default_rng(8))
    mom = mog_site_moments(model, np.array([400]), rng=np.random.default_rng(9), chunk=64)
    x = sample_mog(model, 400, rng=np.random.default_rng(9).spawn(1)[0])
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    x = np.where(norms > mom.scale, x * mom.scale / norms, x) / mom.scale
    m2, m3 = mog_moments(x, mom.sigma2)
    np.testing.assert_allclose(mom.m2[0], m2, atol=1e-14)
    np.testing.assert_allclose(mom.m3[0], m3, atol=1e-14)
    stm = stm_model(6, 3, rng=np.random.default_rng(10))
    smom = stm_site_moments(stm, np.array([500]), rng=np.random.default_rng(11), chunk=64)
    words = sample_stm(stm, 500, rng=np.random.default_rng(11).spawn(1)[0])
    np.testing.assert_allclose(smom.m3[0], stm_moments(words, 6)[1], atol=1e-15)


def test_preprocessing_is_labelled():
    model = mog_model(10, 5, rng=np.random.default_rng(12))
    sizes = np.array([2000, 2000])
    public = mog_site_moments(model, sizes, rng=np.random.default_rng(0))
    paper = mog_site_moments(
        model, sizes, scaling="max-norm", sigma2_source="data", rng=np.random.default_rng(0)
    )
    assert public.private_preprocessing and not paper.private_preprocessing
    assert public.clipped < 0.01  # the public bound clips ≤ 0.1% in expectation
    assert paper.clipped == 0.0
    # the data σ² estimate is close to the model's 0.05
    assert paper.sigma2 * paper.scale**2 == pytest.approx(0.05, rel=0.15)
