"""The greedy generation engine: OLMES's generative requests (DROP, SQuAD, NQ-open, Jeopardy, CoQA,
GSM8K), each a prompt, stop sequences and a token budget, generated greedily with the keys/values of a
shared prompt prefix computed once.

Semantics, token for token those of oe-eval / lm-evaluation-harness ``generate_until`` on a Hugging
Face model: the prompt is (BOS where ``lm.bos_token_id`` is not None, as the log-prob engine does) +
``tokenizer.encode(context, add_special_tokens=False)``, cut from the left to at most
``MAX_INPUT_TOKENS - max_gen_toks`` tokens; each step takes the argmax of the next-token logits; the
tokenizer's EOS ends a row; a row also ends as soon as the decoded text of its generated tokens
(``skip_special_tokens=True``) contains a stop sequence, or after ``max_gen_toks`` tokens. The output
text is that decoded text cut at the earliest occurrence of any stop sequence (lm-evaluation-harness's
``for term in until: s = s.split(term)[0]`` is the same cut). Greedy tokens before a stop never depend
on the tokens after it, so stopping a row early gives exactly what generating the whole budget and then
cutting gives; only the work differs.

Why it is fast (the ``tree`` path): the prompts are sorted by their token ids, so prompts sharing a
prefix are adjacent (a task's few-shot block, a CoQA story with its earlier turns), and generated in
batches of consecutive prompts. The keys/values of a batch's longest common prefix are computed once, at
batch 1, and kept: the next batch reuses the part its own common prefix shares with them (the few-shot
block is computed once per task, a CoQA story once for its turns). Each row's remainder is prefilled on
top of that prefix, the remainders left-padded so that the rows end in the same column, with an explicit
additive attention mask (padding masked out) and explicit position ids (each token at its own position
in its own prompt); then all rows decode together, one token per step. The keys/values of a batch
live in one buffer per layer allocated at its final size (prefix + padded remainders + the budget),
the prefix copied in once, each step's column written in place; a finished row stays in it (its output
ignored) until at most half the rows are left, then the buffer is compacted once. Each token thus
attends to exactly its own prompt's tokens and its own generated tokens, at
their own positions, as when its prompt is generated alone: exact up to float rounding.

That argument holds only where attention depends on the keys through the mask and the position ids
alone, i.e. where the log-prob engine's tree path is exact (:mod:`olmes.logprobs.architectures`).
Every other model takes the ``leaves`` path: each prompt generated alone (batch 1, no sharing, the
model's own KV cache and positions), the safe path.
"""

from __future__ import annotations

import gc
import inspect
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import torch
from tqdm import tqdm

from olmes.core.errors import OlmesError
from olmes.logprobs.architectures import TREE, sliding_windows
from olmes.logprobs.contract import ScoringModel
from olmes.logprobs.trie import MAX_INPUT_TOKENS

GENERATION_ENGINE_VERSION = "1"  # bump when the generations a given model produces could change
CPU_BATCH_SIZE = 16  # rows per batch on a CPU: compute-bound already
GPU_MAX_BATCH_SIZE = 256
StopReason = Literal["stop", "eos", "length"]


@dataclass(frozen=True)
class GenerationRequest:
    """One generative request: the prompt, the stop sequences, the token budget."""

    context: str
    stop_sequences: tuple[str, ...] = ()
    max_gen_toks: int = 256


@dataclass
class Generation:
    """What one request generated. ``token_ids``: the generated tokens kept, up to and including the
    token that completed a stop sequence, or the EOS token, or all ``max_gen_toks`` of them;
    ``text``: their decoded text cut at the earliest stop sequence."""

    text: str
    token_ids: list[int]
    num_tokens: int
    stop_reason: StopReason


