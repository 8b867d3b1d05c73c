#!/usr/bin/env bash
# The peers benchmark's own environment (benchmarks/peers.py runs the peer libraries in it).
#
# Why a separate venv: diffprivlib 0.6.6 (its newest release) does not import with
# scikit-learn >= 1.8, which the project's .venv has; OpenDP's PCA needs its "sklearn"
# and "numpy" extras (scikit-learn, randomgen). Neither is a dependency of dpcore.
#
#   bash scripts/peers_env.sh [DIR]      # default: .peers-venv beside this repo's .venv
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$here/.peers-venv}"
python="${PYTHON:-python3.11}"
"$python" -m venv "$dir"
"$dir/bin/pip" install --quiet --upgrade pip
"$dir/bin/pip" install --quiet \
    "numpy>=1.26,<3" "scikit-learn>=1.6,<1.8" "diffprivlib==0.6.6" \
    "opendp[scikit-learn,numpy]==0.16.0" "randomgen"
"$dir/bin/python" - <<'PY'
from importlib.metadata import version
import diffprivlib.models, opendp.extras.sklearn.decomposition  # both import: the point of this venv
print(f"peers venv ready: diffprivlib {version('diffprivlib')}, opendp {version('opendp')}, "
      f"scikit-learn {version('scikit-learn')}")
PY
