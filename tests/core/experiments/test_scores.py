"""dpcore.experiments.sweeps.scores: each sweep metric, by name, against its definition on cases
whose answer is known exactly."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.experiments.sweeps.scores import PCA_METRICS, PcaTruth


def _truth(eigenvalues, k, rng):
    """A = Q diag(λ) Qᵀ with a random orthogonal Q: its top-K basis is Q's first K columns."""
    q, _ = np.linalg.qr(rng.standard_normal((len(eigenvalues), len(eigenvalues))))
    reference = (q * eigenvalues) @ q.T
    return PcaTruth(reference=reference, basis=q[:, :k], optimum=float(sum(eigenvalues[:k]))), q


def test_the_true_basis_scores_the_optimum_and_no_distance():
    lam = np.array([5.0, 3.0, 2.0, 0.5, 0.25, 0.1])
    truth, q = _truth(lam, 3, np.random.default_rng(0))
    # any orthonormal basis of the same subspace: the metrics see subspaces, not bases
    rotation, _ = np.linalg.qr(np.random.default_rng(1).standard_normal((3, 3)))
    basis = q[:, :3] @ rotation
    scores = {name: metric(basis, truth) for name, metric in PCA_METRICS.items()}
    # tr(VᵀAV) = λ1 + λ2 + λ3 = 10 (to rounding: a few ulps of the largest λ per term)
    assert scores["captured_energy"] == pytest.approx(10.0, rel=1e-12)
    assert scores["captured_energy_ratio"] == pytest.approx(1.0, rel=1e-12)
    assert scores["optimal_energy"] == 10.0
    assert scores["subspace_distance"] == pytest.approx(0.0, abs=1e-12)


def test_the_bottom_basis_scores_the_smallest_eigenvalues_and_distance_one():
    lam = np.array([5.0, 3.0, 2.0, 0.5, 0.25, 0.1])
    truth, q = _truth(lam, 3, np.random.default_rng(2))
    bottom = q[:, 3:]  # orthogonal to the top-3 subspace
    energy = PCA_METRICS["captured_energy"](bottom, truth)
    assert energy == pytest.approx(0.85, rel=1e-12)  # 0.5 + 0.25 + 0.1
    assert PCA_METRICS["captured_energy_ratio"](bottom, truth) == pytest.approx(0.085, rel=1e-12)
    # every principal angle is 90°: sin = 1
    assert PCA_METRICS["subspace_distance"](bottom, truth) == pytest.approx(1.0, rel=1e-12)


def test_a_basis_tilted_by_a_known_angle_scores_its_sine_and_cos_squared_energy():
    # one vector: v = cos θ e1 + sin θ e2 in A's eigenbasis, q(v) = λ1 cos²θ + λ2 sin²θ
    lam = np.array([4.0, 1.0, 0.5])
    truth, q = _truth(lam, 1, np.random.default_rng(3))
    theta = 0.3
    v = (np.cos(theta) * q[:, 0] + np.sin(theta) * q[:, 1])[:, None]
    assert PCA_METRICS["subspace_distance"](v, truth) == pytest.approx(np.sin(theta), rel=1e-12)
    expected = 4.0 * np.cos(theta) ** 2 + 1.0 * np.sin(theta) ** 2
    assert PCA_METRICS["captured_energy"](v, truth) == pytest.approx(expected, rel=1e-12)
