"""Floor 2, protocols: how S sites combine their noisy releases.

CAPE's correlated noise (:mod:`.cape`, paper Sec. 3, Algorithm 1), its joint-view-safe design
(:mod:`.joint_safe`), secure aggregation (:mod:`.secagg`), the mean-release designs the pages
compare (:mod:`.mean_release`), the pairwise scheme without a noise generator
(:mod:`.pairwise`), the step-by-step demo (:mod:`.protocol_demo`) and the sites of one run as
a record (:mod:`.sites`). Imports the mechanisms floor and the base only.
"""

from dpcore.protocol import (
    cape,
    joint_safe,
    mean_release,
    pairwise,
    protocol_demo,
    secagg,
    sites,
)

__all__ = ["cape", "joint_safe", "mean_release", "pairwise", "protocol_demo", "secagg", "sites"]
