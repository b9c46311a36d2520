#!/usr/bin/env bash
# The Python environment of the transformers reference check (tests/backend/trainer/transformers, ctest label transformers):
# a virtual environment in build/hf-venv over Debian's python3 (which has python3-torch, CPU only),
# with transformers and safetensors from PyPI at versions that work with that PyTorch. Does
# nothing when it is already there.
# Usage: scripts/setup-hf-env.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-build}/hf-venv"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import torch, transformers, safetensors" 2>/dev/null; then
  exit 0
fi
rm -rf "$venv"
/usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check "transformers==4.36.2" "tokenizers==0.15.2" "huggingface-hub==0.36.2" "safetensors==0.8.0"
"$venv/bin/python" -c "import torch, transformers, safetensors; print('hf-venv: torch', torch.__version__, '· transformers', transformers.__version__)"
