"""A model folder's files as olmes checks and marks them, without torch: each safetensors file as long
as its header says (:func:`check_safetensors`), the source record a GGUF conversion leaves beside its
weights (:data:`SOURCE_FILE`), and the one-line reason a load failed (:func:`first_line`)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from olmes.core.errors import OlmesError

SOURCE_FILE = "olmes-source.json"  # written by olmes.logprobs.gguf_convert.convert_gguf: the GGUF's path


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


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
                f"model file {path} is damaged (its safetensors header cannot be read: {first_line(exc)}); "
                "download or copy it again"
            ) from exc
        if size != expected:
            raise OlmesError(
                f"model file {path} is {'truncated' if size < expected else 'damaged'}: {size} bytes, its "
                f"header says {expected}; download or copy it again"
            )
