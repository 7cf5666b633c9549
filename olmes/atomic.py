"""Atomic file writes: write to a temp file beside the target, then rename over it.

An interrupted job therefore leaves either the old file or the new one, never half a file. The
result gets the permissions an ordinary ``open`` would give it under the user's umask (0644 under
022), not the private 0600 of a temp file: web servers and colleagues must be able to read it.
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
        os.chmod(name, 0o666 & ~current_umask())
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


def current_umask() -> int:
    """The process's umask (reading it means setting it; it is set straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def make_dir_public(path: str | os.PathLike) -> None:
    """A folder made by ``tempfile.mkdtemp`` (0700) gets the mode ``mkdir`` would give it."""
    os.chmod(path, 0o777 & ~current_umask())
