"""Memory and time of tokenizing a full request set and building its trie (no forward pass).

MMLU's CF set is the largest of the standard: 56,168 requests whose contexts carry five shots. The
log-prob job holds every request's tokens and the trie at once, so this is its memory floor.

    .venv/bin/python benchmarks/trie_memory.py [--task mmlu] [--set cf] [--model smollm2-135m]
"""

from __future__ import annotations

import argparse
import resource
import time

from olmes import store
from olmes.logprobs.models import prepare
from olmes.logprobs.trie import build_trie, encode_requests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="mmlu")
    parser.add_argument("--set", default="cf", dest="request_set")
    parser.add_argument("--model", default="smollm2-135m")
    args = parser.parse_args()
    rows = store.canonical_requests(args.task, args.request_set, None, "bundle")
    pairs = [(row["context"], row["continuation"]) for row in rows]
    plan = prepare(args.model)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(plan.resolved.path)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    started = time.perf_counter()
    encoded = encode_requests(tokenizer, pairs, plan.bos_token_id)
    encoded_s = time.perf_counter() - started
    trie = build_trie([item.tokens[:-1] for item in encoded])
    total_s = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    tokens = sum(len(item.tokens) for item in encoded)
    print(
        f"{args.task} {args.request_set} ({args.model}): {len(pairs)} requests, {tokens:,} input tokens, "
        f"trie {trie.size:,} nodes; encode {encoded_s:.1f} s, + trie {total_s - encoded_s:.1f} s; "
        f"peak RSS {peak:.2f} GiB (before encoding {before:.2f} GiB)"
    )


if __name__ == "__main__":
    main()
