"""dpcore.factorization.iterative: the noisy power method (central, distributed, CAPE per round).

References checked: an independent implementation of Hardt & Price's Figure 1 written here
(Gram–Schmidt instead of QR, the noise drawn from the documented streams), the plain power
method at ε = ∞, Google's dp_accounting for the total ε of T rounds, the exact zero sum of
every round's CAPE noise, and Hardt & Price's Theorem 1.1.
"""

from __future__ import annotations

import math

import dp_accounting as dpa
import numpy as np
import pytest
from dp_accounting import pld
from planted import DIM, K, gram_schmidt, planted_moments, planted_sites

import dpcore
from dpcore.analysis.accounting import view_noise_multipliers
from dpcore.factorization import registry
from dpcore.factorization.costs import communication_cost
from dpcore.factorization.iterative import (
    DEFAULT_ROUNDS,
    cape_npm_pca,
    cape_round,
    cape_round_design,
    distributed_npm_pca,
    initial_basis,
    noisy_power_method,
    npm_pca,
    per_round_std,
    pooled_round_std,
)
from dpcore.factorization.metrics import subspace_distance, top_k_eigvecs
from dpcore.mechanisms.calibration import gaussian_sigma, second_moment_sensitivity, site_noise_std

pytestmark = pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")


# --- an independent implementation of Hardt & Price, Figure 1 --------------------------------


def _hp_figure1(a, k, rounds, noise, rng):
    """NPM as printed: X₀ random; Y_ℓ = A X_{ℓ−1} + G_ℓ; X_ℓ = orthonormalise(Y_ℓ).

    ``noise(ℓ, X_{ℓ−1}, stream)`` returns the round's Y_ℓ (A X_{ℓ−1} + G_ℓ, however the method
    forms it); the streams follow the documented convention: rng.spawn(T + 1), child 0 for
    X₀, child ℓ for round ℓ. ``a`` only fixes D.
    """
    streams = rng.spawn(rounds + 1)
    x = gram_schmidt(streams[0].standard_normal((a.shape[0], k)))
    for ell in range(1, rounds + 1):
        x = gram_schmidt(noise(ell, x, streams[ell]))
    return x


def _projector(x):
    return x @ x.T


@pytest.fixture(scope="module")
def data():
    return planted_sites()


def test_central_matches_an_independent_figure_1(data):
    moments, _, mu, tau = data
    rounds = 6
    pooled = np.tensordot(mu, moments, axes=1)
    std = math.sqrt(rounds) * max(mu * tau)  # √T × the pooled requirement max μ_s τ_s

    def noise(_, x, stream):
        return pooled @ x + std * stream.standard_normal(x.shape)

    ours = npm_pca(
        moments, K, tau_site=tau, weights=mu, rounds=rounds, rng=np.random.default_rng(3)
    )
    theirs = _hp_figure1(pooled, K, rounds, noise, np.random.default_rng(3))
    np.testing.assert_allclose(_projector(ours), _projector(theirs), atol=1e-10)


def test_distributed_matches_an_independent_implementation(data):
    moments, _, mu, tau = data
    rounds = 4
    std = math.sqrt(rounds) * tau

    def noise(_, x, stream):  # each site adds its own noise; the aggregator takes Σ μ_s
        site_streams = stream.spawn(len(mu))
        return sum(
            mu[s] * (moments[s] @ x + std[s] * site_streams[s].standard_normal(x.shape))
            for s in range(len(mu))
        )

    ours = distributed_npm_pca(
        moments, K, tau_site=tau, weights=mu, rounds=rounds, rng=np.random.default_rng(4)
    )
    theirs = _hp_figure1(moments[0], K, rounds, noise, np.random.default_rng(4))
    np.testing.assert_allclose(_projector(ours), _projector(theirs), atol=1e-10)


@pytest.mark.parametrize("design", ["cape", "joint"])
def test_cape_per_round_matches_an_independent_implementation(data, design):
    moments, _, mu, tau = data
    rounds = 3
    made = cape_round_design(tau, weights=mu, rounds=rounds, design=design)
    s, mix = len(mu), made.e_mixing

    def noise(_, x, stream):  # Alg. 5 every round: noise generator, aggregator, then sites
        gen, agg, *site_streams = stream.spawn(s + 2)
        e = (mix @ gen.standard_normal((s, x.size))).reshape(s, *x.shape)
        f = made.tau_f[:, None, None] * agg.standard_normal((s, x.size)).reshape(s, *x.shape)
        out = np.zeros_like(x)
        for i in range(s):
            g = made.tau_g[i] * site_streams[i].standard_normal(x.shape)
            released = moments[i] @ x + e[i] + f[i] + g
            out += mu[i] * (released - f[i])
        return out

    ours = cape_npm_pca(
        moments,
        K,
        tau_site=tau,
        weights=mu,
        rounds=rounds,
        design=design,
        rng=np.random.default_rng(5),
    )
    theirs = _hp_figure1(moments[0], K, rounds, noise, np.random.default_rng(5))
    np.testing.assert_allclose(_projector(ours), _projector(theirs), atol=1e-10)


