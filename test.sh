#!/usr/bin/env bash
# Set up (first time only) and run the whole test suite (with the core's doctests), then the
# type checker on the core and the lint (numpydoc docstring rules on the core).
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/setup.sh
.venv/bin/python -m pytest "$@"
.venv/bin/python -m mypy
.venv/bin/python -m ruff check .
