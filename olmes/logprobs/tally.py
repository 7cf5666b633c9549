"""A run's results as they come in: each continuation token's log-prob read off the logits, added up
per request, and the requests reported as they complete (progress bar, ``on_done``)."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np
import torch
from tqdm import tqdm

from olmes.logprobs.architectures import TREE


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


class Tally:
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


def logits_to_keep(positions: np.ndarray) -> torch.Tensor:
    """The sequence positions whose logits to compute (``logits_to_keep``), padded to a multiple of 8
    by repeating the last. On the CPU: a model split over GPUs indexes its last layer's output with
    it, on whichever GPU that is (the placement keeps accelerate from moving it, models.py)."""
    if len(positions):
        positions = np.pad(positions, (0, -len(positions) % 8), mode="edge")
    return torch.from_numpy(positions.astype(np.int64))


def pick(logits: torch.Tensor, rows: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