def test_infinite_epsilon_is_the_plain_power_method(data):
    moments, _, mu, _ = data
    zero = np.zeros(len(mu))
    pooled = np.tensordot(mu, moments, axes=1)
    rounds = 8
    plain = _hp_figure1(pooled, K, rounds, lambda _, x, __: pooled @ x, np.random.default_rng(2))
    for run in (npm_pca, distributed_npm_pca, cape_npm_pca):
        x = run(moments, K, tau_site=zero, weights=mu, rounds=rounds, rng=np.random.default_rng(2))
        np.testing.assert_allclose(_projector(x), _projector(plain), atol=1e-9)
    # and it converges to the top-K eigenvectors: error ≤ (λ_{K+1}/λ_K)^T tan θ₀ (Golub & Van
    # Loan, Thm. 8.2.2); at T = 200 that is far below 1e-6 for this spectrum
    lam = np.sort(np.linalg.eigvalsh(pooled))[::-1]
    assert lam[K] / lam[K - 1] < 0.8
    x = npm_pca(moments, K, tau_site=zero, weights=mu, rounds=200, rng=1)
    assert subspace_distance(x, top_k_eigvecs(pooled, K)) < 1e-6


# --- privacy: the T rounds compose to the total (ε, δ), per dp_accounting --------------------

# (method, N_s, ε, δ, T, neighbouring): all calibrated analytically, so equality is exact
CONFIGS = [
    ("npm", [1000] * 10, 1.0, 1e-2, 11, "add-remove"),
    ("npm", [200, 500, 1300], 0.5, 1e-5, 5, "replace"),
    ("npm", [50, 50], 5.0, 1e-3, 1, "add-remove"),
    ("npm_distributed", [1000] * 10, 0.1, 1e-2, 3, "add-remove"),
    ("npm_distributed", [100, 400], 2.0, 1e-6, 50, "replace"),
    ("npm_cape", [1000] * 10, 1.0, 1e-2, 11, "add-remove"),
    ("npm_cape", [100, 300, 600, 1000], 10.0, 1e-3, 20, "add-remove"),
    ("npm_cape", [400, 800, 800], 0.7, 1e-4, 8, "replace"),
    ("npm_cape_joint", [1000] * 10, 1.0, 1e-2, 11, "add-remove"),
    ("npm_cape_joint", [150, 900, 450], 0.3, 1e-4, 7, "replace"),
]
PLD_INTERVAL = 1e-4


def _round_multipliers(method, sizes, tau, sens, rounds):
    """z_s = σ/Δ of one round of site s's data, in the view that must meet its budget."""
    mu = sizes / sizes.sum()
    if method == "npm":  # the curator's release moves by μ_s Δ_s for a sample of site s
        return pooled_round_std(tau, weights=mu, rounds=rounds) / (mu * sens)
    if method == "npm_distributed":
        return per_round_std(tau, rounds=rounds) / sens
    design = cape_round_design(
        tau, weights=mu, rounds=rounds, design="joint" if method == "npm_cape_joint" else "cape"
    )
    view = "aggregator's joint view" if method == "npm_cape_joint" else "own release"
    z = view_noise_multipliers(design, sensitivity=sens, view=view)
    # the noise generator sees F + G: it must be no weaker than the aggregator's view
    assert np.all(np.sqrt(design.var_f + design.var_g) / sens >= z * (1 - 1e-12))
    return z


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c[0]}-S{len(c[1])}-T{c[4]}")
def test_total_epsilon_over_the_rounds_agrees_with_dp_accounting(config):
    method, sizes, eps, delta, rounds, neighbouring = config
    sizes = np.array(sizes)
    tau = site_noise_std(
        sizes, epsilon=eps, delta=delta, calibration="analytic", neighbouring=neighbouring
    )
    sens = second_moment_sensitivity(sizes, neighbouring=neighbouring)
    totals = []
    # one accountant per distinct z (with τ_s ∝ Δ_s the sites' z agree to rounding)
    for z in np.unique(np.round(_round_multipliers(method, sizes, tau, sens, rounds), 9)):
        accountant = pld.PLDAccountant(value_discretization_interval=PLD_INTERVAL)
        accountant.compose(dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(float(z)), rounds))
        totals.append(accountant.get_epsilon(delta))
    # PLD is pessimistic by less than T·h (tests/core/analysis/test_accounting.py); every
    # site's T rounds spend its ε exactly (analytic calibration, exact composition), to the grid
    # error.
    assert min(totals) >= eps - 1e-6 * max(1.0, eps)
    assert max(totals) <= eps + rounds * PLD_INTERVAL + 1e-6


