"""dpcore.factorization.fedpca: FedPower and one-shot federated PCA (issue #38).

Checked: an independent implementation of each written here from the papers' pseudocode
(Gram–Schmidt instead of QR, the Procrustes rotation from the polar factor MᵀM^{-1/2}
instead of an SVD), recovery of a planted subspace at large ε, equality with the
non-private answer as ε → ∞ where that answer is exact, same-seed determinism, refused
bad inputs, and Google's dp_accounting for the total ε of FedPower's T noisy rounds.
"""

from __future__ import annotations

import dp_accounting as dpa
import numpy as np
import pytest
from dp_accounting import pld
from planted import DIM, K, gram_schmidt, planted_moments, planted_sites

import dpcore
from dpcore.factorization import registry
from dpcore.factorization.costs import communication_cost
from dpcore.factorization.fedpca import (
    federated_pca,
    fedpower_pca,
    merge_subspaces,
    procrustes_rotation,
    synchronisations,
)
from dpcore.factorization.iterative import DEFAULT_ROUNDS, noisy_power_method, per_round_std
from dpcore.factorization.metrics import subspace_distance, top_k_eigvecs
from dpcore.factorization.pca import nonprivate_pca
from dpcore.mechanisms.calibration import second_moment_sensitivity, site_noise_std

pytestmark = pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")


