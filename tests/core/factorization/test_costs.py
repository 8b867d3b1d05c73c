"""dpcore.factorization.costs: the reals each party sends, against the paper's counts (Sec. 4 and
5)."""

from __future__ import annotations

import pytest

from dpcore.factorization.costs import communication_cost

SHAPES = [(1, 1, 1), (10, 2, 3), (20, 5, 7), (50, 50, 100)]  # (D, K, S)


@pytest.mark.parametrize(("dim", "k", "sites"), SHAPES)
def test_cape_pca_sends_three_matrices_per_site(dim, k, sites):
    # capePCA: the noise generator, the aggregator and the sites each send S D×D matrices
    cost = communication_cost("cape", problem="pca", dim=dim, k=k, sites=sites)
    assert cost["noise generator"] == cost["aggregator"] == cost["sites"] == sites * dim**2
    assert cost["total"] == 3 * sites * dim**2


@pytest.mark.parametrize(("dim", "k", "sites"), SHAPES)
def test_cape_agn_counts_the_papers_terms(dim, k, sites):
    # capeAGN (Sec. 5): 3SD² + 2SD³ + SDK + SK³ in all
    cost = communication_cost("cape", problem="otd", dim=dim, k=k, sites=sites)
    total = 3 * sites * dim**2 + 2 * sites * dim**3 + sites * dim * k + sites * k**3
    assert cost["total"] == total
    assert cost["total"] == cost["noise generator"] + cost["aggregator"] + cost["sites"]


@pytest.mark.parametrize("problem", ["pca", "otd"])
def test_nonprivate_sends_the_sites_flow_without_noise_and_local_ones_send_nothing(problem):
    cape = communication_cost("cape", problem=problem, dim=12, k=3, sites=4)
    pooled = communication_cost("nonprivate", problem=problem, dim=12, k=3, sites=4)
    assert pooled["sites"] == cape["sites"]  # the same messages from the sites ...
    assert pooled["noise generator"] == 0  # ... and no noise to cancel
    assert pooled["total"] < cape["total"]
    silent = ["local"] if problem == "pca" else ["local_agn", "local_avn", "random"]
    for name in silent:
        assert communication_cost(name, problem=problem, dim=12, k=3, sites=4)["total"] == 0


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"problem": "svd"}, "problem"),
        ({"dim": 0}, "dim"),
        ({"k": 11}, "k"),  # K ≤ D = 10
        ({"sites": 0}, "sites"),
        ({"rank": 1}, "rank"),  # R ≥ K = 2
    ],
)
def test_bad_shapes_are_refused_by_name(kwargs, name):
    args = {"problem": "pca", "dim": 10, "k": 2, "sites": 3, **kwargs}
    with pytest.raises(ValueError, match=name):
        communication_cost("dpdis", **args)
