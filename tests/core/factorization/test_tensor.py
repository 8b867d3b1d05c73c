"""Distributed private tensor decomposition: models, moments, decomposition, capeAGN."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from dpcore import ClassicGaussianWarning, communication_cost, otd_sweep
from dpcore.factorization.metrics import component_error, component_error_matched, weight_error
from dpcore.factorization.models import make_model, mog_model, stm_model
from dpcore.factorization.tensor import (
    multilinear,
    normalise_components,
    recover,
    tensor_power_method,
    tensor_power_method_batch,
    whitening,
)

pytestmark = pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")


def population_moments(model):
    a, w = model.components, model.weights
    return (a * w) @ a.T, np.einsum("k,ik,jk,lk->ijl", w, a, a, a)


@pytest.mark.parametrize("kind", ["mog", "stm"])
@pytest.mark.parametrize(("dim", "k"), [(10, 5), (50, 10), (6, 6)])
@pytest.mark.parametrize("variant", ["robust", "authors"])
def test_exact_moments_recover_planted_components(kind, dim, k, variant):
    model = make_model(kind, dim, k, rng=np.random.default_rng(dim + k))
    m2, m3 = population_moments(model)
    w, u, d = whitening(m2, k)
    opts = {"restarts": 10, "max_iter": 100, "tol": 1e-8}
    if variant == "authors":
        opts = {"restarts": 1, "max_iter": 1000, "tol": 1e-6}
    dec = tensor_power_method(multilinear(m3, w), k, rng=np.random.default_rng(1), **opts)
    rec = recover(dec, u, d, kind=kind)
    assert component_error_matched(rec.components, model.components) <= 1e-6
    assert weight_error(rec.weights, model.weights, rec.components, model.components) <= 1e-6
    assert dec.iterations >= k


def test_multilinear_matches_brute_force_on_a_general_tensor():
    rng = np.random.default_rng(0)
    t = rng.standard_normal((2, 5, 5, 5))  # batched and not symmetric: checks axis order
    w = rng.standard_normal((5, 3))
    brute = np.einsum("sijk,ia,jb,kc->sabc", t, w, w, w)
    np.testing.assert_allclose(multilinear(t, w), brute, rtol=1e-12, atol=1e-12)
    # and the axis order really matters for a non-symmetric tensor
    assert not np.allclose(brute, brute.transpose(0, 3, 2, 1))


def test_stm_post_processing_flags_invalid_columns():
    raw = np.array([[0.5, -1.0], [0.5, -2.0], [-0.1, 0.0]])
    comps, invalid = normalise_components(raw, kind="stm")
    np.testing.assert_array_equal(invalid, [False, True])
    np.testing.assert_allclose(comps[:, 0], [0.5, 0.5, 0.0])
    np.testing.assert_allclose(comps[:, 1], 1 / 3)
    assert np.all(np.isfinite(comps))


def test_component_error_definitions():
    truth = np.eye(3)[:, :2]
    est = np.column_stack([truth[:, 0], truth[:, 0]])  # both match truth 0
    assert component_error(est, truth) == 0.0  # the paper's q_comp forgives the duplicate
    assert component_error_matched(est, truth) == pytest.approx(math.sqrt(2) / 2)


def test_communication_costs_match_the_paper():
    d, k, s = 50, 10, 5
    assert communication_cost("cape", problem="pca", dim=d, k=k, sites=s)["total"] == 3 * s * d**2
    cape = communication_cost("cape", problem="otd", dim=d, k=k, sites=s)
    assert cape["total"] == 3 * s * d**2 + 2 * s * d**3 + s * d * k + s * k**3
    assert communication_cost("dpdis", problem="pca", dim=d, k=k, sites=s)["total"] == s * d * 2 * k
    assert communication_cost("local_agn", problem="otd", dim=d, k=k, sites=s)["total"] == 0


@pytest.fixture(scope="module", params=["mog", "stm"])
def paper_otd(request):
    """The paper's setup (K=5, D=10, S=5, N_s=20k, δ=0.01), 10 runs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClassicGaussianWarning)
        df = otd_sweep(model=request.param, epsilon=[0.1, 0.5, 1.0, 10.0], runs=10, seed=3)
    return request.param, df.groupby(["epsilon", "algorithm"]).component_error.mean().unstack()


