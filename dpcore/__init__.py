"""dpcore — the pure computational core of CAPE Lab.

Distributed differentially private PCA and orthogonal tensor decomposition with the CAPE
correlated-noise protocol of Imtiaz & Sarwate, "Distributed Differentially-Private
Algorithms for Matrix and Tensor Factorization". No UI code lives here.

The public API
--------------
The public API is ``dpcore.__all__``, imported from ``dpcore`` itself
(``from dpcore import gaussian_sigma, Sites``); its names are grouped by topic below
(mechanisms, sites and protocols, factorisation, privacy views, accounting, auditing, trust
models, experiments, work limits, the paper, real data, running). Every module under
``dpcore`` (``dpcore.mechanisms.calibration``, ``dpcore.experiments.sweeps.rounds``, …) is
internal: it may move or change without notice, and its names that are not in ``__all__``
are not an API at all. Only the core's own tests (``tests/core/``) import internals, and the
few files ``tests/test_public_imports.py`` lists with their reason; that test fails when any
other code does. ``tests/public_names.json`` is the checked list of public names and their
parameters (adding, removing, renaming or changing one fails ``tests/test_public_names.py``
until the list says so: ``python tests/test_public_names.py --update``). The module paths of
the flat layout of release 0.1.0 (``dpcore.calibration``, ``dpcore.sweeps.spec``, …) still
import, with a ``DeprecationWarning`` naming the new path, until release 0.4.0
(:mod:`dpcore._compat`).

The names load lazily (PEP 562, as in SPEC 1's ``lazy_loader``): ``import dpcore`` imports
no floor; a name's module is imported on first use. The ``TYPE_CHECKING`` imports below are
the one table of where each name lives: type checkers read them, and :func:`__getattr__`
reads the same statements from this file's source.
"""

from __future__ import annotations

import ast
import importlib
import sys
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpcore import _compat
from dpcore.version import __version__ as __version__  # not in __all__: not an API name

