"""The resource guard: requests past the documented limits are refused before any work."""

import time

import pytest

from dpcore import otd_sweep, paper, pca_sweep
from dpcore.limits import MAX_SECONDS, estimate_otd, estimate_pca


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: pca_sweep(epsilon=[0.1, 1.0], runs=4000), "grid points × runs"),
        (lambda: pca_sweep(epsilon=1.0, dim=5000, k=5), "GiB of memory"),
        (lambda: pca_sweep(epsilon=list(range(1, 21)), dim=1000, k=5, runs=20), "minutes"),
        (lambda: otd_sweep(epsilon=1.0, dim=101, k=3), r"dim must be an integer in \[1, 100\]"),
        (lambda: otd_sweep(epsilon=1.0, dim=100, k=5, n_per_site=5_000_000), "minutes"),
    ],
    ids=["tasks", "memory", "time-pca", "tensor-dim", "time-tensor"],
)
def test_oversized_requests_are_refused_at_once(call, match):
    start = time.perf_counter()
    with pytest.raises(ValueError, match=match):
        call()
    assert time.perf_counter() - start < 2.0  # refused before the work, not after


def test_every_paper_panel_is_within_the_limits():
    # The paper's own configurations must never be refused (the heaviest: MNIST vs N_s).
    for panel in paper.PANELS.values():
        p, axis = panel.params, panel.axis
        grid = p[axis]
        if panel.task == "pca":
            dim = p.get("dim", {"mnist": 784, "covtype": 54}.get(panel.data))
            n_max = max(grid) if axis == "n_per_site" else p["n_per_site"]
            est = estimate_pca(
                dim=dim,
                sites=10,
                n_max=n_max,
                pool=60_000,
                points=len(grid),
                runs=10,
                algorithms=["nonprivate", "cape", "conv", "local", "dpdis"],
            )
        else:
            n = max(grid) if axis == "n_per_site" else p["n_per_site"]
            est = estimate_otd(
                dim=p["dim"],
                k=p["k"],
                sites=5,
                n_total=5 * n,
                draws=len(grid) * 10 if axis == "n_per_site" else 1,
                points=len(grid),
                runs=10,
                faithful=False,
            )
        assert est.seconds < MAX_SECONDS, panel.key
