"""party_rng: each party's stream on its own equals the in-process protocol's (#37)."""

import numpy as np
import pytest

from dpcore.protocol.cape import (
    aggregator_step,
    cape_average,
    noise_generator_step,
    party_rng,
    site_step,
)
from dpcore.protocol.joint_safe import design_for


@pytest.mark.parametrize(
    ("kind", "symmetric", "shape"), [("cape", False, (3,)), ("joint", True, (4, 4))]
)
def test_parties_drawing_alone_reproduce_cape_average(kind, symmetric, shape):
    """E, F, G and the releases from per-party streams equal cape_average's bit for bit."""
    rng = np.random.default_rng(1)
    n_sites, seed = 5, 123
    values = rng.standard_normal((n_sites, *shape))
    if symmetric:
        values = values + np.swapaxes(values, 1, 2)
    tau = rng.uniform(0.5, 2.0, n_sites)
    weights = rng.uniform(1.0, 5.0, n_sites)
    design = design_for(kind, tau, weights=weights / weights.sum())
    run = cape_average(values, tau, design=design, symmetric=symmetric, rng=seed)

    e = noise_generator_step(
        design, shape, symmetric=symmetric, rng=party_rng(seed, "noise generator")
    )
    f = aggregator_step(design, shape, symmetric=symmetric, rng=party_rng(seed, "aggregator"))
    np.testing.assert_array_equal(e, run.e)
    np.testing.assert_array_equal(f, run.f)
    for s in range(n_sites):
        g, released = site_step(
            values[s],
            e[s],
            f[s],
            float(design.tau_g[s]),
            symmetric=symmetric,
            rng=party_rng(seed, "site", s),
        )
        np.testing.assert_array_equal(g, run.g[s])
        np.testing.assert_array_equal(released, run.released[s])


def test_streams_differ_between_parties_and_seeds():
    draws = [
        party_rng(0, "noise generator").random(),
        party_rng(0, "aggregator").random(),
        party_rng(0, "site", 0).random(),
        party_rng(0, "site", 1).random(),
        party_rng(1, "site", 0).random(),
    ]
    assert len(set(draws)) == len(draws)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"seed": -1, "party": "site"}, "seed"),
        ({"seed": 0, "party": "server"}, "party"),
        ({"seed": 0, "party": "site", "site": -1}, "site"),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        party_rng(**kwargs)
