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

That argument holds only where attention depends on the keys through the mask and the position ids
alone. Models where it does not (ALiBi computed from the key's index, recurrent Mamba layers, code
nobody here verified) take the safe ``leaves`` path instead: see :mod:`olmes.logprobs.architectures`,
which says which path each architecture takes and why.

Tokenization follows docs/standard.md section 3: ``encode(context + continuation)``; the continuation tokens
are those after ``len(encode(context))``; the model's BOS is prepended where it expects one; inputs
are at most 2048 tokens (the context is cut from the left, as lm-evaluation-harness does).
"""

from __future__ import annotations

import gc
import inspect
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from tqdm import tqdm

from olmes.core.errors import OlmesError
from olmes.logprobs.architectures import TREE
from olmes.logprobs.contract import ScoringModel
from olmes.logprobs.options import DEFAULT_MAX_BATCH_TOKENS
from olmes.logprobs.placement import ModelDims, gpu_chunk_tokens

ENGINE_VERSION = "1"  # bump when the numbers a given model produces could change
MAX_INPUT_TOKENS = 2048
GROW_AFTER = 16  # calls in a row that must succeed before a chunk halved by out-of-memory doubles again


def default_max_batch_tokens(lm: ScoringModel) -> int:
    """Tokens per chunk when none is asked for. On a CPU the matmuls are compute-bound already at 512
    tokens, and the tree attention over a chunk grows with its square: measured on 2 cores, SmolLM2-135M
    does 482 tok/s at 512, 316 at 2048, 246 at 4096 (Gemma 3 270M: 286, 216). On a GPU, the most that
    the memory left free after loading holds, by the model's dimensions
    (:func:`olmes.logprobs.placement.gpu_chunk_tokens`); an out-of-memory error still halves it."""
    if lm.device.type != "cuda":
        return DEFAULT_MAX_BATCH_TOKENS
    placed = (getattr(lm.model, "hf_device_map", None) or {}).values()
    devices = {torch.device("cuda", where) for where in placed if isinstance(where, int)} or {lm.device}
    free = min(_free_bytes(device) for device in devices)
    eager = getattr(lm.model.config, "_attn_implementation", None) == "eager"
    kinds = _sliding_windows(lm.model.config)
    dims = ModelDims.from_config(lm.model.config)
    mask_kinds = len(kinds) if isinstance(kinds, dict) else 1
    return gpu_chunk_tokens(free, dims, lm.dtype.itemsize, eager, mask_kinds)


def _free_bytes(device: torch.device) -> int:
    """Bytes a chunk may take on a CUDA device: free memory plus what torch holds cached but unused."""
    free, _ = torch.cuda.mem_get_info(device)
    return free + torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)


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
    max_batch_tokens: int = 0  # the chunk size the run started with
    scoring_path: str = TREE


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
            if layer == len(self.keys):  # keys and values may differ in size (DeepSeek-V2's MLA)
                self.keys.append(new_keys.new_empty((*new_keys.shape[:2], self.max_depth, new_keys.shape[3])))
                self.values.append(
                    new_values.new_empty((*new_values.shape[:2], self.max_depth, new_values.shape[3]))
                )
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


class _DeviceTrie:
    """The trie's depths and subtree ends on the model's device, copied once per run, so that each
    chunk's mask is built where the model runs: no O(chunk^2) host-to-device copy per chunk."""

    def __init__(self, trie: Trie, device: torch.device):
        self.host_depth = trie.depth  # what the host needs to know (the root path's length) it reads here
        self.depth = torch.from_numpy(trie.depth).to(device, torch.int64)
        self.end = torch.from_numpy(trie.end).to(device, torch.int64)
        self.device = device


