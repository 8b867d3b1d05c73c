"""Distributed private tensor decomposition: models, moments, decomposition, capeAGN."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from dpcore import ClassicGaussianWarning, communication_cost, otd_sweep
from dpcore.cape import cape_design
from dpcore.metrics import component_error, component_error_matched, weight_error
from dpcore.models import make_model, mog_model, sample_mog, sample_stm, stm_model
from dpcore.moments import (
    cube_sum,
    cube_sum_free,
    mog_moments,
    mog_site_moments,
    moment_sensitivities,
    public_bound,
    stm_moments,
    stm_site_moments,
)
from dpcore.noise import n_free_entries
from dpcore.otd import avn_vector, cape_tensor_stage
from dpcore.tensor import (
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


def test_cape_tensor_stage_aggregate_is_projected_sum_and_e_cancel():
    rng = np.random.default_rng(2)
    model = mog_model(8, 3, rng=rng)
    mom = mog_site_moments(model, np.array([500, 700, 900, 1100]), rng=rng)
    weights = mom.sizes / mom.sizes.sum()
    tau3 = np.array([0.05, 0.03, 0.02, 0.04])
    w = whitening(mom.m2.mean(axis=0), 3)[0]
    run = cape_tensor_stage(mom.m3, w, tau_site=tau3, weights=weights, rng=rng)
    assert run.messages.shape == (4, 3, 3, 3)  # sites send K×K×K tensors
    scale = np.max(np.abs(run.e))
    assert np.max(np.abs(np.tensordot(weights, run.e, axes=1))) < 1e-14 * scale
    expected = multilinear(np.tensordot(weights, mom.m3 + run.g, axes=1), w)
    np.testing.assert_allclose(run.t, expected, rtol=0, atol=1e-12 * np.max(np.abs(expected)))
    # G3 is the site's own symmetric noise with the design's std
    np.testing.assert_array_equal(run.g, run.g.transpose(0, 2, 1, 3))
    assert cape_design(tau3, weights=weights).tau_agg > 0


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


def test_avn_radius_has_mean_dsym_over_beta():
    # Radius ~ Gamma(n, 1/β): mean n/β, sd sqrt(n)/β. Over 4,000 draws the sample mean has
    # s.e. sqrt(n)/(β·sqrt(4000)); allow 5 of them.
    n, beta, draws = n_free_entries(10, 3), 3.0, 4000
    rng = np.random.default_rng(5)
    radii = np.array([np.linalg.norm(avn_vector(n, beta, rng=rng)) for _ in range(draws)])
    assert abs(radii.mean() - n / beta) < 5 * math.sqrt(n) / beta / math.sqrt(draws)


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
    # single-tensor decompositions: eigenpairs to rounding, iteration counts exactly. The
    # batch mixes easy (noise-free) and hard (noise-dominated) tensors, so tensors stop at
    # different steps and the shrinking active set is exercised.
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
    for t, seed, dec in zip(tensors, seeds, batch, strict=True):
        alone = tensor_power_method(t, k, rng=np.random.default_rng(seed), restarts=5, max_iter=60)
        np.testing.assert_allclose(dec.eigenvalues, alone.eigenvalues, rtol=1e-12)
        np.testing.assert_allclose(dec.vectors, alone.vectors, atol=1e-12)
        assert dec.iterations == alone.iterations
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
    from dpcore.models import MixtureModel, _random_orthonormal, paper_weights
    from dpcore.otd import random_components

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
