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


# The groups whose tests wait on purpose: a federation's fault rounds wait out their timeout
# and a class server's failover waits for HAProxy's checks and the supervisor (about 40 % of
# their 490 worker-seconds is idle, measured per test against the machine's /proc/stat in a
# full run, docs/performance.md "A worker for the tests that wait"). On one of two workers
# they left a core idle; a third worker that runs only them overlaps the waiting with the
# other two workers' computing.
ASIDE = frozenset({"federated", "proxy", "wheel"})  # wheel: fresh venvs, pip, builds
# Where their tests live: a selection without them needs no worker set aside.
ASIDE_PATHS = ("tests/federated", "tests/deploy/test_proxy.py", "tests/test_packaging.py")

try:
    from xdist.scheduler import LoadGroupScheduling
except ImportError:  # pytest-xdist missing: PYTEST_WORKERS=0 needs no scheduler
    LoadGroupScheduling = object  # type: ignore[assignment,misc]


def workers(config, cores: int | None = None) -> int:
    """``-n auto`` (test.sh): a worker per core, and one more for the :data:`ASIDE` groups when
    the run may select them (no ``-m``, and no paths, or a path that holds them)."""
    import os
    from pathlib import Path

    cores = cores or len(os.sched_getaffinity(0))
    if config.option.markexpr:
        return cores
    root = Path(config.rootpath)
    given = [Path(arg.split("::")[0]) for arg in config.args]
    given = [p if p.is_absolute() else Path(config.invocation_params.dir) / p for p in given]
    aside = [root / p for p in ASIDE_PATHS]
    holds = not given or any(
        a == g.resolve() or g.resolve() in a.parents or a in g.resolve().parents
        for g in given
        for a in aside
    )
    return cores + 1 if holds else cores


class AsideScheduling(LoadGroupScheduling):
    """pytest-xdist's ``--dist loadgroup`` with one worker set aside for the :data:`ASIDE`
    groups: with three workers or more, the last one runs those groups' tests and nothing
    else, and stops when none is left; the others never take them while it runs. With fewer
    workers, or once the set-aside worker is gone, every worker takes any unit, as loadgroup
    does."""

    def schedule(self) -> None:
        if self.collection is None:  # the first call: every worker is there
            nodes = sorted(self.nodes, key=lambda n: int(n.gateway.id.removeprefix("gw")))
            self._aside = nodes[-1] if len(nodes) >= 3 else None
        super().schedule()

    def _takes(self, node, scope: str) -> bool:
        aside = getattr(self, "_aside", None)
        if aside is None or aside not in self.assigned_work or aside.shutting_down:
            return True
        return (scope in ASIDE) == (node is aside)

    def _assign_work_unit(self, node) -> None:
        """The first unit in the queue this worker may take; none: it stops (what is left is
        for another worker, which never hands work back)."""
        scope = next((s for s in self.workqueue if self._takes(node, s)), None)
        if scope is None:
            node.shutdown()
            return
        work_unit = self.workqueue.pop(scope)
        self.assigned_work.setdefault(node, {})[scope] = work_unit
        collection = self.registered_collections[node]
        node.send_runtest_some(
            [collection.index(nodeid) for nodeid, done in work_unit.items() if not done]
        )
