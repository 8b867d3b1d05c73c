"""Experiment sweeps: one axis swept, tidy frames out.

- :mod:`~dpcore.experiments.sweeps.spec`: what a sweep is (frozen, validated, hashable specs);
- :mod:`~dpcore.experiments.sweeps.scores`: the metrics a frame can report, by name;
- :mod:`~dpcore.experiments.sweeps.pca`: :func:`pca_sweep` (distributed PCA);
- :mod:`~dpcore.experiments.sweeps.otd`: :func:`otd_sweep` and :func:`otd_example` (tensors);
- :mod:`~dpcore.experiments.sweeps.dropout`: :func:`dropout_pca` (capePCA when sites drop out);
- :mod:`~dpcore.experiments.sweeps.provenance`: a frame's ``attrs`` (spec, seed, code);
  :mod:`~dpcore.experiments.sweeps.rerun`: :func:`rerun`, the frame again from them.
"""

from dpcore.experiments.sweeps.dropout import DROPOUT_CASES, dropout_pca
from dpcore.experiments.sweeps.otd import (
    OtdRun,
    example_table,
    otd_example,
    otd_example_of,
    otd_frame,
    otd_spec,
    otd_sweep,
    run_otd_sweep,
)
from dpcore.experiments.sweeps.pca import pca_sweep, run_pca_sweep
from dpcore.experiments.sweeps.rerun import rerun
from dpcore.experiments.sweeps.scores import OTD_METRICS, PCA_METRICS
from dpcore.experiments.sweeps.spec import (
    SWEEP_AXES,
    WEIGHTINGS,
    Budget,
    OtdPrivacy,
    OtdSpec,
    PcaPrivacy,
    PcaSpec,
    Runs,
    SiteLayout,
    SweepGrid,
    fit_to_pool,
)

__all__ = [
    "DROPOUT_CASES",
    "OTD_METRICS",
    "PCA_METRICS",
    "SWEEP_AXES",
    "WEIGHTINGS",
    "Budget",
    "OtdPrivacy",
    "OtdRun",
    "OtdSpec",
    "PcaPrivacy",
    "PcaSpec",
    "Runs",
    "SiteLayout",
    "SweepGrid",
    "dropout_pca",
    "example_table",
    "fit_to_pool",
    "otd_example",
    "otd_example_of",
    "otd_frame",
    "otd_spec",
    "otd_sweep",
    "pca_sweep",
    "rerun",
    "run_otd_sweep",
    "run_pca_sweep",
]
