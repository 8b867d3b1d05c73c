#!/usr/bin/env bash
# Create .venv (once) and install the locked requirements; re-install only when the lock changes.
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
  .venv/bin/python -m pip install --quiet --require-hashes -r requirements.lock
  echo "$want" > "$stamp"
fi
