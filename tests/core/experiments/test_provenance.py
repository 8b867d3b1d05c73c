"""A sweep's frame names its spec, seed and code (``DataFrame.attrs``), and is reproduced
from them alone (issue #39, item 5)."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pandas as pd
import pytest

import dpcore
from dpcore.experiments.sweeps.provenance import generator_of, seed_of

pytestmark = pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")

SMALL = {"epsilon": [0.5, 2.0], "dim": 8, "k": 2, "runs": 2, "pool_size": 400,
         "n_per_site": 20, "sites": 3}  # fmt: skip


@pytest.mark.parametrize(
    "rng",
    [7, np.random.default_rng(7), np.random.default_rng(7).spawn(3)[2],
     np.random.Generator(np.random.Philox(11))],
    ids=["int", "generator", "spawned child", "philox"],
)  # fmt: skip
def test_a_saved_pca_frame_is_reproduced_from_its_attrs(tmp_path, rng):
    frame = dpcore.pca_sweep(**SMALL, rng=rng)
    assert frame.attrs["sweep"] == "pca"
    assert frame.attrs["version"] == dpcore.__version__ and frame.attrs["commit"]
    json.dumps(frame.attrs)  # plain data: a Parquet file or a JSON sidecar can hold it
    path = tmp_path / "frame.pkl"
    frame.to_pickle(path)
    saved = pd.read_pickle(path)
    again = dpcore.rerun(saved)
    pd.testing.assert_frame_equal(again, frame, check_exact=True)
    # the attrs alone, through the public keywords: the same frame
    direct = dpcore.pca_sweep(
        **saved.attrs["spec"], rng=generator_of(saved.attrs["seed"])
    )
    pd.testing.assert_frame_equal(direct, frame, check_exact=True)


def test_another_seed_in_the_attrs_is_another_frame():
    # the check above can fail: the seed in the attrs is what the rerun uses
    frame = dpcore.pca_sweep(**SMALL, rng=7)
    frame.attrs["seed"] = 8
    assert not dpcore.rerun(frame).equals(frame)


def test_a_tensor_frame_is_reproduced_from_its_attrs():
    frame = dpcore.otd_sweep(epsilon=[0.5, 1.0], dim=4, k=2, runs=2, n_per_site=500, rng=3)
    assert frame.attrs["sweep"] == "otd" and frame.attrs["seed"] == 3
    assert frame.attrs["spec"]["epsilon"] == [0.5, 1.0]
    pd.testing.assert_frame_equal(dpcore.rerun(pickle.loads(pickle.dumps(frame))), frame)


def test_the_seed_description_rebuilds_the_generators_children():
    # spawn reads only the SeedSequence: entropy, spawn key and children spawned so far
    parent = np.random.default_rng(12345)
    parent.spawn(2)  # two children already taken
    seed = seed_of(parent)
    assert seed["n_children_spawned"] == 2
    rebuilt = generator_of(seed)
    for a, b in zip(parent.spawn(3), rebuilt.spawn(3), strict=True):
        np.testing.assert_array_equal(a.random(5), b.random(5))


def test_a_frame_names_the_blas_and_the_cpu_kernels_it_was_computed_with():
    # issue #51: two machines' last bits differ by their BLAS and its kernels; say which
    from threadpoolctl import threadpool_info

    frame = dpcore.pca_sweep(**SMALL, rng=1)
    kernels = frame.attrs["kernels"]
    loaded = {(lib["internal_api"], lib["version"]) for lib in threadpool_info()}
    said = {(lib["internal_api"], lib["version"]) for lib in kernels["blas"]}
    assert said == loaded and any(lib["user_api"] == "blas" for lib in kernels["blas"])
    openblas = [lib for lib in kernels["blas"] if lib["internal_api"] == "openblas"]
    assert all(lib["architecture"] for lib in openblas)  # the kernels OpenBLAS chose
    simd = np.show_config(mode="dicts")["SIMD Extensions"]
    assert kernels["cpu"]["numpy_simd_found"] == list(simd["found"])
    assert kernels["cpu"]["machine"] and json.loads(json.dumps(kernels)) == kernels
