#!/usr/bin/env bash
# One prepared device check (issue: same verdicts on GPU and TPU). Installs nothing.
# On a CUDA machine with torch/jax already installed: bash scripts/device_check.sh [--device cuda]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] && PY=.venv/bin/python
exec timeout 480 "$PY" scripts/device_check.py "$@"
