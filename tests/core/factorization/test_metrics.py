"""dpcore.factorization.metrics: each measure against a case whose answer is known in closed
form."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ortho_group

from dpcore.factorization.metrics import (
    captured_energy,
    component_error,
    component_error_matched,
    matching,
    optimal_energy,
    subspace_distance,
    top_k_eigh,
    top_k_eigvecs,
    weight_error,
)


def _planted(d: int, eigenvalues, seed: int = 0):
    """A symmetric matrix Q diag(λ) Qᵀ with a random orthogonal Q: eigenpairs known."""
    q = ortho_group.rvs(d, random_state=seed)
    return q @ np.diag(eigenvalues) @ q.T, q


def test_top_k_is_by_signed_eigenvalue_not_magnitude():
    # A large *negative* noise direction (−10) must not be picked over λ = 3 (paper's code did).
    a, q = _planted(5, [3.0, 2.0, 0.5, 0.1, -10.0])
    vals, vecs = top_k_eigh(a, 2)
    np.testing.assert_allclose(vals, [3.0, 2.0], rtol=1e-12)
    np.testing.assert_allclose(np.abs(vecs.T @ q[:, :2]), np.eye(2), atol=1e-10)
    np.testing.assert_allclose(top_k_eigvecs(a, 2), vecs, rtol=0, atol=0)


@pytest.mark.parametrize(("d", "k"), [(600, 5), (600, 300)])  # the subset solver and full eigh
def test_top_k_both_solvers_give_the_planted_pairs(d, k):
    lam = np.linspace(10.0, 1.0, d)
    a, q = _planted(d, lam, seed=1)
    vals, vecs = top_k_eigh(a, k)
    np.testing.assert_allclose(vals, lam[:k], rtol=1e-9)
    # eigenvalue gaps ≥ 9/599 ≈ 0.015 and ‖rounding‖ ≈ 1e-13: each vector within ~1e-10
    np.testing.assert_allclose(np.abs(np.sum(vecs * q[:, :k], axis=0)), 1.0, atol=1e-9)


def test_captured_energy_is_optimal_for_the_top_eigenvectors():
    a, q = _planted(6, [5.0, 4.0, 3.0, 2.0, 1.0, 0.0], seed=2)
    assert optimal_energy(a, 2) == pytest.approx(9.0, rel=1e-12)
    assert captured_energy(q[:, :2], a) == pytest.approx(9.0, rel=1e-12)
    assert captured_energy(q[:, 4:], a) == pytest.approx(1.0, rel=1e-12)
    rng = np.random.default_rng(3)
    other = np.linalg.qr(rng.normal(size=(6, 2)))[0]
    assert captured_energy(other, a) < 9.0  # Ky Fan: no other 2-frame captures more


def test_subspace_distance_is_the_sine_of_the_largest_principal_angle():
    e = np.eye(4)
    theta = 0.3
    rotated = np.column_stack([e[:, 0], np.cos(theta) * e[:, 1] + np.sin(theta) * e[:, 2]])
    assert subspace_distance(rotated, e[:, :2]) == pytest.approx(np.sin(theta), rel=1e-12)
    # invariant to a change of basis inside the subspace, and accurate for tiny angles
    spin = np.array([[0.6, -0.8], [0.8, 0.6]])
    assert subspace_distance(e[:, :2] @ spin, e[:, :2]) < 1e-15
    tiny = np.column_stack([e[:, 0], np.cos(1e-9) * e[:, 1] + np.sin(1e-9) * e[:, 2]])
    assert subspace_distance(tiny, e[:, :2]) == pytest.approx(1e-9, rel=1e-6)


def test_component_error_and_the_matched_version_differ_when_two_estimates_share_a_truth():
    truth = np.eye(3)[:, :2]
    estimate = np.column_stack([truth[:, 0], truth[:, 0]])  # both found a_1
    assert component_error(estimate, truth) == 0.0  # the paper's q_comp misses it
    assert component_error_matched(estimate, truth) == pytest.approx(np.sqrt(2) / 2)
    np.testing.assert_array_equal(sorted(matching(estimate, truth)), [0, 1])


def test_matching_undoes_a_permutation_and_weights_follow_it():
    rng = np.random.default_rng(4)
    truth = rng.normal(size=(5, 4))
    perm = np.array([2, 0, 3, 1])
    estimate = truth[:, perm] + 1e-3 * rng.normal(size=(5, 4))
    np.testing.assert_array_equal(matching(estimate, truth), perm)
    w = np.array([0.1, 0.2, 0.3, 0.4])
    assert weight_error(w[perm] + 0.01, w, estimate, truth) == pytest.approx(0.01)


def test_a_wider_estimate_than_truth_is_refused_by_name():
    with pytest.raises(ValueError, match="estimate must have at most as many columns as truth"):
        component_error_matched(np.ones((3, 3)), np.ones((3, 2)))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: captured_energy(np.ones((3, 1)), np.ones((2, 2))), "basis has 3 rows"),
        (lambda: optimal_energy(np.ones((2, 3)), 1), "reference must be a non-empty square"),
        (lambda: top_k_eigvecs(np.eye(3), 4), r"k must be an integer in \[1, 3\]"),
        (lambda: subspace_distance(np.ones((3, 1)), np.ones((3, 2))), "same shape"),
        (lambda: component_error([[np.nan]], [[1.0]]), "estimate must be finite"),
        (lambda: component_error("x", [[1.0]]), "estimate must be a numeric 2-D array"),
        (
            lambda: weight_error([0.5], [0.5, 0.5], np.eye(2), np.eye(2)),
            r"est_weights must have one entry per column of estimate \(2\)",
        ),
    ],
)
def test_bad_inputs_name_the_parameter(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()