def _tree_mask(trie: _DeviceTrie, path_nodes: np.ndarray, start: int, stop: int, window, dtype):
    """Additive attention mask (1, 1, q, past + q) on the model's device: each chunk node sees its
    ancestors (the current root path, then the chunk's own nodes) and itself."""
    device = trie.device
    depth = trie.depth[start:stop]
    past = int(trie.host_depth[start])
    ids = torch.arange(start, stop, device=device)
    keys = torch.cat([torch.from_numpy(path_nodes[:past]).to(device), ids])
    allowed = (keys[None, :] <= ids[:, None]) & (trie.end[keys][None, :] > ids[:, None])
    zero = torch.zeros((), dtype=dtype, device=device)
    blocked = torch.full((), torch.finfo(dtype).min, dtype=dtype, device=device)

    def additive(limit):
        ok = allowed
        if limit is not None:
            key_depth = torch.cat([torch.arange(past, device=device), depth])
            ok = allowed & (depth[:, None] - key_depth[None, :] < limit)
        return torch.where(ok, zero, blocked)[None, None]

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

    def add(self, items: np.ndarray, logprobs: np.ndarray, greedy: np.ndarray, forwarded: int) -> None:
        """Take the results of score items ``items`` (indices into the sorted item arrays)."""
        owners = self.owner[items]
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


class _ChunkSize:
    """Tokens per model call: halved on an out-of-memory error, grown back (doubled, up to the size
    asked for) after GROW_AFTER calls in a row succeed; each further out-of-memory error doubles
    the successes needed, so a size that keeps failing is tried less and less often."""

    def __init__(self, size: int):
        self.limit = self.size = max(1, size)
        self.grow_after, self.streak = GROW_AFTER, 0

    def out_of_memory(self) -> None:
        if self.size == 1:
            raise OlmesError(
                "out of device memory with one token per model call; use a smaller model or dtype"
            )
        self.size, self.streak = self.size // 2, 0
        self.grow_after *= 2

    def succeeded(self) -> None:
        self.streak += 1
        if self.size < self.limit and self.streak >= self.grow_after:
            self.size, self.streak = min(self.size * 2, self.limit), 0


def _free_device_memory(device: torch.device) -> None:
    """Give the memory of a failed call back to the device. Called after the ``except`` block has
    ended: inside it, the traceback still holds the failed call's tensors."""
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def _run_chunks(total: int, sizer: _ChunkSize, plan, forward, device: torch.device) -> None:
    """Forward units [0, total) in consecutive chunks: ``plan(start, size)`` says where a chunk of at
    most ``size`` tokens stops, ``forward(start, stop)`` computes it (and may not change any state
    unless it succeeds). An out-of-memory error retries the same chunk smaller."""
    start = 0
    while start < total:
        stop = plan(start, sizer.size)
        failed = False
        try:
            forward(start, stop)
        except torch.OutOfMemoryError:
            failed = True
        if failed:
            _free_device_memory(device)
            sizer.out_of_memory()
            continue
        sizer.succeeded()
        start = stop


@torch.inference_mode()
def score(
    lm: ScoringModel,
    pairs: Sequence[tuple[str, str]],
    max_batch_tokens: int | None = None,
    on_done: Callable[[np.ndarray, Scores], None] | None = None,
    progress: bool = False,
) -> Scores:
    """Score (context, continuation) pairs with a loaded model (the contract:
    :class:`olmes.logprobs.contract.ScoringModel`; olmes's own: :mod:`olmes.logprobs.models`), on
    its scoring path (``lm.scoring_path``: :mod:`olmes.logprobs.architectures`).

    ``max_batch_tokens`` None: the device's default (:func:`default_max_batch_tokens`).
    ``on_done(indices, scores)`` is called as requests complete (the arrays of ``scores`` are
    final at those indices), so a caller can persist results while the run goes on.
    """
    encoded = encode_requests(lm.tokenizer, pairs, lm.bos_token_id)
    trie = build_trie([item.tokens[:-1] for item in encoded])
    node, target, owner = _score_items(encoded, trie)
    count = len(encoded)
    size = max_batch_tokens or default_max_batch_tokens(lm)
    scores = Scores(
        sum_logprob=np.zeros(count),
        num_tokens=np.array([e.num_cont for e in encoded], dtype=np.int64),
        is_greedy=np.ones(count, dtype=bool),
        tokens_forwarded=0,
        trie_tokens=trie.size,
        naive_tokens=sum(len(e.tokens) - 1 for e in encoded),
        max_batch_tokens=size,
        scoring_path=lm.scoring_path,
    )
    tally = _Tally(scores, owner, on_done, progress)
    sizer = _ChunkSize(size)
    if lm.scoring_path == TREE:
        _score_tree(lm, trie, node, target, tally, sizer)
    else:
        _score_leaves(lm, encoded, trie, node, target, owner, tally, sizer)
    tally.bar.close()
    return scores


