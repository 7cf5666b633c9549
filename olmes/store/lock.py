"""The store-wide lock of ``olmes publish``, and what an interrupted publish leaves behind.

Why: a publish reads the store (a model's record, the files it keeps) and then writes a new model
folder built from what it read. Two publishes of one store at once would each write what they read
before the other's write, and the second one's folder would silently drop the first one's results.
So a publish holds ``<store>/.publish.lock`` from its first read of the store to its last write: a
file created with ``O_EXCL`` (only one process can create it) holding the holder's pid, host and
start time. Another publish waits for it (:data:`WAIT_S` at most, then one line saying who holds it).

A publish killed with the lock held (SIGKILL, a power cut) leaves the file behind. On the same host
its pid is checked: a lock whose process no longer runs is stale, said in one line, and taken over
(under a ``flock`` of the store folder, so two publishes never both take it over). A lock of another
host cannot be checked from here: the line says which host and pid hold it and to remove the file if
no publish runs there. An unreadable lock (a publish that died between creating and writing it) is
stale once older than :data:`UNREADABLE_STALE_S`.

A killed publish may also leave a model folder it was building (``models/.<model>.publishing-XXXX``),
a model folder it was swapping out (``.<model>.old-XXXX``) or half a file (``.<name>.XXXX.tmp``, from
olmes.core.atomic). :func:`is_leftover` names them: ``olmes verify`` does not take them for models or
store files (a note each), and the next publish, holding the lock, removes them.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import socket
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from olmes.core.bounded_json import parse_json
from olmes.core.errors import OlmesError

LOCK_NAME = ".publish.lock"
WAIT_S = 300.0  # how long a publish waits for another one's lock before it gives up
POLL_S = 0.2
UNREADABLE_STALE_S = 30.0
# a model folder being built or swapped out (tempfile.mkdtemp's suffix), half a file (atomic_path's)
_STAGING = re.compile(r"^\.(?P<model>.+)\.(?P<label>publishing|old)-[a-z0-9_]+$")
_TEMP = re.compile(r"^\..+\.[a-z0-9_]+\.tmp$")


def staging_model(name: str) -> tuple[str, str] | None:
    """(model, "publishing" or "old") when ``name`` is a model folder an interrupted publish left."""
    match = _STAGING.match(name)
    return (match["model"], match["label"]) if match else None


def is_leftover(name: str) -> bool:
    """Whether ``name`` (a folder of ``models/``, or a file) is what an interrupted publish leaves."""
    return staging_model(name) is not None or _TEMP.match(name) is not None


def read_holder(store: Path) -> dict | None:
    """The lock's holder (pid, host, started), or None when there is no lock or it does not read."""
    try:
        data = parse_json((store / LOCK_NAME).read_text(encoding="utf-8"), str(store / LOCK_NAME))
    except (OSError, ValueError, OlmesError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("pid"), int) else None


def describe(holder: dict) -> str:
    return f"pid {holder['pid']} on {holder.get('host', '?')} since {holder.get('started', '?')}"


def is_stale(holder: dict) -> bool:
    """Whether the holder is a process of this host that no longer runs."""
    if holder.get("host") != socket.gethostname() or os.name != "posix":
        return False  # another host's process cannot be checked; on Windows os.kill would end it
    try:
        os.kill(holder["pid"], 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError, ValueError):
        return False  # another user's process (or a pid this system cannot have): not provably dead
    return False


@contextlib.contextmanager
def store_lock(store: Path, waiting: Callable[[dict], None] | None = None) -> Iterator[None]:
    """Hold ``store``'s publish lock for the body; ``waiting(holder)`` is called while another holds it."""
    path = store / LOCK_NAME
    mine = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "token": secrets.token_hex(8),
        "command": "olmes publish",
    }
    deadline = time.monotonic() + WAIT_S
    while not _create(path, mine):
        holder = read_holder(store)
        if holder is None:
            if _unreadable_and_old(path):
                _take_over(store, None)
            elif time.monotonic() > deadline:
                raise OlmesError(f"{path} does not read as a lock; if no publish is running, remove it")
            time.sleep(POLL_S)
            continue
        if is_stale(holder):
            _take_over(store, holder)
            continue
        if time.monotonic() > deadline:
            raise OlmesError(_busy(store, path, holder))
        if waiting is not None:
            waiting(holder)
        time.sleep(POLL_S)
    try:
        yield
    finally:
        if (read_holder(store) or {}).get("token") == mine["token"]:
            path.unlink(missing_ok=True)


def _busy(store: Path, path: Path, holder: dict) -> str:
    if holder.get("host") == socket.gethostname():
        return (
            f"{store} is being published to by {describe(holder)} ({path}), still after {WAIT_S:.0f} s; "
            "wait for it to finish and publish again"
        )
    return (
        f"{store} is locked by a publish of {describe(holder)}, which cannot be checked from this host "
        f"({path}); if no publish runs there, remove that file and publish again"
    )


def _create(path: Path, holder: dict) -> bool:
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)
    except FileExistsError:
        return False
    try:
        os.write(fd, (json.dumps(holder) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    return True


def _unreadable_and_old(path: Path) -> bool:
    try:
        return time.time() - path.stat().st_mtime > UNREADABLE_STALE_S
    except FileNotFoundError:
        return False


def _take_over(store: Path, holder: dict | None) -> None:
    """Remove a stale lock, unless another publish took it over first (both checked under a flock of
    the store folder, so only one of two publishes that found it stale removes it)."""
    path = store / LOCK_NAME
    with _store_flock(store):
        if read_holder(store) != holder or (holder is None and not _unreadable_and_old(path)):
            return  # taken over (or released) meanwhile: try again
        whose = f"left by {describe(holder)}, which no longer runs" if holder else "unreadable and old"
        print(f"olmes: publish: {path} was {whose}; taking the lock over", file=sys.stderr)
        path.unlink(missing_ok=True)


@contextlib.contextmanager
def _store_flock(store: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # no flock (Windows): the lock file alone
        yield
        return
    fd = os.open(store, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
