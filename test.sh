#!/usr/bin/env bash
# Set up (first time only) and run the whole test suite (with the core's doctests), then the
# type checker on the core and the lint (numpydoc docstring rules on the core).
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/setup.sh
# Four worker processes on the two cores (pytest-xdist): most browser tests wait on a page, and
# two more workers compute meanwhile (580 s instead of 668 s for the whole suite with two).
# Tests are sent one at a time, the slow ones first (tests/conftest.py); tests marked
# xdist_group("…") share one worker. PYTEST_WORKERS=0
# runs everything in this process.
.venv/bin/python -m pytest -n "${PYTEST_WORKERS:-4}" --dist loadgroup "$@"
.venv/bin/python -m mypy
.venv/bin/python -m ruff check .
