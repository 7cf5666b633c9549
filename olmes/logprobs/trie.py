"""The engine's inputs: requests tokenized (docs/standard.md section 3) and their token sequences put in
a trie whose nodes are numbered in depth-first preorder (:mod:`olmes.logprobs.engine` says why), and
the score items, one per continuation token. numpy only: no torch."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MAX_INPUT_TOKENS = 2048


@dataclass
class Encoded:
    """Token ids of one request: ``tokens`` = (BOS) + context + continuation, truncated.

    A numpy int32 array, not a list: all of MMLU's 27 M input tokens as Python ints took gigabytes."""

    tokens: np.ndarray
    num_cont: int


@dataclass
class Trie:
    """The distinct input-token prefixes of a request set, as nodes numbered in preorder.

    ``end[x]`` is one past the last node of x's subtree, so y is an ancestor-or-self of x iff
    ``y <= x < end[y]``. ``paths[r]`` holds the node of each input token of request r.
    """

    tokens: np.ndarray
    depth: np.ndarray
    end: np.ndarray
    paths: list[np.ndarray]

    @property
    def size(self) -> int:
        return len(self.tokens)


def encode_requests(
    tokenizer, pairs: Sequence[tuple[str, str]], bos_token_id: int | None, max_input: int = MAX_INPUT_TOKENS
) -> list[Encoded]:
    """Tokenize (context, continuation) pairs per docs/standard.md section 3 (each distinct context once)."""
    contexts = list(dict.fromkeys(context for context, _ in pairs))
    context_ids = dict(zip(contexts, _encode(tokenizer, contexts), strict=True))
    wholes = _encode(tokenizer, [context + continuation for context, continuation in pairs])
    prefix = np.array([] if bos_token_id is None else [bos_token_id], dtype=np.int32)
    encoded = []
    for position, (context, _) in enumerate(pairs):
        whole, wholes[position] = wholes[position], None  # hold each request's tokens once
        context_len = len(prefix) + len(context_ids[context])
        tokens = np.concatenate([prefix, whole])
        if context_len == 0:  # nothing to condition on: use EOS as lm-evaluation-harness does
            tokens, context_len = np.concatenate([[tokenizer.eos_token_id], tokens]).astype(np.int32), 1
        num_cont = max(len(tokens) - context_len, 0)
        tokens = tokens[-(max_input + 1) :]
        encoded.append(Encoded(tokens, min(num_cont, len(tokens) - 1)))
    return encoded


def _encode(tokenizer, texts: list[str], batch: int = 1024) -> list[np.ndarray]:
    """Token ids of each text (int32 arrays), tokenized in batches: a fast tokenizer's per-token
    bookkeeping (offsets, token strings) for all of MMLU at once would take gigabytes."""
    ids: list[np.ndarray] = []
    for start in range(0, len(texts), batch):
        found = tokenizer(texts[start : start + batch], add_special_tokens=False)["input_ids"]
        ids.extend(np.asarray(one, dtype=np.int32) for one in found)
    return ids


def build_trie(inputs: Sequence[Sequence[int]]) -> Trie:
    """Trie of the given token sequences (non-empty), nodes in preorder, via one lexicographic sort.

    The sort key is each sequence as big-endian 4-byte integers: for token ids (non-negative) bytes
    order is the lexicographic order of the sequences, a prefix first."""
    order = sorted(range(len(inputs)), key=lambda i: np.asarray(inputs[i], dtype=">i4").tobytes())
    paths: list[np.ndarray] = [np.empty(0, np.int32)] * len(inputs)  # node ids: int32 (2 M for MMLU)
    new_tokens, new_depths, new_parents = [], [], []
    previous, previous_ids, count = np.empty(0, np.int64), np.empty(0, np.int32), 0
    for index in order:
        seq = np.asarray(inputs[index], dtype=np.int64)
        shared = min(len(seq), len(previous))
        mismatch = np.flatnonzero(seq[:shared] != previous[:shared])
        lcp = int(mismatch[0]) if len(mismatch) else shared
        fresh = np.arange(count, count + len(seq) - lcp, dtype=np.int32)
        ids = np.concatenate([previous_ids[:lcp], fresh])
        new_tokens.append(seq[lcp:])
        new_depths.append(np.arange(lcp, len(seq), dtype=np.int32))
        new_parents.append(np.concatenate([[-1], ids])[lcp : len(seq)])
        paths[index], previous, previous_ids, count = ids, seq, ids, count + len(fresh)
    tokens, depth, parent = (
        np.concatenate(x) if x else np.empty(0, np.int64) for x in (new_tokens, new_depths, new_parents)
    )
    return Trie(tokens, depth, np.arange(count) + _subtree_sizes(depth, parent), paths)


def _subtree_sizes(depth: np.ndarray, parent: np.ndarray) -> np.ndarray:
    sizes = np.ones(len(depth), dtype=np.int64)
    by_depth = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[by_depth], np.arange(int(depth.max(initial=0)) + 2))
    for level in range(len(bounds) - 2, 0, -1):
        nodes = by_depth[bounds[level] : bounds[level + 1]]
        np.add.at(sizes, parent[nodes], sizes[nodes])
    return sizes


def score_items(encoded: Sequence[Encoded], trie: Trie):
    """(node, target token, request) for every continuation token, sorted by node."""
    nodes, targets, owners = [], [], []
    for index, item in enumerate(encoded):
        if item.num_cont == 0:
            continue
        length = len(item.tokens) - 1
        nodes.append(trie.paths[index][length - item.num_cont : length])
        targets.append(np.asarray(item.tokens[length - item.num_cont + 1 :], dtype=np.int64))
        owners.append(np.full(item.num_cont, index, dtype=np.int64))
    if not nodes:
        return (np.empty(0, np.int64),) * 3
    node, target, owner = (np.concatenate(x) for x in (nodes, targets, owners))
    order = np.argsort(node, kind="stable")
    return node[order], target[order], owner[order]
