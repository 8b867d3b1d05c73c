"""Experiment sweeps: one axis swept, tidy frames out.

- :mod:`~dpcore.sweeps.spec`: what a sweep is (frozen, validated, hashable specs);
- :mod:`~dpcore.sweeps.scores`: the metrics a frame can report, by name;
- :mod:`~dpcore.sweeps.pca`: :func:`pca_sweep` (distributed PCA);
- :mod:`~dpcore.sweeps.otd`: :func:`otd_sweep` and :func:`otd_example` (tensors);
- :mod:`~dpcore.sweeps.dropout`: :func:`dropout_pca` (capePCA when sites drop out);
- :mod:`~dpcore.sweeps.provenance`: a frame's ``attrs`` (spec, seed, code);
  :mod:`~dpcore.sweeps.rerun`: :func:`rerun`, the frame again from them.
"""

from dpcore.sweeps.dropout import DROPOUT_CASES, dropout_pca
from dpcore.sweeps.otd import (
    OtdRun,
    example_table,
    otd_example,
    otd_example_of,
    otd_frame,
    otd_spec,
    otd_sweep,
    run_otd_sweep,
)
from dpcore.sweeps.pca import pca_sweep, run_pca_sweep
from dpcore.sweeps.rerun import rerun
from dpcore.sweeps.scores import OTD_METRICS, PCA_METRICS
from dpcore.sweeps.spec import (
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
