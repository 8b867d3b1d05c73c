"""The metrics a sweep can report, by name: one function per frame column.

A spec names the metrics it wants (:class:`dpcore.experiments.sweeps.spec.PcaSpec` ``metrics``); the
frame has one column per name, in the order named. Adding a metric is one entry here (and
its function in :mod:`dpcore.factorization.metrics`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpcore.factorization.metrics import (
    captured_energy,
    component_error,
    component_error_matched,
    subspace_distance,
    weight_error,
)
from dpcore.factorization.models import MixtureModel
from dpcore.factorization.tensor import Recovery


@dataclass(frozen=True, eq=False)
class PcaTruth:
    """What a PCA estimate is scored against: the reference A, its top-K basis, the optimum."""

    reference: NDArray[np.float64]
    basis: NDArray[np.float64]
    optimum: float


PcaMetric = Callable[[NDArray[np.float64], PcaTruth], float]
OtdMetric = Callable[[Recovery, MixtureModel], float | int]

# Captured energy tr(V̂ᵀAV̂) and its ratio to the optimum Σ_{k≤K} λ_k(A) (Sec. 6.1).
PCA_METRICS: dict[str, PcaMetric] = {
    "captured_energy": lambda basis, t: captured_energy(basis, t.reference),
    "captured_energy_ratio": lambda basis, t: captured_energy(basis, t.reference) / t.optimum,
    "subspace_distance": lambda basis, t: subspace_distance(basis, t.basis),
    "optimal_energy": lambda basis, t: t.optimum,
}

# q_comp (Sec. 6.2), its one-to-one variant, the weights' error, STM columns with no
# positive entry, power-method iterations.
OTD_METRICS: dict[str, OtdMetric] = {
    "component_error": lambda rec, m: component_error(rec.components, m.components),
    "component_error_matched": lambda rec, m: component_error_matched(
        rec.components, m.components
    ),
    "weight_error": lambda rec, m: weight_error(
        rec.weights, m.weights, rec.components, m.components
    ),
    "invalid_components": lambda rec, m: int(rec.invalid.sum()),
    "iterations": lambda rec, m: rec.iterations,
}
