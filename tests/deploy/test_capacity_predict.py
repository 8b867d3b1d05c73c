"""The capacity predictor's model (deploy/capacity.py, issue #50): the class it simulates is
benchmarks.capacity's, the server model shares a core exactly, and more work or fewer cores
never predict a larger class. Its measurement runs on a real server (docs/performance.md,
`python -m deploy.capacity --check`), not here."""

from __future__ import annotations

import subprocess
import sys

import pytest

from deploy.capacity import ClassCosts, PageCost, largest_class, simulate

PAGES = ("overview", "pca", "privacy", "glossary")


def costs(cached: float = 0.02, new: float = 0.2, open_: float = 0.03, first: float = 1.0):
    rows = tuple(
        PageCost(
            p,
            open_,
            cached,
            new,
            new,
            0 if p == "glossary" else 50,
            10,
            0 if p == "glossary" else 3,
        )
        for p in PAGES
    )
    return ClassCosts(rows, first, first)


def test_one_student_waits_exactly_the_work_of_each_request():
    # alone on a core, a request's latency is its CPU: every price the same → every latency
    result = simulate(costs(0.05, 0.05, 0.05, 0.05), 1)
    assert result["p50 s"] == result["max s"] == pytest.approx(0.05)
    assert result["utilisation"] < 0.05  # 0.05 s of work every 3–8 s


def test_two_requests_at_once_share_the_core():
    # two students arrive together (ramp 0): their first requests run side by side at half
    # speed each (processor sharing), so both links finish at 2 × 0.4 s; those are not counted,
    # but the utilisation shows the core busy for 0.8 s of work, and later moves, 3–8 s apart
    # and 1 ms long, almost never overlap: the median is 1 ms exactly.
    result = simulate(costs(0.001, 0.001, 0.001, 0.4), 2, ramp=0, seconds=20)
    assert result["p50 s"] == pytest.approx(0.001)
    alone = simulate(costs(0.001, 0.001, 0.001, 0.4), 1, ramp=0, seconds=20)
    assert result["interactions"] >= 2 * alone["interactions"] - 2


def test_the_class_makes_as_many_actions_as_the_benchmark_does():
    # benchmarks.capacity's 30 students over 90 s made 427–431 actions (docs/performance.md,
    # 2026-11-28): one every 5.5 s on average (uniform 3–8 s waits), from arrival to the end
    result = simulate(costs(0.001, 0.001, 0.001, 0.001), 30)
    assert 400 <= result["interactions"] <= 460


@pytest.mark.slow
def test_more_work_or_fewer_cores_never_predicts_a_bigger_class():
    cheap, _ = largest_class(costs(0.02, 0.2), limit=120)
    dear, _ = largest_class(costs(0.04, 0.4), limit=120)
    assert 0 < dear < cheap
    two, _ = largest_class(costs(0.04, 0.4), processes=2, cores=2, limit=120)
    shared, _ = largest_class(costs(0.04, 0.4), processes=2, cores=1, limit=120)
    assert shared <= dear < two
    # a machine whose other load leaves one thread a third of a core holds fewer students
    loaded, _ = largest_class(costs(0.04, 0.4), speed=1 / 3, limit=120)
    assert loaded < dear


@pytest.mark.slow
def test_the_predicted_class_keeps_the_core_below_saturation():
    # at the predicted size the busiest process works less than all the time: a saturated
    # server's queue grows without bound and its p95 with it
    students, report = largest_class(costs(0.03, 0.3), limit=150)
    assert report["p95 s"] <= 1.0 and report["utilisation"] < 1.0
    assert simulate(costs(0.03, 0.3), students + 40)["p95 s"] > 1.0


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: simulate(costs(), 0), "students"),
        (lambda: simulate(costs(), 5, processes=0), "processes"),
        (lambda: simulate(costs(), 5, cores=0), "cores"),
        (lambda: simulate(costs(), 5, speed=0), "speed"),
        (lambda: simulate(costs(cached=float("nan")), 5), "cached_move"),
        (lambda: simulate(costs(first=-1), 5), "first_open"),
        (lambda: simulate(ClassCosts((), 1, 1), 5), "costs.pages"),
        (lambda: largest_class(costs(), p95=0), "p95"),
    ],
)
def test_bad_inputs_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_the_command_refuses_bad_options_in_one_line():
    done = subprocess.run(
        [sys.executable, "-m", "deploy.capacity", "--processes", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "--processes must be in [1, 64]" in done.stderr
    assert "Traceback" not in done.stderr
