#!/usr/bin/env bash
# Set up (first time only) and run the whole test suite (with the core's doctests) with the
# type checker beside it, then the lint (numpydoc docstring rules on the core).
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/setup.sh
# Two workers (pytest-xdist), tests sent one at a time, the slow ones first (tests/conftest.py);
# tests marked xdist_group("…") share one worker. PYTEST_WORKERS=auto adds a worker that runs
# only the groups that wait on purpose (tests/xdist_groups.py): 19.1-20.8 min instead of 21 in
# two runs, but a third run on a slower machine failed a federation fault round's time limit
# beside it (docs/performance.md, "A worker for the tests that wait"), so it is not the
# default. PYTEST_WORKERS=N sets the count; PYTEST_WORKERS=0 runs everything in this process.
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