def test_the_papers_cape_design_leaks_more_in_the_joint_view_over_the_rounds():
    # The paper's design meets τ per release, not in the aggregator's joint view: over T rounds
    # that view spends more than ε (why npm_cape_joint exists). Fails if the views were equal.
    sizes = np.full(10, 1000)
    tau = site_noise_std(sizes, epsilon=1.0, delta=1e-2, calibration="analytic")
    sens = second_moment_sensitivity(sizes)
    design = cape_round_design(tau, rounds=11)
    z = view_noise_multipliers(design, sensitivity=sens, view="aggregator's joint view")[0]
    total = dpcore.composed_epsilon(float(z), releases=11, delta=1e-2)
    assert total > 1.3  # 1.49 at this configuration


# --- CAPE every round: the zero sum, the pooled noise ----------------------------------------


def test_every_rounds_e_sum_to_zero_and_the_aggregate_carries_only_g(data):
    moments, _, mu, tau = data
    design = cape_round_design(tau, weights=mu, rounds=5)
    x = initial_basis(DIM, K, rng=np.random.default_rng(0))
    streams = np.random.default_rng(1).spawn(5)
    for stream in streams:
        run = cape_round(moments, x, design, rng=stream)
        scale = float(np.max(np.abs(mu[:, None, None] * run.e)))
        assert scale > 0  # real E's, not a design without any
        # Σ μ_s E_s = 0 up to summation rounding: S terms of magnitude ≤ scale
        assert np.max(np.abs(np.tensordot(mu, run.e, axes=1))) <= 8 * len(mu) * scale * 2**-52
        values = np.einsum("sij,jk->sik", moments, x)
        np.testing.assert_allclose(
            run.estimate, np.tensordot(mu, values + run.g, axes=1), atol=1e-12 * scale + 1e-15
        )
        x = np.linalg.qr(run.estimate)[0]


# --- accuracy ----------------------------------------------------------------------------------


def test_planted_subspace_is_recovered_at_large_epsilon():
    sizes = np.array([2000, 2000, 2000, 2000])
    moments, planted = planted_moments(sizes, 20, 3, np.random.default_rng(11))
    mu = sizes / sizes.sum()
    tau = site_noise_std(sizes, epsilon=1e6, delta=1e-5, calibration="analytic")
    truth = top_k_eigvecs(np.tensordot(mu, moments, axes=1), 3)
    # the pooled sample's top-3 is within sampling error of the planted one
    assert subspace_distance(truth, planted) < 0.1
    for run in (npm_pca, distributed_npm_pca, cape_npm_pca):
        x = run(moments, 3, tau_site=tau, weights=mu, rounds=40, rng=0)
        assert subspace_distance(x, truth) < 1e-3, run.__name__
        assert subspace_distance(x, planted) < 0.1, run.__name__


def test_hardt_price_theorem_1_1_bounds_the_error():
    # Hardt & Price, Theorem 1.1: if 5‖G_ℓ‖ ≤ ε(σ_K − σ_{K+1}) for every ℓ (and the ‖UᵀG_ℓ‖
    # condition holds) then after L = O(σ_K/(σ_K − σ_{K+1}) log(Dτ/ε)) rounds
    # ‖(I − X_L X_Lᵀ)U‖ ≤ ε. We draw the run's own G_ℓ from its streams, read off the smallest
    # ε the first condition allows, and check the error against it after L = 60 rounds
    # (σ_K/gap = 2 here, so 60 ≫ 2 log(Dτ/ε) for any τ below 1e10).
    rng = np.random.default_rng(0)
    dim, k, rounds, std = 40, 4, 60, 2e-3
    u = np.linalg.qr(rng.standard_normal((dim, dim)))[0]
    spectrum = np.concatenate([[4.0, 3.0, 2.5, 2.0], np.linspace(1.0, 0.1, dim - k)])
    a = (u * spectrum) @ u.T
    gap = spectrum[k - 1] - spectrum[k]
    streams = np.random.default_rng(9).spawn(rounds + 1)
    noise = [std * s.standard_normal((dim, k)) for s in streams[1:]]
    eps_hp = 5 * max(np.linalg.norm(g, 2) for g in noise) / gap
    assert eps_hp < 0.5  # the theorem's regime
    x = noisy_power_method(a, k, std=std, rounds=rounds, rng=np.random.default_rng(9))
    error = subspace_distance(x, u[:, :k])
    assert error <= eps_hp
    # and the bound is not vacuous here: a 10× larger noise breaks a 10× tighter claim
    assert error > eps_hp / 200