@dataclass
class GenerationRun:
    """Generations in request order, plus the work done. ``prefill_tokens_forwarded``: the prompt
    tokens the model computed (padding not counted); ``shared_prefix_tokens_saved``:
    ``prompt_tokens - prefill_tokens_forwarded``, the prompt tokens whose keys/values were reused."""

    generations: list[Generation | None]
    prompt_tokens: int = 0
    prefill_tokens_forwarded: int = 0
    generated_tokens: int = 0
    path: str = TREE
    batch_size: int = 0
    padding_tokens: int = 0  # pad columns computed in the remainders' prefill
    elapsed_s: float = 0.0
    model_calls: int = field(default=0, repr=False)
    batches: list[int] = field(default_factory=list, repr=False)  # rows per batch, in order

    @property
    def shared_prefix_tokens_saved(self) -> int:
        return self.prompt_tokens - self.prefill_tokens_forwarded


def encode_prompts(
    tokenizer, requests: Sequence[GenerationRequest], bos_token_id: int | None
) -> list[np.ndarray]:
    """Prompt token ids: (BOS) + encode(context), cut from the left to ``MAX_INPUT_TOKENS - max_gen_toks``."""
    ids = tokenizer([r.context for r in requests], add_special_tokens=False)["input_ids"] if requests else []
    prefix = [] if bos_token_id is None else [bos_token_id]
    prompts = []
    for request, tokens in zip(requests, ids, strict=True):
        whole = np.asarray(prefix + list(tokens), dtype=np.int64)
        limit = max(1, MAX_INPUT_TOKENS - request.max_gen_toks)
        if len(whole) == 0:  # nothing to condition on: EOS, as lm-evaluation-harness does
            whole = np.asarray([tokenizer.eos_token_id], dtype=np.int64)
        prompts.append(whole[-limit:])
    return prompts


def cut_at_stop(text: str, stops: Sequence[str]) -> str:
    """``text`` up to the earliest occurrence of any (non-empty) stop sequence."""
    for stop in stops:
        if stop:
            text = text.split(stop)[0]
    return text


