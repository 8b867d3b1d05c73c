"""dpcore.protocol.protocol_demo: the protocol page's one CAPE run, every intermediate number."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore import cape_design
from dpcore.protocol.protocol_demo import protocol_demo


@pytest.mark.parametrize("kind", ["scalar", "2x2"])
@pytest.mark.parametrize("sites", [3, 4, 5])
def test_demo_is_a_faithful_cape_run(kind, sites):
    d = protocol_demo(sites=sites, kind=kind, seed=11)
    run = d.run
    scale = np.max(np.abs(run.e))
    assert np.max(np.abs(d.e_sum)) <= 1e-14 * max(scale, 1.0)  # Σ μ_s E_s = 0 to rounding
    np.testing.assert_allclose(run.estimate, d.value_sum + d.g_sum, rtol=0, atol=1e-14)
    np.testing.assert_allclose(d.unmasked, run.values + run.e + run.g, rtol=0, atol=1e-14)
    messages = {m.name: m.value for m in run.messages}
    for s in range(sites):
        np.testing.assert_array_equal(messages[f"E_{s + 1}"], run.e[s])
        np.testing.assert_array_equal(messages[f"Â_{s + 1}"], run.released[s])
    # eq. (2): the design is the paper's for equal sites
    d2 = cape_design(run.design.tau_site)
    np.testing.assert_allclose(d2.var_g, run.design.tau_site**2 / sites)


def test_same_seed_same_draw_other_seed_other_draw():
    a, b = protocol_demo(sites=4, seed=3), protocol_demo(sites=4, seed=3)
    np.testing.assert_array_equal(a.run.released, b.run.released)
    c = protocol_demo(sites=4, seed=4)
    assert not np.array_equal(a.run.released, c.run.released)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sites": 1}, "sites"),
        ({"sites": 3, "kind": "3x3"}, "kind"),
        ({"sites": 3, "seed": -1}, "seed"),
    ],
)
def test_demo_refuses_bad_inputs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        protocol_demo(**kwargs)


def test_the_values_are_each_sites_private_statistic():
    # a mean of values in [0, 1] per site; a 2×2 second moment of samples in the unit disc:
    # symmetric, PSD, trace ≤ 1
    scalar = protocol_demo(sites=4, kind="scalar", seed=5).run.values
    assert scalar.shape == (4,) and np.all((scalar >= 0) & (scalar <= 1))
    assert len(set(scalar.round(12))) == 4  # each site its own population
    moments = protocol_demo(sites=3, kind="2x2", seed=5).run.values
    assert moments.shape == (3, 2, 2)
    np.testing.assert_array_equal(moments, moments.transpose(0, 2, 1))
    assert np.all(np.linalg.eigvalsh(moments) >= -1e-15)
    assert np.all(np.trace(moments, axis1=1, axis2=2) <= 1 + 1e-12)


def test_infinite_epsilon_adds_no_noise():
    d = protocol_demo(sites=3, epsilon=np.inf, seed=2)
    np.testing.assert_array_equal(d.g_sum, 0.0)
    assert d.run.estimate == pytest.approx(float(d.value_sum), abs=1e-15)
