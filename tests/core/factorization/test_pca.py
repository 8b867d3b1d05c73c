"""Distributed PCA: metrics, algorithms, the sweep driver."""

import math
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import dpcore
from dpcore import ClassicGaussianWarning, pca_sweep
from dpcore.factorization import registry
from dpcore.factorization.datasets import draw_sites, second_moments, split_sizes, synthetic_dataset
from dpcore.factorization.metrics import (
    captured_energy,
    optimal_energy,
    subspace_distance,
    top_k_eigvecs,
)
from dpcore.factorization.pca import cape_pca, conv_pca, nonprivate_pca
from dpcore.protocol.cape import cape_average, cape_design

EPS_GRID = [0.5, 1.0, 5.0, 10.0]


@pytest.fixture(scope="module")
def paper_sweep():
    """The paper's synthetic setup (D=200, K=50, S=10, N_s=1000, δ=0.01), 10 runs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClassicGaussianWarning)
        return pca_sweep(
            epsilon=EPS_GRID, runs=10, seed=1, algorithms=["nonprivate", "cape", "conv", "local"]
        )


def test_top_k_is_by_signed_eigenvalue():
    a = np.diag([-10.0, 1.0, 2.0])
    np.testing.assert_allclose(np.abs(top_k_eigvecs(a, 1)[:, 0]), [0, 0, 1])


def test_top_k_matches_full_eigh():
    rng = np.random.default_rng(0)
    m = rng.standard_normal((30, 30))
    m = m + m.T
    vals, vecs = np.linalg.eigh(m)
    got = top_k_eigvecs(m, 5)
    assert subspace_distance(got, vecs[:, -5:]) < 1e-10
    assert captured_energy(got, m) == pytest.approx(vals[-5:].sum(), rel=1e-12)
    assert optimal_energy(m, 5) == pytest.approx(vals[-5:].sum(), rel=1e-12)


def test_subspace_distance_is_spectral_norm_of_projector_difference():
    rng = np.random.default_rng(2)
    for _ in range(20):
        a = np.linalg.qr(rng.standard_normal((12, 4)))[0]
        b = np.linalg.qr(rng.standard_normal((12, 4)))[0]
        direct = np.linalg.norm(a @ a.T - b @ b.T, ord=2)
        assert subspace_distance(a, b) == pytest.approx(direct, abs=1e-12)


@pytest.fixture(scope="module")
def moments():
    rng = np.random.default_rng(3)
    ds = synthetic_dataset(dim=40, k=10, n_samples=5000, rng=rng)
    blocks = draw_sites(ds, split_sizes(400, 5), rng=rng)
    assert all(np.linalg.norm(b, axis=1).max() <= 1 + 1e-12 for b in blocks)
    return ds, second_moments(blocks)


def test_infinite_epsilon_is_nonprivate(moments):
    _, m = moments
    w = np.full(5, 0.2)
    tau = dpcore.site_noise_std([400] * 5, epsilon=math.inf, delta=0.01)
    truth = nonprivate_pca(m, 10, weights=w)
    rng = np.random.default_rng(0)
    for faithful in (True, False):
        for algo in (cape_pca, conv_pca):
            basis = algo(m, 10, tau_site=tau, weights=w, faithful=faithful, rng=rng)
            assert subspace_distance(basis, truth) < 1e-10


def test_sweep_at_infinite_epsilon_matches_nonprivate():
    df = pca_sweep(dim=30, k=5, sites=3, n_per_site=200, epsilon=math.inf, runs=2, pool_size=2000)
    by = df.set_index(["algorithm", "run"]).captured_energy
    for alg in ("cape", "conv"):
        np.testing.assert_allclose(by[alg].to_numpy(), by["nonprivate"].to_numpy(), rtol=1e-12)


def test_fast_path_equals_faithful_protocol_in_distribution(moments):
    _, m = moments
    tau = dpcore.site_noise_std([400] * 5, epsilon=0.5, delta=0.01)
    w = np.full(5, 0.2)
    design = cape_design(tau, weights=w)
    pooled = np.tensordot(w, m, axes=1)
    # (1) The faithful aggregate noise has the per-entry variance the fast path draws:
    # 200 runs × 820 free entries = 164,000 draws, rel. s.e. sqrt(2/n) ≈ 0.0035, 5 s.e.
    rng = np.random.default_rng(4)
    noise = [
        cape_average(m, tau, weights=w, symmetric=True, rng=r).estimate - pooled
        for r in rng.spawn(200)
    ]
    free = np.stack([x[np.triu_indices(40)] for x in noise])
    np.testing.assert_allclose(free.var(), design.tau_agg**2, rtol=5 * math.sqrt(2 / free.size))

    # (2) Captured energy: mean over 60 runs of each path agree within 4 standard errors.
    def energies(faithful, seed):
        rs = np.random.default_rng(seed).spawn(60)
        return np.array(
            [
                captured_energy(
                    cape_pca(m, 10, tau_site=tau, weights=w, faithful=faithful, rng=r),
                    moments[0].reference,
                )
                for r in rs
            ]
        )

    a, b = energies(True, 5), energies(False, 6)
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    assert abs(a.mean() - b.mean()) < 4 * se


def test_paper_ordering_cape_ge_conv_ge_local(paper_sweep):
    mean = paper_sweep.groupby(["epsilon", "algorithm"]).captured_energy.mean().unstack()
    for eps in (0.5, 1.0, 5.0):
        assert mean.loc[eps, "cape"] >= mean.loc[eps, "conv"] >= mean.loc[eps, "local"]


def test_cape_approaches_nonprivate_as_epsilon_grows(paper_sweep):
    ratio = paper_sweep.groupby(["epsilon", "algorithm"]).captured_energy_ratio.mean().unstack()
    assert ratio["cape"].is_monotonic_increasing
    gap = ratio["nonprivate"] - ratio["cape"]
    assert gap.is_monotonic_decreasing and gap.loc[10.0] < 0.01
    assert ratio.loc[10.0, "cape"] >= 0.98


def test_frame_columns_and_rows(paper_sweep):
    for col in (
        "algorithm",
        "epsilon",
        "delta",
        "n_per_site",
        "sites",
        "run",
        "captured_energy",
        "captured_energy_ratio",
        "subspace_distance",
    ):
        assert col in paper_sweep.columns
    assert len(paper_sweep) == 4 * len(EPS_GRID) * 10
    assert paper_sweep.isna().sum().sum() == 0


SMALL = {"dim": 20, "k": 4, "sites": 3, "n_per_site": 100, "runs": 2, "pool_size": 1000}


def test_same_seed_same_frame_and_other_seed_differs():
    a = pca_sweep(epsilon=[0.1, 0.5], seed=9, **SMALL)
    b = pca_sweep(epsilon=[0.1, 0.5], seed=9, **SMALL)
    pd.testing.assert_frame_equal(a, b)
    c = pca_sweep(epsilon=[0.1, 0.5], seed=10, **SMALL)
    assert not np.allclose(a.captured_energy, c.captured_energy)


@pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")
@pytest.mark.parametrize("axis", ["epsilon", "n_per_site"])
def test_number_of_threads_does_not_change_numbers(axis):
    # Every (grid point, run) task carries its own spawned stream, so scheduling on 1 or 3
    # threads must give bit-identical frames (resampling sweeps draw data inside tasks).
    grid = {"epsilon": [0.1, 0.5, 2.0], "n_per_site": [50, 100]}[axis]
    kwargs = {**SMALL, "epsilon": 0.5, axis: grid, "seed": 4}
    serial = pca_sweep(**kwargs, workers=1)
    pd.testing.assert_frame_equal(serial, pca_sweep(**kwargs, workers=3))


@pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")
def test_nonprivate_is_constant_across_an_epsilon_sweep():
    # One data draw for an ε sweep: the non-private basis depends on nothing random after
    # it, so every grid point and run must report the same (near-optimal) energy.
    df = pca_sweep(epsilon=[0.1, 1.0], seed=3, **SMALL)
    nonpriv = df[df.algorithm == "nonprivate"]
    assert nonpriv.captured_energy.nunique() == 1
    assert nonpriv.captured_energy_ratio.iloc[0] == pytest.approx(1.0, abs=0.02)


def test_algorithm_selection_does_not_change_numbers():
    full = pca_sweep(epsilon=0.5, seed=2, **SMALL)
    only = pca_sweep(epsilon=0.5, seed=2, algorithms=["cape"], **SMALL)
    np.testing.assert_array_equal(
        full[full.algorithm == "cape"].captured_energy.to_numpy(), only.captured_energy.to_numpy()
    )


@pytest.mark.parametrize(
    ("axis", "grid"), [("n_per_site", [50, 100, 200]), ("sites", [2, 4]), ("delta", [1e-4, 0.1])]
)
def test_sweeps_along_each_axis(axis, grid):
    kwargs = {**SMALL, "epsilon": 0.5, axis: grid}
    df = pca_sweep(**kwargs)
    assert sorted(df[axis].unique()) == sorted(grid)
    assert set(df.algorithm) == set(registry.defaults("pca"))  # all but opt-in ones


def test_unequal_sites_and_faithful_path_run():
    df = pca_sweep(epsilon=0.5, site_shares=[5, 1, 1], faithful=True, **SMALL)
    assert np.all(np.isfinite(df.captured_energy))
    np.testing.assert_array_equal(split_sizes(100, 3, [5, 1, 1]), [214, 43, 43])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"epsilon": [0.1], "delta": [0.1]}, "at most one of"),
        ({"epsilon": 0.0}, "epsilon must be a float in"),
        ({"epsilon": []}, "at least one value"),
        ({"epsilon": 0.5, "k": 30}, "k must be an integer in"),
        ({"epsilon": 0.5, "sites": 1}, "sites must be at least 2 for"),  # the distributed ones
        ({"epsilon": 0.5, "n_per_site": 1000}, "pool size"),
        ({"epsilon": 0.5, "algorithms": ["magic"]}, "algorithms must be one of"),
        ({"epsilon": 0.5, "calibration": "exact"}, "calibration"),
        ({"epsilon": 0.5, "site_shares": [1, -1, 1]}, "site_shares"),
        ({"epsilon": 0.5, "rank": 2}, "rank"),
        ({"epsilon": 0.5, "workers": 0}, "workers must be an integer in"),
    ],
)
def test_sweep_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pca_sweep(**{**SMALL, **kwargs})


@pytest.mark.slow
def test_import_dpcore_does_not_import_ui_libraries():
    code = "import sys, dpcore; print(any(m in sys.modules for m in ('streamlit', 'plotly')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_public_api():
    for name in (
        "gaussian_sigma",
        "cape_design",
        "paper_design",
        "cape_average",
        "cape_gain",
        "pca_sweep",
    ):
        assert name in dpcore.__all__
        assert getattr(dpcore, name).__doc__
