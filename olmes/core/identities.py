"""What a recorded model identity (:class:`olmes.core.records.ModelIdentity`) says, for every layer that
shows or checks one (tables, the site, the store): the run records' identity, the display-name
scheme (``<name> <tuning> <quantization> <format>``, each word only where known and not already in
the name) and the facts the pages list. Reading an identity off a model's files is
:mod:`olmes.logprobs.identity`'s job; this only reads records.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from olmes.core.records import ModelIdentity

UNKNOWN = "unknown"  # a fact no file states
NOT_QUANTIZED = "none"


def recorded_identity(runs: Iterable[dict | None]) -> ModelIdentity | None:
    """The identity the first of these run records that has one carries (None when none does: results
    made before identities were recorded)."""
    return next((run["identity"] for run in runs if run is not None and "identity" in run), None)


def qualifiers(identity: ModelIdentity) -> list[str]:
    """What a display name must say so that it cannot read as a full-precision original: the
    tuning where known, the quantization where there is one, GGUF for a GGUF file."""
    words = [identity["tuning"]] if identity["tuning"] != UNKNOWN else []
    if identity["quantization"] not in (NOT_QUANTIZED, UNKNOWN):
        words.append(identity["quantization"])
    if identity["weight_format"] == "gguf":
        words.append("GGUF")
    return words


def missing_qualifiers(display_name: str, identity: ModelIdentity) -> list[str]:
    """The :func:`qualifiers` ``display_name`` does not contain (as a whole word, any case)."""
    lowered = display_name.lower()
    return [
        word
        for word in qualifiers(identity)
        if not re.search(rf"(?<![a-z0-9]){re.escape(word.lower())}(?![a-z0-9])", lowered)
    ]


def qualified_name(name: str, identity: ModelIdentity) -> str:
    """The display-name scheme: ``name`` followed by the qualifiers it lacks
    (``SmolLM2-135M instruct Q4_1 GGUF``)."""
    return " ".join([name, *missing_qualifiers(name, identity)])


def identity_facts(identity: ModelIdentity) -> list[tuple[str, str]]:
    """(label, value) of each fact, as the model pages and tooltips list them."""
    quantized = identity["quantization"] not in (NOT_QUANTIZED, UNKNOWN)
    compute = identity["compute_dtype"] + (" (dequantized for compute)" if quantized else "")
    return [
        ("tuning", identity["tuning"]),
        ("weights", identity["weight_format"]),
        ("quantization", identity["quantization"]),
        ("compute dtype", compute),
        ("original", identity["original"]),
        ("read from", identity["evidence"]),
    ]


def identity_line(identity: ModelIdentity | None) -> str:
    """The facts in one line, the original left out (a leaderboard row, a tooltip):
    ``instruct · GGUF weights, Q4_1 · computed in float32 (dequantized)``."""
    if identity is None:
        return "model identity not recorded"
    quantization = identity["quantization"]
    quantized = quantization not in (NOT_QUANTIZED, UNKNOWN)
    weights = (
        identity["weight_format"].replace("gguf", "GGUF")
        + " weights, "
        + (quantization if quantized else f"quantization {quantization}")
    )
    tuning = identity["tuning"] if identity["tuning"] != UNKNOWN else "tuning unknown"
    compute = f"computed in {identity['compute_dtype']}" + (" (dequantized)" if quantized else "")
    return " · ".join([tuning, weights, compute])
