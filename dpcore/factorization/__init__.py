"""Floor 3, factorisation: the algorithms and what they are scored by.

PCA (:mod:`.pca`, paper Sec. 4) and orthogonal tensor decomposition (:mod:`.otd`,
:mod:`.tensor`, :mod:`.moments`, Sec. 5) with their models, data sets and metrics, the
iterative baselines, the central peers (:mod:`.central`), DP-PCA (:mod:`.dppca`), the cost
model and the registry of algorithms. Imports the protocol and mechanisms floors and the base only.
"""

from dpcore.factorization import (
    central,
    costs,
    datasets,
    dppca,
    fedpca,
    iterative,
    lapack,
    metrics,
    models,
    moments,
    otd,
    pca,
    registry,
    tensor,
)

__all__ = [
    "central",
    "costs",
    "datasets",
    "dppca",
    "fedpca",
    "iterative",
    "lapack",
    "metrics",
    "models",
    "moments",
    "otd",
    "pca",
    "registry",
    "tensor",
]
