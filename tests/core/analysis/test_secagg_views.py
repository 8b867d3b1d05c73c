"""dpcore.analysis.secagg_views: what each party and coalition of a secure-aggregation round sees,
the dropout remedies and the communication cost."""

from __future__ import annotations

import itertools
import math

import pytest

import dpcore
from dpcore.analysis.secagg_views import secagg_cost, secagg_dropouts, secagg_views
from dpcore.experiments.limits import estimate_pca
from dpcore.protocol.secagg import SecAggDesign, secagg_design, symmetric_coordinates

pytestmark = pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")


def _design(sites: int = 5, coordinates: int = 50, **kw) -> SecAggDesign:
    return secagg_design([0.01] * sites, epsilon=1.0, delta=1e-5, coordinates=coordinates, **kw)


def test_views_follow_the_algebra_of_the_remaining_shares():
    design = _design(7, 20)  # t = 4
    base = secagg_views(design)
    server = base.set_index("party").loc["server"]
    assert server.noise_shares == 7 and server.meets
    assert server.noise_std == pytest.approx(design.scale * math.sqrt(7 * design.share_variance))
    assert base.set_index("party").loc["a site"].epsilon == 0.0
    eps = []
    for k in range(1, 7):
        row = secagg_views(design, colluding=k).iloc[-1]
        expected_shares = 7 - k if k < 4 else 1  # from t on, honest messages are unmasked
        assert row.noise_shares == expected_shares
        assert row.epsilon == pytest.approx(design.epsilons(expected_shares).max())
        eps.append(row.epsilon)
    assert all(b >= a for a, b in itertools.pairwise(eps))  # more colluders, less privacy
    assert not secagg_views(design, colluding=4).iloc[-1].meets


def test_dropout_remedies():
    design = _design(6, 20)
    table = secagg_dropouts(design, dropped=2).set_index("remedy")
    assert table.loc["none", "noise_shares"] == 4 and not table.loc["none", "meets"]
    assert table.loc["none", "epsilon"] == pytest.approx(design.epsilons(4).max())
    assert table.loc["over-provisioned", "meets"] and table.loc["re-run", "meets"]
    assert table.loc["re-run", "rounds"] == 2
    # over-provisioning pays in noise when nobody drops
    over = table.loc["over-provisioned"]
    assert over.std_if_no_dropout > table.loc["none", "std_if_no_dropout"]
    assert secagg_dropouts(design, dropped=0).set_index("remedy").loc["none", "meets"]
    # below the threshold t = 4 the server cannot unmask: only a re-run is possible
    short = secagg_dropouts(design, dropped=3).set_index("remedy")
    assert not short.loc["none", "possible"] and short.loc["re-run", "possible"]


def test_communication_cost():
    cost = secagg_cost(sites=10, coordinates=symmetric_coordinates(200, 2), bits=20)
    assert cost.input_bits == 20100 * 20 and cost.rounds == 4 and cost.pairs == 45
    assert cost.bits_per_site == cost.input_bits + cost.setup_bits + cost.unmask_bits
    reals = dpcore.communication_cost("secagg", problem="pca", dim=10, k=2, sites=3)
    assert reals == {"noise generator": 0, "aggregator": 0, "sites": 300, "total": 300}
    work = dict(dim=50, sites=10, n_max=100, pool=1000, points=3, runs=5)
    assert (
        estimate_pca(**work, algorithms=["cape", "secagg"]).seconds
        > estimate_pca(**work, algorithms=["cape"]).seconds
    )
