"""Floor 4, privacy analysis: what each party sees and what it costs over time.

Each party's and coalition's view of a CAPE run (:mod:`.views`, :mod:`.secagg_views`) and of
all rounds of CAPE per round (:mod:`.round_views`), the accountants and the ledger of
repeated releases (:mod:`.accounting`, :mod:`.ledger`; a sites table's releases as one
record, :mod:`.site_releases`), the attack audit and its trade-off
reading (:mod:`.audit`, :mod:`.tradeoff`), floating-point cancellation (:mod:`.precision`)
and the trust-model comparison (:mod:`.trust_models`; the iterative methods' rows,
:mod:`.trust_iterative`; CAPE across real sites, :mod:`.trust_federation`).
Imports the floors below (factorisation, protocol, mechanisms) and the base only.
"""

from dpcore.analysis import (
    accounting,
    audit,
    ledger,
    precision,
    round_views,
    secagg_views,
    site_releases,
    tradeoff,
    trust_federation,
    trust_iterative,
    trust_models,
    views,
)

__all__ = [
    "accounting",
    "audit",
    "ledger",
    "precision",
    "round_views",
    "secagg_views",
    "site_releases",
    "tradeoff",
    "trust_federation",
    "trust_iterative",
    "trust_models",
    "views",
]
