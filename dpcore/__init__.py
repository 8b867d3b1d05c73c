"""dpcore — the pure computational core of CAPE Lab.

Distributed differentially private PCA (and, later, tensor decomposition) with the CAPE
correlated-noise protocol of Imtiaz & Sarwate, "Distributed Differentially-Private
Algorithms for Matrix and Tensor Factorization". No UI code lives here.
"""

from dpcore.calibration import (
    CALIBRATIONS,
    NEIGHBOURING,
    ClassicGaussianWarning,
    gaussian_delta,
    gaussian_sigma,
    second_moment_sensitivity,
    site_noise_std,
)
from dpcore.cape import (
    AveragingRun,
    CapeDesign,
    Message,
    cape_average,
    cape_design,
    cape_gain,
    cape_gain_bounds,
    conventional_average,
    paper_design,
)
from dpcore.datasets import Dataset, split_sizes, synthetic_dataset
from dpcore.experiments import SWEEP_AXES, pca_sweep
from dpcore.metrics import captured_energy, optimal_energy, subspace_distance, top_k_eigvecs
from dpcore.noise import symmetric_noise
from dpcore.pca import PCA_ALGORITHMS

__all__ = [
    "CALIBRATIONS",
    "NEIGHBOURING",
    "PCA_ALGORITHMS",
    "SWEEP_AXES",
    "AveragingRun",
    "CapeDesign",
    "ClassicGaussianWarning",
    "Dataset",
    "Message",
    "cape_average",
    "cape_design",
    "cape_gain",
    "cape_gain_bounds",
    "captured_energy",
    "conventional_average",
    "gaussian_delta",
    "gaussian_sigma",
    "optimal_energy",
    "paper_design",
    "pca_sweep",
    "second_moment_sensitivity",
    "site_noise_std",
    "split_sizes",
    "subspace_distance",
    "symmetric_noise",
    "synthetic_dataset",
    "top_k_eigvecs",
]