if TYPE_CHECKING:
    from dpcore.analysis.accounting import (
        ACCOUNTANTS,
        Accountant,
        CompositionGrowth,
        accountants,
        composed_epsilon,
        composed_mu,
        composition_growth,
        epsilon_curve,
        gaussian_profile,
        register_accountant,
        unregister_accountant,
        view_noise_multipliers,
        view_profiles,
    )
    from dpcore.analysis.audit import (
        AuditResult,
        attack_statistics,
        audit_gaussian,
        audit_protocol,
        audit_trials_needed,
        clopper_pearson,
        epsilon_lower_bound,
        plan_threshold,
    )
    from dpcore.analysis.ledger import (
        LedgerEntry,
        PrivacyLedger,
        privacy_statement,
    )
    from dpcore.analysis.precision import (
        cancellation_table,
    )
    from dpcore.analysis.round_views import (
        rounds_coalition_report,
        rounds_collusion_curve,
        rounds_party_views,
    )
    from dpcore.analysis.secagg_views import (
        secagg_cost,
        secagg_dropouts,
        secagg_views,
    )
    from dpcore.analysis.site_releases import (
        SiteReleases,
    )
    from dpcore.analysis.tradeoff import (
        PRIORS,
        attack_box,
        dp_tradeoff,
        gaussian_tradeoff,
        gdp_mu,
        posterior_bound,
        read_view,
        tradeoff_curves,
    )
    from dpcore.analysis.trust_federation import (
        CASES as FEDERATION_CASES,
    )
    from dpcore.analysis.trust_federation import (
        DESIGN_COLUMNS as FEDERATION_DESIGN_COLUMNS,
    )
    from dpcore.analysis.trust_federation import (
        federation_trust,
    )
    from dpcore.analysis.trust_iterative import (
        ITERATIVE_SCHEMES,
        iterative_trust_table,
    )
    from dpcore.analysis.trust_models import (
        LABELS as TRUST_LABELS,
    )
    from dpcore.analysis.trust_models import (
        SCHEMES as TRUST_SCHEMES,
    )
    from dpcore.analysis.trust_models import (
        TrustOverview,
        count_text,
        shuffle_epsilon,
        trust_overview,
        trust_pca,
        trust_table,
    )
    from dpcore.analysis.views import (
        EPS_TOL,
        DropoutAnalysis,
        coalition_report,
        coalition_view,
        collusion_bound,
        collusion_curve,
        dropout_analysis,
        dropout_correction,
        dropout_run,
        effective_epsilons,
        party_views,
        remedy_view_std,
        remedy_worst_case,
    )
    from dpcore.cluster import (
        SCHEDULER_ENV,
        dask_executor,
        fallback_reason,
        local_cluster,
        run_slotted,
    )
    from dpcore.cluster import (
        run as run_on_cluster,
    )
    from dpcore.experiments.limits import (
        CLASSROOM,
        HEAVY_SECONDS,
        MAX_MEMORY,
        MAX_SECONDS,
        SCORE_SECONDS,
        STEP_SECONDS,
        WorkBudget,
        check_budget,
        estimate_pca,
        is_heavy,
        pool_seconds,
        round_seconds,
    )
    from dpcore.experiments.limits import (
        work as estimate_work,
    )
    from dpcore.experiments.paper import (
        EPS as PAPER_EPSILONS,
    )
    from dpcore.experiments.paper import (
        FIGURES as PAPER_FIGURES,
    )
    from dpcore.experiments.paper import (
        MARKS as VERDICT_MARKS,
    )
    from dpcore.experiments.paper import (
        PANELS as PAPER_PANELS,
    )
    from dpcore.experiments.paper import (
        PAPER_ALGORITHMS,
        PAPER_CALIBRATION,
        Panel,
        check_claims,
        get_panel,
        panel_by_key,
        panel_caption,
        pool_spread,
        read_precomputed,
        run_panel,
    )
    from dpcore.experiments.paper import (
        STANDINS as PAPER_STANDINS,
    )
    from dpcore.experiments.paper import (
        SUBSETS as PAPER_SUBSETS,
    )
    from dpcore.experiments.paper import (
        offline as offline_panel,
    )
    from dpcore.experiments.questions import (
        sites_for_advantage,
        sweep_crossings,
    )
    from dpcore.experiments.realdata import (
        BUNDLED as BUNDLED_DATASETS,
    )
    from dpcore.experiments.realdata import (
        DATA_DIR_ENV,
        MAX_UPLOAD_CELLS,
        check_csv_bytes,
        data_directory,
        data_files,
        dataset_from_array,
        load_bundled,
        load_covtype,
        load_csv,
        load_mnist,
    )
    from dpcore.experiments.realdata import (
        ENV as DATASET_ENV,
    )
    from dpcore.experiments.realdata import (
        MAX_DIM as MAX_DATA_DIM,
    )
    from dpcore.experiments.realdata import (
        locate as locate_dataset,
    )
    from dpcore.experiments.sweeps import (
        SWEEP_AXES,
        OtdSpec,
        PcaSpec,
        dropout_pca,
        fit_to_pool,
        otd_example,
        otd_example_of,
        otd_frame,
        otd_sweep,
        pca_sweep,
        rerun,
        run_otd_sweep,
        run_pca_sweep,
    )
    from dpcore.experiments.sweeps.rounds import (
        PROG as ROUNDS_PROG,
    )
    from dpcore.experiments.sweeps.rounds import (
        RoundsSpec,
        best_of,
        iterative_algorithms,
        rounds_summary,
        run_rounds_sweep,
        versus_of,
    )
    from dpcore.experiments.sweeps.rounds import (
        main as rounds_main,
    )
    from dpcore.factorization.costs import (
        communication_cost,
    )
    from dpcore.factorization.datasets import (
        Dataset,
        split_sizes,
        synthetic_dataset,
    )
    from dpcore.factorization.iterative import (
        cape_round_design,
    )
    from dpcore.factorization.metrics import (
        captured_energy,
        component_error,
        component_error_matched,
        optimal_energy,
        subspace_distance,
        top_k_eigh,
        top_k_eigvecs,
        weight_error,
    )
    from dpcore.factorization.models import (
        MODELS,
        MixtureModel,
        make_model,
        mog_model,
        sample_mog,
        sample_stm,
        stm_model,
    )
    from dpcore.factorization.moments import (
        public_bound,
    )
    from dpcore.factorization.otd import (
        PowerOptions,
    )
    from dpcore.factorization.registry import (
        Algorithm,
        PcaInputs,
        PcaMethod,
        pca_method,
        register,
    )
    from dpcore.factorization.registry import (
        featured as featured_algorithms,
    )
    from dpcore.factorization.registry import (
        get as get_algorithm,
    )
    from dpcore.factorization.registry import (
        names as algorithm_names,
    )
    from dpcore.factorization.registry import (
        reference as reference_algorithm,
    )
    from dpcore.factorization.registry import (
        references as reference_algorithms,
    )
    from dpcore.mechanisms.calibration import (
        CALIBRATIONS,
        CLASSIC_PROOF_LIMIT,
        DEFAULT_CALIBRATION,
        NEIGHBOURING,
        Calibration,
        ClassicGaussianWarning,
        agn_budget,
        calibration_comparison,
        gaussian_delta,
        gaussian_epsilon,
        gaussian_sigma,
        gaussian_sigmas,
        mean_noise_std,
        mean_sensitivity,
        second_moment_sensitivity,
        site_noise_std,
    )
    from dpcore.mechanisms.discrete import (
        ddg_exact_epsilon,
        sample_discrete_gaussian,
    )
    from dpcore.mechanisms.noise import (
        symmetric_noise,
    )
    from dpcore.mechanisms.promise import (
        likelihood_factor,
    )
    from dpcore.paper_cli import (
        main as paper_main,
    )
    from dpcore.parallel import (
        ExecutorLost,
        available_cpus,
        default_workers,
        parallel_map,
        report_progress,
    )
    from dpcore.protocol.cape import (
        AveragingRun,
        CapeDesign,
        Message,
        aggregate_step,
        aggregator_step,
        best_conventional_gain,
        best_conventional_std,
        cape_average,
        cape_design,
        cape_gain,
        cape_gain_bounds,
        conventional_average,
        conventional_std,
        noise_generator_step,
        normalise_weights,
        one_large_site,
        paper_design,
        party_rng,
        site_releases,
        site_step,
    )
    from dpcore.protocol.joint_safe import (
        design_for,
        joint_safe_design,
    )
    from dpcore.protocol.mean_release import (
        MeanReleaseDesigns,
        mean_release_designs,
    )
    from dpcore.protocol.pairwise import (
        pair_noise_step,
        pair_rng,
        pairwise_average,
        pairwise_coalition_covariance,
        pairwise_covariance,
    )
    from dpcore.protocol.protocol_demo import (
        ProtocolDemo,
        protocol_demo,
    )
    from dpcore.protocol.secagg import (
        SecAggDesign,
        secagg_design,
        secagg_sum,
    )
    from dpcore.protocol.sites import (
        Sites,
    )
    from dpcore.version import (
        source_commit,
    )

    PCA_ALGORITHMS: tuple[str, ...]  # read live by __getattr__
    OTD_ALGORITHMS: tuple[str, ...]