def _score_tree(lm: ScoringModel, trie: Trie, node, target, tally: _Tally, sizer: _ChunkSize) -> None:
    """The tree path: trie nodes in consecutive preorder chunks, the root path's keys/values cached."""
    path = _PathCache(int(trie.depth.max(initial=0)) + 1)
    on_device = _DeviceTrie(trie, lm.device)
    window = _sliding_windows(lm.model.config)

    def forward(start: int, stop: int) -> None:
        chunk = (start, stop, window, node, target)
        logprobs, greedy, lo, hi = _forward_chunk(lm, trie, on_device, path, *chunk)
        tally.add(np.arange(lo, hi), logprobs, greedy, stop - start)

    _run_chunks(trie.size, sizer, lambda start, size: min(start + size, trie.size), forward, lm.device)


def _forward_chunk(lm: ScoringModel, trie: Trie, on_device: _DeviceTrie, path: _PathCache, *chunk):
    """Forward trie nodes [start, stop) (``chunk``: start, stop, window, node, target); return the
    chunk's item log-probs and greedy flags and the range of score items they belong to."""
    start, stop, window, node, target = chunk
    device = lm.device
    past = int(trie.depth[start])
    lo, hi = np.searchsorted(node, [start, stop])
    needed = np.unique(node[lo:hi])
    cache = path.as_cache(past)
    output = lm.model(
        input_ids=torch.from_numpy(trie.tokens[start:stop])[None].to(device),
        position_ids=on_device.depth[start:stop][None],
        attention_mask=_tree_mask(on_device, path.nodes, start, stop, window, lm.dtype),
        cache=cache,
        use_cache=True,
        logits_to_keep=_kept(needed - start),
    )
    rows = np.searchsorted(needed, node[lo:hi])
    logprobs, greedy = _pick(output.logits[0], rows, target[lo:hi])
    path.store(cache, past, np.arange(start, stop), trie.depth[start:stop])  # only once all succeeded
    return logprobs, greedy, lo, hi


def _kept(positions: np.ndarray) -> torch.Tensor:
    """The sequence positions whose logits to compute (``logits_to_keep``), padded to a multiple of 8
    by repeating the last. On the CPU: a model split over GPUs indexes its last layer's output with
    it, on whichever GPU that is (the placement keeps accelerate from moving it, models.py)."""
    if len(positions):
        positions = np.pad(positions, (0, -len(positions) % 8), mode="edge")
    return torch.from_numpy(positions.astype(np.int64))


def _pick(logits: torch.Tensor, rows: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Log-prob of ``targets[i]`` at logits row ``rows[i]``, and whether it is the argmax there; each
    distinct row normalized once (the choices of a question share their first rows)."""
    device = logits.device
    distinct, inverse = np.unique(rows, return_inverse=True)
    picked = logits[torch.from_numpy(distinct).to(device)]
    picked = picked.to(torch.promote_types(picked.dtype, torch.float32))  # half precisions in float32
    at = torch.from_numpy(inverse.reshape(-1)).to(device)
    wanted = torch.from_numpy(targets).to(device)
    logprobs = picked.log_softmax(-1)[at, wanted]
    greedy = picked.argmax(-1)[at] == wanted
    return logprobs.double().cpu().numpy(), greedy.cpu().numpy()


def _score_leaves(
    lm: ScoringModel, encoded, trie: Trie, node, target, owner, tally: _Tally, sizer: _ChunkSize
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
        extra = {"logits_to_keep": _kept(kept)} if takes_kept else {}
        output = lm.model(
            input_ids=torch.from_numpy(batch).to(lm.device),
            attention_mask=torch.from_numpy(mask).to(lm.device),
            use_cache=False,
            **extra,
        )
        logits = output.logits.reshape(-1, output.logits.shape[-1])
        row_of_item = rank[leaf_of_item[chosen]] - start
        rows = row_of_item * output.logits.shape[1] + np.searchsorted(kept, positions)
        logprobs, greedy = _pick(logits, rows, target[chosen])
        tally.add(chosen, logprobs, greedy, batch.size)

    _run_chunks(len(by_length), sizer, plan, forward, lm.device)
