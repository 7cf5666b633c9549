"""The log-likelihood engine: log P(continuation | context) for every request, each token prefix once.

Why it is fast: OLMES requests share long prefixes (the task's 5-shot prefix across all instances,
the question across an instance's choices). The engine puts the token sequences of all requests in
a trie, numbers its nodes in depth-first preorder, and forwards the nodes in consecutive preorder
chunks of at most ``max_batch_tokens`` tokens, as one packed sequence per chunk with a tree-shaped
attention mask and position ids equal to the node depth. So every distinct token prefix is forwarded
exactly once (tokens forwarded = trie-minimal tokens) and no padding is ever computed.

Why it is exact: in preorder, the ancestors of a chunk's nodes that lie before the chunk are exactly
the ancestors of its first node, i.e. one root path. The engine keeps the keys/values of the current
root path, indexed by depth, and feeds that path as the KV cache of the next chunk. Each token thus
attends to precisely its own prefix at its own positions, as when its request is scored alone; only
float rounding differs. The vocabulary projection is computed only at nodes whose next token is a
continuation token of some request.

Tokenization follows docs/standard.md section 3: ``encode(context + continuation)``; the continuation tokens
are those after ``len(encode(context))``; the model's BOS is prepended where it expects one; inputs
are at most 2048 tokens (the context is cut from the left, as lm-evaluation-harness does).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from tqdm import tqdm

from olmes.logprobs.options import DEFAULT_MAX_BATCH_TOKENS, GPU_MAX_BATCH_TOKENS

ENGINE_VERSION = "1"  # bump when the numbers a given model produces could change
MAX_INPUT_TOKENS = 2048


def default_max_batch_tokens(device: torch.device) -> int:
    """Tokens per chunk when none is asked for. On a CPU the matmuls are compute-bound already at 512
    tokens, and the tree attention over a chunk grows with its square: measured on 2 cores, SmolLM2-135M
    does 482 tok/s at 512, 316 at 2048, 246 at 4096 (Gemma 3 270M: 286, 216). A GPU wants bigger chunks
    to fill it; CUDA out-of-memory halves the chunk and retries, so too big is safe (not yet measured)."""
    return GPU_MAX_BATCH_TOKENS if device.type == "cuda" else DEFAULT_MAX_BATCH_TOKENS


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


@dataclass
class Scores:
    """Per-request results in request order, plus the work done."""

    sum_logprob: np.ndarray
    num_tokens: np.ndarray
    is_greedy: np.ndarray
    tokens_forwarded: int
    trie_tokens: int
    naive_tokens: int  # what scoring each request alone would forward


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


class _PathCache:
    """Keys/values of the current root path of the trie, one slot per depth, for every layer."""

    def __init__(self, max_depth: int):
        self.max_depth = max_depth
        self.nodes = np.full(max_depth, -1, dtype=np.int64)
        self.keys: list[torch.Tensor] = []
        self.values: list[torch.Tensor] = []

    def as_cache(self, length: int):
        """A fresh transformers cache holding the first ``length`` path positions."""
        from transformers import DynamicCache

        cache = DynamicCache()
        if length:
            for layer, (keys, values) in enumerate(zip(self.keys, self.values, strict=True)):
                cache.update(keys[:, :, :length], values[:, :, :length], layer)
        return cache

    def store(self, cache, past: int, ids: np.ndarray, depth: np.ndarray) -> None:
        """Keep the chunk's nodes that can be ancestors of later chunks: the last one at each depth."""
        reversed_depth = depth[::-1]
        levels, last = np.unique(reversed_depth, return_index=True)
        local = torch.from_numpy(len(depth) - 1 - last)
        slots = torch.from_numpy(levels.astype(np.int64))
        self.nodes[levels] = ids[local.numpy()]
        for layer, cache_layer in enumerate(cache.layers):
            new_keys, new_values = cache_layer.keys[:, :, past:], cache_layer.values[:, :, past:]
            if layer == len(self.keys):
                shape = (*new_keys.shape[:2], self.max_depth, new_keys.shape[3])
                self.keys.append(new_keys.new_empty(shape))
                self.values.append(new_values.new_empty(shape))
            self.keys[layer][:, :, slots] = new_keys[:, :, local]
            self.values[layer][:, :, slots] = new_values[:, :, local]


def _sliding_windows(config) -> dict[str, int | None] | int | None:
    """Per layer type, the sliding window the mask must apply (None = full attention).

    Models mixing full and sliding layers (Gemma 2/3) get a dict of masks keyed by layer type;
    other models get one mask, windowed when the config asks for it.
    """
    layer_types = getattr(config, "layer_types", None)
    window = getattr(config, "sliding_window", None)
    if layer_types and len(set(layer_types)) > 1:
        return {kind: window if kind == "sliding_attention" else None for kind in set(layer_types)}
    if layer_types:
        return window if layer_types[0] == "sliding_attention" else None
    return window if window and getattr(config, "use_sliding_window", True) is not False else None


def _tree_mask(trie: Trie, path: _PathCache, start: int, stop: int, window, dtype, device):
    """Additive attention mask (1, 1, q, past + q): each chunk node sees its ancestors and itself."""
    past = int(trie.depth[start])
    ids = torch.arange(start, stop)
    depth = torch.from_numpy(trie.depth[start:stop]).long()
    keys = torch.cat([torch.from_numpy(path.nodes[:past]), ids])
    key_depth = torch.cat([torch.arange(past), depth])
    key_end = torch.from_numpy(trie.end[keys.numpy()])
    allowed = (keys[None, :] <= ids[:, None]) & (key_end[None, :] > ids[:, None])

    def additive(limit):
        ok = allowed if limit is None else allowed & (depth[:, None] - key_depth[None, :] < limit)
        mask = torch.zeros(ok.shape, dtype=dtype).masked_fill_(~ok, torch.finfo(dtype).min)
        return mask[None, None].to(device)

    if isinstance(window, dict):
        return {kind: additive(limit) for kind, limit in window.items()}
    return additive(window)


