"""Secure aggregation with distributed discrete noise (issue #24): exact mask algebra, the
sampler's distribution, the noise variance, the accounting against an exact computation,
the baseline in both sweeps, dropouts and views, and bad inputs."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import dpcore
from dpcore.analysis.precision import cancellation_table
from dpcore.analysis.secagg_views import secagg_dropouts, secagg_views
from dpcore.factorization import registry
from dpcore.mechanisms.discrete import (
    ddg_epsilon,
    sample_discrete_gaussian,
)
from dpcore.protocol.secagg import (
    SecAggDesign,
    decode,
    free_entries,
    pair_masks,
    pair_seeds,
    quantise,
    secagg_design,
    secagg_sum,
    symmetric_coordinates,
)

pytestmark = pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")


def _design(sites: int = 5, coordinates: int = 50, **kw) -> SecAggDesign:
    return secagg_design([0.01] * sites, epsilon=1.0, delta=1e-5, coordinates=coordinates, **kw)


# --- exact algebra ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_pairwise_masks_cancel_exactly_modulo_2_to_the_b(seed):
    rng = np.random.default_rng(seed)
    sites = int(rng.integers(2, 13))
    bits = int(rng.choice([2, 7, 16, 31, 32, 63, 64]))
    d = int(rng.integers(1, 300))
    masks = pair_masks(pair_seeds(sites, rng=rng), sites, d, bits)
    assert masks.dtype == np.uint64 and np.all(masks <= np.uint64(2**bits - 1))
    total = masks.sum(axis=0, dtype=np.uint64) & np.uint64(2**bits - 1)
    assert np.all(total == 0)  # integers: exactly zero, not approximately
    if bits >= 16 and d > 20:  # a single mask is no zero vector (it hides the message)
        assert np.count_nonzero(masks[0]) > 0


@pytest.mark.parametrize("seed", range(4))
def test_the_server_decodes_exactly_the_sum_of_rounded_values_and_shares(seed):
    rng = np.random.default_rng(100 + seed)
    sites, d = int(rng.integers(2, 9)), int(rng.integers(5, 200))
    design = _design(sites, d)
    values = rng.uniform(-1, 1, (sites, d))
    run = secagg_sum(values, design, rng=seed)
    np.testing.assert_array_equal(run.decoded, run.total)  # masks gone, no wrap at b = 32
    np.testing.assert_array_equal(run.total, (run.quantised + run.noise).sum(axis=0))
    assert run.wraparounds == 0
    # every message alone is masked: it differs from the plain sum's summands
    plain = (run.quantised + run.noise).astype(np.uint64) & np.uint64(2**32 - 1)
    assert np.any(run.messages != plain)
    # the fast path skips the masks and decodes the same integers, bit for bit (with σ = 1,
    # where τ is not negligible, it draws every share as the faithful path does)
    small = dataclasses.replace(design, sigma=1.0)
    fast = secagg_sum(values, small, rng=seed, faithful=False)
    np.testing.assert_array_equal(fast.decoded, secagg_sum(values, small, rng=seed).decoded)
    assert fast.masks is None and fast.messages is None and fast.noise.shape == (sites, d)
    # same seed, same round
    np.testing.assert_array_equal(secagg_sum(values, design, rng=seed).messages, run.messages)


def test_decode_maps_residues_to_the_centred_range():
    for bits in (2, 8, 32, 64):
        half = 2 ** (bits - 1)
        x = np.array([-half, -1, 0, 1, half - 1], dtype=np.int64)
        np.testing.assert_array_equal(decode(x.astype(np.uint64), bits), x)


def test_quantisation_is_unbiased_with_the_bernoulli_variance():
    gamma, v = 0.1, 0.237  # v/γ = 2.37: values 2 or 3, P(3) = 0.37
    q = quantise(np.full(200_000, v), gamma, rng=4)
    assert set(np.unique(q)) == {2, 3}
    # mean of 200k Bernoulli(0.37): SE = sqrt(0.37·0.63/2e5) ≈ 1.1e-3; 5 SE
    assert abs(q.mean() - v / gamma) < 5 * math.sqrt(0.37 * 0.63 / 2e5)


# --- the aggregate noise ------------------------------------------------------------------


@pytest.mark.parametrize("faithful", [True, False])
@pytest.mark.parametrize("dropped", [(), (1,), (0, 3)])
def test_aggregate_noise_variance_matches_the_design(dropped, faithful):
    sites, d = 6, 40_000
    design = _design(sites, d, threshold=3)
    x = np.full((sites, d), 0.4321)  # same value everywhere: one variance for every coordinate
    run = secagg_sum(x, design, rng=9, dropped=dropped, faithful=faithful)
    # σ is hundreds of steps: the fast path draws the shares' sum at once, one row
    assert run.noise.shape == ((sites, d) if faithful else (1, d))
    keep = [s for s in range(sites) if s not in dropped]
    frac = (design.weights * x[:, 0] / design.scale) % 1.0
    # design: S − k shares of Var N_Z(0, σ²) plus each survivor's rounding p(1 − p)
    var = len(keep) * design.share_variance + float(np.sum(frac[keep] * (1 - frac[keep])))
    err = run.decoded - (design.weights[keep] * x[keep, 0]).sum() / design.scale
    se = math.sqrt((np.mean((err - err.mean()) ** 4) - err.var() ** 2) / d)
    assert abs(err.var() - var) < 5 * se  # 5 SE of a sample variance (its 4th moment)
    assert abs(err.mean()) < 5 * math.sqrt(var / d)  # unbiased: rounding and shares
    assert run.noise_shares == sites - len(dropped)
    assert (
        abs(design.noise_std(len(keep)) ** 2 - len(keep) * design.share_variance * design.scale**2)
        < 1e-18
    )


def test_dropouts_leave_the_masks_recovered_and_the_noise_short():
    design = _design(5, 30)
    x = np.random.default_rng(0).uniform(0, 1, (5, 30))
    run = secagg_sum(x, design, rng=1, dropped=[2])
    survivors = [0, 1, 3, 4]
    np.testing.assert_array_equal(
        run.decoded, (run.quantised[survivors] + run.noise[survivors]).sum(axis=0)
    )
    # without the recovered masks the survivors' messages do not decode to their sum
    raw = decode(run.messages[survivors].sum(axis=0, dtype=np.uint64), 32)
    assert np.any(raw != run.decoded)
    with pytest.raises(ValueError, match=r"dropped.*threshold"):
        secagg_sum(x, design, rng=1, dropped=[0, 1, 2])  # 2 < t = 3 survive


def test_the_design_meets_every_site_and_is_near_the_central_level():
    sens = dpcore.second_moment_sensitivity([100, 300, 600])
    design = secagg_design(
        sens, epsilon=[0.5, 1.0, 2.0], delta=1e-5, coordinates=210, weights=[0.1, 0.3, 0.6]
    )
    assert design.meets() and design.rounding_inflation <= 1.01 + 1e-12
    assert design.epsilons().max() <= 2.0 * (1 + 1e-9)
    # the discrete, distributed, accounted noise costs a little over one exact curator
    assert 1.0 <= design.tau_agg / design.tau_central < 1.3
    # over-provisioning for one dropout: met with S − 1 shares, more noise with all S
    over = secagg_design(
        sens,
        epsilon=[0.5, 1.0, 2.0],
        delta=1e-5,
        coordinates=210,
        weights=[0.1, 0.3, 0.6],
        expected_dropouts=1,
        threshold=2,
    )
    assert over.meets(2) and not design.meets(2) and over.tau_agg > design.tau_agg


# --- views, dropouts, costs ---------------------------------------------------------------


def test_free_entries_invert_the_symmetric_expansion():
    from dpcore.mechanisms.noise import expand_symmetric

    a = dpcore.symmetric_noise(4, order=3, scale=1.0, size=(2,), rng=0)
    free = free_entries(a, 3)
    assert free.shape == (2, symmetric_coordinates(4, 3))
    np.testing.assert_array_equal(expand_symmetric(free, 4, 3), a)


# --- the baseline in the sweeps -----------------------------------------------------------

PCA = {"dim": 20, "k": 3, "sites": 5, "n_per_site": 400, "pool_size": 5000}


def test_the_baseline_is_opt_in_and_changes_no_default_frame():
    assert "secagg" in registry.names("pca") and "secagg" in registry.names("otd")
    assert "secagg" not in registry.defaults("pca") and not registry.get("secagg").featured
    df = dpcore.pca_sweep(**PCA, epsilon=1.0, runs=1)
    assert "secagg" not in set(df.algorithm) and "secagg_bits" not in df.columns


def test_secagg_pca_matches_cape_at_the_default_bit_width():
    df = dpcore.pca_sweep(**PCA, epsilon=[0.3, 3.0], runs=30, algorithms=["cape", "secagg"], rng=5)
    stats_ = df.groupby(["epsilon", "algorithm"]).captured_energy_ratio.agg(
        ["mean", "var", "count"]
    )
    for eps in (0.3, 3.0):
        cape, sec = stats_.loc[(eps, "cape")], stats_.loc[(eps, "secagg")]
        se = math.sqrt(cape["var"] / cape["count"] + sec["var"] / sec["count"])
        assert abs(cape["mean"] - sec["mean"]) <= 4 * se, (eps, cape["mean"], sec["mean"], se)


def test_small_bit_widths_degrade_measurably_and_count_their_wraparounds():
    df = dpcore.pca_sweep(
        **PCA,
        epsilon=3.0,
        runs=20,
        algorithms=["secagg"],
        secagg_bits=[12, 32],
        rng=6,
    )
    assert list(df.columns[:6]) == [
        "algorithm",
        "epsilon",
        "delta",
        "n_per_site",
        "sites",
        "secagg_bits",
    ]
    by_bits = df.groupby("secagg_bits").captured_energy_ratio.agg(["mean", "var", "count"])
    se = math.sqrt((by_bits["var"] / by_bits["count"]).sum())
    assert by_bits.loc[32, "mean"] - by_bits.loc[12, "mean"] > 4 * se
    # the same round directly: wraps counted where the true sum leaves [−2^{b−1}, 2^{b−1})
    rng = np.random.default_rng(1)
    x = rng.normal(size=(5, 200, 20))
    x /= np.linalg.norm(x, axis=2, keepdims=True)
    a = np.einsum("sni,snj->sij", x, x) / 200
    free = free_entries(a, 2)
    sens = dpcore.second_moment_sensitivity([200] * 5)
    for bits, expect_wraps in ((32, False), (12, True)):
        design = secagg_design(sens, epsilon=3.0, delta=0.01, coordinates=free.shape[1], bits=bits)
        run = secagg_sum(free, design, rng=2)
        half = 2 ** (bits - 1)
        outside = np.count_nonzero((run.total < -half) | (run.total >= half))
        assert run.wraparounds == outside
        assert (run.wraparounds > 0) == expect_wraps
        assert np.all((run.decoded - run.total) % 2**bits == 0)  # equal modulo 2^b


def test_secagg_runs_in_the_tensor_sweep_along_the_scale():
    df = dpcore.otd_sweep(
        dim=4,
        k=2,
        sites=3,
        n_per_site=400,
        runs=2,
        epsilon=5.0,
        algorithms=["cape", "secagg"],
        secagg_scale=[1e-6, 1e-1],
        rng=1,
    )
    assert "secagg_scale" in df.columns and set(df.secagg_scale) == {1e-6, 1e-1}
    assert np.isfinite(df.component_error).all()


@pytest.mark.parametrize(
    "sweep",
    [
        lambda **kw: dpcore.pca_sweep(**PCA, epsilon=[0.5, 2.0], runs=2, **kw),
        lambda **kw: dpcore.otd_sweep(
            dim=4, k=2, sites=3, n_per_site=300, runs=2, epsilon=2.0, **kw
        ),
    ],
    ids=["pca", "otd"],
)
def test_the_faithful_round_runs_in_both_sweeps(sweep):
    # faithful=True draws every share and mask (the exact algebra is tested above)
    fast = sweep(algorithms=["secagg"], rng=3)
    faithful = sweep(algorithms=["secagg"], rng=3, faithful=True)
    assert faithful.shape == fast.shape
    metric = faithful.columns[6]
    assert np.isfinite(faithful[metric].to_numpy(dtype=float)).all()
    assert sweep(algorithms=["secagg"], rng=3, faithful=True).equals(faithful)  # same seed


# --- bad inputs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: _design(bits=1), "bits"),
        (lambda: _design(bits=65), "bits"),
        (lambda: _design(scale=-1.0), "scale"),
        (lambda: _design(coordinates=0), "coordinates"),
        (lambda: _design(calibration="exact"), "calibration"),
        (lambda: _design(expected_dropouts=5), "expected_dropouts"),
        (lambda: _design(threshold=0), "threshold"),
        (lambda: secagg_design([0.1], epsilon=1.0, delta=0.01, coordinates=3), "sensitivity"),
        (lambda: secagg_design([0.1, 0.1], epsilon=-1, delta=0.01, coordinates=3), "epsilon"),
        (lambda: secagg_design([0.1, 0.1], epsilon=1.0, delta=1.5, coordinates=3), "delta"),
        (lambda: secagg_sum(np.zeros((4, 50)), _design()), "values"),
        (lambda: secagg_sum(np.zeros((5, 50)), _design(), dropped=[9]), "dropped"),
        (lambda: sample_discrete_gaussian(0.0, 3, rng=0), "sigma"),
        (lambda: ddg_epsilon(1.0, shares=0, l2=1.0, dim=1, delta=0.1), "shares"),
        (lambda: ddg_epsilon(1.0, shares=2, l2=1.0, dim=1, delta=0.0), "delta"),
        (lambda: quantise([1.0], 0.0), "scale"),
        (lambda: secagg_views(_design(), colluding=5), "colluding"),
        (lambda: secagg_dropouts(_design(), dropped=-1), "dropped"),
        (lambda: dpcore.pca_sweep(**PCA, epsilon=1.0, secagg_bits=1), "secagg_bits"),
        (lambda: dpcore.pca_sweep(**PCA, epsilon=1.0, secagg_scale=0.0), "secagg_scale"),
        (lambda: dpcore.pca_sweep(**PCA, epsilon=[1.0, 2.0], secagg_bits=[8, 16]), "at most one"),
        (lambda: cancellation_table(sites=(1,)), "sites"),
    ],
)
def test_bad_inputs_raise_value_error_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("beta", [1e-3, 1e-300, 1e-309, 5e-324])
def test_auto_scale_inflates_by_one_percent_down_to_the_smallest_beta(beta):
    # issue #36: L = sqrt(2 log(1/β)) overflowed (1/β = inf) below β ≈ 5.6e-309 and the scale
    # became 0. At the scale found, KLS Thm. 1's high-probability bound
    # sqrt(c² + d/4 + L(c + √d/2)) is exactly 1.01 c (L written as sqrt(−2 log β) here), and
    # the rounding bound (the smaller of it and c + √d) at most that
    from dpcore.mechanisms.discrete import rounded_l2_bound
    from dpcore.protocol.secagg import auto_scale

    gamma = auto_scale([0.01, 0.01], weights=[0.5, 0.5], coordinates=100, beta=beta)
    c = 0.005 / gamma
    assert math.isfinite(c) and gamma > 0
    likely = math.sqrt(c**2 + 100 / 4 + math.sqrt(-2 * math.log(beta)) * (c + 10 / 2))
    assert likely / c == pytest.approx(1.01, rel=1e-12)
    assert rounded_l2_bound(c, dim=100, beta=beta) <= likely * (1 + 1e-12)
