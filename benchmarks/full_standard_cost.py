"""What the full OLMES standard costs a model: requests and tokens to forward, per task.

For every task and request set (CF, its pmi baseline where the task scores pmi, MCF) it builds the
standard's requests, tokenizes them with the model's tokenizer (docs/standard.md section 3) and
counts the naive tokens (every request scored alone, as lm-evaluation-harness does) and the
trie-minimal tokens (what the olmes engine forwards). Multiply by a measured tokens/s
(``olmes logprobs`` prints it) for wall time.

    python benchmarks/full_standard_cost.py --model smollm2-135m --output cost.json

``--pmi-everywhere`` counts the pmi sets of every task, as the full-standard campaign
(``config/full-standard.yaml``) runs them.
"""

from __future__ import annotations

import argparse
import json
import time

from olmes.core.tasks import TASKS
from olmes.logprobs.models import load
from olmes.logprobs.trie import build_trie, encode_requests
from olmes.requests.build import build_requests, request_sets


def count(lm, task: str, formulation: str, pmi_everywhere: bool) -> dict:
    rows = build_requests(task, formulation, pmi_everywhere=pmi_everywhere)
    pairs = [(row["context"], row["continuation"]) for row in rows]
    encoded = encode_requests(lm.tokenizer, pairs, lm.bos_token_id)
    inputs = [item.tokens[:-1] for item in encoded]
    trie = build_trie(inputs)
    return {"requests": len(rows), "naive_tokens": sum(map(len, inputs)), "trie_tokens": trie.size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--output")
    parser.add_argument("--pmi-everywhere", action="store_true", help="count every task's pmi set")
    args = parser.parse_args()
    lm = load(args.model)
    started, rows = time.perf_counter(), {}
    for task in TASKS:
        for formulation in request_sets(TASKS[task], args.pmi_everywhere):
            rows[f"{task}.{formulation}"] = count(lm, task, formulation, args.pmi_everywhere)
            print(f"{task:14s} {formulation:3s} {json.dumps(rows[f'{task}.{formulation}'])}", flush=True)
    keys = ("requests", "naive_tokens", "trie_tokens")
    total = {key: sum(row[key] for row in rows.values()) for key in keys}
    print(f"total {json.dumps(total)} ({time.perf_counter() - started:.0f} s to count)")
    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            counted = {"model": args.model, "pmi_everywhere": args.pmi_everywhere}
            json.dump({**counted, "per_task": rows, "total": total}, handle, indent=2)


if __name__ == "__main__":
    main()
