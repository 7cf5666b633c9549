#!/usr/bin/env bash
# Install olmes into .venv and run the main job on the embedded default: both offline models
# (SmolLM2-135M-Instruct Q4_1 GGUF, Gemma 3 270M base Q4_K_M GGUF) on all 10 tasks with the instance limit of config/config.yaml.
# Leaves results/ (requests, log-probs, scores, tables) and site/ behind.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/install.sh
.venv/bin/snakemake --cores all --workflow-profile workflow/profiles/default "$@"
