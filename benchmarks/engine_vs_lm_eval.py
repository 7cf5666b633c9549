"""Benchmark: the olmes engine vs lm-evaluation-harness ``HFLM.loglikelihood`` on the same requests.

Same model object (SmolLM2-135M by default, float32), same machine, same process, runs interleaved
(engine, lm-eval, engine, lm-eval, ...), the best wall time of each kept. lm-eval gets its best batch
size, chosen by a sweep on the first requests. Prints and writes JSON: wall times and their ratio,
tokens forwarded by each (counted at the model's forward, padding included) vs trie-minimal, the
max |difference| of log-probs, and the accuracy under each normalization from both.

    pip install lm-eval "torch==2.13.0"      # the `bench` extra
    python benchmarks/engine_vs_lm_eval.py --instances 100 --output benchmarks/engine_vs_lm_eval.json
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

from olmes.core.tasks import get_task
from olmes.logprobs import engine
from olmes.logprobs.models import load
from olmes.logprobs.options import DEFAULT_MAX_BATCH_TOKENS
from olmes.logprobs.trie import encode_requests
from olmes.requests.build import build_requests, request_sets


class TokenCounter:
    """Counts the tokens (padding included) every forward call of the model receives."""

    def __init__(self, model: torch.nn.Module):
        self.tokens = 0
        model.register_forward_pre_hook(self._count, with_kwargs=True)

    def _count(self, _module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        self.tokens += int(ids.numel())


def run_engine(lm, pairs, max_batch_tokens):
    scores = engine.score(lm, pairs, max_batch_tokens=max_batch_tokens)
    return scores.sum_logprob, scores.is_greedy, scores.trie_tokens


def run_lm_eval(harness, pairs):
    from lm_eval.api.instance import Instance

    instances = [
        Instance(request_type="loglikelihood", doc={}, arguments=pair, idx=i) for i, pair in enumerate(pairs)
    ]
    results = harness.loglikelihood(instances, disable_tqdm=True)
    return np.array([r[0] for r in results]), np.array([r[1] for r in results])


def accuracies(rows, sums) -> dict[str, float]:
    """Accuracy per normalization (CF: none, token, char, pmi; MCF: argmax over the letters)."""
    conditional, unconditional, gold = defaultdict(dict), defaultdict(dict), {}
    for row, value in zip(rows, sums, strict=True):
        table = unconditional if row["unconditional"] else conditional
        table[row["instance_index"]][row["choice"]] = (value, row)
        gold[row["instance_index"]] = row["label"]
    norms = {
        "none": lambda v, r, i, c: v,
        "token": lambda v, r, i, c: v / r["num_tokens"],
        "char": lambda v, r, i, c: v / len(r["continuation"]),
    }
    if unconditional:
        norms["pmi"] = lambda v, r, i, c: v - unconditional[i][c][0]
    out = {}
    for name, norm in norms.items():
        hits = [
            int(np.argmax([norm(v, r, i, c) for c, (v, r) in sorted(choices.items())])) == gold[i]
            for i, choices in conditional.items()
        ]
        out[name] = float(np.mean(hits))
    return out


def timed(function, counter, *args):
    before = counter.tokens
    started = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - started, counter.tokens - before


def harness_for(lm, batch_size):
    """lm-eval's HFLM around the very same model object and tokenizer."""
    from lm_eval.models.huggingface import HFLM

    return HFLM(
        pretrained=lm.model, tokenizer=lm.tokenizer, batch_size=batch_size, max_length=2048, device="cpu"
    )


def best_batch_size(lm, pairs, sizes, counter):
    timings = {}
    for size in sizes:
        _, seconds, _ = timed(run_lm_eval, counter, harness_for(lm, size), pairs)
        timings[size] = round(seconds, 2)
        print(f"  lm-eval batch size {size}: {seconds:.1f} s on {len(pairs)} requests", file=sys.stderr)
    return min(timings, key=timings.get), timings


def bench(lm, counter, rows, args) -> dict:
    pairs = [(row["context"], row["continuation"]) for row in rows]
    batch_size, sweep = best_batch_size(lm, pairs[: args.sweep_requests], args.batch_sizes, counter)
    harness = harness_for(lm, batch_size)
    engine_times, lm_eval_times = [], []
    for _ in range(args.repeats):
        run = timed(run_engine, counter, lm, pairs, args.max_batch_tokens)
        (ours, ours_greedy, trie), seconds, engine_tokens = run
        engine_times.append(seconds)
        (theirs, theirs_greedy), seconds, lm_eval_tokens = timed(run_lm_eval, counter, harness, pairs)
        lm_eval_times.append(seconds)
        print(f"  engine {engine_times[-1]:.1f} s, lm-eval {lm_eval_times[-1]:.1f} s", file=sys.stderr)
    encoded = encode_requests(lm.tokenizer, pairs, lm.bos_token_id)
    for row, item in zip(rows, encoded, strict=True):
        row["num_tokens"] = item.num_cont
    return {
        "requests": len(rows),
        "instances": len({row["instance_index"] for row in rows}),
        "lm_eval_batch_size": batch_size,
        "lm_eval_batch_sweep_s": sweep,
        "engine_max_batch_tokens": args.max_batch_tokens,
        "engine_wall_s": [round(t, 2) for t in engine_times],
        "lm_eval_wall_s": [round(t, 2) for t in lm_eval_times],
        "speedup": round(min(lm_eval_times) / min(engine_times), 2),
        "engine_tokens_forwarded": engine_tokens,
        "lm_eval_tokens_forwarded": lm_eval_tokens,
        "trie_minimal_tokens": trie,
        "max_abs_diff": float(np.abs(ours - theirs).max()),
        "is_greedy_mismatches": int((ours_greedy != theirs_greedy).sum()),
        "accuracy_engine": accuracies(rows, ours),
        "accuracy_lm_eval": accuracies(rows, theirs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--task", default="arc_challenge")
    parser.add_argument("--instances", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--max-batch-tokens", type=int, default=DEFAULT_MAX_BATCH_TOKENS)
    parser.add_argument("--batch-sizes", type=lambda s: [int(x) for x in s.split(",")], default=[1, 4, 16])
    parser.add_argument("--sweep-requests", type=int, default=120)
    parser.add_argument("--request-sets", default="cf,mcf")
    parser.add_argument("--output", type=Path, default=Path("benchmarks/engine_vs_lm_eval.json"))
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's own, one per core)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    lm = load(args.model, dtype="float32", device="cpu")
    counter = TokenCounter(lm.model)
    report = {
        "model": args.model,
        "model_revision": lm.resolved.content_id,
        "dtype": "float32",
        "device": "cpu",
        "torch_threads": torch.get_num_threads(),
        "machine": platform.processor() or platform.machine(),
        "results": {},
    }
    for formulation in args.formulations.split(","):
        rows = _rows(args.task, formulation, args.instances)
        print(f"{args.task} {formulation}: {len(rows)} requests", file=sys.stderr)
        result = bench(lm, counter, rows, args)
        report["results"][f"{args.task}_{formulation}"] = result
        print(json.dumps({f"{args.task}_{formulation}": result}, indent=1))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n")


def _rows(task: str, formulation: str, instances: int) -> list[dict]:
    """The requests of a formulation; CF with its pmi baseline rows where the task scores pmi."""
    sets = ["cf", "pmi"] if formulation == "cf" else [formulation]
    sets = [name for name in sets if name in request_sets(get_task(task))]
    return [row for name in sets for row in build_requests(task, name, limit=instances)]


if __name__ == "__main__":
    main()