# The public names, by topic (not alphabetical: a reader finds a topic's names together).
__all__ = [  # noqa: RUF022
    # Mechanisms: one release's noise and what it promises (paper Sec. 2)
    "Calibration",
    "DEFAULT_CALIBRATION",
    "CALIBRATIONS",
    "CLASSIC_PROOF_LIMIT",
    "NEIGHBOURING",
    "ClassicGaussianWarning",
    "agn_budget",
    "calibration_comparison",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_sigma",
    "gaussian_sigmas",
    "mean_noise_std",
    "mean_sensitivity",
    "second_moment_sensitivity",
    "site_noise_std",
    "symmetric_noise",
    "ddg_exact_epsilon",
    "sample_discrete_gaussian",
    "likelihood_factor",
    # Sites and protocols: how S sites combine their noisy releases (Sec. 3, Algorithm 1)
    "Sites",
    "AveragingRun",
    "CapeDesign",
    "Message",
    "best_conventional_gain",
    "best_conventional_std",
    "cape_average",
    "cape_design",
    "cape_gain",
    "cape_gain_bounds",
    "conventional_average",
    "conventional_std",
    "normalise_weights",
    "one_large_site",
    "paper_design",
    "site_releases",
    "party_rng",
    "site_step",
    "noise_generator_step",
    "aggregator_step",
    "aggregate_step",
    "design_for",
    "joint_safe_design",
    "MeanReleaseDesigns",
    "mean_release_designs",
    "SecAggDesign",
    "secagg_design",
    "secagg_sum",
    "pairwise_average",
    "pairwise_covariance",
    "pairwise_coalition_covariance",
    "pair_rng",
    "pair_noise_step",
    "ProtocolDemo",
    "protocol_demo",
    # Factorisation: the algorithms, their data, models and scores (Secs. 4-5)
    "Algorithm",
    "PcaInputs",
    "PcaMethod",
    "register",
    "get_algorithm",
    "algorithm_names",
    "featured_algorithms",
    "reference_algorithm",
    "reference_algorithms",
    "pca_method",
    "Dataset",
    "split_sizes",
    "synthetic_dataset",
    "MODELS",
    "MixtureModel",
    "make_model",
    "mog_model",
    "stm_model",
    "sample_mog",
    "sample_stm",
    "public_bound",
    "PowerOptions",
    "cape_round_design",
    "captured_energy",
    "component_error",
    "component_error_matched",
    "optimal_energy",
    "subspace_distance",
    "top_k_eigh",
    "top_k_eigvecs",
    "weight_error",
    "communication_cost",
    # Privacy analysis: what each party and coalition sees
    "EPS_TOL",
    "DropoutAnalysis",
    "coalition_report",
    "coalition_view",
    "collusion_bound",
    "collusion_curve",
    "dropout_analysis",
    "dropout_correction",
    "dropout_run",
    "effective_epsilons",
    "party_views",
    "remedy_view_std",
    "remedy_worst_case",
    "rounds_coalition_report",
    "rounds_collusion_curve",
    "rounds_party_views",
    "secagg_cost",
    "secagg_dropouts",
    "secagg_views",
    "cancellation_table",
    # Accounting: the privacy spent over repeated releases
    "ACCOUNTANTS",
    "Accountant",
    "CompositionGrowth",
    "accountants",
    "register_accountant",
    "unregister_accountant",
    "composed_epsilon",
    "composed_mu",
    "composition_growth",
    "epsilon_curve",
    "gaussian_profile",
    "view_noise_multipliers",
    "view_profiles",
    "SiteReleases",
    "LedgerEntry",
    "PrivacyLedger",
    "privacy_statement",
    # Auditing: attacks on a release and the trade-off they read
    "AuditResult",
    "attack_statistics",
    "audit_gaussian",
    "audit_protocol",
    "audit_trials_needed",
    "clopper_pearson",
    "epsilon_lower_bound",
    "plan_threshold",
    "PRIORS",
    "attack_box",
    "dp_tradeoff",
    "gaussian_tradeoff",
    "gdp_mu",
    "posterior_bound",
    "read_view",
    "tradeoff_curves",
    # Trust models: who must be trusted for what accuracy
    "TRUST_LABELS",
    "TRUST_SCHEMES",
    "TrustOverview",
    "count_text",
    "shuffle_epsilon",
    "trust_overview",
    "trust_pca",
    "trust_table",
    "ITERATIVE_SCHEMES",
    "iterative_trust_table",
    "FEDERATION_CASES",
    "FEDERATION_DESIGN_COLUMNS",
    "federation_trust",
    # Experiments: sweeps, rounds and their frames
    "SWEEP_AXES",
    "OtdSpec",
    "PcaSpec",
    "dropout_pca",
    "fit_to_pool",
    "otd_example",
    "otd_example_of",
    "otd_frame",
    "otd_sweep",
    "pca_sweep",
    "rerun",
    "run_otd_sweep",
    "run_pca_sweep",
    "RoundsSpec",
    "run_rounds_sweep",
    "rounds_summary",
    "iterative_algorithms",
    "best_of",
    "versus_of",
    "ROUNDS_PROG",
    "rounds_main",
    "sites_for_advantage",
    "sweep_crossings",
    # Work limits: what a request may cost
    "WorkBudget",
    "CLASSROOM",
    "HEAVY_SECONDS",
    "MAX_MEMORY",
    "MAX_SECONDS",
    "SCORE_SECONDS",
    "STEP_SECONDS",
    "check_budget",
    "estimate_pca",
    "is_heavy",
    "pool_seconds",
    "round_seconds",
    "estimate_work",
    # The paper's figures and claims
    "Panel",
    "PAPER_ALGORITHMS",
    "PAPER_PANELS",
    "PAPER_EPSILONS",
    "PAPER_FIGURES",
    "VERDICT_MARKS",
    "PAPER_STANDINS",
    "PAPER_SUBSETS",
    "check_claims",
    "get_panel",
    "offline_panel",
    "panel_by_key",
    "panel_caption",
    "pool_spread",
    "read_precomputed",
    "run_panel",
    "PAPER_CALIBRATION",
    "paper_main",
    # Real data: bundled sets, downloads and uploads
    "BUNDLED_DATASETS",
    "DATASET_ENV",
    "DATA_DIR_ENV",
    "MAX_DATA_DIM",
    "MAX_UPLOAD_CELLS",
    "check_csv_bytes",
    "data_directory",
    "data_files",
    "dataset_from_array",
    "load_bundled",
    "load_covtype",
    "load_csv",
    "load_mnist",
    "locate_dataset",
    # Running: workers, progress, a Dask scheduler, the version
    "ExecutorLost",
    "available_cpus",
    "default_workers",
    "parallel_map",
    "report_progress",
    "SCHEDULER_ENV",
    "dask_executor",
    "fallback_reason",
    "local_cluster",
    "run_on_cluster",
    "run_slotted",
    "source_commit",
    # The algorithms registered now, read live (the registry may grow at runtime)
    "PCA_ALGORITHMS",
    "OTD_ALGORITHMS",
]