def _polar_rotation(y: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """argmin_D ‖y D − ref‖_F over orthogonal D: the polar factor M (MᵀM)^{-1/2}, M = yᵀref."""
    m = y.T @ reference
    vals, vecs = np.linalg.eigh(m.T @ m)
    return m @ (vecs / np.sqrt(vals)) @ vecs.T


@pytest.fixture(scope="module")
def data():
    return planted_sites()


# --- FedPower against its pseudocode ---------------------------------------------------------


def _fedpower_as_printed(moments, k, tau, mu, rounds, p, rng):
    """Guo et al., Algorithm 1, as we read it: local Y = A_s Z + G every round; at t ∈ I_T^p
    (t = p, 2p, …, and T) the server sums μ_s Y^(s) D_s, D_s aligning Y^(s) to Y^(1), and
    every site continues from orth of the sum. Streams: spawn(T + 1), child t spawned per site."""
    streams = rng.spawn(rounds + 1)
    z0 = gram_schmidt(streams[0].standard_normal((moments.shape[1], k)))
    zs = [z0 for _ in moments]
    std = np.sqrt(rounds) * tau  # T rounds at the site's one total budget
    for t in range(1, rounds + 1):
        site = streams[t].spawn(len(moments))
        ys = [
            a @ z + s * r.standard_normal(z.shape)
            for a, z, s, r in zip(moments, zs, std, site, strict=True)
        ]
        if t % p == 0 or t == rounds:
            y = sum(m * y_s @ _polar_rotation(y_s, ys[0]) for m, y_s in zip(mu, ys, strict=True))
            zs = [gram_schmidt(y) for _ in moments]
        else:
            zs = [gram_schmidt(y_s) for y_s in ys]
    return zs[0]


@pytest.mark.parametrize(("rounds", "p"), [(6, 1), (7, 3), (5, 5), (4, 8)])
def test_fedpower_matches_an_independent_implementation(data, rounds, p):
    moments, _, mu, tau = data
    ours = fedpower_pca(
        moments,
        K,
        tau_site=tau,
        weights=mu,
        rounds=rounds,
        local_iterations=min(p, rounds),
        rng=np.random.default_rng(3),
    )
    theirs = _fedpower_as_printed(moments, K, tau, mu, rounds, p, np.random.default_rng(3))
    np.testing.assert_allclose(ours, theirs, atol=1e-9)


def test_procrustes_rotation_is_orthogonal_and_optimal():
    rng = np.random.default_rng(0)
    y, ref = rng.standard_normal((10, 4)), rng.standard_normal((10, 4))
    d = procrustes_rotation(y, ref)
    np.testing.assert_allclose(d.T @ d, np.eye(4), atol=1e-12)
    best = np.linalg.norm(y @ d - ref)
    for _ in range(200):  # no random orthogonal matrix does better
        q = np.linalg.qr(rng.standard_normal((4, 4)))[0]
        assert np.linalg.norm(y @ q - ref) >= best - 1e-12


def test_synchronisations_are_every_pth_round_and_the_last():
    assert synchronisations(11, 2) == (2, 4, 6, 8, 10, 11)
    assert synchronisations(8, 4) == (4, 8)
    assert synchronisations(3, 1) == (1, 2, 3)
    assert synchronisations(5, 5) == (5,)


# --- accuracy -------------------------------------------------------------------------------


def test_fedpower_recovers_a_planted_subspace_at_large_epsilon():
    sizes = np.array([2000, 2000, 2000, 2000])
    moments, planted = planted_moments(sizes, 20, 3, np.random.default_rng(11))
    mu = sizes / sizes.sum()
    tau = site_noise_std(sizes, epsilon=1e6, delta=1e-5, calibration="analytic")
    truth = top_k_eigvecs(np.tensordot(mu, moments, axes=1), 3)
    assert subspace_distance(truth, planted) < 0.1  # the pooled top-3 is the planted one
    for p in (1, 4):
        x = fedpower_pca(moments, 3, tau_site=tau, weights=mu, rounds=40, local_iterations=p, rng=0)
        # local iterations drift towards each site's own top-3, which differs from the pooled
        # one by sampling error only: within 0.05 of it, and of the planted subspace
        assert subspace_distance(x, truth) < 0.05, p
        assert subspace_distance(x, planted) < 0.1, p


def test_fedpower_at_infinite_epsilon_is_the_non_private_power_method():
    # identical sites: every Y^(s) is the same, D_s = I, and the average is A Z; with τ = 0
    # FedPower is the plain power method from the same Z₀ (same stream child 0)
    moments, _ = planted_moments([400], 10, 2, np.random.default_rng(5))
    same = np.repeat(moments, 3, axis=0)
    ours = fedpower_pca(same, 2, tau_site=np.zeros(3), rounds=9, local_iterations=3, rng=4)
    plain = noisy_power_method(same[0], 2, std=0.0, rounds=9, rng=4)
    np.testing.assert_allclose(ours, plain, atol=1e-10)


def test_fedpower_at_infinite_epsilon_on_rank_k_sites_is_the_non_private_subspace():
    # every site's samples lie in one K-dimensional subspace (different spectra per site):
    # A_s Z spans it after one round, so the output is the non-private top-K exactly
    rng = np.random.default_rng(8)
    u = np.linalg.qr(rng.standard_normal((15, 3)))[0]
    moments = np.stack([u @ np.diag(rng.uniform(0.2, 1.0, 3)) @ u.T for _ in range(4)])
    truth = nonprivate_pca(moments, 3, weights=np.full(4, 0.25))
    x = fedpower_pca(moments, 3, tau_site=np.zeros(4), rounds=5, local_iterations=2, rng=1)
    assert subspace_distance(x, truth) < 1e-10


@pytest.mark.parametrize("run", [fedpower_pca, federated_pca])
def test_same_seed_same_basis_and_another_seed_differs(data, run):
    moments, _, mu, tau = data
    first, again, other = (
        run(moments, K, tau_site=tau, weights=mu, rng=np.random.default_rng(seed))
        for seed in (9, 9, 10)
    )
    np.testing.assert_array_equal(first, again)
    assert not np.allclose(first @ first.T, other @ other.T)  # another subspace, not a sign


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda m, t: fedpower_pca(m, 3, tau_site=t, rounds=0), "rounds"),
        (
            lambda m, t: fedpower_pca(m, 3, tau_site=t, rounds=4, local_iterations=0),
            "local_iterations",
        ),
        (
            lambda m, t: fedpower_pca(m, 3, tau_site=t, rounds=4, local_iterations=5),
            "local_iterations",
        ),
        (lambda m, t: fedpower_pca(m, 0, tau_site=t), "k"),
        (lambda m, t: fedpower_pca(m, 13, tau_site=t), "k"),
        (lambda m, t: fedpower_pca(m, 3, tau_site=-t), "tau_site"),
        (lambda m, t: fedpower_pca(m, 3, tau_site=t[:2]), "tau_site"),
        (lambda m, t: fedpower_pca(m, 3, tau_site=t, weights=[0.5, 0.5, 0.5]), "weights"),
        (lambda m, t: fedpower_pca(m[:1], 3, tau_site=t[:1]), "moments"),
        (lambda m, t: fedpower_pca(m[:, :, :5], 3, tau_site=t), "moments"),
    ],
)
def test_bad_inputs_are_refused_by_name(data, call, name):
    moments, _, _, tau = data
    with pytest.raises(ValueError, match=name):
        call(moments, tau)


# --- privacy: FedPower's T noisy rounds compose to each site's (ε, δ), per dp_accounting ------

