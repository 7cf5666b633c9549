"""A GGUF file converted once into a cached float32 safetensors folder, which transformers then loads
like any Hugging Face model (later loads take < 1 s)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import torch

from olmes.core.errors import OlmesError
from olmes.core.resources import cache_dir
from olmes.logprobs.hashing import cached_sha256
from olmes.logprobs.model_files import SOURCE_FILE, first_line


def convert_gguf(gguf: Path) -> Path:
    """Convert a GGUF file once into a cached float32 safetensors directory; return that directory."""
    digest = cached_sha256(gguf)
    target = cache_dir() / "models" / f"gguf-{digest[:24]}"
    if (target / SOURCE_FILE).is_file():
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
                f"cannot load GGUF file {gguf} ({gguf.stat().st_size} bytes): {first_line(exc)}; if the "
                "file is truncated or damaged (an interrupted download), download it again"
            ) from exc
        _plain_copy(model).save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        source = {"gguf": str(gguf), "sha256": digest}
        (staging / SOURCE_FILE).write_text(json.dumps(source, indent=1))
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
