"""The classroom's limits, applied where students' requests arrive (issue #39).

The core and its command line compute what they are asked, with no limit unless the caller
gives a budget (``dpcore.WorkBudget``, ``--max-minutes``): a researcher's sweep on a cluster
may take hours. A class server is different: thirty students share two cores. So every
sweep a page asks for is checked against :data:`dpcore.limits.CLASSROOM` here, before any
work, in the page's thread (``ui.cached``) and in the heavy-job child (``serving.worker``)
alike, and refused with one line that names the parameter to reduce.
"""

from __future__ import annotations

from dpcore import OtdSpec, PcaSpec
from dpcore.limits import CLASSROOM, WorkBudget, check_budget, work

BUDGET: WorkBudget = CLASSROOM
WHAT = {"pca": "this PCA sweep", "otd": "this tensor sweep"}


def check(spec: PcaSpec | OtdSpec) -> None:
    """Raise the core's ValueError when ``spec`` passes the classroom's limits.

    The estimate counts this server's workers (``CAPE_WORKERS`` or its cores).
    """
    if not isinstance(spec, (PcaSpec, OtdSpec)):
        raise TypeError(f"spec must be a PcaSpec or an OtdSpec; got {type(spec).__name__}")
    check_budget(work(spec), what=WHAT[spec.family], budget=BUDGET)
