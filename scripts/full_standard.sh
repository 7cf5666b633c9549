#!/usr/bin/env bash
# The full OLMES standard of the configured models, one model x task at a time (smallest tasks
# first), through the workflow as a user runs it (config/full-standard.yaml). After each task it is
# published into the results store (leaderboard/, olmes publish), so a campaign of several hours
# can be committed as it goes and continued on another machine: a task already in the store is
# skipped.
#
# What each job cost is appended to OUT/scale.jsonl (scripts/scale_facts.py). The log-prob cache
# chunks (checksummed, content-keyed) of the campaign's models are mirrored to OUT/resume-cache:
# a new machine seeds its cache from there, so a task cut off midway (MMLU takes hours on a CPU)
# resumes where its last chunk ended instead of starting over. `bash scripts/full_standard.sh sync`
# mirrors them now (before committing at the end of a session).
#   bash scripts/full_standard.sh [run|sync] [OUT]        (default OUT: runs/full-standard)
set -euo pipefail
cd "$(dirname "$0")/.."
action=${1:-run}
out=${2:-runs/full-standard}
results=results/full
models=(SmolLM2-135M Gemma-3-270M)
tasks=(openbookqa winogrande piqa socialiqa arc_easy csqa arc_challenge boolq hellaswag mmlu)
cache="${OLMES_CACHE_DIR:-$HOME/.cache/olmes}/logprobs"

sync_cache() {  # $1 -> $2: copy the campaign models' chunk files the target lacks (names are hashes)
  local fingerprint
  for fingerprint in $(campaign_fingerprints); do
    [ -d "$1/$fingerprint" ] || continue
    mkdir -p "$2/$fingerprint"
    for chunk in "$1/$fingerprint"/*.parquet; do
      [ -f "$2/$fingerprint/${chunk##*/}" ] || cp -p "$chunk" "$2/$fingerprint/"
    done
  done
}

campaign_fingerprints() {  # the models of this campaign, from its run records (resume seeds too)
  { cat "$results"/logprobs/*/*.run.json leaderboard/models/*/logprobs/*.run.json 2>/dev/null \
      | sed -n 's/.*"model_fingerprint": "\([0-9a-f]*\)".*/\1/p'
    ls "$out/resume-cache" 2>/dev/null; } | sort -u
}

case "$action" in
  sync) sync_cache "$cache" "$out/resume-cache"; exit 0 ;;
  run) ;;
  *) echo "usage: $0 [run|sync] [OUT]" >&2; exit 2 ;;
esac
sync_cache "$out/resume-cache" "$cache"
# A session cut off mid-job leaves Snakemake's lock behind; this script is the folder's only runner.
PATH="$PWD/.venv/bin:$PATH" .venv/bin/snakemake --unlock --cores 1 --configfile config/full-standard.yaml >/dev/null 2>&1 || true
for model in "${models[@]}"; do
  for task in "${tasks[@]}"; do
    if [ -f "leaderboard/models/$model/scores/$task.scores.json" ]; then
      continue
    fi
    echo "$(date -u +%FT%TZ) $model $task" >&2
    # The target comes first: --configfile takes every word after it.
    PATH="$PWD/.venv/bin:$PATH" .venv/bin/snakemake "$results/scores/$model/$task.scores.json" \
      --cores all --workflow-profile workflow/profiles/default --configfile config/full-standard.yaml
    .venv/bin/olmes publish "$model" --from "$results" --store leaderboard --tasks "$task"
    .venv/bin/python scripts/scale_facts.py collect "$results" "$out/scale.jsonl"
    sync_cache "$cache" "$out/resume-cache"
  done
done
echo "$(date -u +%FT%TZ) done" >&2
