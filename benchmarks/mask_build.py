"""Time building the tree attention mask of one chunk alone (olmes.logprobs.tree_path.tree_mask).

    python benchmarks/mask_build.py --chunks 512,8192

Uses SmolLM2's tokens of all ARC-Challenge CF requests and a chunk starting at node 20,000. Run it
from another checkout (PYTHONPATH) to time an older engine: before the mask was built on the model's
device, ``_tree_mask`` took the trie and the path cache and built it on the host.
"""

from __future__ import annotations

import argparse
import inspect
import time

import torch
from transformers import AutoTokenizer

from olmes.logprobs import engine
from olmes.logprobs.resolve import resolve
from olmes.requests.build import build_requests

try:  # the engine split by job; an older checkout (PYTHONPATH) has it all in engine.py
    from olmes.logprobs.tree_path import DeviceTrie, PathCache, tree_mask
    from olmes.logprobs.trie import build_trie, encode_requests
except ImportError:
    build_trie, encode_requests = engine.build_trie, engine.encode_requests
    DeviceTrie, PathCache, tree_mask = engine._DeviceTrie, engine._PathCache, engine._tree_mask


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", default="512,8192")
    parser.add_argument("--start", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    tokenizer = AutoTokenizer.from_pretrained(resolve("smollm2-135m").path)
    rows = build_requests("arc_challenge", "cf")
    encoded = encode_requests(tokenizer, [(r["context"], r["continuation"]) for r in rows], None)
    trie = build_trie([item.tokens[:-1] for item in encoded])
    path = PathCache(int(trie.depth.max()) + 1)
    on_device = "path_nodes" in inspect.signature(tree_mask).parameters
    cpu = torch.device("cpu")
    for chunk in map(int, args.chunks.split(",")):
        start, stop = args.start, args.start + chunk
        if on_device:
            arguments = (DeviceTrie(trie, cpu), path.nodes, start, stop, None, torch.float32)
        else:
            arguments = (trie, path, start, stop, None, torch.float32, cpu)
        mask = tree_mask(*arguments)
        started = time.perf_counter()
        for _ in range(args.repeat):
            tree_mask(*arguments)
        took = (time.perf_counter() - started) / args.repeat
        print(
            f"chunk {chunk} (root path {int(trie.depth[start])} tokens, trie {trie.size:,} nodes): "
            f"{took * 1000:.1f} ms, mask {mask.numel() * mask.element_size() / 1e6:.0f} MB"
        )


if __name__ == "__main__":
    main()