# (N_s, ε, δ, T, p, neighbouring), calibrated analytically, so equality is exact. Every
# iteration is charged, local or aggregated: p changes who sees what, not the composition.
CONFIGS = [
    ([1000] * 10, 1.0, 1e-2, 11, 2, "add-remove"),
    ([1000] * 10, 0.1, 1e-2, 11, 2, "add-remove"),
    ([1000] * 10, 4.0, 1e-2, 16, 4, "add-remove"),
    ([200, 500, 1300], 0.5, 1e-5, 5, 1, "replace"),
    ([50, 50], 3.0, 1e-3, 1, 1, "add-remove"),
    ([100, 400], 2.0, 1e-6, 50, 10, "replace"),
    ([100, 300, 600, 1000], 3.0, 1e-3, 20, 5, "add-remove"),
    ([400, 800, 800], 0.7, 1e-4, 8, 8, "replace"),
    ([150, 900, 450], 0.3, 1e-4, 7, 3, "add-remove"),
    ([5000, 5000], 1.0, 1e-5, 30, 6, "replace"),
]
PLD_INTERVAL = 1e-4


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"S{len(c[0])}-T{c[3]}-p{c[4]}")
def test_fedpower_total_epsilon_over_its_rounds_agrees_with_dp_accounting(config):
    sizes, eps, delta, rounds, p, neighbouring = config
    sizes = np.array(sizes)
    tau = site_noise_std(
        sizes, epsilon=eps, delta=delta, calibration="analytic", neighbouring=neighbouring
    )
    sens = second_moment_sensitivity(sizes, neighbouring=neighbouring)
    # the noise multiplier of every round fedpower_pca draws (its per-round std; the
    # independent implementation above draws √T·τ_s itself, so the two cannot disagree)
    z_sites = per_round_std(tau, rounds=rounds) / sens
    totals = []
    for z in np.unique(np.round(z_sites, 9)):
        accountant = pld.PLDAccountant(value_discretization_interval=PLD_INTERVAL)
        accountant.compose(dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(float(z)), rounds))
        totals.append(accountant.get_epsilon(delta))
    assert min(totals) >= eps - 1e-6 * max(1.0, eps)
    assert max(totals) <= eps + rounds * PLD_INTERVAL + 1e-6
    assert len(synchronisations(rounds, p)) <= rounds  # the server sees a subset of them


# --- the registry record ----------------------------------------------------------------------


def test_fedpower_record_rounds_communication_and_sweep():
    method = registry.pca_method("fedpower")
    assert method.rounds == DEFAULT_ROUNDS and method.with_rounds is not None
    assert method.with_rounds(4).rounds == 4
    d, k, s = 30, 4, 6
    cost = communication_cost("fedpower", problem="pca", dim=d, k=k, sites=s)
    syncs = len(synchronisations(DEFAULT_ROUNDS, 2))  # 6 of the 11 rounds
    assert cost["sites"] == cost["aggregator"] == syncs * s * d * k
    assert cost["noise generator"] == 0
    assert "fedpower" not in registry.defaults("pca")  # opt-in: no default frame moves
    small = {"dim": 8, "k": 2, "sites": 3, "n_per_site": 100, "runs": 2, "pool_size": 600}
    frame = dpcore.pca_sweep(**small, epsilon=[1e6], algorithms=["nonprivate", "fedpower"], rng=1)
    ratio = frame.groupby("algorithm").captured_energy_ratio.mean()
    assert ratio["fedpower"] > 0.97 * ratio["nonprivate"]


# --- one-shot federated PCA (Grammenos et al. 2020) -------------------------------------------


def _merge_incremental(u1, s1, u2, s2, k):
    """Grammenos et al.'s QR-based merge (their code's type 3): z = U₁ᵀU₂, QR of U₂ − U₁z,
    SVD of the small block [[Σ₁, zΣ₂], [0, RΣ₂]] — another route to the same top-K pairs."""
    z = u1.T @ u2
    q, r = np.linalg.qr(u2 - u1 @ z)
    block = np.block([[np.diag(s1), z * s2], [np.zeros((len(s2), len(s1))), r * s2]])
    ur, sr, _ = np.linalg.svd(block)
    return np.hstack([u1, q]) @ ur[:, :k], sr[:k]


def _federated_as_printed(moments, k, tau, mu, rng):
    """Each site: Â_s = A_s + symmetric N(0, τ_s²) from its own stream (rng.spawn(S)),
    eigenpairs by numpy's eigh sorted by value, U_s and sqrt(μ_s λ); then the tree of merges,
    neighbours first, the odd one out carried up."""
    streams = rng.spawn(len(moments))
    level = []
    for a, t, m, r in zip(moments, tau, mu, streams, strict=True):
        noisy = a + dpcore.symmetric_noise(a.shape[0], order=2, scale=t, rng=r)
        vals, vecs = np.linalg.eigh(noisy)
        top = np.argsort(vals)[::-1][:k]
        level.append((vecs[:, top], np.sqrt(m * np.clip(vals[top], 0, None))))
    while len(level) > 1:
        nxt = [_merge_incremental(*level[i], *level[i + 1], k) for i in range(0, len(level) - 1, 2)]
        level = nxt + ([level[-1]] if len(level) % 2 else [])
    return level[0][0]