def test_same_seed_same_basis_and_another_seed_differs(data):
    moments, _, mu, tau = data
    for run in (npm_pca, distributed_npm_pca, cape_npm_pca):
        one = run(moments, K, tau_site=tau, weights=mu, rounds=3, rng=5)
        two = run(moments, K, tau_site=tau, weights=mu, rounds=3, rng=5)
        other = run(moments, K, tau_site=tau, weights=mu, rounds=3, rng=6)
        assert np.array_equal(one, two)
        assert not np.allclose(_projector(one), _projector(other))


def test_fast_path_noise_equals_the_protocols_aggregate_std(data):
    # faithful=False draws Σ μ_s G_s with one std: CAPE's is the design's tau_agg, √T × the
    # pooled requirement for the paper's design; the distributed one's √T·sqrt(Σ μ_s² τ_s²)
    moments, _, mu, tau = data
    design = cape_round_design(tau, weights=mu, rounds=9)
    np.testing.assert_allclose(design.tau_agg, pooled_round_std(tau, weights=mu, rounds=9))
    fast = cape_npm_pca(moments, K, tau_site=tau, weights=mu, rounds=9, faithful=False, rng=3)
    same = noisy_power_method(
        np.tensordot(mu, moments, axes=1), K, std=design.tau_agg, rounds=9, rng=3
    )
    assert np.array_equal(fast, same)


# --- the registry and the sweep ---------------------------------------------------------------

ITERATIVE = ("npm", "npm_distributed", "npm_cape", "npm_cape_joint")


def test_the_sweep_runs_every_iterative_method_without_changing_the_others():
    small = {"dim": 8, "k": 2, "sites": 3, "n_per_site": 100, "runs": 2, "pool_size": 600}
    base = dpcore.pca_sweep(**small, epsilon=[1.0, 1e3], algorithms=["cape"], rng=1)
    both = dpcore.pca_sweep(**small, epsilon=[1.0, 1e3], algorithms=["cape", *ITERATIVE], rng=1)
    assert set(both.algorithm) == {"cape", *ITERATIVE}
    cape = both[both.algorithm == "cape"].reset_index(drop=True)
    assert cape.equals(base)
    high = both[both.epsilon == 1e3].groupby("algorithm").captured_energy_ratio.mean()
    assert (high[list(ITERATIVE)] > 0.95).all()
    assert set(ITERATIVE).isdisjoint(registry.defaults("pca"))  # opt-in: defaults unchanged


@pytest.mark.parametrize("name", ITERATIVE)
def test_record_carries_rounds_and_per_round_communication(name):
    method = registry.pca_method(name)
    assert method.rounds == DEFAULT_ROUNDS
    assert method.with_rounds is not None
    five = method.with_rounds(5)
    assert five.rounds == 5 and five.with_rounds is not None
    d, k, s = 30, 4, 6
    cost = communication_cost(name, problem="pca", dim=d, k=k, sites=s)
    shape = registry.CostShape(dim=d, k=k, sites=s, rank=2 * k)
    assert five.cost(shape).sites * DEFAULT_ROUNDS == method.cost(shape).sites * 5 or name == "npm"
    per_round = s * d * k  # one D×K matrix per site per round
    expected = {
        "npm": {"sites": s * d * d, "aggregator": DEFAULT_ROUNDS * d * k, "noise generator": 0},
        "npm_distributed": {
            "sites": DEFAULT_ROUNDS * per_round,
            "aggregator": DEFAULT_ROUNDS * per_round,
            "noise generator": 0,
        },
    }.get(
        name,
        {
            "sites": DEFAULT_ROUNDS * per_round,
            "aggregator": 2 * DEFAULT_ROUNDS * per_round,
            "noise generator": DEFAULT_ROUNDS * per_round,
        },
    )
    assert {key: cost[key] for key in expected} == expected


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda m, t: npm_pca(m, 3, tau_site=t, rounds=0), "rounds"),
        (lambda m, t: npm_pca(m, 3, tau_site=t, rounds=1001), "rounds"),
        (lambda m, t: npm_pca(m, 0, tau_site=t), "k"),
        (lambda m, t: npm_pca(m, 13, tau_site=t), "k"),
        (lambda m, t: npm_pca(m, 3, tau_site=-t), "tau_site"),
        (lambda m, t: npm_pca(m, 3, tau_site=t[:2]), "tau_site"),
        (lambda m, t: npm_pca(m, 3, tau_site=t, weights=[0.5, 0.5, 0.5]), "weights"),
        (lambda m, t: npm_pca(m[:, :, :5], 3, tau_site=t), "moments"),
        (lambda m, t: distributed_npm_pca(m[:1], 3, tau_site=t[:1]), "moments"),
        (lambda m, t: cape_npm_pca(m, 3, tau_site=t, design="paper"), "design"),
        (lambda m, t: noisy_power_method(m[0], 3, std=-1.0), "std"),
        (lambda m, t: noisy_power_method(m, 3, std=1.0), "moment"),
        (lambda m, t: per_round_std(t, rounds=0), "rounds"),
        (lambda m, t: per_round_std(-t, rounds=2), "tau"),
    ],
)
def test_bad_inputs_are_refused_by_name(data, call, name):
    moments, _, _, tau = data
    with pytest.raises(ValueError, match=name):
        call(moments, tau)