def default_batch_size(lm: ScoringModel) -> int:
    """Rows per batch when none is asked for: 16 on a CPU; on a GPU as many as half the free memory
    holds full-length KV caches for (at most 256); an out-of-memory error still halves it."""
    if lm.device.type != "cuda":
        return CPU_BATCH_SIZE
    config = lm.model.config
    heads = int(config.num_attention_heads)
    kv_heads = int(getattr(config, "num_key_value_heads", None) or heads)
    head_dim = int(getattr(config, "head_dim", None) or config.hidden_size // heads)
    per_row = 2 * int(config.num_hidden_layers) * kv_heads * head_dim * lm.dtype.itemsize * MAX_INPUT_TOKENS
    free, _ = torch.cuda.mem_get_info(lm.device)
    return max(1, min(GPU_MAX_BATCH_SIZE, int(free * 0.5 // (3 * per_row))))  # 3: cache copies in flight


class _Rows:
    """The decoding state of a batch's rows: generated tokens, stop checks, results."""

    def __init__(self, lm: ScoringModel, requests: list[GenerationRequest]):
        self.tokenizer, self.eos = lm.tokenizer, lm.tokenizer.eos_token_id
        self.requests = requests
        self.tokens: list[list[int]] = [[] for _ in requests]
        self.done: list[Generation | None] = [None] * len(requests)

    def add(self, row: int, token: int) -> bool:
        """Append a generated token to ``row``; return whether the row has finished."""
        request, tokens = self.requests[row], self.tokens[row]
        tokens.append(token)
        reason: StopReason | None = None
        text = self.tokenizer.decode(tokens, skip_special_tokens=True)
        if self.eos is not None and token == self.eos:
            reason = "eos"
        elif any(stop and stop in text for stop in request.stop_sequences):
            reason = "stop"
        elif len(tokens) >= request.max_gen_toks:
            reason = "length"
        if reason is None:
            return False
        self.done[row] = Generation(cut_at_stop(text, request.stop_sequences), tokens, len(tokens), reason)
        return True


def _forward_kwargs(lm: ScoringModel) -> dict:
    takes_kept = "logits_to_keep" in inspect.signature(lm.model.forward).parameters
    return {"logits_to_keep": 1} if takes_kept else {}


def _mask(window, kpos, kvalid, qpos, qcol, dtype):
    """Additive mask (B, 1, Q, K): a query sees the valid keys at positions <= its own (within the
    sliding window where the layer has one), and itself (so that a padding query sees something)."""
    columns = torch.arange(kpos.shape[1], device=kpos.device)
    causal = kvalid[:, None, :] & (kpos[:, None, :] <= qpos[:, :, None])
    itself = columns[None, None, :] == qcol[None, :, None]
    zero = torch.zeros((), dtype=dtype, device=kpos.device)
    blocked = torch.full((), torch.finfo(dtype).min, dtype=dtype, device=kpos.device)

    def additive(limit):
        ok = causal if limit is None else causal & (qpos[:, :, None] - kpos[:, None, :] < limit)
        return torch.where(ok | itself, zero, blocked)[:, None]

    if isinstance(window, dict):
        return {kind: additive(limit) for kind, limit in window.items()}
    return additive(window)


def _cache_of(keys: list[torch.Tensor], values: list[torch.Tensor], rows: int):
    """A fresh transformers cache holding ``keys``/``values`` (batch 1) repeated for ``rows`` rows."""
    from transformers import DynamicCache

    cache = DynamicCache()
    for layer, (k, v) in enumerate(zip(keys, values, strict=True)):
        if k.shape[2]:
            cache.update(k.expand(rows, -1, -1, -1), v.expand(rows, -1, -1, -1), layer)
    return cache


class _BufferLayer:
    """One layer's keys/values in tensors allocated once at ``capacity`` columns: ``update`` writes the
    new columns in place and returns the filled part (a view, no copy)."""

    is_sliding = False
    is_compileable = False
    is_croppable = False
    supports_early_init = False

    def __init__(self, rows: int, capacity: int):
        self.rows, self.capacity, self.length = rows, capacity, 0
        self.key_buffer: torch.Tensor | None = None
        self.value_buffer: torch.Tensor | None = None
        self.keys: torch.Tensor | None = None
        self.values: torch.Tensor | None = None
        self.is_initialized = False

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        if self.key_buffer is None:
            shape = (self.rows, key_states.shape[1], self.capacity)
            self.key_buffer = key_states.new_empty((*shape, key_states.shape[3]))
            self.value_buffer = value_states.new_empty((*shape, value_states.shape[3]))
            self.is_initialized = True
        end = self.length + key_states.shape[2]
        if end > self.capacity:
            raise RuntimeError(f"KV buffer overflow: {end} columns > {self.capacity}")
        self.key_buffer[:, :, self.length : end].copy_(key_states)  # a batch-1 prefix broadcasts
        self.value_buffer[:, :, self.length : end].copy_(value_states)
        self.length = end
        self._views()
        return self.keys, self.values

    def _views(self) -> None:
        self.keys = self.key_buffer[:, :, : self.length]
        self.values = self.value_buffer[:, :, : self.length]

    def select(self, index: torch.Tensor) -> None:
        """Keep the rows ``index`` (a copy into smaller buffers)."""
        if self.key_buffer is not None:
            self.key_buffer = self.key_buffer.index_select(0, index)
            self.value_buffer = self.value_buffer.index_select(0, index)
            self.rows = len(index)
            self._views()

    def get_seq_length(self) -> int:
        return self.length

    def get_mask_sizes(self, query_length: int) -> tuple[int, int]:
        return self.length + query_length, 0

    def get_max_length(self) -> int:
        return self.capacity


def _kv_buffer(rows: int, capacity: int, keys: list[torch.Tensor], values: list[torch.Tensor]):
    """A transformers cache of :class:`_BufferLayer` layers, ``rows`` x ``capacity`` columns, the
    batch-1 prefix ``keys``/``values`` copied into every row's first columns."""
    from transformers import Cache

    class _KVBuffer(Cache):
        def update(self, key_states, value_states, layer_idx, *args, **kwargs):
            while len(self.layers) <= layer_idx:
                self.layers.append(_BufferLayer(rows, capacity))
            return self.layers[layer_idx].update(key_states, value_states)

        def get_seq_length(self, layer_idx: int = 0) -> int:
            return self.layers[layer_idx].length if layer_idx < len(self.layers) else 0

        def get_mask_sizes(self, query_length: int, layer_idx: int) -> tuple[int, int]:
            return self.get_seq_length(layer_idx) + query_length, 0

        def select(self, index: torch.Tensor) -> None:
            for layer in self.layers:
                layer.select(index)

    cache = _KVBuffer(layers=[])
    for layer, (k, v) in enumerate(zip(keys, values, strict=True)):
        if k.shape[2]:
            cache.update(k, v, layer)
    return cache


class _Prefix:
    """The keys/values of the current shared prefix (batch 1, every layer), kept across batches."""

    def __init__(self):
        self.tokens = np.empty(0, np.int64)
        self.keys: list[torch.Tensor] = []
        self.values: list[torch.Tensor] = []

    def extend_to(self, lm: ScoringModel, target: np.ndarray, window, kwargs) -> int:
        """Make the prefix ``target``: keep what it shares with the current one, forward the rest.
        Returns the tokens forwarded. The state changes only once the forward succeeded."""
        shared = _common_length([self.tokens, target])
        keys = [k[:, :, :shared] for k in self.keys]
        values = [v[:, :, :shared] for v in self.values]
        if len(target) > shared:
            device = lm.device
            cache = _cache_of(keys, values, 1)
            new = len(target) - shared
            kpos = torch.arange(len(target), device=device)[None]
            lm.model(
                input_ids=torch.from_numpy(target[shared:])[None].to(device),
                position_ids=kpos[:, shared:],
                attention_mask=_mask(
                    window,
                    kpos,
                    torch.ones_like(kpos, dtype=torch.bool),
                    kpos[:, shared:],
                    torch.arange(shared, len(target), device=device),
                    lm.dtype,
                ),  # fmt: skip
                cache=cache,
                use_cache=True,
                **kwargs,
            )
            keys = [layer.keys for layer in cache.layers]
            values = [layer.values for layer in cache.layers]
            self.keys, self.values = keys, values
            self.tokens = target.copy()
            return new
        self.keys, self.values, self.tokens = keys, values, target[:shared].copy()
        return 0


def _common_length(prompts: Sequence[np.ndarray]) -> int:
    """Length of the longest common prefix of the given token arrays."""
    first = prompts[0]
    length = min(len(p) for p in prompts)
    for other in prompts[1:]:
        mismatch = np.flatnonzero(first[:length] != other[:length])
        if len(mismatch):
            length = int(mismatch[0])
    return length


def _batch_end(prompts: Sequence[np.ndarray], order: list[int], start: int, size: int) -> int:
    """Where the batch of sorted prompts starting at ``start`` ends: at most ``size`` rows, and a row
    joins only if the tokens shared stay as many: n rows sharing c tokens save (n - 1) c; with the next
    row they share c' <= c and save n c'. So a CoQA story's turns make their own batch, not one whose
    common prefix is empty because the next story joined it; prompts sharing nothing batch by size."""
    first = prompts[order[start]]
    common, stop = len(first) - 1, start + 1
    while stop < min(start + size, len(order)):
        candidate = prompts[order[stop]]
        shared = min(common, _common_length([first, candidate]), len(candidate) - 1)
        if (stop - start) * shared < (stop - start - 1) * common:
            break
        common, stop = shared, stop + 1
    return stop


def _generate_batch(lm, prefix: _Prefix, prompts, requests, window, kwargs, run: GenerationRun):
    """Generate one batch of prompts (tree path). Returns the batch's generations in its order.

    The keys/values live in one buffer per layer allocated at the batch's final size (prefix + padded
    remainders + the budget's decoding steps): the prefix is copied in once, each forward writes its
    new columns in place. A finished row stays in the buffer (its token fed again, its position kept,
    its output ignored) until at most half the rows are left; then the buffer is compacted to the rows
    left, once per halving, not once per finished row."""
    device, rows = lm.device, len(prompts)
    common = min(_common_length(prompts), min(len(p) for p in prompts) - 1)  # each row keeps a token
    forwarded = prefix.extend_to(lm, prompts[0][:common], window, kwargs)
    run.prefill_tokens_forwarded += forwarded  # counted now: a retried batch finds the prefix done
    past = common
    rest = [p[common:] for p in prompts]
    width = max(len(r) for r in rest)
    steps = max(r.max_gen_toks for r in requests) - 1  # decoding forwards at most: the last token is not fed
    capacity = past + width + steps
    ids = np.zeros((rows, width), dtype=np.int64)
    valid = np.zeros((rows, capacity), dtype=bool)
    positions = np.zeros((rows, capacity), dtype=np.int64)
    positions[:, :past] = np.arange(past)
    valid[:, :past] = True
    for row, tokens in enumerate(rest):
        end = past + width
        ids[row, width - len(tokens) :] = tokens
        valid[row, end - len(tokens) : end] = True
        positions[row, past : end - len(tokens)] = past
        positions[row, end - len(tokens) : end] = np.arange(past, past + len(tokens))
        last = len(prompts[row]) + max(requests[row].max_gen_toks - 2, 0)  # its last token fed
        positions[row, end:] = np.minimum(len(prompts[row]) + np.arange(steps), last)  # then kept
    valid[:, past + width :] = True
    kpos, kvalid = torch.from_numpy(positions).to(device), torch.from_numpy(valid).to(device)
    cache = _kv_buffer(rows, capacity, prefix.keys, prefix.values)
    length = past + width
    qpos = kpos[:, past:length]
    output = lm.model(
        input_ids=torch.from_numpy(ids).to(device),
        position_ids=qpos,
        attention_mask=_mask(
            window,
            kpos[:, :length],
            kvalid[:, :length],
            qpos,
            torch.arange(past, length, device=device),
            lm.dtype,
        ),
        cache=cache,
        use_cache=True,
        **kwargs,
    )
    calls = 1
    state = _Rows(lm, requests)
    members = np.arange(rows)  # the request row of each buffer row
    alive = np.ones(rows, dtype=bool)  # buffer rows still generating
    logits = output.logits[:, -1]
    chosen = torch.zeros(rows, dtype=torch.int64, device=device)
    while True:
        picked = logits.argmax(dim=-1)
        chosen = torch.where(torch.from_numpy(alive).to(device), picked, chosen)
        for i, token in enumerate(picked.tolist()):
            if alive[i] and state.add(int(members[i]), int(token)):
                alive[i] = False
        if not alive.any():
            break
        if alive.sum() * 2 <= len(alive):  # compact: copy the rows left, once per halving
            index = torch.from_numpy(np.flatnonzero(alive)).to(device)
            cache.select(index)
            kpos, kvalid, chosen = kpos[index], kvalid[index], chosen[index]
            members, alive = members[alive], alive[alive]
        qpos = kpos[:, length : length + 1]
        length += 1
        output = lm.model(
            input_ids=chosen[:, None],
            position_ids=qpos,
            attention_mask=_mask(
                window,
                kpos[:, :length],
                kvalid[:, :length],
                qpos,
                torch.tensor([length - 1], device=device),
                lm.dtype,
            ),  # fmt: skip
            cache=cache,
            use_cache=True,
            **kwargs,
        )
        calls += 1
        logits = output.logits[:, -1]
    run.prefill_tokens_forwarded += sum(len(r) for r in rest)
    run.padding_tokens += rows * width - sum(len(r) for r in rest)
    run.model_calls += calls + (1 if forwarded else 0)
    return state.done


def _generate_alone(lm, prompt: np.ndarray, request: GenerationRequest, run: GenerationRun) -> Generation:
    """The leaves path: one prompt, batch 1, plain causal forward, the model's own KV cache."""
    state = _Rows(lm, [request])
    output = lm.model(input_ids=torch.from_numpy(prompt)[None].to(lm.device), use_cache=True)
    calls = 1
    while True:
        token = int(output.logits[0, -1].argmax())
        if state.add(0, token):
            break
        output = lm.model(
            input_ids=torch.tensor([[token]], device=lm.device), cache=output.cache, use_cache=True
        )
        calls += 1
    run.prefill_tokens_forwarded += len(prompt)
    run.model_calls += calls
    return state.done[0]


def _free_device_memory(device: torch.device) -> None:
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


@torch.inference_mode()
def generate(
    lm: ScoringModel,
    requests: Sequence[GenerationRequest],
    *,
    batch_size: int | None = None,
    on_done: Callable[[np.ndarray, list[Generation | None]], None] | None = None,
    progress: bool = False,
) -> GenerationRun:
    """Generate every request greedily (the module docstring says how and why it is exact).

    ``batch_size`` None: the device's default (:func:`default_batch_size`), halved on an out-of-memory
    error (the batch is retried smaller). ``on_done(indices, generations)`` is called as requests
    complete (``generations`` is the run's list, final at ``indices``), so a caller can persist
    results while the run goes on."""
    started = time.perf_counter()
    requests = [
        r if isinstance(r, GenerationRequest) else GenerationRequest(r[0], tuple(r[1]), int(r[2]))
        for r in requests
    ]
    prompts = encode_prompts(lm.tokenizer, requests, lm.bos_token_id)
    size = max(1, batch_size or default_batch_size(lm))
    run = GenerationRun(
        [None] * len(requests), sum(len(p) for p in prompts), path=lm.scoring_path, batch_size=size
    )
    bar = tqdm(total=len(requests), unit="req", file=sys.stderr, disable=not progress, dynamic_ncols=True)

    def finish(indices: list[int], done: list[Generation]) -> None:
        for index, generation in zip(indices, done, strict=True):
            run.generations[index] = generation
            run.generated_tokens += generation.num_tokens
        bar.update(len(indices))
        if on_done is not None:
            on_done(np.asarray(indices, dtype=np.int64), run.generations)

    if lm.scoring_path != TREE:
        for index, (prompt, request) in enumerate(zip(prompts, requests, strict=True)):
            finish([index], [_generate_alone(lm, prompt, request, run)])
    else:
        order = sorted(range(len(prompts)), key=lambda i: prompts[i].astype(">i4").tobytes())
        prefix, window, kwargs = _Prefix(), sliding_windows(lm.model.config), _forward_kwargs(lm)
        start = 0
        while start < len(order):
            chosen = order[start : _batch_end(prompts, order, start, size)]
            failed = False
            try:
                done = _generate_batch(
                    lm,
                    prefix,
                    [prompts[i] for i in chosen],
                    [requests[i] for i in chosen],
                    window,
                    kwargs,
                    run,
                )
            except torch.OutOfMemoryError:
                failed = True
            if failed:  # freed after the except block: inside it the traceback holds the tensors
                _free_device_memory(lm.device)
                if size == 1:
                    raise OlmesError(
                        "out of device memory generating one prompt; use a smaller model or dtype"
                    )
                size //= 2
                continue
            run.batches.append(len(chosen))
            finish(chosen, done)
            start += len(chosen)
    bar.close()
    run.elapsed_s = time.perf_counter() - started
    return run
