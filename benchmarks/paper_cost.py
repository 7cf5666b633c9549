"""What regenerating the OLMES paper costs on GPUs: an estimate per model of a workflow config.

Tokens: the trie-minimal tokens (what the engine forwards, after its prefix sharing) of every
log-prob job the config makes for a model: the standard's request sets of each task, each prompt
variant's on its tasks, the other answer orders on the rotation tasks. They are counted offline by
``benchmarks/full_standard_cost.py`` with the embedded models' tokenizers
(``benchmarks/full_standard_cost.<model>.json``); the paper's models have other tokenizers, which
cannot be run here, so the larger of those counts stands for every model. A variant's request set
is counted as the standard's (measured 1.00-1.07x its tokens, docs/performance.md); the other
answer orders as ROTATION_FACTOR x the task's MCF tokens (measured 1.0-2.2x).

Time: forward FLOPs (2 x parameters x tokens) at the sustained FLOP/s, plus one load of the weights,
with the workflow's own numbers (olmes.logprobs.placement: GPU_FLOPS, LOAD_BYTES_PER_S, the GPUs
a model is split over). GPU hours = GPUs x that time (a split model runs its layers one GPU after
another). An estimate until measured on a GPU.

    python benchmarks/paper_cost.py [--config config/paper.yaml]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml

from olmes.core.tasks import TASKS
from olmes.logprobs.models import DTYPES
from olmes.logprobs.placement import DEFAULT_GPU_MEMORY_GB, GPU_FLOPS, LOAD_BYTES_PER_S, gpus_needed
from olmes.requests.build import request_sets

BENCHMARKS = Path(__file__).resolve().parent
ROTATION_FACTOR = 2.2


def counted_tokens() -> dict[str, int]:
    """Trie-minimal tokens per ``task.request_set`` (pmi everywhere), the largest of the counts made."""
    files = sorted(BENCHMARKS.glob("full_standard_cost.*.json"))
    counts = [
        count["per_task"] for count in map(json.loads, map(Path.read_text, files)) if count["pmi_everywhere"]
    ]
    return {key: max(count[key]["trie_tokens"] for count in counts) for key in counts[0]}


def run_tokens(config: dict, tokens: dict[str, int]) -> dict[str, int]:
    """Tokens one model forwards in the config's runs: standard, variants, other answer orders."""

    def task_tokens(task: str) -> int:
        return sum(tokens[f"{task}.{s}"] for s in request_sets(TASKS[task], config["pmi_everywhere"]))

    robustness = config["robustness"]
    variant_tasks = sum(task_tokens(task) for task in robustness["variant_tasks"])
    rotation_mcf = sum(tokens[f"{task}.mcf"] for task in robustness["rotation_tasks"])
    return {
        "standard": sum(task_tokens(task) for task in config["tasks"]),
        "variants": len(robustness["variants"]) * variant_tasks,
        "rotations": round(ROTATION_FACTOR * rotation_mcf),
    }


def model_cost(entry: dict, tokens: int, gpu_memory_gb: float) -> dict:
    parameters = entry["parameters"] * 1e9
    weight_bytes = parameters * DTYPES[entry["dtype"]].itemsize
    gpus = gpus_needed(weight_bytes, gpu_memory_gb)
    seconds = weight_bytes / LOAD_BYTES_PER_S + 2 * parameters * tokens / GPU_FLOPS
    return {"gpus": gpus, "weights_gb": weight_bytes / 1e9, "gpu_hours": gpus * seconds / 3600}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="config/paper.yaml")
    parser.add_argument("--gpu-memory", type=float, default=DEFAULT_GPU_MEMORY_GB, help="GB per GPU")
    args = parser.parse_args()
    config = yaml.safe_load(Path(args.config).read_text(encoding="utf-8"))
    parts = run_tokens(config, counted_tokens())
    tokens = sum(parts.values())
    print(
        f"tokens per model (estimate): {tokens / 1e6:.2f} M = standard {parts['standard'] / 1e6:.2f} M"
        f" + variants {parts['variants'] / 1e6:.2f} M + other answer orders {parts['rotations'] / 1e6:.2f} M"
        f"; {GPU_FLOPS / 1e12:.0f} TFLOP/s sustained, weights read at {LOAD_BYTES_PER_S / 1e9:.0f} GB/s,"
        f" {args.gpu_memory:.0f} GB GPUs\n"
    )
    print("| model | paper model | parameters (B) | dtype | weights GB | GPUs | tokens (M) | est. GPU h |")
    print("|---|---|---|---|---|---|---|---|")
    total = 0.0
    for name, entry in config["models"].items():
        cost = model_cost(entry, tokens, args.gpu_memory)
        total += cost["gpu_hours"]
        print(
            f"| {name} | {entry.get('paper_model', '')} | {entry['parameters']:g} | {entry['dtype']} "
            f"| {cost['weights_gb']:.1f} | {cost['gpus']} | {tokens / 1e6:.2f} | {cost['gpu_hours']:.2f} |"
        )
    print(f"| **total** | | | | | | {len(config['models']) * tokens / 1e6:.1f} | **{total:.1f}** |")


if __name__ == "__main__":
    main()
