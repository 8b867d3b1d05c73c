"""The classroom's limits, applied where students' requests arrive (issue #39).

The core and its command line compute what they are asked, with no limit unless the caller
gives a budget (``dpcore.WorkBudget``, ``--max-minutes``): a researcher's sweep on a cluster
may take hours. A class server is different: thirty students share two cores. So every
sweep a page asks for is checked against :data:`dpcore.experiments.limits.CLASSROOM` here,
before any work, in the page's thread (``ui.cached``) and in the heavy-job child
(``serving.worker``) alike, and refused with one line that names the parameter to reduce.
"""

from __future__ import annotations

from dpcore import CLASSROOM, OtdSpec, PcaSpec, RoundsSpec, WorkBudget, check_budget
from dpcore import estimate_work as work

BUDGET: WorkBudget = CLASSROOM
WHAT = {"pca": "this PCA sweep", "otd": "this tensor sweep"}


def check(spec: PcaSpec | OtdSpec | RoundsSpec) -> None:
    """Raise the core's ValueError when ``spec`` passes the classroom's limits.

    A :class:`~dpcore.experiments.sweeps.rounds.RoundsSpec` (the Baselines section's rounds
    axis) counts all of its sweeps. The estimate counts this server's workers
    (``CAPE_WORKERS`` or its cores).
    """
    if isinstance(spec, RoundsSpec):
        check_budget(work(spec), what="this rounds sweep", budget=BUDGET)
        return
    if not isinstance(spec, (PcaSpec, OtdSpec)):
        raise TypeError(
            f"spec must be a PcaSpec, an OtdSpec or a RoundsSpec; got {type(spec).__name__}"
        )
    check_budget(work(spec), what=WHAT[spec.family], budget=BUDGET)
