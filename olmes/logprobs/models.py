"""A model planned and loaded for scoring: its precision, device and placement chosen from a resolved
spec (:mod:`olmes.logprobs.resolve`) without loading the weights (:func:`prepare`, a
:class:`ModelPlan`), then the weights and tokenizer loaded once (:class:`LoadedModel`, what the
engine scores with: :class:`olmes.logprobs.contract.ScoringModel`).

The spec is parsed once (:mod:`olmes.logprobs.spec`); the resolved model's content id, with the dtype
and device, makes the fingerprint that keys the log-prob cache (:mod:`olmes.logprobs.fingerprint`).
"""

from __future__ import annotations

import json
import re
import sys
import time
from dataclasses import dataclass, field

import torch

from olmes.core.errors import OlmesError
from olmes.logprobs.architectures import TREE, ScoringPath, scoring_path, verified
from olmes.logprobs.devices import choose_device, input_device, visible_gpu_memory
from olmes.logprobs.fingerprint import fingerprint
from olmes.logprobs.model_files import check_safetensors, first_line
from olmes.logprobs.options import DTYPE_NAMES, own_dtype_name
from olmes.logprobs.placement import Placement, choose_placement, safetensors_parameters
from olmes.logprobs.resolve import ResolvedModel, resolve
from olmes.logprobs.spec import ModelSpec, as_model_spec

DTYPES = {name: getattr(torch, name) for name in DTYPE_NAMES}
# The first transformers release whose models take the KV cache as ``cache=`` (the engine's call);
# older ones take ``past_key_values`` and silently ignore ``cache``, so a second chunk fails.
MIN_TRANSFORMERS = (5, 24)


@dataclass
class LoadedModel:
    """A model ready for scoring, with the facts the run record and the cache key need."""

    resolved: ResolvedModel
    model: torch.nn.Module
    tokenizer: object
    dtype: torch.dtype
    device: torch.device  # where the inputs go: the device of the first layers when split
    bos_token_id: int | None  # prepended to every input when the model expects a BOS
    placement: Placement = Placement()
    load_time_s: float | None = None
    scoring_path: ScoringPath = TREE  # olmes.logprobs.architectures
    scoring_reason: str = ""
    attn_implementation: str | None = None  # what transformers runs: sdpa, eager, ...
    trust_remote_code: bool = False

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.resolved, self.dtype, self.device, self.scoring_path)


