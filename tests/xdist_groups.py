"""``xdist_group`` for pytest ≥ 9.2: pytest-xdist's ``--dist loadgroup`` sends the tests of a
group to one worker by a suffix ``@group`` on each test's node id, which it writes to
``item._nodeid``; pytest 9.2 keeps the id in ``item._id`` (a ``NodeId``) and no longer reads
``_nodeid``, so the suffix never showed and every group's tests were spread over both workers
like any others (pytest 9.2.0 with pytest-xdist 3.8.0, the versions requirements.lock pins:
two tests of one group ran on gw0 and gw1). tests/conftest.py calls :func:`mark_groups` in
each worker, after its ordering; tests/test_run_order.py checks that a group shares a worker.
"""

from __future__ import annotations


def group_of(item) -> str | None:
    """The item's ``xdist_group`` names joined as pytest-xdist joins them, or None."""
    names = {
        str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
        for mark in item.iter_markers("xdist_group")
    }
    return "_".join(sorted(names)) if names else None


def mark_groups(config, items) -> None:
    """Give each grouped item the node-id suffix pytest-xdist's loadgroup scheduler reads,
    where pytest-xdist's own write cannot take (pytest keeps ``_id``); a no-op outside a
    loadgroup worker, with a pytest that still reads ``_nodeid``, or on an id that has it."""
    if config is None or not getattr(config.option, "loadgroup", False):
        return
    try:
        from _pytest.nodeid import coerce_node_id  # pytest ≥ 9.2 (private, as xdist's write)
    except ImportError:
        return  # an older pytest reads _nodeid: pytest-xdist's own suffix works
    for item in items:
        group = group_of(item)
        if group is not None and not item.nodeid.endswith(f"@{group}"):
            item._id = coerce_node_id(f"{item.nodeid}@{group}")
