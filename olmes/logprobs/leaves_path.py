"""The engine's safe leaves path: each needed leaf of the trie forwarded whole with plain causal
attention, each request read off the leaf that extends it (exact for any causal model)."""

from __future__ import annotations

import inspect

import numpy as np
import torch

from olmes.logprobs.chunks import ChunkSize, run_chunks
from olmes.logprobs.contract import ScoringModel
from olmes.logprobs.tally import Tally, logits_to_keep, pick
from olmes.logprobs.trie import Trie


def score_leaves(
    lm: ScoringModel, encoded, trie: Trie, node, target, owner, tally: Tally, sizer: ChunkSize
) -> None:
    """The safe path: each needed leaf of the trie forwarded whole (plain causal attention, right-
    padded batches of leaves of similar length), each request read off the leaf that extends it.

    A token at position p of a leaf has seen exactly the leaf's first p tokens, which are the
    request's own, at their own indices: exact for ALiBi, recurrent layers, any causal model."""
    last_node = np.array([paths[-1] for paths in trie.paths], dtype=np.int64)
    leaf_of_item = trie.end[last_node[owner]] - 1  # the last node of a subtree is a leaf
    leaves = np.unique(leaf_of_item)
    by_length = leaves[np.argsort(-trie.depth[leaves], kind="stable")]  # longest first
    rank = np.empty(trie.size, dtype=np.int64)
    rank[by_length] = np.arange(len(by_length))
    items = np.argsort(rank[leaf_of_item], kind="stable")
    item_ranks = rank[leaf_of_item][items]
    source = {int(trie.end[n] - 1): index for index, n in enumerate(last_node)}  # leaf -> a request
    lengths = trie.depth[by_length].astype(np.int64) + 1
    pad = next((t for t in (lm.tokenizer.pad_token_id, lm.tokenizer.eos_token_id) if t is not None), 0)
    takes_kept = "logits_to_keep" in inspect.signature(lm.model.forward).parameters

    def plan(start: int, size: int) -> int:
        return start + max(1, min(size // int(lengths[start]), len(by_length) - start))

    def forward(start: int, stop: int) -> None:
        lo, hi = np.searchsorted(item_ranks, [start, stop])
        chosen = items[lo:hi]
        width = int(lengths[start])
        batch = np.full((stop - start, width), pad, dtype=np.int64)
        for row, leaf in enumerate(by_length[start:stop]):
            batch[row, : lengths[start + row]] = encoded[source[int(leaf)]].tokens[: lengths[start + row]]
        mask = (np.arange(width)[None, :] < lengths[start:stop, None]).astype(np.int64)
        positions = trie.depth[node[chosen]].astype(np.int64)
        kept = np.unique(positions) if takes_kept else np.arange(width)
        extra = {"logits_to_keep": logits_to_keep(kept)} if takes_kept else {}
        output = lm.model(
            input_ids=torch.from_numpy(batch).to(lm.device),
            attention_mask=torch.from_numpy(mask).to(lm.device),
            use_cache=False,
            **extra,
        )
        logits = output.logits.reshape(-1, output.logits.shape[-1])
        row_of_item = rank[leaf_of_item[chosen]] - start
        rows = row_of_item * output.logits.shape[1] + np.searchsorted(kept, positions)
        logprobs, greedy = pick(logits, rows, target[chosen])
        tally.add(chosen, logprobs, greedy, batch.size)

    run_chunks(len(by_length), sizer, plan, forward, lm.device)
