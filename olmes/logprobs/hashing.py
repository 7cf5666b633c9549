"""Content hashes of model files: a file's SHA-256, memoized so that large weights are hashed once,
and a model folder's content id (the hashes of all its files)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from olmes.core import resources
from olmes.core.atomic import write_text_atomic
from olmes.core.resources import cache_dir


def cached_sha256(path: Path) -> str:
    """:func:`olmes.core.resources.file_sha256`, memoized by (path, size, mtime): large weights are
    hashed once."""
    stat = path.stat()
    memo_key = hashlib.sha256(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()
    memo = cache_dir() / "hashes" / memo_key
    if memo.is_file():
        return memo.read_text().strip()
    digest = resources.file_sha256(path)
    write_text_atomic(memo, digest)
    return digest


def dir_content_id(path: Path) -> str:
    """Content hash of a model directory: the hashes of all its files, by relative name."""
    parts = [
        f"{item.relative_to(path)}:{cached_sha256(item)}"
        for item in sorted(path.rglob("*"))
        if item.is_file() and not item.name.startswith(".")
    ]
    return "sha256:" + hashlib.sha256("\n".join(parts).encode()).hexdigest()
