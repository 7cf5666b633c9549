"""What an evaluated model is: base or instruction-tuned, how its weights are stored and quantized,
the precision its log-probs are computed in, and the released model it derives from.

A score of a 4-bit GGUF of an instruct model is not a score of the full-precision base release of
the same name, so the run record, the store and every page carry a :class:`ModelIdentity`, read
from the files themselves:

- a GGUF file: its metadata (``general.file_type``, else the commonest type of its matrices;
  ``general.finetune``, ``general.name`` and the file name for the tuning; ``general.source.*``
  for the original) and, for the embedded models, what olmes records of those pinned files;
- a Hugging Face folder or hub model: ``config.json`` (``quantization_config``), its weight files,
  and the hub id.

A fact no file states is ``"unknown"``, never a guess. How an identity is shown (the display-name
scheme, the facts the pages list) is :mod:`olmes.core.identities`.
"""

from __future__ import annotations

import json
import mmap
import re
import struct
from collections import Counter
from functools import cache
from pathlib import Path

from olmes.core.errors import OlmesError
from olmes.core.identities import NOT_QUANTIZED, UNKNOWN
from olmes.core.records import ModelIdentity, Tuning
from olmes.logprobs.embedded import pinned
from olmes.logprobs.model_files import SOURCE_FILE

INSTRUCT_WORDS = frozenset({"instruct", "it", "chat", "sft", "dpo", "rlhf"})
BASE_WORDS = frozenset({"base", "pt"})


def _pinned(sha256: str) -> dict[str, str]:
    """What olmes records of an embedded GGUF file, by its SHA-256 (:mod:`olmes.logprobs.embedded`):
    the release it was made from (their metadata leaves it out; Gemma's does not say it is the base
    model)."""
    model = pinned(sha256)
    return {} if model is None else {"original": model.original, "tuning": model.tuning}


def _identity(
    original: str, tuning: Tuning, weight_format: str, quantization: str, compute_dtype: str, evidence: str
) -> ModelIdentity:
    return {
        "original": original,
        "tuning": tuning,
        "weight_format": weight_format,
        "quantization": quantization,
        "compute_dtype": compute_dtype,
        "evidence": evidence,
    }


@cache
def model_identity(resolved, dtype) -> ModelIdentity:
    """The identity of a resolved model spec (:class:`olmes.logprobs.resolve.ResolvedModel`) computed
    in ``dtype``: what the run record carries. Read once per process: a job's every run record (one per
    request file) carries the same."""
    compute_dtype = str(dtype).removeprefix("torch.")
    gguf = _gguf_file(resolved)
    if gguf is not None:
        return gguf_identity(gguf, compute_dtype, resolved.content_id.removeprefix("gguf-sha256:"))
    hub_id = resolved.model_spec.repo_id if resolved.kind == "hub" else None
    return hf_identity(resolved.path, compute_dtype, hub_id)


def _gguf_file(resolved) -> Path | None:
    """The GGUF file a spec's weights were converted from, or None for a Hugging Face model."""
    if resolved.kind == "gguf":
        return resolved.model_spec.path
    source = Path(resolved.path) / SOURCE_FILE
    if not source.is_file():
        return None
    path = Path(json.loads(source.read_text(encoding="utf-8"))["gguf"])
    if not path.is_file():
        raise OlmesError(f"{path}, the GGUF file of {resolved.spec!r}, is gone; run the job again")
    return path


# -- GGUF ----------------------------------------------------------------------------------------------


def gguf_identity(path: Path, compute_dtype: str, sha256: str | None = None) -> ModelIdentity:
    """A GGUF file's identity; with its ``sha256``, olmes's record of a pinned file (the embedded
    models) fills in what the metadata leaves unknown."""
    facts = _gguf_facts(path)
    recorded = _pinned(sha256 or "")
    for key, value in recorded.items():
        if facts[key] not in (UNKNOWN, value):
            raise OlmesError(f"{path}: its metadata says {key} {facts[key]!r}, olmes's record {value!r}")
    if recorded and any(facts[key] == UNKNOWN for key in recorded):
        facts = {
            **facts,
            **recorded,
            "evidence": f"{facts['evidence']}; olmes's record of this file (SHA-256)",
        }
    return _identity(
        facts["original"],
        facts["tuning"],
        "gguf",
        facts["quantization"],
        compute_dtype,
        facts["evidence"],
    )


def _gguf_facts(path: Path) -> dict:
    """original, tuning, quantization and evidence, as the file's metadata and name state them."""
    meta, tensor_types = read_gguf_header(path)
    names = [meta.get("general.finetune"), meta.get("general.name"), path.name.removesuffix(".gguf")]
    return {
        "original": _gguf_original(meta),
        "tuning": tuning_from_names(names),
        "quantization": _gguf_quantization(meta.get("general.file_type"), tensor_types),
        "evidence": "GGUF metadata and file name",
    }


_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9


