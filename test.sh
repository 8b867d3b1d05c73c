#!/usr/bin/env bash
# Set up (first time only) and run the whole test suite (with the core's doctests), then the
# type checker on the core and the lint (numpydoc docstring rules on the core).
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/setup.sh
# Both cores (pytest-xdist): tests are sent one at a time to two worker processes, the slow
# ones first (tests/conftest.py); tests marked xdist_group("…") share one worker. Four workers
# were faster in a warm checkout but not in a fresh clone (docs/performance.md, "The test
# suite's time"), and three slower than two now that a browser test keeps a core busy ("The
# slow tests (issue #35)"). PYTEST_WORKERS=0 runs everything in this process.
# Bytecode is cached between runs even where the environment says not to (this machine sets
# PYTHONDONTWRITEBYTECODE=1): a second run then neither recompiles the project in each of
# the many interpreters the suite starts nor redoes pytest's assertion rewriting of the test
# modules (about 8 CPU-s per worker; docs/performance.md, "The fast lane").
unset PYTHONDONTWRITEBYTECODE
.venv/bin/python -m pytest -n "${PYTEST_WORKERS:-2}" --dist loadgroup "$@"
.venv/bin/python -m mypy
.venv/bin/python -m ruff check .
