"""Model specs (what ``olmes logprobs --model`` takes), classified without torch or transformers.

A spec is one of
- ``short-name``: an embedded default model (:data:`olmes.logprobs.embedded.SHORT_NAMES`);
- ``gguf``: a ``.gguf`` file, which must be there;
- ``local``: a local Hugging Face folder (with ``config.json``): a spec that starts with /, ./, ../
  or ~, or names a folder here;
- ``hub``: a Hugging Face hub id, ``org/name[@revision]``, checked only when it is fetched.

This is the one place that tells them apart: :func:`olmes.logprobs.resolve.resolve` (which fetches),
the config check (which must not: a light install has no torch) and the workflow's rerun key all
parse here, once per process: what comes after takes the parsed :class:`ModelSpec` (a
:class:`olmes.logprobs.resolve.ResolvedModel` carries it). Relative paths are from the current folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from olmes.core.errors import OlmesError
from olmes.logprobs.embedded import SHORT_NAMES
from olmes.logprobs.options import HUB_ID

SpecKind = Literal["short-name", "gguf", "local", "hub"]
LOCAL_PREFIXES = ("/", "./", "../", "~")  # a spec starting so is a path, never a hub id


@dataclass(frozen=True)
class ModelSpec:
    """A classified model spec; nothing fetched, converted or loaded."""

    text: str  # the spec as given
    kind: SpecKind
    path: Path | None = None  # a gguf or local spec's file or folder, ~ expanded
    repo_id: str | None = None  # a hub spec's org/name
    revision: str | None = None  # a hub spec's @revision; None: the default branch

    @property
    def local(self) -> bool:
        """Whether its weights resolve without the hub: an embedded model, or a file or folder here."""
        return self.kind != "hub"


def parse_model_spec(text: str) -> ModelSpec:
    """Classify ``text``; a local file or folder must be there. Raise a one-line :class:`OlmesError`
    (without the context, which the caller adds) for a spec that is none of the four kinds."""
    if text in SHORT_NAMES:
        return ModelSpec(text, "short-name")
    path = Path(text).expanduser()
    if text.endswith(".gguf"):
        if not path.is_file():
            raise OlmesError(f"the GGUF file {text} does not exist{_relative(path)}")
        return ModelSpec(text, "gguf", path)
    if text.startswith(LOCAL_PREFIXES) or path.is_dir():
        _check_model_folder(text, path)
        return ModelSpec(text, "local", path)
    if HUB_ID.match(text):
        repo_id, _, revision = text.partition("@")
        return ModelSpec(text, "hub", repo_id=repo_id, revision=revision or None)
    raise OlmesError(_not_a_spec(text, path))


def as_model_spec(spec: ModelSpec | str) -> ModelSpec:
    """``spec`` parsed, when it is not already: the entry points take either, and parse a text once."""
    return spec if isinstance(spec, ModelSpec) else parse_model_spec(spec)


def _relative(path: Path) -> str:
    """Where a relative path was looked for, for the message that it is not there."""
    return "" if path.is_absolute() else f" (relative to {Path.cwd()})"


def _not_a_model(text: str) -> str:
    return f"{text} is a file, not a model folder (with config.json) or a .gguf file"


def _check_model_folder(text: str, path: Path) -> None:
    if not path.exists():
        raise OlmesError(
            f"the model folder {text} does not exist{_relative(path)}; give a Hugging Face folder "
            "(with config.json), a .gguf file, a hub id org/name[@revision] or a short name"
        )
    if not path.is_dir():
        raise OlmesError(_not_a_model(text))
    if not (path / "config.json").is_file():
        raise OlmesError(f"the folder {text} has no config.json (not a Hugging Face model)")


def _not_a_spec(text: str, path: Path) -> str:
    """Why ``text``, neither a path by its form nor a hub id, is no spec: the likeliest mistake."""
    if path.exists():
        return _not_a_model(text)
    if "/" in text:
        return (
            f"{text} does not exist{_relative(path)} and is no hub id (org/name[@revision]); "
            "write a local folder as ./path or /path"
        )
    known = ", ".join(sorted(SHORT_NAMES))
    return (
        f"unknown model short name {text!r}; "
        f"known short names: {known} (or give a hub id, a local folder or a .gguf file)"
    )
