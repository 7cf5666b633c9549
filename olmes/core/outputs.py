"""Where a command writes, checked before it does any work; and the one line an OS write error becomes.

Every command that writes files declares what it reads and what it writes (a :class:`CommandFiles`,
from its ``files(args)``; ``olmes.cli.main`` checks it before the command runs), so that:

- no output is the same file as an input (``--requests r.jsonl --output r.jsonl`` would replace the
  requests by the log-probs) or as another output (two ``--output`` paths, ``--predictions X
  --summary X``): the same file means the same resolved path, or ``os.path.samefile`` where both
  exist (a hard or symbolic link to an input counts);
- no output is an existing folder, or inside a folder that the command only reads (a model folder,
  a results store);
- no input is inside (or is) an output folder that the command rewrites (a site is replaced as a
  whole, a store gets new model folders);
- where the work is long (``olmes logprobs``), each output folder is made and written to (a probe
  file) before the model is loaded, so that a read-only or unwritable folder is found in a second,
  not after hours of scoring.

A folder that a command fills with files of its own names (``olmes tables --out``, ``olmes site
--out``) must be new, empty, or one that command made before, marked by a file of its own
(:func:`check_own_folder`): another folder's same-named files are never overwritten.

Disk full, read-only file system and permission denied (:data:`WRITE_ERRNOS`) are faults of the
machine, not of olmes: :func:`os_error_line` says in one line which path and what to do.
"""

from __future__ import annotations

import errno
import os
import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from olmes.core.errors import OlmesError

Named = tuple[str, Path]
"""An option and one path it was given (``("--output", Path("x.parquet"))``)."""


def named(option: str, values: str | os.PathLike | Iterable[str | os.PathLike] | None) -> list[Named]:
    """(option, path) for each value of an option; an option not given (None) gives none."""
    if values is None:
        return []
    if isinstance(values, str | os.PathLike):
        values = [values]
    return [(option, Path(value)) for value in values]


@dataclass
class CommandFiles:
    """What one run of a command reads and writes."""

    reads: list[Named] = field(default_factory=list)  # files or folders
    writes: list[Named] = field(default_factory=list)  # files
    read_only: list[Named] = field(default_factory=list)  # folders read that no output may go into
    folders: list[Named] = field(default_factory=list)  # output folders written into
    rewritten: list[Named] = field(default_factory=list)  # output folders (a site, a store): no input inside
    probe: bool = False  # make each output's folder and write a probe file there first (long commands)

    def check(self) -> None:
        """One :class:`OlmesError` for the first problem; nothing is written unless ``probe``."""
        for index, (option, path) in enumerate(self.writes):
            if path.is_dir():
                raise OlmesError(f"{option} {path} is a folder; give the path of a file to write")
            for read_option, read in self.reads:
                if same_path(path, read):
                    raise OlmesError(
                        f"{option} {path} is the same file as {read_option} {read}: writing it would "
                        f"destroy that input; give {option} another path"
                    )
            for other_option, other in self.writes[:index]:
                if same_path(path, other):
                    raise OlmesError(
                        f"{other_option} {other} and {option} {path} are the same file: one would "
                        "overwrite the other; give each its own path"
                    )
            for folder_option, folder in self.read_only:
                if is_inside(path, folder):
                    raise OlmesError(
                        f"{option} {path} is inside {folder_option} {folder}, which this command only "
                        "reads; write it elsewhere"
                    )
        for option, folder in (*self.folders, *self.rewritten):
            for kept_option, kept in self.read_only:
                if same_path(folder, kept) or is_inside(folder, kept):
                    raise OlmesError(
                        f"{option} {folder} is {kept_option} {kept} or inside it, which this command only "
                        "reads; write elsewhere"
                    )
        for option, folder in self.rewritten:
            for read_option, read in self.reads:
                if same_path(read, folder):
                    raise OlmesError(
                        f"{read_option} {read} and {option} {folder} are the same folder: this command "
                        f"would rewrite what it reads; give another {option}"
                    )
                if is_inside(read, folder):
                    raise OlmesError(
                        f"{read_option} {read} is inside {option} {folder}, which this command rewrites: "
                        f"move it out or give another {option}"
                    )
        if self.probe:
            for folder in dict.fromkeys([*(path.parent for _, path in self.writes), *self._folders()]):
                check_writable(folder)

    def _folders(self) -> list[Path]:
        return [path for _, path in (*self.folders, *self.rewritten)]

    def output_paths(self) -> list[Path]:
        return [path for _, path in self.writes] + self._folders()


def same_path(a: Path, b: Path) -> bool:
    """Whether two paths name one file (or folder): ``os.path.samefile`` where both exist, else the
    same absolute path with links resolved."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(os.path.abspath(a)).resolve() == Path(os.path.abspath(b)).resolve()


def is_inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` is strictly inside ``folder`` (links resolved)."""
    return Path(os.path.abspath(folder)).resolve() in Path(os.path.abspath(path)).resolve().parents


def check_writable(folder: Path) -> None:
    """Make ``folder`` (and its parents) and write a probe file in it; one line if either fails."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".olmes-probe-") as probe:
            probe.write(b"olmes")
            probe.flush()
            os.fsync(probe.fileno())
    except OSError as error:
        line = os_error_line(error, [folder])
        raise OlmesError(line or f"cannot write into {folder}: {error}") from error


def check_own_folder(out: Path, markers: tuple[str, ...], what: str) -> None:
    """An output folder a command fills with files of its own names: it must be new, empty or made
    by that command before, which leaves one of ``markers`` in it (the first is the one it writes).
    Another folder is refused: its same-named files would be overwritten."""
    out = Path(out)
    if out.exists() and (
        not out.is_dir() or (any(out.iterdir()) and not any((out / marker).exists() for marker in markers))
    ):
        raise OlmesError(f"{out} exists and is not {what} (no {markers[0]}); choose an empty or new folder")


# -- operating-system faults ------------------------------------------------------------------------

WRITE_ERRNOS = {
    errno.ENOSPC: "no space left on the device: free some space or write to another disk",
    errno.EDQUOT: "disk quota exceeded: free some space or write to another disk",
    errno.EROFS: "read-only file system: write to a folder on a writable disk",
    errno.EACCES: "permission denied: check the permissions of the file and its folder, or use another",
    errno.EPERM: "operation not permitted: check the permissions of the file and its folder, or use another",
}
"""The errors of a full, read-only or forbidden file system, each with what to do."""


def os_error_line(error: OSError, outputs: Iterable[Path] = ()) -> str | None:
    """One line for an OS fault of :data:`WRITE_ERRNOS`: the path (the error's, else the command's
    outputs) and what to do; None for any other error."""
    number = error.errno
    if number is None:  # some libraries say the errno only in their message
        found = re.search(r"\[errno (\d+)\]", str(error), re.IGNORECASE)
        number = int(found.group(1)) if found else None
    if number not in WRITE_ERRNOS:
        return None
    if error.filename is not None:
        where = os.fsdecode(error.filename)
        if error.filename2 is not None:
            where += f" -> {os.fsdecode(error.filename2)}"
    else:
        paths = [str(path) for path in outputs]
        where = f"while writing {', '.join(paths)}" if paths else "while writing"
    return f"{where}: {WRITE_ERRNOS[number]}"
