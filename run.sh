#!/usr/bin/env bash
# Set up (first time only) and start the CAPE Lab app on http://localhost:8501
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/setup.sh
exec .venv/bin/python -m streamlit run app.py "$@"