def _score_items(encoded: Sequence[Encoded], trie: Trie):
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


class _Tally:
    """Adds up token log-probs per request and reports requests as their last token is scored."""

    def __init__(self, scores: Scores, owner: np.ndarray, on_done, progress: bool):
        self.scores, self.owner, self.on_done = scores, owner, on_done
        self.remaining = scores.num_tokens.copy()
        self.bar = tqdm(
            total=len(scores.num_tokens),
            unit="req",
            file=sys.stderr,
            disable=not progress,
            dynamic_ncols=True,
        )
        self.started = time.perf_counter()
        self._report(np.flatnonzero(self.remaining == 0))  # empty continuations are done already

    def add(self, lo: int, hi: int, logprobs: np.ndarray, greedy: np.ndarray, forwarded: int) -> None:
        owners = self.owner[lo:hi]
        np.add.at(self.scores.sum_logprob, owners, logprobs)
        np.logical_and.at(self.scores.is_greedy, owners, greedy)
        np.subtract.at(self.remaining, owners, 1)
        finished = np.unique(owners)
        self.scores.tokens_forwarded += forwarded
        rate = self.scores.tokens_forwarded / max(time.perf_counter() - self.started, 1e-9)
        self.bar.set_postfix_str(f"{rate:,.0f} tok/s", refresh=False)
        self._report(finished[self.remaining[finished] == 0])

    def _report(self, finished: np.ndarray) -> None:
        if len(finished) and self.on_done is not None:
            self.on_done(finished, self.scores)
        self.bar.update(len(finished))


@torch.inference_mode()
def score(
    lm,
    pairs: Sequence[tuple[str, str]],
    max_batch_tokens: int = DEFAULT_MAX_BATCH_TOKENS,
    on_done: Callable[[np.ndarray, Scores], None] | None = None,
    progress: bool = False,
) -> Scores:
    """Score (context, continuation) pairs with a loaded model (see :mod:`olmes.logprobs.models`).

    ``on_done(indices, scores)`` is called as requests complete (the arrays of ``scores`` are
    final at those indices), so a caller can persist results while the run goes on.
    """
    encoded = encode_requests(lm.tokenizer, pairs, lm.bos_token_id)
    trie = build_trie([item.tokens[:-1] for item in encoded])
    node, target, owner = _score_items(encoded, trie)
    count = len(encoded)
    scores = Scores(
        sum_logprob=np.zeros(count),
        num_tokens=np.array([e.num_cont for e in encoded], dtype=np.int64),
        is_greedy=np.ones(count, dtype=bool),
        tokens_forwarded=0,
        trie_tokens=trie.size,
        naive_tokens=sum(len(e.tokens) - 1 for e in encoded),
    )
    tally = _Tally(scores, owner, on_done, progress)
    path = _PathCache(int(trie.depth.max(initial=0)) + 1)
    window = _sliding_windows(lm.model.config)
    start, size = 0, max(1, max_batch_tokens)
    while start < trie.size:
        stop = min(start + size, trie.size)
        try:
            logprobs, greedy, lo, hi = _forward_chunk(lm, trie, path, start, stop, window, node, target)
        except torch.cuda.OutOfMemoryError:
            if size == 1:
                raise
            size //= 2  # and retry the same nodes: the path cache is only updated on success
            torch.cuda.empty_cache()
            continue
        tally.add(lo, hi, logprobs, greedy, stop - start)
        start = stop
    tally.bar.close()
    return scores


def _forward_chunk(lm, trie: Trie, path: _PathCache, start, stop, window, node, target):
    """Forward trie nodes [start, stop); return the chunk's item log-probs and greedy flags."""
    device = lm.device
    past = int(trie.depth[start])
    lo, hi = np.searchsorted(node, [start, stop])
    needed = np.unique(node[lo:hi])
    keep = np.pad(needed - start, (0, -len(needed) % 8), mode="edge") if len(needed) else needed
    cache = path.as_cache(past)
    output = lm.model(
        input_ids=torch.from_numpy(trie.tokens[start:stop])[None].to(device),
        position_ids=torch.from_numpy(trie.depth[start:stop]).long()[None].to(device),
        attention_mask=_tree_mask(trie, path, start, stop, window, lm.dtype, device),
        cache=cache,
        use_cache=True,
        # on the CPU: a split model indexes its last layer's output with it, on whichever GPU that is
        logits_to_keep=torch.from_numpy(keep),
    )
    logits = output.logits[0, : len(needed)].float()
    rows = torch.from_numpy(np.searchsorted(needed, node[lo:hi])).to(device)
    wanted = torch.from_numpy(target[lo:hi]).to(device)
    logprobs = logits.log_softmax(-1)[rows, wanted]
    greedy = logits.argmax(-1)[rows] == wanted
    result = logprobs.double().cpu().numpy(), greedy.cpu().numpy(), lo, hi
    path.store(cache, past, np.arange(start, stop), trie.depth[start:stop])  # only once all succeeded
    return result