def test_error_decreases_with_epsilon(paper_otd):
    _, q = paper_otd
    for alg in ("cape", "conv", "local_agn"):
        assert q.loc[0.1, alg] > q.loc[1.0, alg] > q.loc[10.0, alg]


def test_cape_beats_conv_beats_local(paper_otd):
    model, q = paper_otd
    for eps in (0.5, 1.0) if model == "mog" else (1.0,):
        assert q.loc[eps, "cape"] < q.loc[eps, "conv"] < q.loc[eps, "local_agn"]


def test_cape_within_twice_nonprivate_at_eps_10(paper_otd):
    _, q = paper_otd
    assert q.loc[10.0, "cape"] <= 2 * q.loc[10.0, "nonprivate"]
    assert q.loc[10.0, "random"] > 5 * q.loc[10.0, "cape"]


SMALL = {"dim": 6, "k": 3, "sites": 3, "n_per_site": 500, "runs": 2}


def test_otd_same_seed_same_frame():
    a = otd_sweep(epsilon=[0.5, 2.0], seed=4, **SMALL)
    b = otd_sweep(epsilon=[0.5, 2.0], seed=4, **SMALL)
    pd.testing.assert_frame_equal(a, b)
    assert a.isna().sum().sum() == 0


@pytest.mark.parametrize("model", ["mog", "stm"])
@pytest.mark.parametrize("axis", ["epsilon", "n_per_site"])
def test_otd_number_of_threads_does_not_change_numbers(model, axis):
    grid = {"epsilon": [0.5, 2.0], "n_per_site": [300, 500]}[axis]
    kwargs = {**SMALL, "model": model, "epsilon": 1.0, axis: grid, "seed": 6}
    pd.testing.assert_frame_equal(otd_sweep(**kwargs, workers=1), otd_sweep(**kwargs, workers=3))


def test_batched_power_method_equals_one_tensor_at_a_time():
    # Each tensor keeps its own stream and stopping rule, so a batch must reproduce the
    # single-tensor decompositions, to the bit: numpy's stacked matmul calls BLAS once per
    # tensor, and every other step is element-wise or reduces along one tensor's axes, so
    # nothing a tensor gets depends on the others in its batch. The tensor sweep relies on
    # it (issue #51): it batches a block of tasks at a time, and a resumed run's blocks are
    # not an uninterrupted run's. The batch mixes easy (noise-free) and hard
    # (noise-dominated) tensors, so tensors stop at different steps and the shrinking
    # active set is exercised.
    rng = np.random.default_rng(8)
    k = 4
    model = mog_model(k, k, rng=rng)
    _, m3 = population_moments(model)
    m2 = population_moments(model)[0]
    t0 = multilinear(m3, whitening(m2, k)[0])
    tensors = np.stack([t0 + scale * rng.standard_normal((k, k, k)) for scale in (0, 0.3, 3.0)])
    seeds = [11, 12, 13]
    batch = tensor_power_method_batch(
        tensors, k, rngs=[np.random.default_rng(s) for s in seeds], restarts=5, max_iter=60
    )
    pair = tensor_power_method_batch(  # the last two in a batch of their own
        tensors[1:], k, rngs=[np.random.default_rng(s) for s in seeds[1:]], restarts=5, max_iter=60
    )
    for t, seed, dec in zip(tensors, seeds, batch, strict=True):
        alone = tensor_power_method(t, k, rng=np.random.default_rng(seed), restarts=5, max_iter=60)
        np.testing.assert_array_equal(dec.eigenvalues, alone.eigenvalues)
        np.testing.assert_array_equal(dec.vectors, alone.vectors)
        assert dec.iterations == alone.iterations
    for dec, other in zip(batch[1:], pair, strict=True):
        np.testing.assert_array_equal(dec.vectors, other.vectors)
        np.testing.assert_array_equal(dec.eigenvalues, other.eigenvalues)
    assert len({dec.iterations for dec in batch}) == 3


