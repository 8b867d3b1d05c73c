#!/usr/bin/env bash
# Set up (first time only) and start the CAPE Lab app on http://localhost:8501
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/setup.sh
# Small dense linear algebra runs ~3x slower with two BLAS threads on 2 cores.
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}" OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
exec .venv/bin/python -m streamlit run app.py "$@"
