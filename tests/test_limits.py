"""The resource guard: requests past the documented limits are refused before any work."""

import re
import time

import pytest

from dpcore import OtdSpec, PcaSpec, dropout_pca, otd_sweep, pca_sweep, synthetic_dataset
from dpcore.experiments import limits, paper
from dpcore.experiments.limits import MAX_SECONDS, estimate_otd, estimate_pca, is_heavy, work


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


DROPOUT = {
    "n_per_site": [100] * 3,
    "epsilon": [0.5] * 3,
    "delta": [0.01] * 3,
    "weights": [1 / 3] * 3,
    "dropped": [0],
}


@pytest.mark.parametrize(
    ("call", "lead"),
    [
        # memory: the pool term 8·pool·D dominates (8·2^62·50 B), then the D² term
        (lambda: dropout_pca(**DROPOUT, pool_size=2**62), "pool_size = 4,611,686,018,427,387,904"),
        (lambda: pca_sweep(epsilon=1.0, dim=5000, k=5), "dim = 5,000"),
        # time: the power method's k·restarts·max_iter·20 µs term, then its k³ products
        (lambda: otd_sweep(epsilon=1.0, max_iter=10**9), "max_iter = 1,000,000,000"),
        (lambda: otd_sweep(epsilon=1.0, dim=100, k=100), "k = 100"),
        (lambda: otd_sweep(epsilon=1.0, dim=100, k=5, n_per_site=5_000_000), "n_per_site"),
        (lambda: pca_sweep(epsilon=[0.1, 1.0], runs=4000), "runs = 4,000 (with 2 grid points)"),
    ],
    ids=["pool", "dim", "max_iter", "k", "n_per_site", "runs"],
)
def test_a_refusal_leads_with_the_parameter_that_drives_the_cost(call, lead):
    # issue #23 item 7: "this sweep needs about … GiB" named no parameter; the largest term
    # of the estimate names it (and the others of that term, and how to reduce each)
    with pytest.raises(ValueError) as refused:
        call()
    message = str(refused.value)
    assert message.startswith(lead), message
    name = lead.split()[0]
    assert "the limit is" in message and re.search(rf"\b{name}\b", message.split(". Use ")[1])


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


def test_the_work_of_a_spec_is_the_estimate_of_its_settings():
    spec = PcaSpec.build(epsilon=0.5, sites=[2, 5], dim=50, k=5, runs=4, algorithms=["cape"])
    assert work(spec) == estimate_pca(
        dim=50, sites=5, n_max=1000, pool=60_000, points=2, runs=4, algorithms=["cape"]
    )
    tensor = OtdSpec.build(epsilon=1.0, n_per_site=[100, 400], runs=3, restarts=1, max_iter=7)
    assert work(tensor) == estimate_otd(
        dim=10,
        k=5,
        sites=5,
        n_total=2000,
        draws=6,  # N_s sweep: one draw per grid point and run
        points=2,
        runs=3,
        faithful=False,
        algorithms=list(tensor.algorithms),
        restarts=1,
        max_iter=7,
    )


def test_the_heavy_rule_keeps_the_pages_decisions_where_it_should():
    # is_heavy's docstring: the pages' defaults and lesson 5 light, PCA at D = 200 with the
    # default 5 runs heavy, and a real data set always heavy.
    eps = (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0)
    algs = ["nonprivate", "cape", "conv", "local"]
    assert not is_heavy(PcaSpec.build(dim=50, k=10, epsilon=eps, runs=5, algorithms=algs))
    assert not is_heavy(PcaSpec.build(dim=20, k=5, epsilon=eps, runs=5, algorithms=algs[:3]))
    assert is_heavy(PcaSpec.build(dim=200, k=50, epsilon=eps, runs=5, algorithms=algs))
    assert not is_heavy(OtdSpec.build(epsilon=eps, runs=8, algorithms=["nonprivate", "cape"]))
    data = synthetic_dataset(dim=4, k=2, n_samples=100, rng=0)
    assert is_heavy(PcaSpec.build(data=data, epsilon=1.0, k=2, sites=2, n_per_site=10, runs=1))


def test_is_heavy_reads_its_threshold_when_called(monkeypatch):
    spec = PcaSpec.build(epsilon=1.0, dim=10, k=2, runs=1)
    assert not limits.is_heavy(spec)
    monkeypatch.setattr(limits, "HEAVY_SECONDS", 0.0)  # a test's tiny threshold
    assert limits.is_heavy(spec)
