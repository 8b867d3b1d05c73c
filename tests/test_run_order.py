"""The suite's run order (tests/conftest.py): longest slow tests first, but a module marked
``in_file_order`` keeps its tests in file order (its fixture is shared state)."""

import types

import tests.conftest as conftest


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
