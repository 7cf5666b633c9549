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

from collections.abc import Callable, Sequence

import numpy as np
import torch

from olmes.logprobs.architectures import TREE
from olmes.logprobs.chunks import ChunkSize, default_max_batch_tokens
from olmes.logprobs.contract import ScoringModel
from olmes.logprobs.leaves_path import score_leaves
from olmes.logprobs.tally import Scores, Tally
from olmes.logprobs.tree_path import score_tree
from olmes.logprobs.trie import build_trie, encode_requests, score_items

ENGINE_VERSION = "1"  # bump when the numbers a given model produces could change


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
    node, target, owner = score_items(encoded, trie)
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
    tally = Tally(scores, owner, on_done, progress)
    sizer = ChunkSize(size)
    if lm.scoring_path == TREE:
        score_tree(lm, trie, node, target, tally, sizer)
    else:
        score_leaves(lm, encoded, trie, node, target, owner, tally, sizer)
    tally.bar.close()
    return scores