def test_per_round_std_is_one_release_split_exactly():
    # √T·τ for T rounds is one release of τ in μ-GDP: the exact ε agrees with the one-shot
    # analytic calibration to root-finding accuracy, for the core's own accountant too
    tau = gaussian_sigma(1.0, epsilon=0.8, delta=1e-6, calibration="analytic")
    for rounds in (1, 2, 17, 400):
        z = float(per_round_std(tau, rounds=rounds))
        total = dpcore.composed_epsilon(z, releases=rounds, delta=1e-6)
        assert total == pytest.approx(0.8, rel=1e-9)


# --- block size p (issue #52) -------------------------------------------------------------------

_SPEC = [1.0, 0.9, 0.88, 0.1, *np.full(8, 0.01)]  # K = 2: σ_3/σ_2 ≈ 0.98, σ_5/σ_2 ≈ 0.01


def _planted(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((12, 12)))
    return q @ np.diag(_SPEC) @ q.T, q


@pytest.mark.parametrize("method", [npm_pca, distributed_npm_pca, cape_npm_pca])
def test_block_k_is_the_default_bit_for_bit(method):
    a, _ = _planted()
    moments, tau = np.stack([a] * 3), np.full(3, 0.01)
    default = method(moments, 2, tau_site=tau, rounds=5, rng=3)
    np.testing.assert_array_equal(
        default, method(moments, 2, tau_site=tau, rounds=5, block=2, rng=3)
    )


@pytest.mark.parametrize("method", [npm_pca, distributed_npm_pca, cape_npm_pca])
def test_a_larger_block_converges_at_the_gap_to_sigma_p_plus_one(method):
    # Balcan et al.: the rate is σ_{p+1}/σ_K. Noiseless, 8 rounds: p = K = 2 is stuck at
    # (0.88/0.9)^8 ≈ 0.84 of the way, p = 4 sees (0.01/0.9)^8 ≈ 0 and returns the top-2 exactly
    a, q = _planted()
    moments, tau = np.stack([a] * 3), np.full(3, 1e-12)
    small = method(moments, 2, tau_site=tau, rounds=8, block=2, rng=1)
    large = method(moments, 2, tau_site=tau, rounds=8, block=4, rng=1)
    top = q[:, :2] @ q[:, :2].T
    np.testing.assert_allclose(large @ large.T, top, atol=1e-6)
    assert np.linalg.norm(small @ small.T - top) > 0.05
    np.testing.assert_allclose(large.T @ large, np.eye(2), atol=1e-12)  # K columns, orthonormal


def test_a_block_outside_k_to_d_names_the_parameter():
    a, _ = _planted()
    for bad in (1, 13, 2.5, "4"):
        with pytest.raises((ValueError, TypeError), match="block"):
            noisy_power_method(a, 2, std=0.0, rounds=2, block=bad, rng=0)


def test_the_block_size_table_pairs_p_k_and_2k_on_the_same_draw():
    from dpcore.experiments.block_size import METHODS, block_table

    small = dict(dim=10, k=2, sites=2, n_per_site=50, rounds=(2,), runs=1, seed=5)
    one = block_table(**small, draws=1)
    assert list(one.algorithm) == list(METHODS)
    np.testing.assert_allclose(one["gain"], one["p=2K"] - one["p=K"])  # one draw: exact
    assert one.equals(block_table(**small, draws=1))  # same seed, same table
