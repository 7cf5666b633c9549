"""How many tokens the engine forwards per model call: the device's default (512 on a CPU; on a GPU
the most its free memory holds), halved on an out-of-memory error and grown back, and the loop that
forwards a run in such chunks."""

from __future__ import annotations

import gc

import torch

from olmes.core.errors import OlmesError
from olmes.logprobs.architectures import sliding_windows
from olmes.logprobs.contract import ScoringModel
from olmes.logprobs.options import DEFAULT_MAX_BATCH_TOKENS
from olmes.logprobs.placement import ModelDims, gpu_chunk_tokens

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
    kinds = sliding_windows(lm.model.config)
    dims = ModelDims.from_config(lm.model.config)
    mask_kinds = len(kinds) if isinstance(kinds, dict) else 1
    return gpu_chunk_tokens(free, dims, lm.dtype.itemsize, eager, mask_kinds)


def _free_bytes(device: torch.device) -> int:
    """Bytes a chunk may take on a CUDA device: free memory plus what torch holds cached but unused."""
    free, _ = torch.cuda.mem_get_info(device)
    return free + torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)


class ChunkSize:
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


def run_chunks(total: int, sizer: ChunkSize, plan, forward, device: torch.device) -> None:
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
