"""Conventions of the public API: keyword-only privacy parameters and SPEC 7 randomness."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import dpcore

pytestmark = pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")

PUBLIC = {
    name: getattr(dpcore, name)
    for name in dpcore.__all__
    if inspect.isfunction(inspect.unwrap(getattr(dpcore, name)))
}


def _params(fn):
    return inspect.signature(fn).parameters


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_privacy_parameters_are_keyword_only(name):
    # diffprivlib's convention: nobody swaps ε and δ by position.
    for param in ("epsilon", "delta"):
        p = _params(PUBLIC[name]).get(param)
        if p is not None:
            assert p.kind is inspect.Parameter.KEYWORD_ONLY, f"{name}({param}) is positional"


def test_a_positional_epsilon_is_a_type_error():
    with pytest.raises(TypeError):
        dpcore.gaussian_sigma(1.0, 0.5, 0.01)  # type: ignore[misc]
    assert dpcore.gaussian_sigma(1.0, epsilon=0.5, delta=0.01) > 0


_DESIGN = dpcore.cape_design([1.0, 2.0, 3.0])
_SECAGG = dpcore.secagg_design([0.01] * 3, epsilon=0.5, delta=0.01, coordinates=4)
# One small call per public function that draws random numbers: f(rng) -> a result.
RANDOM_CALLS = {
    "cancellation_table": lambda rng: dpcore.cancellation_table(
        sites=(2,), tau=(1.0,), coordinates=20, rng=rng
    ).estimate_error.to_numpy(),
    "sample_discrete_gaussian": lambda rng: dpcore.sample_discrete_gaussian(3.0, 10, rng=rng),
    "secagg_sum": lambda rng: dpcore.secagg_sum(np.zeros((3, 4)), _SECAGG, rng=rng).decoded,
    "cape_average": lambda rng: dpcore.cape_average(np.zeros((3, 2)), [1, 2, 3], rng=rng).e,
    "conventional_average": lambda rng: dpcore.conventional_average(
        np.zeros((3, 2)), [1, 2, 3], rng=rng
    ).estimate,
    "symmetric_noise": lambda rng: dpcore.symmetric_noise(3, order=2, scale=1.0, rng=rng),
    "mog_model": lambda rng: dpcore.mog_model(4, 2, rng=rng).components,
    "stm_model": lambda rng: dpcore.stm_model(4, 2, rng=rng).components,
    "make_model": lambda rng: dpcore.make_model("mog", 4, 2, rng=rng).components,
    "synthetic_dataset": lambda rng: dpcore.synthetic_dataset(
        dim=4, k=2, n_samples=20, rng=rng
    ).samples,
    "dropout_run": lambda rng: dpcore.dropout_run(np.zeros((3, 2)), _DESIGN, [0], rng=rng)[0],
    "pca_sweep": lambda rng: dpcore.pca_sweep(
        dim=5, k=2, sites=2, n_per_site=20, epsilon=1.0, runs=1, pool_size=100, rng=rng
    ).captured_energy.to_numpy(),
    "otd_sweep": lambda rng: dpcore.otd_sweep(
        dim=3, k=2, sites=2, n_per_site=100, epsilon=1.0, runs=1, rng=rng
    ).component_error.to_numpy(),
    "otd_example": lambda rng: dpcore.otd_example(
        dim=3, k=2, sites=2, n_per_site=100, epsilon=1.0, rng=rng
    ).to_numpy(),
    "run_pca_sweep": lambda rng: dpcore.run_pca_sweep(
        dpcore.PcaSpec.build(
            dim=5, k=2, sites=2, n_per_site=20, epsilon=1.0, runs=1, pool_size=100
        ),
        rng,
    ).captured_energy.to_numpy(),
    "run_otd_sweep": lambda rng: [
        o.recovery.weights
        for o in dpcore.run_otd_sweep(
            dpcore.OtdSpec.build(dim=3, k=2, sites=2, n_per_site=100, epsilon=1.0, runs=1), rng
        ).outcomes
    ],
    "otd_example_of": lambda rng: dpcore.otd_example_of(
        dpcore.OtdSpec.build(dim=3, k=2, sites=2, n_per_site=100, epsilon=1.0), rng
    ).to_numpy(),
    "dropout_pca": lambda rng: dpcore.dropout_pca(
        n_per_site=[50, 50],
        epsilon=[1.0, 1.0],
        delta=[0.01, 0.01],
        weights=[0.5, 0.5],
        dropped=[1],
        dim=4,
        k=2,
        runs=1,
        pool_size=200,
        rng=rng,
    ).captured_energy_ratio.to_numpy(),
    "audit_gaussian": lambda rng: dpcore.audit_gaussian(
        2.0, delta=0.01, trials=1000, rng=rng
    ).false_positives,
    "audit_protocol": lambda rng: dpcore.audit_protocol(
        _DESIGN, sensitivity=1.0, site=0, view="joint", delta=0.01, trials=1000, rng=rng
    ).audit.false_positives,
    "attack_statistics": lambda rng: dpcore.attack_statistics(
        _DESIGN, sensitivity=1.0, site=0, view="joint", trials=100, rng=rng
    )[0],
    "trust_pca": lambda rng: dpcore.trust_pca(
        [50, 50], epsilon=1.0, delta=0.01, dim=4, k=2, runs=1, rng=rng
    ).captured_energy_ratio.to_numpy(),
    # public since issue #51: the protocol's steps (one party's stream each) and the samplers
    "noise_generator_step": lambda rng: dpcore.noise_generator_step(
        _DESIGN, (2,), symmetric=False, rng=rng
    ),
    "aggregator_step": lambda rng: dpcore.aggregator_step(_DESIGN, (2,), symmetric=False, rng=rng),
    "site_step": lambda rng: dpcore.site_step(
        np.zeros(2), np.zeros(2), np.zeros(2), 1.0, symmetric=False, rng=rng
    )[1],
    "site_releases": lambda rng: dpcore.site_releases(
        np.zeros((3, 2)), _DESIGN, symmetric=False, rng=rng
    )[3],
    "dropout_correction": lambda rng: dpcore.dropout_correction(
        np.zeros((3, 2)), _DESIGN, [0], rng=rng
    ),
    "dataset_from_array": lambda rng: dpcore.dataset_from_array(
        np.arange(90.0).reshape(30, 3) ** 2, name="t", max_rows=20, rng=rng
    ).samples,
    "sample_mog": lambda rng: dpcore.sample_mog(dpcore.mog_model(4, 2, rng=0), 5, rng=rng),
    "sample_stm": lambda rng: dpcore.sample_stm(dpcore.stm_model(4, 2, rng=0), 5, rng=rng),
}
# Public functions with an rng that is not SPEC 7's, each for a reason
OTHER_RNG = {
    # every T of the sweep replays one seed (the same data and noise streams per T)
    "run_rounds_sweep": "an int seed, by design",
    # they subsample a local MNIST / Covertype file (tests/core/experiments/test_realdata.py)
    "load_mnist": "needs a local data file",
    "load_covtype": "needs a local data file",
}


def test_every_public_random_function_is_covered():
    with_rng = {name for name, fn in PUBLIC.items() if "rng" in _params(fn)}
    assert with_rng == set(RANDOM_CALLS) | set(OTHER_RNG)


@pytest.mark.parametrize("name", sorted(RANDOM_CALLS))
def test_rng_is_a_seed_or_a_generator(name):
    call = RANDOM_CALLS[name]
    by_seed = call(11)
    np.testing.assert_array_equal(call(np.random.default_rng(11)), by_seed)
    np.testing.assert_array_equal(call(np.int64(11)), by_seed)
    with pytest.raises(TypeError, match="rng"):
        call("11")
    with pytest.raises(ValueError, match="rng"):
        call(-1)
