"""Atomic file writes: write to a temp file beside the target, then rename over it.

An interrupted job therefore leaves either the old file or the new one, never half a file. The
result gets the permissions an ordinary ``open`` would give it under the user's umask (0644 under
022), not the private 0600 of a temp file: web servers and colleagues must be able to read it.
A whole folder (the site, a store's model) is replaced the same way by :func:`atomic_dir`.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import re
import shutil
import socket
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
    written. It is built as ``.<name>.<label>-<host>-<pid>-XXXX`` in the same parent (so the swap is a
    rename on one file system), given the mode ``mkdir`` would give it, and only when the body has
    finished is the old ``target`` renamed aside (``.<name>.old-<host>-<pid>-XXXX``), the new one
    renamed in and the old one deleted. If the body raises, the staging folder is removed and
    ``target`` is left exactly as it was; what a killed process leaves is removed by the next
    ``atomic_dir`` of the same target (:func:`remove_dead_builds`).
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_dead_builds(target)
    prefix = f".{target.name}.{label}-"
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f"{prefix}{_builder()}-"))
    make_dir_public(staging)
    try:
        yield staging
        old = None
        if target.exists():
            old = target.parent / f".{target.name}.old-{staging.name.removeprefix(prefix)}"
            target.rename(old)
        staging.rename(target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def remove_dead_builds(target: Path) -> None:
    """Remove the folders that :func:`atomic_dir` processes of ``target`` left when they were killed
    (SIGKILL, a power cut): each names its builder's host and pid, and only those of this host whose
    process no longer runs are touched, so a build running beside this one keeps its folder (a pid
    taken again by another process keeps a leftover, never removes a live one). A build killed
    between its two renames left no ``target`` and the previous one renamed aside: that is put back,
    so that the site is as it was before the killed build."""
    for path in sorted(target.parent.glob(f".{glob.escape(target.name)}.*-*")):
        match = _LEFTOVER.fullmatch(path.name.removeprefix(f".{target.name}."))
        if match is None or match["host"] != _host() or _runs(int(match["pid"])):
            continue
        if match["label"] == "old" and not target.exists():
            with contextlib.suppress(OSError):  # another build may be putting it back just now
                path.rename(target)
        else:
            shutil.rmtree(path, ignore_errors=True)


_LEFTOVER = re.compile(r"(?P<label>[a-z]+)-(?P<host>.+)-(?P<pid>\d+)-[a-z0-9_]+")
"""What follows ``.<name>.`` in a folder of :func:`atomic_dir` (tempfile.mkdtemp's suffix last)."""


def _host() -> str:
    """This host's name as a folder name holds it."""
    return re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname())


def _builder() -> str:
    """Who builds a folder: this host and process (:func:`remove_dead_builds` reads it)."""
    return f"{_host()}-{os.getpid()}"


def _runs(pid: int) -> bool:
    """Whether a process ``pid`` of this host runs (another user's counts: it cannot be checked; on
    Windows nothing is checked, since ``os.kill`` would end the process)."""
    if os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        pass  # another user's process, or a pid this system cannot have: not provably gone
    return True


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
