#!/usr/bin/env bash
# Set up (first time only) and run the whole test suite (with the core's doctests) with the
# type checker beside it, then the lint (numpydoc docstring rules on the core).
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
# The type check runs beside the tests at the lowest CPU priority: it takes about a minute of
# one core in a fresh clone and only the cores' idle moments while the tests run (a test
# waiting on a timeout, the last test of a worker), instead of a minute after them.
checks="$(mktemp)"
nice -n 19 .venv/bin/python -m mypy >"$checks" 2>&1 &
mypy_pid=$!
trap 'kill "$mypy_pid" 2>/dev/null || true; rm -f "$checks"' EXIT
tests=0
.venv/bin/python -m pytest -n "${PYTEST_WORKERS:-2}" --dist loadgroup "$@" || tests=$?
typing=0
wait "$mypy_pid" || typing=$?
cat "$checks"
.venv/bin/python -m ruff check .
if [ "$tests" -ne 0 ]; then exit "$tests"; fi
exit "$typing"
