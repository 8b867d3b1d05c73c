"""The resource guard: requests past the documented limits are refused before any work."""

import concurrent.futures
import re
import time

import pytest

import dpcore
from dpcore import OtdSpec, PcaSpec, dropout_pca, otd_sweep, parallel, pca_sweep, synthetic_dataset
from dpcore.experiments import limits, paper
from dpcore.experiments.limits import MAX_SECONDS, estimate_otd, estimate_pca, is_heavy, work

CLASS = limits.CLASSROOM  # the class server's budget, asked for explicitly (issue #39)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: pca_sweep(epsilon=[0.1, 1.0], runs=4000, budget=CLASS), "grid points × runs"),
        (lambda: pca_sweep(epsilon=1.0, dim=5000, k=5, budget=CLASS), "GiB of memory"),
        (
            lambda: pca_sweep(epsilon=list(range(1, 21)), dim=1000, k=5, runs=20, budget=CLASS),
            "minutes",
        ),
        (lambda: otd_sweep(epsilon=1.0, dim=101, k=3), r"dim must be an integer in \[1, 100\]"),
        (
            lambda: otd_sweep(epsilon=1.0, dim=100, k=5, n_per_site=5_000_000, budget=CLASS),
            "minutes",
        ),
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
        (
            lambda: dropout_pca(**DROPOUT, pool_size=2**62, budget=CLASS),
            "pool_size = 4,611,686,018,427,387,904",
        ),
        (lambda: pca_sweep(epsilon=1.0, dim=5000, k=5, budget=CLASS), "dim = 5,000"),
        # time: the power method's k·restarts·max_iter·20 µs term, then its k³ products
        (lambda: otd_sweep(epsilon=1.0, max_iter=10**9, budget=CLASS), "max_iter = 1,000,000,000"),
        (lambda: otd_sweep(epsilon=1.0, dim=100, k=100, budget=CLASS), "k = 100"),
        (
            lambda: otd_sweep(epsilon=1.0, dim=100, k=5, n_per_site=5_000_000, budget=CLASS),
            "n_per_site",
        ),
        (
            lambda: pca_sweep(epsilon=[0.1, 1.0], runs=4000, budget=CLASS),
            "runs = 4,000 (with 2 grid points)",
        ),
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


# --- the classroom's limits belong to the class server, not the research API (issue #39) --

# The two sweeps the researcher was refused: 6,000 tasks; and ~18 minutes on 2 cores.
MANY_RUNS = {"epsilon": [0.1, 1.0, 10.0], "runs": 2000}
LARGE_DIM = {"epsilon": [0.1, 1.0, 10.0], "dim": 1000, "k": 10, "runs": 100}


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")
def test_the_library_sets_no_limit_unless_asked(monkeypatch):
    # before: pca_sweep refused both with "the limit is 5,000" / "about 18 minutes"
    from dpcore.experiments.sweeps import pca as sweep_module

    ran = []
    monkeypatch.setattr(
        sweep_module,
        "parallel_map",
        lambda fn, tasks, *a, **k: ran.append(tasks) or [[] for _ in tasks],  # no rows each
    )
    for keywords in (MANY_RUNS, LARGE_DIM):
        spec = PcaSpec.build(**keywords)
        assert work(spec, workers=2).tasks > limits.MAX_TASKS or (
            work(spec, workers=2).seconds > MAX_SECONDS
        )  # past the classroom's limits on this 2-core machine
        if keywords is MANY_RUNS:  # the data-free part is instant; the large D draws a pool
            frame = pca_sweep(**keywords)
            assert frame.empty and len(ran[-1]) == 6000  # every task reached the map


def test_a_budget_counts_the_workers_that_run_the_sweep():
    spec = PcaSpec.build(**LARGE_DIM)
    two, sixty_four = work(spec, workers=2), work(spec, workers=64)
    # seconds = A/workers + B: the eigendecompositions and draws divide by the workers, the
    # moment products do not; so s(2) − s(4) = A/4 = 2·(s(4) − s(8))
    s2, s4, s8 = (work(spec, workers=w).seconds for w in (2, 4, 8))
    assert s2 - s4 == pytest.approx(2 * (s4 - s8), rel=1e-12) and s4 - s8 > 0
    budget = dpcore.WorkBudget.of(max_minutes=10)
    assert two.seconds > 600 > sixty_four.seconds
    with pytest.raises(ValueError, match=r"would take about \d+ minutes; the limit is 10 minutes"):
        limits.check_budget(two, what="this sweep", budget=budget)
    assert limits.check_budget(sixty_four, what="this sweep", budget=budget) is sixty_four

    class Pool(concurrent.futures.Executor):  # an executor of 64 workers (a cluster)
        _max_workers = 64

    assert parallel.planned_workers(None, Pool()) == 64
    assert parallel.planned_workers(3, Pool()) == 3


