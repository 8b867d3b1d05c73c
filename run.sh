#!/usr/bin/env bash
# Set up (first time only) and start the CAPE Lab app on http://localhost:8501, reachable
# from this machine only. For a room: bash run.sh --server.address 0.0.0.0 (README).
set -euo pipefail
cd "$(dirname "$0")"
if [ "$(id -u)" = 0 ]; then
  echo "warning: run.sh runs as root; start the app as an unprivileged user (README, 'Running it for a classroom')" >&2
fi
bash scripts/setup.sh
address=(--server.address 127.0.0.1)  # unless an address is asked for, here or in the environment
for arg in "$@"; do
  case "$arg" in --server.address | --server.address=*) address=() ;; esac
done
if [ -n "${STREAMLIT_SERVER_ADDRESS:-}" ]; then address=(); fi
if [ -z "${CAPE_LECTURER_KEY:-}" ]; then  # the lecturer's key (ui/lecturer.py): a new one per start
  CAPE_LECTURER_KEY="$(head -c 12 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
  echo "Lecturer's key: $CAPE_LECTURER_KEY  (open the app with ?lecturer=$CAPE_LECTURER_KEY; set CAPE_LECTURER_KEY to choose it; students must not see it)" >&2
fi
export CAPE_LECTURER_KEY
exec .venv/bin/python -m streamlit run app.py ${address[@]+"${address[@]}"} "$@"  # bash 3.2 too
