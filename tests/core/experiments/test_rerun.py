"""dpcore.rerun: a sweep's frame computed again from its attrs, its data set checked (issue #39)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpcore
from dpcore.experiments.sweeps.provenance import generator_of

pytestmark = pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")


def test_a_frame_on_a_data_set_needs_that_data_set_to_be_rerun():
    rng = np.random.default_rng(0)
    samples = rng.normal(size=(300, 6))
    samples /= np.linalg.norm(samples, axis=1).max()
    data = dpcore.Dataset("mine", samples, samples.T @ samples / 300)
    frame = dpcore.pca_sweep(data=data, epsilon=1.0, k=2, runs=1, n_per_site=50, sites=3)
    assert frame.attrs["spec"]["data"] == "mine" and len(frame.attrs["spec"]["data_sha256"]) == 64
    with pytest.raises(ValueError, match=r"data must be the data set 'mine'"):
        dpcore.rerun(frame)
    other = dpcore.Dataset("mine", samples[::-1].copy(), data.reference)
    with pytest.raises(ValueError, match="SHA-256"):
        dpcore.rerun(frame, data=other)
    pd.testing.assert_frame_equal(dpcore.rerun(frame, data=data), frame)


def test_a_frame_without_a_sweeps_attrs_is_refused_naming_them():
    with pytest.raises(ValueError, match="'sweep', 'spec', 'seed'"):
        dpcore.rerun(pd.DataFrame({"a": [1]}))
    with pytest.raises(TypeError, match="frame must be a pandas DataFrame"):
        dpcore.rerun({"sweep": "pca"})
    with pytest.raises(ValueError, match="seed must be an int"):
        generator_of(None)
