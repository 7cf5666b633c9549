#!/usr/bin/env bash
# The full OLMES standard of the configured models, one model x task at a time (smallest tasks
# first), through the workflow as a user runs it (config/full-standard.yaml). After each task its
# outputs (log-probs with run records, per-job benchmarks, predictions, score summaries, logs) are
# copied to OUT, so a campaign of several hours can be committed as it goes and continued on another
# machine: a task whose score summary is already in OUT is skipped.
#   bash scripts/full_standard.sh [OUT]        (default OUT: runs/full-standard)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/full-standard}
results=results/full
models=(SmolLM2-135M Gemma-3-270M)
tasks=(openbookqa winogrande piqa socialiqa arc_easy csqa arc_challenge boolq hellaswag mmlu)
for model in "${models[@]}"; do
  for task in "${tasks[@]}"; do
    if [ -f "$out/$model/scores/$task.scores.json" ]; then
      continue
    fi
    echo "$(date -u +%FT%TZ) $model $task" >&2
    # The target comes first: --configfile takes every word after it.
    PATH="$PWD/.venv/bin:$PATH" .venv/bin/snakemake "$results/scores/$model/$task.scores.json" \
      --cores all --workflow-profile workflow/profiles/default --configfile config/full-standard.yaml
    for kind in logprobs benchmarks/logprobs logs/logprobs scores; do
      mkdir -p "$out/$model/$kind"
      cp -p "$results/$kind/$model/$task".* "$out/$model/$kind/"
    done
  done
done
