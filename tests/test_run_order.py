"""The suite's run order (tests/conftest.py): longest slow tests first, but a module marked
``in_file_order`` keeps its tests in file order (its fixture is shared state)."""

import importlib
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

import tests.conftest as conftest
import tests.module_marks as module_marks
import tests.xdist_groups as xdist_groups


class _Item:
    def __init__(self, nodeid, module, *marks):
        self.nodeid = nodeid
        self.module = types.SimpleNamespace(__name__=module)
        self.keywords = set(marks)


def test_a_module_in_file_order_is_not_sorted_apart(monkeypatch, tmp_path):
    durations = tmp_path / "durations.json"
    # the shared module's last test is its longest; another module's test lies in between
    durations.write_text('{"a::first": 5, "a::kill_last": 30, "b::other": 20, "c::fast": 1}')
    monkeypatch.setattr(conftest, "DURATIONS", durations)
    monkeypatch.setattr(conftest, "_browser_missing", lambda: False)
    items = [
        _Item("c::fast", "c", "slow"),
        _Item("a::first", "a", "slow", "in_file_order"),
        _Item("a::kill_last", "a", "slow", "in_file_order"),
        _Item("b::other", "b", "slow"),
        _Item("d::quick", "d"),
    ]
    conftest.pytest_collection_modifyitems(None, items)
    order = [i.nodeid for i in items]
    assert order == ["a::first", "a::kill_last", "b::other", "c::fast", "d::quick"]


GROUPED = """
import os, pytest

@pytest.mark.xdist_group("g")
@pytest.mark.parametrize("n", range(3))
def test_grouped(n):
    with open(os.environ["WORKERS_OUT"], "a") as out:
        out.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")

@pytest.mark.parametrize("n", range(6))
def test_free(n):
    pass
"""


def _planted_run(tmp_path, tests: str, conftest: str, workers: int) -> str:
    """Run the planted ``tests`` on ``workers`` pytest-xdist workers (``--dist loadgroup``)
    under a conftest that calls what tests/conftest.py calls, plus ``conftest``; what the tests
    wrote to WORKERS_OUT."""
    (tmp_path / "test_planted.py").write_text(tests)
    here = Path(__file__).resolve().parent
    (tmp_path / "conftest.py").write_text(
        f"import sys\nsys.path.insert(0, {str(here)!r})\nfrom xdist_groups import mark_groups\n"
        "def pytest_collection_modifyitems(config, items):\n    mark_groups(config, items)\n"
        + conftest
    )
    out = tmp_path / "workers.txt"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", str(workers), "--dist", "loadgroup", "-q",
         "-p", "no:cacheprovider", "test_planted.py"],
        cwd=tmp_path, env={**os.environ, "WORKERS_OUT": str(out)},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    return out.read_text()


@pytest.mark.slow  # three interpreters with pytest-xdist: about 5 s
def test_an_xdist_group_runs_on_one_worker(tmp_path):
    # pytest 9.2 ignores pytest-xdist's own group suffix (tests/xdist_groups.py): the three
    # tests of group "g" ran on both workers. The conftest planted here calls what
    # tests/conftest.py calls.
    workers = _planted_run(tmp_path, GROUPED, "", 2).split()
    assert len(workers) == 3 and len(set(workers)) == 1, workers


ASIDE_PLANTED = """
import os, pytest

def _mark(kind):
    with open(os.environ["WORKERS_OUT"], "a") as out:
        out.write(kind + " " + os.environ["PYTEST_XDIST_WORKER"] + "\\n")

@pytest.mark.xdist_group("federated")
@pytest.mark.parametrize("n", range(3))
def test_waits(n):
    _mark("federated")

@pytest.mark.xdist_group("proxy")
@pytest.mark.parametrize("n", range(2))
def test_fails_over(n):
    _mark("proxy")

@pytest.mark.parametrize("n", range(12))
def test_computes(n):
    _mark("free")
"""