@pytest.mark.parametrize("axis", ["n_per_site", "sites", "delta"])
def test_otd_sweeps_each_axis_and_the_faithful_path(axis):
    grid = {"n_per_site": [300, 600], "sites": [2, 4], "delta": [1e-3, 0.1]}[axis]
    df = otd_sweep(model="stm", epsilon=1.0, faithful=True, **{**SMALL, axis: grid})
    assert sorted(df[axis].unique()) == grid


def test_infinite_epsilon_matches_nonprivate():
    df = otd_sweep(epsilon=math.inf, algorithms=["nonprivate", "cape", "conv"], **SMALL)
    q = df.groupby("algorithm").component_error.mean()
    assert q["cape"] == pytest.approx(q["nonprivate"], abs=1e-9)
    assert q["conv"] == pytest.approx(q["nonprivate"], abs=1e-9)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: mog_model(3, 5, rng=np.random.default_rng()), "k must be"),
        (lambda: stm_model(5, 2, doc_length=2, rng=np.random.default_rng()), "doc_length"),
        (lambda: otd_sweep(epsilon=0.0, **SMALL), "epsilon"),
        (lambda: otd_sweep(epsilon=1.0, budget_split=1.0, **SMALL), "budget_split"),
        (lambda: otd_sweep(model="lda", epsilon=1.0, **SMALL), "model"),
        (lambda: otd_sweep(epsilon=1.0, restarts=0, **SMALL), "restarts"),
        (lambda: otd_sweep(epsilon=1.0, scaling="none", **SMALL), "scaling"),
        (lambda: communication_cost("cape", problem="svd", dim=3, k=2, sites=2), "problem"),
    ],
)
def test_bad_input_raises_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_otd_example_reports_matched_weights():
    from dpcore import otd_example

    table = otd_example(
        epsilon=math.inf, dim=6, k=3, sites=3, n_per_site=20_000, algorithms=["nonprivate", "cape"]
    )
    assert list(table.columns) == ["component", "true_weight", "nonprivate", "cape"]
    np.testing.assert_allclose(table["true_weight"].sum(), 1.0)
    # ε = ∞: CAPE is the pooled estimate; both recover the weights from 60k samples
    np.testing.assert_allclose(table["cape"], table["nonprivate"], rtol=1e-9)
    np.testing.assert_allclose(table["cape"], table["true_weight"], atol=0.05)


def test_stm_sign_flip_changes_topics_and_the_random_baseline():
    # issue #14 / docs/deviations.md: stm_model flips each orthogonal column so it sums
    # positive before clipping; the authors clip without flipping. Over 400 model draws at
    # D = 10, K = 5 the random baseline's q_comp averages 0.442 (ours) vs 0.468 (authors');
    # its spread over draws is ≈ 0.056, so the mean's s.e. is ≈ 0.003: 5 s.e. = 0.014 each.
    from dpcore.factorization.models import MixtureModel, _random_orthonormal, paper_weights
    from dpcore.factorization.otd import random_components

    ours, authors, flipped = [], [], 0
    for i in range(400):
        model = stm_model(10, 5, rng=np.random.default_rng(i))
        q = _random_orthonormal(10, 5, np.random.default_rng(i))  # the same draw, unflipped
        flipped += int((q.sum(axis=0) < 0).any())
        clipped = np.clip(q, 0.0, None)
        if (clipped.sum(axis=0) == 0).any():  # all-negative column: no authors' topic
            continue
        plain = MixtureModel("stm", paper_weights(5), clipped / clipped.sum(axis=0), 0.0, 3)
        for m, out in ((model, ours), (plain, authors)):
            guess = random_components(m, rng=np.random.default_rng(10_000 + i))
            out.append(component_error(guess.components, m.components))
    assert flipped > 300 and len(ours) > 390  # the flip changes a column in most draws
    assert np.mean(ours) == pytest.approx(0.442, abs=0.014)
    assert np.mean(authors) == pytest.approx(0.468, abs=0.014)
