#!/usr/bin/env bash
# Serve CAPE Lab to a lecture hall: several app processes behind HAProxy with sticky sessions
# and one shared store of heavy results (deploy/class_server.py; docs/performance.md).
#   bash scripts/class_server.sh [--processes N] [--port 8501] [--dask-workers N]
# Sets up .venv as run.sh does (first time only), then starts everything, prints the URL and
# stops it all on Ctrl-C. Needs Debian's haproxy: apt-get install haproxy.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v haproxy >/dev/null 2>&1 && [ ! -x /usr/sbin/haproxy ]; then
  echo "class_server: HAProxy is missing; install it with: apt-get install haproxy" >&2
  exit 1
fi
bash scripts/setup.sh
exec .venv/bin/python -m deploy.class_server "$@"