@dataclass
class ModelPlan:
    """A resolved model spec with its precision, device and placement, weights not loaded: enough to
    find its cached results (``fingerprint``), so a job whose every request is cached never loads the
    weights. :meth:`load` loads them once: later calls return the same model."""

    resolved: ResolvedModel
    config: dict
    dtype: torch.dtype
    device: torch.device
    placement: Placement = Placement()
    trust_remote_code: bool = False
    loaded: LoadedModel | None = field(default=None, repr=False)

    @property
    def scoring(self) -> tuple[ScoringPath, str]:
        """The engine's path for this model and why (:func:`olmes.logprobs.architectures.scoring_path`)."""
        return scoring_path(self.config, remote_code=self.trust_remote_code)

    @property
    def scoring_path(self) -> ScoringPath:
        return self.scoring[0]

    @property
    def verified(self) -> bool:
        """Whether the model's architecture is on the tested list (olmes.logprobs.architectures)."""
        return verified(self.config, remote_code=self.trust_remote_code)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.resolved, self.dtype, self.device, self.scoring_path)

    @property
    def bos_token_id(self) -> int | None:
        """The BOS the model is scored with (loads the tokenizer only)."""
        from transformers import AutoTokenizer

        remote = self.trust_remote_code
        tokenizer = AutoTokenizer.from_pretrained(self.resolved.path, trust_remote_code=remote)
        return expects_bos(tokenizer, self.config["model_type"])

    def load(self) -> LoadedModel:
        """The weights and tokenizer in eval mode, placed as planned; loaded at the first call only,
        which prints ``olmes: loaded SPEC in X s`` (one line per load)."""
        if self.loaded is not None:
            return self.loaded
        from transformers import AutoModelForCausalLM, AutoTokenizer

        started = time.perf_counter()
        remote = self.trust_remote_code
        try:  # damaged files fail here in many ways (safetensors, JSON, torch errors): one line each
            tokenizer = AutoTokenizer.from_pretrained(self.resolved.path, trust_remote_code=remote)
            bos = expects_bos(tokenizer, self.config["model_type"])
            options = {"dtype": self.dtype, "trust_remote_code": remote}
            attention = attention_implementation(self.config) if not remote else None
            if attention is not None:
                options["attn_implementation"] = attention
            if self.placement.split:
                model = AutoModelForCausalLM.from_pretrained(
                    self.resolved.path,
                    device_map=self.placement.device_map,
                    max_memory=self.placement.max_memory,
                    offload_folder=self.placement.offload_folder,
                    **options,
                ).eval()
                keep_on_cpu(model, "logits_to_keep")
                device = input_device(model.hf_device_map)
            else:
                model = AutoModelForCausalLM.from_pretrained(self.resolved.path, **options)
                model, device = model.to(self.device).eval(), self.device
        except OlmesError:  # a SIGTERM while loading (olmes logprobs), said as it is
            raise
        except Exception as exc:
            raise OlmesError(
                f"cannot load model {self.resolved.spec!r} from {self.resolved.path} on {self.device} "
                f"({type(exc).__name__}: {first_line(exc)}); if its files are damaged, download or copy "
                "them again"
            ) from exc
        took = time.perf_counter() - started
        path, reason = self.scoring
        self.loaded = LoadedModel(
            self.resolved, model, tokenizer, self.dtype, device, bos, self.placement, took,
            scoring_path=path, scoring_reason=reason, trust_remote_code=remote,
            attn_implementation=getattr(model.config, "_attn_implementation", None),
        )  # fmt: skip
        devices = ", ".join(placement_record(self.loaded)["devices"])
        print(
            f"olmes: loaded {self.resolved.spec} in {took:.1f} s on {devices}; {path} path ({reason})",
            file=sys.stderr,
        )
        return self.loaded


def placement_record(model: ModelPlan | LoadedModel) -> dict:
    """The run record's ``placement``: the devices holding weights, the device map asked for
    (accelerate's name, ``explicit`` for a given map, None for one device), the map accelerate made as
    a count of modules per device (None when not split or not loaded), the per-GPU budget in bytes."""
    split = model.placement.split
    device_map = getattr(getattr(model, "model", None), "hf_device_map", None) if split else None
    counts: dict[str, int] = {}
    for where in (device_map or {}).values():
        name = f"cuda:{where}" if isinstance(where, int) else str(where)
        counts[name] = counts.get(name, 0) + 1
    asked = model.placement.device_map
    max_memory = model.placement.max_memory
    return {
        "devices": list(counts) or [str(model.device)],
        "device_map": asked if isinstance(asked, str) else ("explicit" if split else None),
        "hf_device_map": counts or None,
        "max_memory": None if max_memory is None else {str(key): value for key, value in max_memory.items()},
    }


def attention_implementation(config: dict) -> str:
    """SDPA where the model's class supports it (its fused kernels never hold a score matrix per head),
    else eager (Gemma 2: SDPA has no logit soft-capping), whose memory the GPU chunk rule counts."""
    import transformers
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    class_name = MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.get(config.get("model_type"), "")
    model_class = getattr(transformers, class_name, None)
    return "sdpa" if getattr(model_class, "_supports_sdpa", False) else "eager"


def keep_on_cpu(model, *names: str) -> None:
    """Keep keyword arguments ``names`` where the caller put them when accelerate's top-level hook of a
    split model moves the others to the first device. ``logits_to_keep`` indexes the last layer's
    output, on the last device: as an index on the CPU it works with any device; moved to the first
    GPU, it fails there ("indices should be either on cpu or on the same device")."""
    hook = getattr(model, "_hf_hook", None)
    if hook is None or not hasattr(hook, "skip_keys"):
        return
    skip = hook.skip_keys
    skip = [] if skip is None else [skip] if isinstance(skip, str) else list(skip)
    hook.skip_keys = [*skip, *(name for name in names if name not in skip)]