@pytest.mark.parametrize("sites", [2, 3, 5])
def test_federated_pca_matches_an_independent_implementation(sites):
    sizes = np.arange(1, sites + 1) * 200
    moments, _ = planted_moments(sizes, DIM, K, np.random.default_rng(sites))
    mu = sizes / sizes.sum()
    tau = site_noise_std(sizes, epsilon=1.0, delta=1e-5, calibration="analytic")
    ours = federated_pca(moments, K, tau_site=tau, weights=mu, rng=np.random.default_rng(4))
    theirs = _federated_as_printed(moments, K, tau, mu, np.random.default_rng(4))
    np.testing.assert_allclose(ours @ ours.T, theirs @ theirs.T, atol=1e-9)  # same subspace


def test_the_merge_is_the_best_rank_k_approximation_of_the_sum():
    rng = np.random.default_rng(1)
    u1, u2 = (np.linalg.qr(rng.standard_normal((9, 3)))[0] for _ in range(2))
    s1, s2 = np.array([3.0, 2.0, 1.0]), np.array([2.5, 0.5, 0.2])
    u, s = merge_subspaces((u1, s1), (u2, s2), 3)
    total = u1 @ np.diag(s1**2) @ u1.T + u2 @ np.diag(s2**2) @ u2.T
    vals, vecs = np.linalg.eigh(total)
    np.testing.assert_allclose(s**2, vals[::-1][:3], rtol=1e-10)
    assert subspace_distance(u, vecs[:, ::-1][:, :3]) < 1e-8


def test_federated_pca_recovers_a_planted_subspace_at_large_epsilon():
    sizes = np.array([2000, 2000, 2000, 2000, 2000])
    moments, planted = planted_moments(sizes, 20, 3, np.random.default_rng(11))
    mu = sizes / sizes.sum()
    tau = site_noise_std(sizes, epsilon=1e6, delta=1e-5, calibration="analytic")
    truth = top_k_eigvecs(np.tensordot(mu, moments, axes=1), 3)
    x = federated_pca(moments, 3, tau_site=tau, weights=mu, rng=0)
    # each site's top-3 is the planted one up to its own sampling error; the merges keep it
    assert subspace_distance(x, truth) < 0.05
    assert subspace_distance(x, planted) < 0.1


def test_federated_pca_at_infinite_epsilon_on_rank_k_sites_is_the_non_private_subspace():
    rng = np.random.default_rng(8)
    u = np.linalg.qr(rng.standard_normal((15, 3)))[0]
    moments = np.stack([u @ np.diag(rng.uniform(0.2, 1.0, 3)) @ u.T for _ in range(5)])
    truth = nonprivate_pca(moments, 3, weights=np.full(5, 0.2))
    x = federated_pca(moments, 3, tau_site=np.zeros(5), rng=1)
    assert subspace_distance(x, truth) < 1e-10


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda m, t: federated_pca(m, 0, tau_site=t), "k"),
        (lambda m, t: federated_pca(m, 13, tau_site=t), "k"),
        (lambda m, t: federated_pca(m, 3, tau_site=-t), "tau_site"),
        (lambda m, t: federated_pca(m, 3, tau_site=t[:2]), "tau_site"),
        (lambda m, t: federated_pca(m, 3, tau_site=t, weights=[0.2, 0.2, 0.2]), "weights"),
        (lambda m, t: federated_pca(m[:1], 3, tau_site=t[:1]), "moments"),
        (lambda m, t: federated_pca(m[:, :, :5], 3, tau_site=t), "moments"),
        (lambda m, t: federated_pca(m * np.nan, 3, tau_site=t), "moments"),
    ],
)
def test_federated_pca_bad_inputs_are_refused_by_name(data, call, name):
    moments, _, _, tau = data
    with pytest.raises(ValueError, match=name):
        call(moments, tau)


def test_federated_pca_record_is_one_release_and_joins_the_sweep():
    method = registry.pca_method("fedpca")
    assert method.rounds == 1 and method.with_rounds is None  # one-shot: one release per site
    d, k, s = 30, 4, 6
    cost = communication_cost("fedpca", problem="pca", dim=d, k=k, sites=s)
    assert cost["sites"] == s * (d * k + k) and cost["aggregator"] == 0
    assert "fedpca" not in registry.defaults("pca")
    small = {"dim": 8, "k": 2, "sites": 3, "n_per_site": 100, "runs": 2, "pool_size": 600}
    frame = dpcore.pca_sweep(**small, epsilon=[1e6], algorithms=["nonprivate", "fedpca"], rng=1)
    ratio = frame.groupby("algorithm").captured_energy_ratio.mean()
    assert ratio["fedpca"] > 0.97 * ratio["nonprivate"]
