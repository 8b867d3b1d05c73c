"""Cached core calls: pages call these, never the linear algebra directly (issue #35: one
module per page family, re-exported here so ``from ui.cached import …`` keeps working).

What it holds: the ``st.cache_data`` wrappers around dpcore, the compute slots and single
flight that share them between sessions, and the one error boundary (:func:`call_core`).

Every wrapper takes hashable primitives or frozen records (a spec, one :class:`dpcore.Sites`
for the sites-table pages; seed included) and builds its Generator inside, so the same
arguments give the same numbers in every session and process.

- :mod:`ui.cached.core`: :func:`call_core`, :func:`classic_warning`, :data:`SPEC_HASH`;
- :mod:`ui.cached.data`: the data sets by source;
- :mod:`ui.cached.sweeps`: PCA, tensor and rounds sweeps (PCA, Tensor, Baselines pages);
- :mod:`ui.cached.sites`: the sites-table pages (averaging, privacy, composition, trust);
- :mod:`ui.cached.audit`: the attack audit;
- :mod:`ui.cached.paper`: the paper's figures;
- :mod:`ui.cached.replay`: the protocol stepper's run logs, read once per content.
"""

from ui.cached.audit import (
    AUDIT_VIEWS,
    AUDIT_WORK,
    audit_rounds_table,
    audit_statistics,
    audit_table,
    audit_tradeoff,
    audit_trials_cap,
)
from ui.cached.core import (
    SPEC_HASH,
    call_core,
    call_core_with_spinner,
    classic_warning,
)
from ui.cached.data import (
    DATA_SOURCES,
    FILE_SOURCES,
    load_dataset,
    load_source,
)
from ui.cached.paper import (
    paper_claims,
    paper_panel,
    paper_panel_job,
    paper_pool_spread,
)
from ui.cached.replay import content_digest, run_log
from ui.cached.sites import (
    CALIBRATION_GRID,
    DESIGNS,
    GAINS,
    accountant_curve,
    agn_budget,
    averaging_design,
    averaging_monte_carlo,
    calibration_curve,
    coalition_table,
    collusion_curve_table,
    dropout_pca_frame,
    dropout_report,
    equal_sites_noise,
    gain_curve,
    party_table,
    release_growth,
    release_ledger,
    release_multipliers,
    release_profiles,
    remedy_worst_table,
    rounds_coalition_table,
    rounds_collusion_table,
    rounds_party_table,
    trust_models_federation,
    trust_models_iterative,
    trust_models_pca,
    trust_models_table,
)
from ui.cached.sweeps import (
    otd_example,
    otd_frame,
    otd_job,
    pca_frame,
    pca_job,
    rounds_job,
    rounds_table,
)

__all__ = [
    "AUDIT_VIEWS",
    "AUDIT_WORK",
    "CALIBRATION_GRID",
    "DATA_SOURCES",
    "DESIGNS",
    "FILE_SOURCES",
    "GAINS",
    "SPEC_HASH",
    "accountant_curve",
    "agn_budget",
    "audit_rounds_table",
    "audit_statistics",
    "audit_table",
    "audit_tradeoff",
    "audit_trials_cap",
    "averaging_design",
    "averaging_monte_carlo",
    "calibration_curve",
    "call_core",
    "call_core_with_spinner",
    "classic_warning",
    "coalition_table",
    "collusion_curve_table",
    "content_digest",
    "dropout_pca_frame",
    "dropout_report",
    "equal_sites_noise",
    "gain_curve",
    "load_dataset",
    "load_source",
    "otd_example",
    "otd_frame",
    "otd_job",
    "paper_claims",
    "paper_panel",
    "paper_panel_job",
    "paper_pool_spread",
    "party_table",
    "pca_frame",
    "pca_job",
    "release_growth",
    "release_ledger",
    "release_multipliers",
    "release_profiles",
    "remedy_worst_table",
    "rounds_coalition_table",
    "rounds_collusion_table",
    "rounds_job",
    "rounds_party_table",
    "rounds_table",
    "run_log",
    "trust_models_federation",
    "trust_models_iterative",
    "trust_models_pca",
    "trust_models_table",
]
