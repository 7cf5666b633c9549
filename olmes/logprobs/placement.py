"""Where a model's weights go, and what a cluster job of a model asks for: pure functions of sizes.

At run time (``olmes logprobs``): one device by default; split over every GPU the job sees with
accelerate's ``device_map="balanced"`` and a per-GPU budget ``max_memory`` when the weights do not fit
one GPU's budget, or when asked. Splitting runs the layers one GPU after another (a pipeline without
overlap), so it buys memory, not speed: a model that fits one GPU stays on one.

In the workflow (rule ``logprobs``): the GPUs, host memory and time limit of a model's cluster job
come from the weights' size by the same budget, so the job gets the GPUs the run-time placement will
split the model over.

The budget: the weights may take ``WEIGHTS_SHARE`` of each GPU's memory; the rest is left to the
engine's activations (a chunk sized by gpu_chunk_tokens, its logits, the KV cache of one trie path) and
CUDA's own context; a CUDA out-of-memory halves the chunk and retries (olmes/logprobs/chunks.py).
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path

from olmes.core.errors import OlmesError

WEIGHTS_SHARE = 0.9  # of each GPU's memory; 8 GB of an 80 GB GPU stay free for activations
SPLIT_MODES = ("auto", "always", "never")
BALANCED = "balanced"  # accelerate's device_map that spreads the layers evenly over the GPUs

# The cluster job's rule (job_resources). Host memory: the one-device path reads the weights into host
# memory before moving them to the GPU, plus the process (torch, tokenizer, the request trie: 1.6 GiB
# for MMLU, docs/performance.md).
HOST_WEIGHTS_FACTOR = 1.2
HOST_BASE_MB = 8000
# Time limit: twice the estimated load plus forward time, at least an hour. The forward work of a
# model is 2 x parameters FLOPs per token of the whole run: the full standard is 5.7 M trie-minimal
# tokens (SmolLM2's tokenizer, pmi everywhere), the robustness runs add about as much again, and
# other tokenizers differ; 12 M bounds it. At a sustained 100 TFLOP/s (about a third of an A100's
# bfloat16 peak; a split model computes on one GPU at a time) and weights read at 1 GB/s.
RUN_TOKENS = 12_000_000
GPU_FLOPS = 1e14
LOAD_BYTES_PER_S = 1e9
TIME_FACTOR = 2
MIN_RUNTIME_MIN = 60
DEFAULT_GPU_MEMORY_GB = 80


@dataclass(frozen=True)
class Placement:
    """How the weights are placed: ``device_map`` None puts the whole model on the plan's device;
    otherwise it goes to ``from_pretrained`` (with ``max_memory``, bytes per GPU index, and
    ``offload_folder`` for layers placed on "disk")."""

    device_map: str | dict | None = None
    max_memory: dict | None = None
    offload_folder: str | None = None

    @property
    def split(self) -> bool:
        return self.device_map is not None


@dataclass(frozen=True)
class JobResources:
    """A log-prob cluster job's request: GPUs, host memory (MB) and time limit (minutes)."""

    gpus: int
    mem_mb: int
    runtime: int


def gpu_budgets(gpu_totals: list[int], gpu_memory: float | None = None) -> list[int]:
    """Bytes each GPU may hold of the weights: ``gpu_memory`` GB each, else WEIGHTS_SHARE of its total."""
    if gpu_memory is not None:
        return [int(gpu_memory * 1e9)] * len(gpu_totals)
    return [int(total * WEIGHTS_SHARE) for total in gpu_totals]


def choose_placement(
    weight_bytes: int | None, gpu_totals: list[int], split: str = "auto", gpu_memory: float | None = None
) -> Placement:
    """Whole on one device, or balanced over the GPUs (``gpu_totals``: total bytes of each visible GPU;
    empty when the model runs on a CPU or on one named device).

    ``split`` auto splits when the weights exceed the first GPU's budget (and fails with what to do
    when they exceed all the budgets together), always splits, never keeps one device.
    ``weight_bytes`` None (unknown: no safetensors) counts as fitting.
    """
    if split not in SPLIT_MODES:
        raise OlmesError(f"unknown split mode {split!r}; use one of {', '.join(SPLIT_MODES)}")
    if not gpu_totals or split == "never":
        return Placement()
    budgets = gpu_budgets(gpu_totals, gpu_memory)
    if split == "auto" and (weight_bytes is None or weight_bytes <= budgets[0]):
        return Placement()
    if split == "auto" and weight_bytes > sum(budgets):
        raise OlmesError(
            f"the weights ({weight_bytes / 1e9:.1f} GB) do not fit the {len(budgets)} visible GPU(s) "
            f"({sum(budgets) / 1e9:.1f} GB for weights); ask for more GPUs (config resources: gpus) "
            "or a larger budget (--gpu-memory GB per GPU)"
        )
    return Placement(BALANCED, dict(enumerate(budgets)))


def safetensors_parameters(folder: Path) -> int | None:
    """Parameter count of a Hugging Face model folder, from its safetensors headers (no weights are
    read); None when it has no safetensors files."""
    files = sorted(Path(folder).glob("*.safetensors"))
    if not files:
        return None
    count = 0
    for path in files:
        with open(path, "rb") as handle:
            (length,) = struct.unpack("<Q", handle.read(8))
            header = json.loads(handle.read(length))
        count += sum(math.prod(entry["shape"]) for key, entry in header.items() if key != "__metadata__")
    return count


