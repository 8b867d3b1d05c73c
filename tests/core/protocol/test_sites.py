"""dpcore.Sites: the sites of one run as one frozen, validated, hashable record (issue #35),
whose τ's, sensitivities and designs are the core's own functions of its fields."""

from __future__ import annotations

import dataclasses
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import dpcore
from dpcore.protocol.joint_safe import design_for

N, EPS, DELTA, W = (100, 200, 300), (0.5, 1.0, 2.0), (0.01, 0.01, 0.001), (1 / 6, 1 / 3, 1 / 2)


def test_fields_become_tuples_of_python_numbers_and_scalars_broadcast():
    sites = dpcore.Sites(np.array(N), 0.5, np.float64(1e-3))
    assert sites.n_per_site == N and all(type(n) is int for n in sites.n_per_site)
    assert sites.epsilon == (0.5,) * 3 and sites.delta == (1e-3,) * 3
    assert sites.weights == (1 / 3,) * 3  # default: 1/S each, exactly
    assert sites.count == len(sites) == 3
    assert sites.calibration == dpcore.Calibration("analytic", "add-remove")
    assert sites.neighbouring == "add-remove"
    # a kind's name keeps the record's relation
    replaced = dpcore.Sites(N, 0.5, 1e-3, neighbouring="replace").replace(calibration="classic")
    assert replaced.calibration == dpcore.Calibration("classic", "replace")


def test_frozen_hashable_and_equal_when_the_fields_are():
    a = dpcore.Sites(N, EPS, DELTA, W)
    b = dpcore.Sites(list(N), list(EPS), list(DELTA), list(W))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != a.replace(calibration="classic")
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.epsilon = (1.0, 1.0, 1.0)  # type: ignore[misc]


def test_weights_are_kept_as_given_not_renormalised():
    # The pages pass weights normalised once (ui.sites_table.site_args); normalising again
    # could move a last bit, and every number on screen must stay (tests/test_numbers_unchanged).
    raw = (0.3, 0.2, 0.5000000000000001)
    assert dpcore.Sites(N, EPS, DELTA, raw).weights == raw


def test_derived_values_are_the_core_functions_of_the_fields():
    for calibration in dpcore.CALIBRATIONS:
        sites = dpcore.Sites(N, EPS, DELTA, W, calibration)
        tau = dpcore.mean_noise_std(N, epsilon=EPS, delta=DELTA, calibration=calibration)
        np.testing.assert_array_equal(sites.taus, tau)
        np.testing.assert_array_equal(sites.sensitivities, 1.0 / np.asarray(N, float))
        for kind in ("cape", "joint"):
            want = design_for(kind, tau, weights=W)
            got = sites.design(kind)
            np.testing.assert_array_equal(got.tau_site, want.tau_site)
            np.testing.assert_array_equal(got.var_e, want.var_e)
            np.testing.assert_array_equal(got.e_mixing, want.e_mixing)
            assert got.tau_agg == want.tau_agg
        made = dpcore.mean_release_designs(sites)  # the record, and the exploded form
        assert made.cape.tau_agg == dpcore.mean_release_designs(
            N, epsilon=EPS, delta=DELTA, weights=W, calibration=calibration
        ).cape.tau_agg


def test_the_paper_design_carries_the_pooled_noise():
    # Sec. 3, eq. (2): with μ_s = N_s/N at a common (ε, δ), τ_agg equals the pooled τ exactly
    # (up to rounding): σ ∝ 1/N for the pooled mean of N = Σ N_s values.
    sizes = (100, 200, 300)
    sites = dpcore.Sites(sizes, 0.5, 1e-3, tuple(n / 600 for n in sizes))
    pooled = dpcore.mean_noise_std([600], epsilon=0.5, delta=1e-3, calibration="analytic")[0]
    assert math.isclose(sites.design().tau_agg, pooled, rel_tol=1e-12)


def test_the_neighbouring_relation_scales_the_second_moment_taus_by_sqrt2():
    # Replace-one doubles the L2 sensitivity's square of add/remove for A = X Xᵀ/N
    # (dpcore.second_moment_sensitivity): σ is linear in Δ.
    add = dpcore.Sites(N, EPS, DELTA).moment_taus
    rep = dpcore.Sites(N, EPS, DELTA, neighbouring="replace").moment_taus
    np.testing.assert_allclose(rep / add, math.sqrt(2.0), rtol=1e-12)


@pytest.mark.parametrize(
    ("changes", "error", "names"),
    [
        ({"n_per_site": (100,)}, ValueError, "n_per_site"),
        ({"n_per_site": (100, 0.5, 3)}, ValueError, "n_per_site"),
        ({"n_per_site": (1,) * 3000, "weights": None}, ValueError, "n_per_site"),
        ({"epsilon": (0.5, -1.0, 1.0)}, ValueError, "epsilon"),
        ({"epsilon": (0.5, 1.0)}, ValueError, "epsilon"),
        ({"epsilon": "0.5"}, TypeError, "epsilon"),
        ({"delta": (0.01, 1.0, 0.01)}, ValueError, "delta"),
        ({"delta": None}, TypeError, "delta"),
        ({"weights": (0.5, -0.1, 0.6)}, ValueError, "weights"),
        ({"weights": (0.0, 0.0, 0.0)}, ValueError, "weights"),
        ({"weights": (0.5, 0.5)}, ValueError, "weights"),
        ({"calibration": "exact"}, ValueError, "calibration"),
        ({"neighbouring": "swap"}, ValueError, "neighbouring"),
    ],
)
def test_a_bad_field_is_refused_naming_it(changes, error, names):
    fields = {"n_per_site": N, "epsilon": EPS, "delta": DELTA, "weights": W, **changes}
    with pytest.raises(error, match=names):
        dpcore.Sites(**fields)


@pytest.mark.slow
def test_its_repr_is_a_cache_key_the_same_in_every_process():
    # ui.cached keys st.cache_data on repr(Sites) (SPEC_HASH): every float by repr, so two
    # processes (different string-hash seeds) agree, and the repr rebuilds an equal record.
    # The two: this one and one fresh interpreter with another hash seed (an interpreter that
    # imports dpcore costs seconds: #35).
    code = "import dpcore; print(repr(dpcore.Sites((100, 200, 300), (0.5, 1.0, 2.0), 0.01)))"
    seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    other = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": seed, "PATH": ""},
    ).stdout
    text = repr(dpcore.Sites((100, 200, 300), (0.5, 1.0, 2.0), 0.01))
    assert other == text + "\n"
    names = {"Sites": dpcore.Sites, "Calibration": dpcore.Calibration}
    assert eval(text, names) == dpcore.Sites(N, EPS, 0.01)