def test_a_work_budget_validates_its_bounds():
    assert dpcore.WorkBudget.of(max_tasks=10, max_memory_gib=0.5) == dpcore.WorkBudget(
        10, None, 2**29
    )
    with pytest.raises(ValueError, match=r"max_minutes must be a float in \(0, inf"):
        dpcore.WorkBudget.of(max_minutes=0)
    with pytest.raises(ValueError, match=r"max_tasks must be an integer in \[1, inf\]; got -3"):
        dpcore.WorkBudget.of(max_tasks=-3)
    with pytest.raises(TypeError, match="budget must be a WorkBudget"):
        limits.check_budget(work(PcaSpec.build(epsilon=1.0)), what="x", budget=600)


@pytest.mark.parametrize(
    ("keywords", "match"),
    [(MANY_RUNS, "6,000 grid points × runs; the limit is 5,000"), (LARGE_DIM, "minutes")],
    ids=["runs", "dim"],
)
def test_the_class_server_still_refuses_them_for_students(monkeypatch, keywords, match):
    from serving import classroom, worker

    monkeypatch.setenv("CAPE_WORKERS", "2")  # the class server's two cores
    spec = PcaSpec.build(**keywords)
    start = time.perf_counter()
    with pytest.raises(ValueError, match=match):
        classroom.check(spec)
    with pytest.raises(ValueError, match=match):  # the heavy-job child's own check
        worker.pca_frame(spec, 0, ("synthetic",), None)
    with pytest.raises(ValueError, match=match):  # the page's thread (ui.cached)
        import ui.cached

        ui.cached.pca_frame.__wrapped__(spec, 0)
    assert time.perf_counter() - start < 5.0  # refused before the work


def test_the_class_server_refuses_tensor_sweeps_and_paper_panels_past_the_limits(monkeypatch):
    from serving import classroom, worker

    monkeypatch.setenv("CAPE_WORKERS", "2")
    heavy = OtdSpec.build(epsilon=1.0, dim=100, k=5, n_per_site=5_000_000)
    for call in (
        lambda: classroom.check(heavy),
        lambda: worker.otd_frame(heavy, 0),
        lambda: worker.paper_panel("2a", 100_000, 0, "classic", "", ""),
    ):
        with pytest.raises(ValueError, match="the limit is"):
            call()


def test_no_budget_still_refuses_what_cannot_fit_this_machine():
    # no policy limit, but runs=2**62 would spawn streams until the process died
    start = time.perf_counter()
    match = r"^runs = 4,611,686,018,427,387,904.*this machine's memory"
    with pytest.raises(ValueError, match=match):
        pca_sweep(epsilon=1.0, runs=2**62)
    assert time.perf_counter() - start < 2.0
    machine = limits.machine()
    assert machine.memory_bytes is None or machine.memory_bytes > 2**28  # a real machine


def test_the_class_server_refuses_a_rounds_sweep_past_the_limits(monkeypatch):
    # main's rounds axis (#38) ran its PCA sweeps under the core's old default limit; with no
    # limit in the core (#39) the class server checks the whole request, summed over its sweeps
    from dpcore.experiments.sweeps.rounds import RoundsSpec
    from serving import classroom, worker

    monkeypatch.setenv("CAPE_WORKERS", "2")
    heavy = RoundsSpec.build(rounds=(1, 2), **MANY_RUNS)
    assert work(heavy, workers=2).tasks == sum(
        work(part, workers=2).tasks for _, part in heavy.parts()
    )
    start = time.perf_counter()
    for call in (
        lambda: classroom.check(heavy),
        lambda: worker.rounds_table(heavy, 0, ("synthetic",), None),
    ):
        with pytest.raises(ValueError, match="this rounds sweep asks for 6,000 grid points"):
            call()
    assert time.perf_counter() - start < 5.0  # refused before the work
    light = RoundsSpec.build(epsilon=1.0, runs=2)
    assert is_heavy(light) is False  # the estimate takes the workers like a sweep spec's
    classroom.check(light)  # within the limits: no error
