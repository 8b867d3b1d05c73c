"""Shared test setup."""

import os

# Small dense linear algebra is 3x slower with two OpenBLAS threads on this 2-core machine
# (measured; see docs/deviations.md). Must be set before numpy loads its BLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