def gpus_needed(weight_bytes: int | None, gpu_memory_gb: float) -> int:
    """GPUs whose budgets (WEIGHTS_SHARE of ``gpu_memory_gb`` each) hold the weights; 1 when unknown."""
    if weight_bytes is None:
        return 1
    return max(1, math.ceil(weight_bytes / (gpu_memory_gb * 1e9 * WEIGHTS_SHARE)))


def job_resources(
    parameters: float | None, dtype_bytes: int, gpu_memory_gb: float, override: dict | None = None
) -> JobResources:
    """The cluster job of a model with ``parameters`` (a count; None = unknown, treated as tiny) in a
    precision of ``dtype_bytes`` per parameter; ``override`` (a config entry's ``resources``:
    ``gpus``, ``mem_mb``, ``runtime``) replaces what it names."""
    weight_bytes = None if parameters is None else int(parameters * dtype_bytes)
    load_s = (weight_bytes or 0) / LOAD_BYTES_PER_S
    forward_s = 2 * (parameters or 0) * RUN_TOKENS / GPU_FLOPS
    computed = {
        "gpus": gpus_needed(weight_bytes, gpu_memory_gb),
        "mem_mb": math.ceil(HOST_WEIGHTS_FACTOR * (weight_bytes or 0) / 1e6) + HOST_BASE_MB,
        "runtime": max(MIN_RUNTIME_MIN, math.ceil(TIME_FACTOR * (load_s + forward_s) / 60)),
    }
    return JobResources(**{**computed, **(override or {})})


# The GPU chunk-size rule (olmes.logprobs.chunks.default_max_batch_tokens): bytes a chunk of q tokens
# takes beyond the weights, as a + b q + c q (q + depth). Per token: the layer activations alive at once
# (residual stream, attention projections, the MLP), the chunk's new keys/values of every layer (the
# cache keeps them until the chunk ends), and in the worst case a vocabulary row of logits in the model's
# dtype plus float32 log-softmax. Per (query, key) pair: the additive tree mask (one per layer type), the
# boolean masks it is built from, and with eager attention a float32 score matrix per head (softmax input
# and output; SDPA's kernels never hold it). Keys per query: the chunk plus the root path before it (up to
# the 2048-token input limit).
CHUNK_MEMORY_SHARE = 0.8  # of the free memory: the estimate leaves room for what it does not count
HIDDEN_COPIES = 8  # hidden-size vectors alive per token in a layer (residual, norms, q, k, v, out)
MLP_COPIES = 3  # intermediate-size vectors per token (gate, up, their product)
MASK_BUILD_BYTES = 3  # bool masks per pair while the additive mask is built
EAGER_SCORE_BYTES = 8  # float32 scores and probabilities per head and pair
MAX_DEPTH = 2048
MIN_GPU_CHUNK, MAX_GPU_CHUNK, CHUNK_STEP = 256, 65536, 256


@dataclass(frozen=True)
class ModelDims:
    """The dimensions of a model that size a chunk's memory."""

    hidden: int
    intermediate: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int

    @classmethod
    def from_config(cls, config) -> ModelDims:
        """From a transformers config (its attribute map gives most models these names); the MLP
        width defaults to 4 x hidden, a mixture of experts counts the experts each token uses."""
        hidden, heads = int(config.hidden_size), int(config.num_attention_heads)
        intermediate = getattr(config, "intermediate_size", None) or 4 * hidden
        experts_per_token = getattr(config, "num_experts_per_tok", None) or 1
        return cls(
            hidden=hidden,
            intermediate=int(intermediate) * int(experts_per_token),
            layers=int(config.num_hidden_layers),
            heads=heads,
            kv_heads=int(getattr(config, "num_key_value_heads", None) or heads),
            head_dim=int(getattr(config, "head_dim", None) or hidden // heads),
            vocab=int(config.vocab_size),
        )


def gpu_chunk_tokens(
    free_bytes: int, dims: ModelDims, dtype_bytes: int, eager: bool, mask_kinds: int = 1
) -> int:
    """The largest chunk (a multiple of CHUNK_STEP tokens, within [MIN_GPU_CHUNK, MAX_GPU_CHUNK]) whose
    estimated memory fits CHUNK_MEMORY_SHARE of ``free_bytes``."""
    per_token = (
        dtype_bytes * (HIDDEN_COPIES * dims.hidden + MLP_COPIES * dims.intermediate)
        + 2 * dims.layers * dims.kv_heads * dims.head_dim * dtype_bytes
        + dims.vocab * (dtype_bytes + 8)
    )
    per_pair = mask_kinds * dtype_bytes + MASK_BUILD_BYTES + (dims.heads * EAGER_SCORE_BYTES if eager else 0)
    budget = CHUNK_MEMORY_SHARE * free_bytes
    # per_pair q^2 + (per_pair MAX_DEPTH + per_token) q <= budget
    linear = per_pair * MAX_DEPTH + per_token
    tokens = (-linear + math.sqrt(linear * linear + 4 * per_pair * budget)) / (2 * per_pair)
    return int(min(MAX_GPU_CHUNK, max(MIN_GPU_CHUNK, tokens // CHUNK_STEP * CHUNK_STEP)))
