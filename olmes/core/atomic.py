"""Atomic file writes: write to a temp file beside the target, then rename over it.

An interrupted job therefore leaves either the old file or the new one, never half a file. The
result gets the permissions an ordinary ``open`` would give it under the user's umask (0644 under
022), not the private 0600 of a temp file: web servers and colleagues must be able to read it.
A whole folder (the site, a store's model) is replaced the same way by :func:`atomic_dir`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
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


@contextlib.contextmanager
def atomic_dir(target: str | os.PathLike, label: str) -> Iterator[Path]:
    """Yield an empty folder beside ``target`` to fill; on success it is swapped in as ``target``.

    Why: a folder that readers use whole (the site, a store's model) must never be seen half
    written. It is built as ``.<name>.<label>-XXXX`` in the same parent (so the swap is a rename on
    one file system), given the mode ``mkdir`` would give it, and only when the body has finished is
    the old ``target`` renamed aside (``.<name>.old-XXXX``), the new one renamed in and the old one
    deleted. If the body raises (or the job is interrupted) the staging folder is removed and
    ``target`` is left exactly as it was.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.{label}-"))
    make_dir_public(staging)
    try:
        yield staging
        old = None
        if target.exists():
            old = target.parent / f".{target.name}.old-{staging.name.rsplit('-', 1)[-1]}"
            target.rename(old)
        staging.rename(target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


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
