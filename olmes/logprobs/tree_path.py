"""The engine's tree path: trie nodes forwarded in consecutive preorder chunks, one packed sequence per
chunk with a tree-shaped attention mask and position ids equal to the node depth, the current root
path's keys and values fed as the next chunk's KV cache (:mod:`olmes.logprobs.engine` says why it is
exact)."""

from __future__ import annotations

import numpy as np
import torch

from olmes.logprobs.architectures import sliding_windows
from olmes.logprobs.chunks import ChunkSize, run_chunks
from olmes.logprobs.contract import ScoringModel
from olmes.logprobs.tally import Tally, logits_to_keep, pick
from olmes.logprobs.trie import Trie


class PathCache:
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


class DeviceTrie:
    """The trie's depths and subtree ends on the model's device, copied once per run, so that each
    chunk's mask is built where the model runs: no O(chunk^2) host-to-device copy per chunk."""

    def __init__(self, trie: Trie, device: torch.device):
        self.host_depth = trie.depth  # what the host needs to know (the root path's length) it reads here
        self.depth = torch.from_numpy(trie.depth).to(device, torch.int64)
        self.end = torch.from_numpy(trie.end).to(device, torch.int64)
        self.device = device


def tree_mask(trie: DeviceTrie, path_nodes: np.ndarray, start: int, stop: int, window, dtype):
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


def score_tree(lm: ScoringModel, trie: Trie, node, target, tally: Tally, sizer: ChunkSize) -> None:
    """The tree path: trie nodes in consecutive preorder chunks, the root path's keys/values cached."""
    path = PathCache(int(trie.depth.max(initial=0)) + 1)
    on_device = DeviceTrie(trie, lm.device)
    window = sliding_windows(lm.model.config)

    def forward(start: int, stop: int) -> None:
        chunk = (start, stop, window, node, target)
        logprobs, greedy, lo, hi = _forward_chunk(lm, trie, on_device, path, *chunk)
        tally.add(np.arange(lo, hi), logprobs, greedy, stop - start)

    run_chunks(trie.size, sizer, lambda start, size: min(start + size, trie.size), forward, lm.device)


def _forward_chunk(lm: ScoringModel, trie: Trie, on_device: DeviceTrie, path: PathCache, *chunk):
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
        attention_mask=tree_mask(on_device, path.nodes, start, stop, window, lm.dtype),
        cache=cache,
        use_cache=True,
        logits_to_keep=logits_to_keep(needed - start),
    )
    rows = np.searchsorted(needed, node[lo:hi])
    logprobs, greedy = pick(output.logits[0], rows, target[lo:hi])
    path.store(cache, past, np.arange(start, stop), trie.depth[start:stop])  # only once all succeeded
    return logprobs, greedy, lo, hi