def check_transformers() -> None:
    """Stop with one line when the installed transformers is older than the engine's calls need."""
    from importlib import metadata

    installed = metadata.version("transformers")
    numbers = tuple(int(part) for part in re.findall(r"\d+", installed)[:2])
    if numbers < MIN_TRANSFORMERS:
        needed = ".".join(map(str, MIN_TRANSFORMERS))
        raise OlmesError(
            f"transformers {installed} is installed; olmes needs transformers>={needed} (models take the "
            f"KV cache as cache=): pip install 'transformers>={needed}'"
        )


def load_tokenizer(spec: ModelSpec | str) -> tuple[ResolvedModel, object, int | None]:
    """A model spec's tokenizer without its weights, and the BOS the engine prepends with it: what
    counting a continuation's tokens as the engine does needs (``olmes import``)."""
    from transformers import AutoTokenizer

    resolved = resolve(as_model_spec(spec), weights=False)
    try:
        config = json.loads((resolved.path / "config.json").read_text(encoding="utf-8"))
        tokenizer = AutoTokenizer.from_pretrained(resolved.path)
    except (OSError, ValueError) as exc:
        raise OlmesError(f"cannot load the tokenizer of {resolved.spec!r}: {first_line(exc)}") from exc
    return resolved, tokenizer, expects_bos(tokenizer, config.get("model_type", ""))


def default_dtype(config: dict) -> torch.dtype:
    """The model's own precision (config.json ``dtype`` or ``torch_dtype``), float32 when it says none."""
    return DTYPES[own_dtype_name(config)]


def expects_bos(tokenizer, model_type: str) -> int | None:
    """The BOS id to prepend, or None: when the tokenizer adds one itself, or the model is a Gemma."""
    bos = tokenizer.bos_token_id
    if bos is None:
        return None
    adds_bos = tokenizer("a", add_special_tokens=True)["input_ids"][:1] == [bos]
    return bos if adds_bos or model_type.startswith("gemma") else None


def prepare(
    spec: ModelSpec | str,
    dtype: str | None = None,
    device: str | None = None,
    split: str = "auto",
    gpu_memory: float | None = None,
    trust_remote_code: bool = False,
) -> ModelPlan:
    """Resolve a model spec and choose its precision, device and placement, without loading weights.

    On CUDA without a device index, the placement may split the model over every visible GPU
    (:func:`olmes.logprobs.placement.choose_placement`; ``split``, ``gpu_memory`` GB per GPU)."""
    check_transformers()
    target = choose_device(device)  # before the spec is resolved: that may download or convert weights
    resolved = resolve(as_model_spec(spec))
    check_safetensors(resolved.path)
    try:
        config = json.loads((resolved.path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise OlmesError(f"cannot read the model config of {resolved.spec!r}: {exc}") from exc
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    remote_class = (config.get("auto_map") or {}).get("AutoModelForCausalLM")
    native = config.get("model_type") in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    if not native and remote_class and not trust_remote_code:
        raise OlmesError(
            f"model {resolved.spec!r} ships its own code ({remote_class}), which olmes runs only when asked: "
            "set trust_remote_code: true in its config entry (olmes: --trust-remote-code) after reading it"
        )
    if not native and not remote_class:
        kind = config.get("model_type")
        raise OlmesError(f"model {resolved.spec!r} is a {kind!r} model, not a causal language model")
    if dtype not in (None, "auto") and dtype not in DTYPES:
        raise OlmesError(f"unknown dtype {dtype!r}; use one of auto, {', '.join(DTYPES)}")
    torch_dtype = DTYPES[dtype] if dtype in DTYPES else default_dtype(config)
    parameters = safetensors_parameters(resolved.path)
    weight_bytes = None if parameters is None else parameters * torch_dtype.itemsize
    placement = choose_placement(weight_bytes, visible_gpu_memory(target), split, gpu_memory)
    return ModelPlan(resolved, config, torch_dtype, target, placement, trust_remote_code=not native)


def load(
    spec: ModelSpec | str,
    dtype: str | None = None,
    device: str | None = None,
    trust_remote_code: bool = False,
) -> LoadedModel:
    """Resolve and load a causal LM for scoring (eval mode, no grad)."""
    return prepare(spec, dtype, device, trust_remote_code=trust_remote_code).load()
