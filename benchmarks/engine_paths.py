"""The engine's two paths on the same requests: tokens/s of the tree path and the share of its time spent
building attention masks, and what the safe leaves path costs instead (tokens forwarded, time), with
the largest difference between the two paths' log-probs.

    python benchmarks/engine_paths.py --model smollm2-135m --task arc_challenge --limit 50

Run it from another checkout (PYTHONPATH) to compare engine versions in one run: an engine without the
leaves path reports the tree path only.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np
import torch

from olmes.logprobs import engine
from olmes.logprobs.models import load
from olmes.requests.build import build_requests

try:  # the tree path's mask builder: its own module since the engine's split; engine.py's before
    from olmes.logprobs import tree_path as mask_module

    MASK_BUILDER = "tree_mask"
except ImportError:
    mask_module, MASK_BUILDER = engine, "_tree_mask"


def timed_masks():
    """Wrap the engine's mask builder to add up its wall time."""
    spent = [0.0]
    build = getattr(mask_module, MASK_BUILDER)

    def timed(*args, **kwargs):
        started = time.perf_counter()
        mask = build(*args, **kwargs)
        spent[0] += time.perf_counter() - started
        return mask

    setattr(mask_module, MASK_BUILDER, timed)
    return spent


def run(lm, pairs, max_batch_tokens):
    started = time.perf_counter()
    scores = engine.score(lm, pairs, max_batch_tokens=max_batch_tokens)
    return scores, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--task", default="arc_challenge")
    parser.add_argument("--formulation", default="cf")
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--max-batch-tokens", type=int, default=512)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--tree-only", action="store_true", help="time the tree path only")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    lm = load(args.model, device="cpu")
    rows = build_requests(args.task, args.formulation, limit=args.limit)
    pairs = [(row["context"], row["continuation"]) for row in rows]
    engine.score(lm, pairs[:4], max_batch_tokens=args.max_batch_tokens)  # warm up torch, not timed
    spent = timed_masks()
    tree, took = run(lm, pairs, args.max_batch_tokens)
    print(
        f"tree: {len(pairs)} requests, {tree.tokens_forwarded:,} tokens forwarded in {took:.1f} s = "
        f"{tree.tokens_forwarded / took:,.0f} tok/s; masks {spent[0]:.2f} s = {spent[0] / took:.1%} of the "
        f"time (chunk {args.max_batch_tokens})"
    )
    if args.tree_only or "scoring_path" not in {field.name for field in dataclasses.fields(lm)}:
        return
    leaves, took_leaves = run(dataclasses.replace(lm, scoring_path="leaves"), pairs, args.max_batch_tokens)
    delta = np.abs(leaves.sum_logprob - tree.sum_logprob).max()
    flips = int((leaves.is_greedy != tree.is_greedy).sum())
    print(
        f"leaves: {leaves.tokens_forwarded:,} tokens forwarded "
        f"({leaves.tokens_forwarded / tree.tokens_forwarded:.2f}x the tree's), {took_leaves:.1f} s "
        f"({took_leaves / took:.2f}x); max |tree - leaves| {delta:.2e} nats, greedy flags differing {flips}"
    )


if __name__ == "__main__":
    main()
