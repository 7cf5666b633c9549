#!/usr/bin/env bash
# Create .venv and install olmes with what its tests need: the extra `test` includes every other
# (slurm, workflow, models; pyproject.toml), so this is the full install. torch is pinned first so that no
# resolver pulls a multi-GB CUDA build on a CPU machine (on a GPU machine, install your CUDA
# torch into .venv before running this, and it is kept).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  .venv/bin/python -m pip install -q --disable-pip-version-check "torch==2.13.0"
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test]"
