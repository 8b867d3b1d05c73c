"""Shared test setup: BLAS threads, hypothesis profiles, test markers, a Dask cluster."""

import os

import pytest
from hypothesis import HealthCheck, settings
from streamlit import config as streamlit_config

# Small dense linear algebra is 3x slower with two OpenBLAS threads on this 2-core machine
# (measured; see docs/deviations.md). Must be set before numpy loads its BLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
# Students see a generic message for an unexpected exception (.streamlit/config.toml); tests
# must see the real one, or a failing fuzz step says nothing (servers the browser tests start
# read the environment; AppTest reads the option set here).
os.environ.setdefault("STREAMLIT_CLIENT_SHOW_ERROR_DETAILS", "full")
streamlit_config.set_option("client.showErrorDetails", "full")

# Hypothesis profiles. "ci" replays the same examples on every run (derandomize: the examples
# are a function of the test's source only), so a red CI is a real, repeatable failure and never
# a random draw; the timing health check is off because a busy 2-core machine must not decide
# a test. Each test's own max_examples is its fixed budget. "dev" explores: new random examples
# every run, remembered in .hypothesis/ when one fails. CI=true (as CI sets it) selects "ci";
# HYPOTHESIS_PROFILE overrides either way.
settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev")
)


@pytest.fixture(scope="session")
def dask_cluster():
    """Address of a real Dask LocalCluster: 2 worker processes with 1 thread each, no
    dashboard, on 127.0.0.1, ports from CAPE_DASK_PORTS if set (shared by the tests)."""
    pytest.importorskip("distributed")
    from dpcore.cluster import local_cluster

    with local_cluster(2) as address:
        yield address
