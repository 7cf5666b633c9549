#!/usr/bin/env bash
# Install olmes into .venv and run the main job on the embedded default (offline data and models).
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/install.sh
mkdir -p results/requests
for task in $(.venv/bin/olmes tasks --json | .venv/bin/python -c "import json,sys; print(' '.join(t['task'] for t in json.load(sys.stdin)))"); do
  for formulation in cf mcf; do
    .venv/bin/olmes requests "$task" --formulation "$formulation" --limit 20 \
      --output "results/requests/$task.$formulation.jsonl"
  done
done
