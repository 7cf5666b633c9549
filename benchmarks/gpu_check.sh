#!/usr/bin/env bash
# The prepared GPU check: one command, no internet (the embedded models' weights come from their pip
# packages, cached by the first run; the CUDA torch is the machine's). Under 8 minutes on one GPU.
#   bash benchmarks/gpu_check.sh               # on the GPU
#   bash benchmarks/gpu_check.sh --device cpu  # anywhere; CI runs it so (smaller: --limit 2 --sizes 512,auto)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
[ -x "$PYTHON" ] || PYTHON=python3
exec "$PYTHON" benchmarks/gpu_check.py "$@"