_LIVE = {"PCA_ALGORITHMS": "pca", "OTD_ALGORITHMS": "otd"}
_compat.install(sys.modules[__name__])


@cache
def _exports() -> dict[str, tuple[str, str]]:
    """Public name → (its module, its name there), read from the ``TYPE_CHECKING`` imports."""
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    )
    return {
        alias.asname or alias.name: (node.module or "", alias.name)
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


# Type checkers see the TYPE_CHECKING imports, not this: a misspelt name stays an error.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        """A public name, imported from its module on first use (then kept here).

        ``PCA_ALGORITHMS`` / ``OTD_ALGORITHMS`` are the registered names, read live on every
        access. A subpackage or module of dpcore (``dpcore.analysis``) is imported as Python
        would; it is internal all the same.
        """
        if name in _LIVE:
            from dpcore.factorization import registry

            return registry.names(_LIVE[name])
        exports = _exports()
        if name in exports:
            module, attr = exports[name]
            value = getattr(importlib.import_module(module), attr)
            globals()[name] = value
            return value
        here = Path(__file__).parent
        if name.isidentifier() and (
            (here / f"{name}.py").exists() or (here / name / "__init__.py").exists()
        ):
            return importlib.import_module(f"{__name__}.{name}")
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names and the module's own attributes."""
    return sorted(set(globals()) | set(__all__))
