"""dpcore — the pure computational core of CAPE Lab.

Distributed differentially private PCA and orthogonal tensor decomposition with the CAPE
correlated-noise protocol of Imtiaz & Sarwate, "Distributed Differentially-Private
Algorithms for Matrix and Tensor Factorization". No UI code lives here.
"""

from dpcore.analysis.accounting import (
    ACCOUNTANTS,
    composed_epsilon,
    composed_mu,
    composition_growth,
    epsilon_curve,
    gaussian_profile,
    view_noise_multipliers,
    view_profiles,
)
from dpcore.analysis.audit import (
    attack_statistics,
    audit_gaussian,
    audit_protocol,
    audit_trials_needed,
    clopper_pearson,
    epsilon_lower_bound,
    plan_threshold,
)
from dpcore.analysis.ledger import LedgerEntry, PrivacyLedger, privacy_statement
from dpcore.analysis.precision import cancellation_table
from dpcore.analysis.secagg_views import secagg_cost, secagg_dropouts, secagg_views
from dpcore.analysis.trust_models import shuffle_epsilon, trust_overview, trust_pca, trust_table
from dpcore.analysis.views import (
    coalition_report,
    coalition_view,
    collusion_bound,
    collusion_curve,
    dropout_analysis,
    dropout_run,
    party_views,
    remedy_view_std,
    remedy_worst_case,
)
from dpcore.experiments.limits import WorkBudget
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
from dpcore.factorization.costs import communication_cost
from dpcore.factorization.datasets import Dataset, split_sizes, synthetic_dataset
from dpcore.factorization.metrics import (
    captured_energy,
    component_error,
    component_error_matched,
    optimal_energy,
    subspace_distance,
    top_k_eigvecs,
    weight_error,
)
from dpcore.factorization.models import MODELS, MixtureModel, make_model, mog_model, stm_model
from dpcore.factorization.registry import Algorithm, register
from dpcore.mechanisms.calibration import (
    CALIBRATIONS,
    CLASSIC_PROOF_LIMIT,
    NEIGHBOURING,
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
from dpcore.mechanisms.discrete import sample_discrete_gaussian
from dpcore.mechanisms.noise import symmetric_noise
from dpcore.parallel import ExecutorLost
from dpcore.protocol.cape import (
    AveragingRun,
    CapeDesign,
    Message,
    best_conventional_gain,
    best_conventional_std,
    cape_average,
    cape_design,
    cape_gain,
    cape_gain_bounds,
    conventional_average,
    normalise_weights,
    one_large_site,
    paper_design,
)
from dpcore.protocol.joint_safe import joint_safe_design
from dpcore.protocol.mean_release import MeanReleaseDesigns, mean_release_designs
from dpcore.protocol.secagg import SecAggDesign, secagg_design, secagg_sum
from dpcore.protocol.sites import Sites
from dpcore.version import __version__ as __version__  # not in __all__: not an API name


def __getattr__(name: str) -> tuple[str, ...]:
    """``PCA_ALGORITHMS`` / ``OTD_ALGORITHMS``: the registered names, read live (PEP 562)."""
    from dpcore.factorization import registry

    if name == "PCA_ALGORITHMS":
        return registry.names("pca")
    if name == "OTD_ALGORITHMS":
        return registry.names("otd")
    raise AttributeError(f"module 'dpcore' has no attribute {name!r}")


__all__ = [
    "ACCOUNTANTS",
    "CALIBRATIONS",
    "CLASSIC_PROOF_LIMIT",
    "MODELS",
    "NEIGHBOURING",
    "OTD_ALGORITHMS",
    "PCA_ALGORITHMS",
    "SWEEP_AXES",
    "Algorithm",
    "AveragingRun",
    "CapeDesign",
    "ClassicGaussianWarning",
    "Dataset",
    "ExecutorLost",
    "LedgerEntry",
    "MeanReleaseDesigns",
    "Message",
    "MixtureModel",
    "OtdSpec",
    "PcaSpec",
    "PrivacyLedger",
    "SecAggDesign",
    "Sites",
    "WorkBudget",
    "agn_budget",
    "attack_statistics",
    "audit_gaussian",
    "audit_protocol",
    "audit_trials_needed",
    "best_conventional_gain",
    "best_conventional_std",
    "calibration_comparison",
    "cancellation_table",
    "cape_average",
    "cape_design",
    "cape_gain",
    "cape_gain_bounds",
    "captured_energy",
    "clopper_pearson",
    "coalition_report",
    "coalition_view",
    "collusion_bound",
    "collusion_curve",
    "communication_cost",
    "component_error",
    "component_error_matched",
    "composed_epsilon",
    "composed_mu",
    "composition_growth",
    "conventional_average",
    "dropout_analysis",
    "dropout_pca",
    "dropout_run",
    "epsilon_curve",
    "epsilon_lower_bound",
    "fit_to_pool",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_profile",
    "gaussian_sigma",
    "gaussian_sigmas",
    "joint_safe_design",
    "make_model",
    "mean_noise_std",
    "mean_release_designs",
    "mean_sensitivity",
    "mog_model",
    "normalise_weights",
    "one_large_site",
    "optimal_energy",
    "otd_example",
    "otd_example_of",
    "otd_frame",
    "otd_sweep",
    "paper_design",
    "party_views",
    "pca_sweep",
    "plan_threshold",
    "privacy_statement",
    "register",
    "remedy_view_std",
    "remedy_worst_case",
    "rerun",
    "run_otd_sweep",
    "run_pca_sweep",
    "sample_discrete_gaussian",
    "secagg_cost",
    "secagg_design",
    "secagg_dropouts",
    "secagg_sum",
    "secagg_views",
    "second_moment_sensitivity",
    "shuffle_epsilon",
    "site_noise_std",
    "split_sizes",
    "stm_model",
    "subspace_distance",
    "symmetric_noise",
    "synthetic_dataset",
    "top_k_eigvecs",
    "trust_overview",
    "trust_pca",
    "trust_table",
    "view_noise_multipliers",
    "view_profiles",
    "weight_error",
]