def read_gguf_header(path: Path) -> tuple[dict, list[int]]:
    """The ``general.*`` metadata of a GGUF file (arrays skipped) and the GGML type of each of its
    matrices. A reader of the header only: the gguf package's reader parses every array (the
    tokenizer's hundreds of thousands of strings), which takes 5-30 s a file."""
    try:
        with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            if data[:4] != b"GGUF":
                raise ValueError("no GGUF magic number")
            (version,) = struct.unpack_from("<I", data, 4)
            if version < 2:
                raise ValueError(f"GGUF version {version} is not supported")
            tensors, kv_count = struct.unpack_from("<QQ", data, 8)
            offset, meta = 24, {}
            for _ in range(kv_count):
                key, offset = _gguf_string(data, offset)
                (kind,) = struct.unpack_from("<I", data, offset)
                value, offset = _gguf_value(data, offset + 4, kind)
                if key.startswith("general."):
                    meta[key] = value
            types = []
            for _ in range(tensors):
                _, offset = _gguf_string(data, offset)
                (dims,) = struct.unpack_from("<I", data, offset)
                (ggml_type,) = struct.unpack_from("<I", data, offset + 4 + 8 * dims)
                offset += 4 + 8 * dims + 4 + 8
                if dims > 1:
                    types.append(ggml_type)
    except (OSError, ValueError, struct.error) as error:
        raise OlmesError(f"cannot read the GGUF metadata of {path}: {error}") from error
    return meta, types


def _gguf_string(data, offset: int) -> tuple[str, int]:
    (length,) = struct.unpack_from("<Q", data, offset)
    start = offset + 8
    return bytes(data[start : start + length]).decode("utf-8", errors="replace"), start + length


def _gguf_value(data, offset: int, kind: int):
    """(value, next offset) of a metadata value; an array's value is None (skipped)."""
    if kind == _STRING:
        return _gguf_string(data, offset)
    if kind in _SCALARS:
        scalar = "<" + _SCALARS[kind]
        return struct.unpack_from(scalar, data, offset)[0], offset + struct.calcsize(scalar)
    if kind != _ARRAY:
        raise ValueError(f"unknown metadata type {kind}")
    element, count = struct.unpack_from("<IQ", data, offset)
    offset += 12
    if element in _SCALARS:
        return None, offset + count * struct.calcsize(_SCALARS[element])
    for _ in range(count):
        _, offset = _gguf_value(data, offset, element)
    return None, offset


def _gguf_original(meta: dict) -> str:
    """The repository the GGUF was converted from (``general.source.*``; ``general.base_model.*``
    names the parent of a fine-tune, not this model, so it is not used)."""
    for key in ("general.source.huggingface.repository", "general.source.repo_url", "general.source.url"):
        found = _hub_id(meta.get(key))
        if found:
            return found
    return UNKNOWN


def _hub_id(text) -> str | None:
    if not isinstance(text, str):
        return None
    match = re.fullmatch(r"(?:https?://huggingface\.co/)?([A-Za-z0-9][\w.-]*/[\w.-]+)/?", text.strip())
    return match.group(1) if match else None


def _gguf_quantization(file_type, tensor_types: list[int]) -> str:
    """The file type's name (Q4_1, Q4_K_M, F16...; F32 is no quantization); without one, the
    commonest type of the file's matrices."""
    from gguf import GGMLQuantizationType, LlamaFileType

    try:
        if file_type is not None:
            name = LlamaFileType(int(file_type)).name.removeprefix("MOSTLY_").removeprefix("ALL_")
        elif tensor_types:
            name = GGMLQuantizationType(Counter(tensor_types).most_common(1)[0][0]).name
        else:
            return UNKNOWN
    except ValueError:
        return UNKNOWN
    return NOT_QUANTIZED if name == "F32" else name


# -- Hugging Face --------------------------------------------------------------------------------------


def hf_identity(path: Path, compute_dtype: str, hub_id: str | None = None) -> ModelIdentity:
    """A Hugging Face model folder's identity (``hub_id``: the repository it was downloaded from;
    a local folder's original is unknown, its name may state its tuning)."""
    path = Path(path)
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise OlmesError(f"cannot read the model config {path / 'config.json'}: {error}") from error
    return _identity(
        hub_id or UNKNOWN,
        tuning_from_names([hub_id] if hub_id else [path.name]),
        _weight_format(path),
        _hf_quantization(config.get("quantization_config")),
        compute_dtype,
        "config.json and " + ("the hub id" if hub_id else "the folder's name"),
    )


def _weight_format(path: Path) -> str:
    if any(path.glob("*.safetensors")):
        return "safetensors"
    if any(path.glob("pytorch_model*.bin")):
        return "pytorch"
    return UNKNOWN


def _hf_quantization(config) -> str:
    """``quantization_config``'s method, with its bits where it states them (gptq 4-bit)."""
    if config is None:
        return NOT_QUANTIZED
    method = config.get("quant_method") if isinstance(config, dict) else None
    if not isinstance(method, str):
        return UNKNOWN
    bits = config.get("bits") or (
        4 if config.get("load_in_4bit") else 8 if config.get("load_in_8bit") else None
    )
    return f"{method} {bits}-bit" if bits else method


def tuning_from_names(names) -> Tuning:
    """instruct or base where the names say it (and only one of them), else unknown."""
    words = {word for name in names if isinstance(name, str) for word in _words(name)}
    instruct, base = bool(words & INSTRUCT_WORDS), bool(words & BASE_WORDS)
    if instruct != base:
        return "instruct" if instruct else "base"
    return "unknown"


def _words(text: str) -> list[str]:
    return [word for word in re.split(r"[^a-z0-9]+", text.lower()) if word]
