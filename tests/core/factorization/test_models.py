"""dpcore.factorization.models: the planted mixture models and their samplers."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.factorization.models import make_model, mog_model, sample_mog, sample_stm, stm_model

pytestmark = pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")


def test_samplers_draw_from_the_planted_model():
    # 200,000 draws: an empirical proportion p has s.e. sqrt(p(1−p)/n) ≤ 0.0012; a MOG
    # coordinate mean has s.e. sqrt(Var/n) ≤ sqrt((1 + σ²)/n) ≈ 0.0023. Allow 5 s.e.
    n = 200_000
    stm = stm_model(10, 5, rng=np.random.default_rng(13))
    words = sample_stm(stm, n, rng=np.random.default_rng(14))
    for pos in range(3):
        emp = np.bincount(words[:, pos], minlength=10) / n
        np.testing.assert_allclose(emp, stm.components @ stm.weights, atol=5 * 0.0012)
    mog = mog_model(10, 5, rng=np.random.default_rng(15))
    x = sample_mog(mog, n, rng=np.random.default_rng(16))
    np.testing.assert_allclose(x.mean(axis=0), mog.components @ mog.weights, atol=5 * 0.0023)
    np.testing.assert_allclose(x.var(axis=0).min(), 0.05, rtol=0.5)  # σ² is the noise floor


def test_paper_weights_are_the_authors_linspace():
    w = mog_model(6, 4, rng=0).weights
    np.testing.assert_allclose(w, np.linspace(1, 40, 4) / np.linspace(1, 40, 4).sum(), rtol=0)
    assert w.sum() == pytest.approx(1.0, abs=1e-15)


def test_mog_means_are_orthonormal_and_stm_columns_are_distributions():
    mog = mog_model(12, 5, rng=1)
    np.testing.assert_allclose(mog.components.T @ mog.components, np.eye(5), atol=1e-14)
    stm = stm_model(12, 5, rng=1)
    assert np.all(stm.components >= 0)
    np.testing.assert_allclose(stm.components.sum(axis=0), 1.0, rtol=1e-14)
    assert not mog.components.flags.writeable and not stm.weights.flags.writeable


def test_make_model_by_name_and_seed():
    a = make_model("stm", 8, 3, doc_length=5, rng=2)
    b = stm_model(8, 3, doc_length=5, rng=2)
    np.testing.assert_array_equal(a.components, b.components)
    assert (a.kind, a.doc_length, a.dim, a.k) == ("stm", 5, 8, 3)
    assert make_model("mog", 8, 3, sigma2=0.2, rng=2).sigma2 == 0.2


def test_chunked_sampling_gives_the_same_data():
    # one contiguous row of random numbers per sample: two chunks = one draw
    model = mog_model(5, 2, rng=3)
    whole = sample_mog(model, 100, rng=np.random.default_rng(4))
    g = np.random.default_rng(4)
    parts = np.vstack([sample_mog(model, 30, rng=g), sample_mog(model, 70, rng=g)])
    np.testing.assert_array_equal(whole, parts)
    stm = stm_model(7, 3, doc_length=4, rng=5)
    words = sample_stm(stm, 50, rng=np.random.default_rng(6))
    assert words.shape == (50, 4) and words.min() >= 0 and words.max() < 7


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: mog_model(0, 1), r"dim must be an integer in \[1, 2000\]"),
        (lambda: mog_model(5, 6), r"k must be an integer in \[1, 5\]"),
        (lambda: mog_model(5, 2, sigma2=-0.1), "sigma2"),
        (lambda: stm_model(5, 2, doc_length=2), r"doc_length must be an integer in \[3, "),
        (lambda: make_model("gmm", 5, 2), r"kind must be one of \['mog', 'stm'\]"),
    ],
)
def test_bad_inputs_name_the_parameter(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()
