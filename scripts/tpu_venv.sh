#!/usr/bin/env bash
# A virtual environment for grading on a TPU VM whose JAX (with its libtpu) comes through PYTHONPATH, as on the
# TPU host this project measured on (docs/devices-and-tolerances.md). Grading workers start with a PYTHONPATH of
# their own, so they would not see that JAX: this venv names PYTHONPATH's folders in a .pth file instead (after
# its own site-packages, so that pip never replaces the host's JAX), installs the rest (torch's CPU build, flax,
# optax, ...) from a package index or folder, and removes any JAX pip brought along.
# Usage: bash scripts/tpu_venv.sh [VENV] [pip options...], e.g. on that host:
#   bash scripts/tpu_venv.sh /tmp/tv --index-url file:///opt/pypi/simple --find-links /opt/wheels
# then: /tmp/tv/bin/python scripts/device_check.py --device tpu
set -euo pipefail
cd "$(dirname "$0")/.."
V=${1:-.venv-tpu}
shift || true
python3 -m venv "$V"
SITE=$("$V/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "${PYTHONPATH:-}" | tr ':' '\n' | grep -v '^$' > "$SITE/zz-host-pythonpath.pth" || true
pwd > "$SITE/tapetrace-checkout.pth"
PIP_CONFIG_FILE=/dev/null "$V/bin/python" -m pip install -q --isolated --only-binary=:all: "$@" \
    torch==2.13.0 flax optax matplotlib ipython tqdm pandas scikit-learn nbformat pyyaml pytest
# the host's JAX stays the one imported (its libtpu matches it)
if [ -s "$SITE/zz-host-pythonpath.pth" ]; then "$V/bin/python" -m pip uninstall -q -y jax jaxlib || true; fi
"$V/bin/python" -c 'import jax, flax, optax, torch; print("jax", jax.__version__, jax.default_backend(), "| torch", torch.__version__)'
