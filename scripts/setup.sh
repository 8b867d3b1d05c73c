#!/usr/bin/env bash
# Create .venv (once) and install the locked requirements; re-install only when the lock changes.
# Likewise node_modules/ from package-lock.json: axe-core, the accessibility checker the browser
# tests inject (tests/browser/test_a11y.py); skipped with a note where npm is missing.
# requirements.lock pins every package, direct and indirect, with its hashes (pip refuses any
# file whose hash differs); requirements*.txt hold the ranges it was compiled from.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.requirements-stamp
want="$(sha256sum requirements.lock | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  # pip compiles the ~12,000 installed modules to bytecode one at a time (about 55 s here);
  # compileall does the same on every core (about half that on two; docs/performance.md,
  # "Setup and the type check beside the tests").
  .venv/bin/python -m pip install --quiet --no-compile --require-hashes -r requirements.lock
  .venv/bin/python -m compileall -q -j 0 .venv/lib >/dev/null || true  # as pip: a module that does not compile is not an install failure
  echo "$want" > "$stamp"
fi
npm_stamp=node_modules/.lock-stamp
npm_want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ "$(cat "$npm_stamp" 2>/dev/null || true)" != "$npm_want" ]; then
  if command -v npm >/dev/null 2>&1; then
    npm ci --no-audit --no-fund --loglevel=error
    echo "$npm_want" > "$npm_stamp"
  else
    echo "setup: npm not found; tests/browser/test_a11y.py needs node_modules/axe-core" >&2
  fi
fi
