"""CAPE across real sites (issue #48): dpcore.analysis.trust_federation against independent
computations of each case."""

import math

import numpy as np
import pytest

import dpcore
from dpcore import remedy_worst_case
from dpcore.analysis.trust_federation import CASES, REGISTRY, federation_trust
from dpcore.analysis.views import coalition_view, condition, effective_epsilons, joint_noise_std
from dpcore.mechanisms.calibration import second_moment_sensitivity, site_noise_std
from dpcore.protocol.joint_safe import design_for
from dpcore.protocol.pairwise import pair_variances

N = [500, 1000, 2000, 800, 1500]
EPS = [0.5, 1.0, 2.0, 1.0, 1.0]
MU = np.array(N) / sum(N)


def made(kind):
    tau = site_noise_std(N, epsilon=EPS, delta=1e-5, calibration="analytic")
    return design_for(kind, tau, weights=MU)


def pairwise_view_by_conditioning(design, colluder):
    """The honest releases' noise covariance when the aggregator and ``colluder`` know the
    colluder's pair noises: every pair noise n_st as its own variable, E_s = Σ_t ±n_st / μ_s,
    the colluder's n_ct observed exactly (dpcore's generic Gaussian conditioning, not the
    Laplacian shortcut of pairwise_coalition_covariance)."""
    s = design.n_sites
    pairs = [(a, b) for a in range(s) for b in range(a + 1, s)]
    var = pair_variances(design)
    prior = np.diag([var[a, b] for a, b in pairs])
    to_e = np.zeros((s, len(pairs)))
    for k, (a, b) in enumerate(pairs):
        to_e[a, k] = 1.0 / design.weights[a]
        to_e[b, k] = -1.0 / design.weights[b]
    known = np.array([[1.0 if colluder in p else 0.0 for p in pairs]])
    rows = np.eye(len(pairs))[known[0] > 0]
    left = condition(prior, rows, np.zeros((len(rows), len(rows))))
    honest = [t for t in range(s) if t != colluder]
    cov_e = to_e @ left @ to_e.T
    return honest, cov_e[np.ix_(honest, honest)] + np.diag(design.var_g[honest])


@pytest.mark.parametrize("kind", ["cape", "joint"])
def test_each_case_equals_an_independent_computation(kind):
    table = federation_trust(N, epsilon=EPS, delta=1e-5, weights=MU).set_index("case")
    assert list(table.index) == [c for c, _, _ in CASES]
    design = made(kind)
    sens = second_moment_sensitivity(np.array(N))
    eps = np.array(EPS)

    def ratio_max(pairs):
        return max(pairs, key=lambda p: p[0] / p[1])

    # the remedies: the worst over which site drops, brute force over every site
    for case, view in (
        ("helper, sealed remedy", "sealed"),
        ("helper, open remedy", "late"),
        ("helper, open remedy, repeated", "late, repeated"),
    ):
        worst = ratio_max(
            (float(e), float(p))
            for d in range(5)
            for e, p in zip(
                remedy_worst_case(design, [d], sensitivity=sens, epsilon=EPS, delta=1e-5).epsilon[
                    view
                ],
                eps,
                strict=True,
            )
        )
        assert table.loc[case, f"{kind} epsilon"] == pytest.approx(worst[0], rel=1e-12)
    # the pairwise aggregator with one site, by conditioning on the colluder's pair noises
    pair = []
    for c in range(5):
        honest, cov = pairwise_view_by_conditioning(design, c)
        e = effective_epsilons(joint_noise_std(cov), sens[honest], delta=1e-5)
        pair += list(zip(e, eps[honest], strict=True))
    assert table.loc["pairwise, aggregator + one site", f"{kind} epsilon"] == pytest.approx(
        ratio_max(pair)[0], rel=1e-7
    )
    # the pairwise E has the helper's covariance: the joint views agree
    assert table.loc["pairwise, joint view", f"{kind} epsilon"] == pytest.approx(
        table.loc["helper, joint view", f"{kind} epsilon"], rel=1e-7
    )
    # a colluding site knows every pair noise it shares, more than its own E: never less ε
    assert table.loc["pairwise, aggregator + one site", f"{kind} epsilon"] >= table.loc[
        "helper, aggregator + one site", f"{kind} epsilon"
    ] * (1 - 1e-9)
    # the sealed remedy is no worse than a normal run's joint view
    normal = effective_epsilons(coalition_view(design).joint_std, sens, delta=1e-5)
    assert table.loc["helper, sealed remedy", f"{kind} epsilon"] <= normal.max() * (1 + 1e-9)
    assert table.loc["pairwise, one dropout", f"{kind} site"] == 0  # nothing released


def test_the_joint_safe_design_keeps_the_sealed_remedy_and_breaks_the_open_one():
    table = federation_trust(N, epsilon=EPS, delta=1e-5, weights=MU).set_index("case")
    assert table.loc["helper, sealed remedy", "joint meets"]
    assert not table.loc["helper, open remedy", "joint meets"]
    assert not table.loc["pairwise, aggregator + one site", "joint meets"]
    # the open remedy's leak is the dropped site's: its ε exceeds its own promise
    site = int(table.loc["helper, open remedy", "joint site"])
    assert table.loc["helper, open remedy", "joint epsilon"] > EPS[site - 1]


def test_bad_arguments_are_refused_by_name():
    with pytest.raises(ValueError, match="calibration must be"):
        federation_trust(N, epsilon=1.0, delta=1e-5, calibration="exact")
    with pytest.raises(ValueError, match="neighbouring must be"):
        federation_trust(N, epsilon=1.0, delta=1e-5, neighbouring="swap")
    with pytest.raises(ValueError, match="epsilon"):
        federation_trust(N, epsilon=-1.0, delta=1e-5)
    with pytest.raises(
        ValueError, match=r"n_per_site \(number of sites\) must be an integer in \[2, 40\]"
    ):
        federation_trust([100] * 41, epsilon=1.0, delta=1e-5)
    assert math.isfinite(federation_trust([10, 10], epsilon=1.0, delta=1e-5)["joint epsilon"][0])


def test_cases_are_records_and_the_public_triples_are_derived_from_them():
    # issue #51: one record per case (its words and the function of its worst site); the
    # public (case, trusted, holds) triples and the table's order are the registry's
    assert CASES == tuple((c.name, c.trusted, c.holds) for c in REGISTRY)
    assert dpcore.FEDERATION_CASES == CASES
    assert len({c.name for c in REGISTRY}) == len(REGISTRY)
    table = federation_trust(N, epsilon=EPS, delta=1e-5, weights=MU)
    assert list(zip(table["case"], table["trusted"], table["holds"], strict=True)) == list(CASES)
