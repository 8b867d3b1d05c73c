"""One σ per (sites, calibration), whichever path computes it (issue #51).

Every door that turns (N_s, ε_s, δ_s) into a Gaussian noise std — the mechanism
(:func:`dpcore.gaussian_sigma`, :class:`dpcore.Calibration`), the per-site helpers, the
:class:`dpcore.Sites` record, the trust tables, secure aggregation's matched share and the PCA
sweep's algorithm entries (CAPE's τ_s and the trusted curator ``central_gauss``) — must give
the same σ for the same sites and calibration, and the same default calibration when none is
named. The oracle is the defining formula itself: σ = Δ·sqrt(2 ln(1.25/δ))/ε for classic and
the root of Balle & Wang's δ(σ) for analytic (:func:`dpcore.gaussian_delta`), with Δ_s = 1/N_s
for a mean and 1/N_s or √2/N_s for a second moment. Equal "to rounding": the paths share the
cached unit σ, so they agree to a few ulps (rtol 1e-12).

Checked to fail before the change: on the previous main the default doors disagree by 1.64×
(``mean_noise_std`` classic, ``Sites`` analytic) and the sweep's ``central_gauss`` drew the
analytic σ inside a classic sweep.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import dpcore
from dpcore.analysis.trust_iterative import iterative_trust_table
from dpcore.analysis.trust_models import trust_overview
from dpcore.experiments.sweeps import pca as pca_sweep_module
from dpcore.experiments.sweeps.spec import OtdSpec, PcaSpec
from dpcore.factorization import central
from dpcore.protocol.sites import Sites

RTOL = 1e-12  # the same floating-point operations on the same cached unit σ: a few ulps
SETS = 200
TABLE_SETS = 25  # the trust tables' collusion searches: a sample of the sets is enough
KINDS = ("analytic", "classic")
RELATIONS = ("add-remove", "replace")


def _random_sites(rng: np.random.Generator) -> dict:
    s = int(rng.integers(2, 7))
    weights = rng.uniform(0.05, 1.0, s)
    return {
        "n_per_site": [int(n) for n in np.exp(rng.uniform(0, math.log(1e6), s)).round()],
        "epsilon": [float(e) for e in np.exp(rng.uniform(math.log(0.01), math.log(20.0), s))],
        "delta": [float(d) for d in np.exp(rng.uniform(math.log(1e-9), math.log(0.1), s))],
        "weights": [float(w) for w in weights / weights.sum()],
    }


SITE_SETS = [_random_sites(r) for r in np.random.default_rng(51).spawn(SETS)]


def _oracle(sensitivity: float, epsilon: float, delta: float, kind: str) -> float:
    """σ from its definition, not from the core's calibration code."""
    if kind == "classic":
        return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    from scipy.optimize import brentq

    def excess(log_sigma: float) -> float:  # δ(σ) − δ, decreasing in σ
        sigma = math.exp(log_sigma)
        return dpcore.gaussian_delta(sigma, sensitivity=sensitivity, epsilon=epsilon) - delta

    lo, hi = math.log(sensitivity) - 40, math.log(sensitivity) + 40
    return math.exp(brentq(excess, lo, hi, xtol=1e-15, rtol=1e-15))


@pytest.fixture(autouse=True)
def _quiet_classic():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcore.ClassicGaussianWarning)
        yield


@pytest.mark.slow  # 0.7–1.5 s each: 200 sets × five paths, the oracle on 20
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("relation", RELATIONS)
def test_every_per_site_path_gives_one_sigma(kind, relation):
    cal = dpcore.Calibration(kind, relation)
    scale = 1.0 if relation == "add-remove" else math.sqrt(2.0)
    for fields in SITE_SETS:
        n = np.array(fields["n_per_site"], dtype=float)
        eps, dlt = np.array(fields["epsilon"]), np.array(fields["delta"])
        sites = Sites(**fields, calibration=cal)
        mean = dpcore.mean_noise_std(n, epsilon=eps, delta=dlt, calibration=cal)
        moment = dpcore.site_noise_std(n, epsilon=eps, delta=dlt, calibration=cal)
        one_by_one = [
            cal.sigma(scale / m, epsilon=e, delta=d) for m, e, d in zip(n, eps, dlt, strict=True)
        ]
        by_name = dpcore.site_noise_std(
            n, epsilon=eps, delta=dlt, calibration=kind, neighbouring=relation
        )
        np.testing.assert_allclose(sites.taus, mean, rtol=RTOL)
        np.testing.assert_allclose(sites.moment_taus, moment, rtol=RTOL)
        np.testing.assert_allclose(moment, one_by_one, rtol=RTOL)
        np.testing.assert_allclose(by_name, moment, rtol=RTOL)
        np.testing.assert_allclose(
            dpcore.gaussian_sigmas(scale / n, epsilon=eps, delta=dlt, calibration=cal),
            moment,
            rtol=RTOL,
        )
    # the formula itself on a sample of the sets (the root finding costs ~1 ms a site)
    for fields in SITE_SETS[:20]:
        sites = Sites(**fields, calibration=cal)
        want = [
            _oracle(scale / m, e, d, kind)
            for m, e, d in zip(sites.n_per_site, sites.epsilon, sites.delta, strict=True)
        ]
        # brentq to 1e-15 on log σ; δ(σ) is flat in σ near the root only for tiny δ: 1e-9
        np.testing.assert_allclose(sites.moment_taus, want, rtol=1e-9)


