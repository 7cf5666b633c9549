"""How a message names a model to a user: by its display name, which says what was evaluated (tuning,
quantization, weight format: ``SmolLM2-135M instruct Q4_1 GGUF``), with the model's name (its store
folder, the ``--model-name`` and the argument a command takes: ``SmolLM2-135M``) after it in
parentheses where the two differ, so that no message passes a 4-bit GGUF off as the release it comes
from and the user still sees what to type. The tables, the site and the README name models the same
way (olmes.tables.results.ModelInfo)."""

from __future__ import annotations

from pathlib import Path

from olmes.core.errors import OlmesError
from olmes.store.reading import read_model_record


def shown_name(name: str, display_name: str | None) -> str:
    """``display_name (name)``; just ``name`` when the display name is unknown or the same."""
    if not display_name or display_name == name:
        return name
    return f"{display_name} ({name})"


def store_shown_name(root: str | Path, name: str) -> str:
    """A store model as a message names it (:func:`shown_name`), from its ``model.json``; the bare
    name when that record cannot be read (a problem reported on its own)."""
    try:
        return shown_name(name, read_model_record(root, name)["display_name"])
    except (OlmesError, OSError):
        return name