@pytest.mark.slow  # four interpreters with pytest-xdist: about 6 s
def test_the_groups_that_wait_have_a_worker_of_their_own(tmp_path):
    # tests/xdist_groups.py: with three workers the last runs the ASIDE groups and nothing
    # else; plain loadgroup gives it free tests too (the planted queue holds 12 of them)
    scheduler = (
        "from xdist_groups import AsideScheduling\n"
        "def pytest_xdist_make_scheduler(config, log):\n    return AsideScheduling(config, log)\n"
    )
    ran = [
        line.split() for line in _planted_run(tmp_path, ASIDE_PLANTED, scheduler, 3).splitlines()
    ]
    assert len(ran) == 17, ran
    assert {worker for kind, worker in ran if kind != "free"} == {"gw2"}, ran
    assert "gw2" not in {worker for kind, worker in ran if kind == "free"}, ran


def _config(args, markexpr=""):
    root = Path(__file__).resolve().parents[1]
    return types.SimpleNamespace(
        option=types.SimpleNamespace(markexpr=markexpr),
        rootpath=root,
        args=args,
        invocation_params=types.SimpleNamespace(dir=root),
    )


@pytest.mark.parametrize(
    ("args", "markexpr", "extra"),
    [
        ([], "", 1),  # the whole suite
        (["tests", "dpcore"], "", 1),  # pytest's testpaths
        (["tests/federated/test_federated.py::test_x"], "", 1),
        (["tests/deploy"], "", 1),
        (["tests/core", "tests/browser/test_a11y.py"], "", 0),
        (["tests"], "not slow and not app and not browser", 0),  # the fast lane
        ([], "browser", 0),  # any -m: a selection
    ],
)
def test_a_worker_is_set_aside_only_when_the_groups_that_wait_may_run(args, markexpr, extra):
    assert xdist_groups.workers(_config(args, markexpr), cores=2) == 2 + extra


FAST_LANE = "not slow and not app and not browser"  # README's fast lane


@pytest.mark.parametrize(
    ("expression", "marks", "skipped"),
    [
        (FAST_LANE, {"browser", "slow"}, True),
        (FAST_LANE, {"app"}, True),
        (FAST_LANE, {"in_file_order"}, False),  # its tests may carry no excluding mark
        (FAST_LANE, set(), False),
        ("slow and not browser", {"slow"}, False),  # a test of it may lack ``browser``
        ("slow and not browser", {"browser"}, True),
        ("browser or slow", {"app"}, False),
        ("not (browser or app)", {"app", "xdist_group"}, True),
        ("not slow(reason=1)", {"slow"}, False),  # matches on arguments: left to pytest
    ],
)
def test_a_module_is_skipped_only_when_no_test_of_it_could_be_selected(
    tmp_path, expression, marks, skipped
):
    """tests/module_marks.py: the file's own ``pytestmark`` decides only when the expression is
    false whatever other marks a test of it has."""
    source = "import pytest\n\n"
    if marks:
        source += f"pytestmark = [{', '.join(f'pytest.mark.{m}' for m in sorted(marks))}]\n"
    path = tmp_path / "test_x.py"
    path.write_text(source + "\n\ndef test_x():\n    pass\n")
    assert module_marks.module_marks(source) == marks
    assert module_marks.deselected_module(path, expression) is skipped
    assert not module_marks.deselected_module(path, "")  # no -m: every module collected
    config = types.SimpleNamespace(option=types.SimpleNamespace(markexpr=expression))
    assert conftest.pytest_ignore_collect(path, config) is (True if skipped else None)
    path.write_text(source + '\n\ndef f():\n    """>>> 1\n    1"""\n')  # a doctest has no marks
    assert not module_marks.deselected_module(path, expression)


@pytest.mark.slow
def test_each_modules_marks_read_from_its_source_are_the_ones_pytest_sees():
    """tests/module_marks.py reads ``pytestmark`` from the source without importing it; for
    every test module here, the names it reads are those of the imported module's marks
    (in the full suite every module is imported already)."""
    tests = Path(__file__).resolve().parent
    for path in sorted(tests.rglob("test_*.py")):
        name = ".".join(path.relative_to(tests.parent).with_suffix("").parts)
        marks = getattr(importlib.import_module(name), "pytestmark", [])
        marks = marks if isinstance(marks, list) else [marks]
        assert module_marks.module_marks(path.read_text()) == {m.name for m in marks}, path
