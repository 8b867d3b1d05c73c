#!/usr/bin/env bash
# Set up (first time only) and run the whole test suite, then lint.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/setup.sh
.venv/bin/python -m pytest "$@"
.venv/bin/python -m ruff check .