def test_the_default_is_one_calibration_at_every_door():
    default = dpcore.DEFAULT_CALIBRATION
    assert default == dpcore.Calibration("analytic", "add-remove")
    for fields in SITE_SETS:
        n, eps, dlt = fields["n_per_site"], fields["epsilon"], fields["delta"]
        sites = Sites(**fields)
        assert sites.calibration == default
        named = Sites(**fields, calibration=default)
        np.testing.assert_allclose(
            dpcore.mean_noise_std(n, epsilon=eps, delta=dlt), named.taus, rtol=RTOL
        )
        np.testing.assert_allclose(
            dpcore.site_noise_std(n, epsilon=eps, delta=dlt), named.moment_taus, rtol=RTOL
        )
        np.testing.assert_allclose(sites.taus, named.taus, rtol=RTOL)
        np.testing.assert_allclose(
            dpcore.gaussian_sigma(1.0 / n[0], epsilon=eps[0], delta=dlt[0]),
            named.taus[0],
            rtol=RTOL,
        )
    assert PcaSpec.build(epsilon=0.5).privacy.gaussian == default
    assert OtdSpec.build(epsilon=0.5).privacy.gaussian.kind == default.kind


@pytest.mark.slow  # ~1.4 s each: 25 trust overviews with their collusion searches
@pytest.mark.parametrize("kind", KINDS)
def test_designs_trust_tables_and_secure_aggregation_share_the_sites_sigma(kind):
    cal = dpcore.Calibration(kind)
    for fields in SITE_SETS:
        sites = Sites(**fields, calibration=cal)
        tau = sites.moment_taus
        mu = sites.mu
        # the record's designs, and the mean-release designs (τ of the mean)
        designs = dpcore.mean_release_designs(sites)
        np.testing.assert_allclose(designs.cape.tau_site, sites.taus, rtol=RTOL)
        assert designs.cape.tau_pool == pytest.approx(np.max(mu * sites.taus), rel=RTOL)
    # the trust tables build collusion searches: a sample of the sets is enough for them
    for fields in SITE_SETS[:: SETS // TABLE_SETS]:
        sites = Sites(**fields, calibration=cal)
        tau, mu = sites.moment_taus, sites.mu
        central_std = float(np.max(mu * tau))
        overview = trust_overview(sites, dim=3, secagg_calibration=kind)
        table = overview.table.set_index("scheme")
        assert table.loc["central", "noise_std"] == pytest.approx(central_std, rel=RTOL)
        # exploded form = record form
        exploded = trust_overview(
            fields["n_per_site"], epsilon=fields["epsilon"], delta=fields["delta"],
            weights=list(mu), dim=3, calibration=kind, secagg_calibration=kind,
        ).table  # fmt: skip
        np.testing.assert_allclose(
            exploded["noise_std"].to_numpy(float), overview.table["noise_std"].to_numpy(float)
        )
        # secure aggregation matched to the sites' calibration: its curator reference is
        # the sites' pooled σ, and its share sum carries the same calibration's σ at the
        # rounded sensitivity Δ̃_s (integer units) and δ_s − β_s (rounding's share of δ),
        # the largest any site needs
        sa = overview.secagg
        assert sa.tau_central == pytest.approx(central_std, rel=RTOL)
        need = max(
            cal.sigma(float(r), epsilon=e, delta=d - b)
            for r, e, d, b in zip(sa.rounded_l2, sa.epsilon, sa.delta, sa.beta, strict=True)
            if r > 0
        )
        assert sa.sigma * math.sqrt(sa.noise_shares) == pytest.approx(need, rel=1e-12)
        rows = iterative_trust_table(sites, dim=3)
        assert (rows["std_ratio"] * central_std).to_numpy(float) == pytest.approx(
            rows["noise_std"].to_numpy(float), rel=1e-12, nan_ok=True
        )


@pytest.mark.parametrize("kind", KINDS)
def test_the_sweeps_entries_use_the_sweeps_calibration(kind, monkeypatch):
    """CAPE's τ_s and the curator's σ inside one PCA sweep are the sites' σ."""
    seen: dict[str, list] = {"tau": [], "sigma": []}
    noise_std = pca_sweep_module._noise_std

    def record_tau(spec, point):
        tau = noise_std(spec, point)
        sizes, weights = spec.sites.layout(point)
        seen["tau"].append((sizes, weights, point.epsilon, point.delta, tau))
        return tau

    add_noise = central.add_symmetric_noise

    def record_sigma(matrix, sigma, *, rng):
        seen["sigma"].append(sigma)
        return add_noise(matrix, sigma, rng=rng)

    monkeypatch.setattr(pca_sweep_module, "_noise_std", record_tau)
    monkeypatch.setattr(central, "add_symmetric_noise", record_sigma)
    dpcore.pca_sweep(
        dim=3, k=1, sites=3, n_per_site=100, epsilon=[0.3, 3.0], delta=1e-3,
        site_shares=[1, 2, 5], runs=1, pool_size=4000, calibration=kind,
        algorithms=("cape", "central_gauss"), workers=1, rng=0,
    )  # fmt: skip
    assert len(seen["tau"]) == 2 and len(seen["sigma"]) == 2
    for (sizes, weights, eps, dlt, tau), sigma in zip(seen["tau"], seen["sigma"], strict=True):
        sites = Sites(sizes, eps, dlt, weights, calibration=kind)
        np.testing.assert_allclose(tau, sites.moment_taus, rtol=RTOL)
        # one ε for all sites: σ(max μ_s Δ_s) = max μ_s σ(Δ_s), the CAPE design's τ_pool
        assert sigma == pytest.approx(float(np.max(sites.mu * sites.moment_taus)), rel=1e-12)
