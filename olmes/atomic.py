"""Atomic file writes: write to a temp file beside the target, then rename over it.

An interrupted job therefore leaves either the old file or the new one, never half a file.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike) -> Iterator[Path]:
    """Yield a temp path in the target's folder; on success it is renamed to ``target``."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(name)
        os.replace(name, target)
    finally:
        if os.path.exists(name):
            os.unlink(name)


def write_text_atomic(target: str | os.PathLike, text: str) -> None:
    with atomic_path(target) as temp:
        temp.write_text(text, encoding="utf-8")


def write_json_atomic(target: str | os.PathLike, data) -> None:
    """JSON, indented, non-ASCII characters as they are, with a final newline."""
    write_text_atomic(target, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
