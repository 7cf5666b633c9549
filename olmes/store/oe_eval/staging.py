"""``olmes import oe-eval``, all or nothing: an import is built in a staging folder, then swapped in
whole; a swap killed midway is finished by the next import (:func:`staged_import`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from olmes.core.errors import OlmesError
from olmes.store.layout import GENERATIVE, LOGPROBS, MODELS_FILE, REQUESTS, SCORES
from olmes.store.naming import shown_name

MODEL_PARTS = (REQUESTS, LOGPROBS, GENERATIVE, SCORES)
"""A model's folders in a results folder, in the order a swap moves them in; they move out in the
reverse order. The score summaries, which make a model x task a result, are out first and in last
(a generative task's summary is in its own folder, ``generative/<model>/``, which moves whole)."""
_PREFIX = ".import."  # .import.<model>.building-XXXX (being built), .import.<model>.swap (being swapped in)
_BUILDING, _SWAP, _OLD = ".building-", ".swap", "old"


@contextlib.contextmanager
def staged_import(output: Path, model: str, tasks: set[str]) -> Iterator[Path]:
    """Yield a folder laid out as the results folder ``output`` to write an import of ``model`` into;
    when the body has finished, its model folders and models file replace ``output``'s.

    Why this way: an import refused halfway (a NaN, a positive log-prob, a truncated file) or killed
    must not leave some of its files beside the output's old ones: a model x task's requests,
    log-probs, run records, predictions and summary are one result. So everything is built in
    ``output/.import.<model>.building-XXXX`` (the model folders' files of other tasks hard-linked in,
    the imported tasks' files all new: none of a task's old files stays beside its new ones), and
    nothing of ``output`` changes until it is complete. Then one rename makes it the journal
    ``.import.<model>.swap`` (the commit point) and :func:`_swap` moves the three model folders and
    the models file in. A swap is several renames, so it is ordered to never show a mix: the old
    folders move out (into the journal) summaries first, then the new ones in summaries last; at any
    instant a model x task's files that are there are all old or all new, and its summary is there
    only with all its files. A swap killed midway is finished by the next import into ``output``,
    which (holding its lock) also removes the building folders of killed imports. The two hidden
    folders live in ``output`` itself, on the file system of the folders they are renamed to."""
    made = not output.exists()
    output.mkdir(parents=True, exist_ok=True)
    try:
        with _import_lock(output):
            _clean_up_interrupted(output)
            staging = Path(tempfile.mkdtemp(dir=output, prefix=f"{_PREFIX}{model}{_BUILDING}"))
            try:
                for part in MODEL_PARTS:
                    if part != GENERATIVE or (output / part / model).is_dir():  # made when one is imported
                        _link_other_tasks(output / part / model, staging / part / model, tasks)
                try:
                    yield staging
                except OlmesError as error:  # a staged file is named as the output's it would be
                    raise OlmesError(str(error).replace(str(staging), str(output))) from None
                _swap(output, model, staging.rename(output / f"{_PREFIX}{model}{_SWAP}"))
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    finally:
        if made and not any(output.iterdir()):
            output.rmdir()  # a refused import into a new folder leaves none


@contextlib.contextmanager
def _import_lock(output: Path) -> Iterator[None]:
    """One import at a time into a results folder, so that one import never takes another's staging
    for a killed one's: a ``flock`` of the folder, which the system releases when its holder ends,
    even killed (SIGKILL). Where there is no flock (Windows) the folder is not locked."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    fd = os.open(output, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise OlmesError(
                f"another olmes import is writing into {output}; wait for it to finish and import again"
            ) from None
        yield
    finally:
        os.close(fd)


def _clean_up_interrupted(output: Path) -> None:
    """What killed imports left in ``output``: a swap is finished, a building folder removed."""
    for path in sorted(output.iterdir()):
        if not path.name.startswith(_PREFIX) or path.is_symlink() or not path.is_dir():
            continue
        if path.name.endswith(_SWAP):
            model = path.name.removeprefix(_PREFIX).removesuffix(_SWAP)
            _swap(output, model, path)
            print(f"olmes: import: finished moving {_listed_name(output, model)} in, left half moved by an "
                  f"interrupted import ({path})", file=sys.stderr)  # fmt: skip
        elif _BUILDING in path.name:
            shutil.rmtree(path)
            print(f"olmes: import: removed {path}, left by an interrupted import", file=sys.stderr)


def _listed_name(output: Path, model: str) -> str:
    """``model`` as a message names it: by the display name the results folder's models file lists it
    under (olmes.store.naming); its name when the file does not list it or does not read."""
    from olmes.tables.results import read_models_file

    try:
        infos = {info.name: info for info in read_models_file(output / MODELS_FILE)}
    except (OlmesError, OSError):
        return model
    return shown_name(model, infos[model].display_name if model in infos else None)


def _link_other_tasks(current: Path, staged: Path, tasks: set[str]) -> None:
    """The staged model folder starts as the current one without any file of the imported ``tasks``
    (``<task>.*``): hard links, so nothing is copied and the current files stay as they are."""
    staged.mkdir(parents=True)
    if not current.is_dir():
        return
    for path in current.iterdir():
        if path.name.partition(".")[0] in tasks:
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.copytree(path, staged / path.name, symlinks=True, copy_function=_link)
        else:
            _link(path, staged / path.name)


def _link(source: str | Path, target: str | Path) -> None:
    """A hard link (a symbolic link as itself), or a copy where the file system has none."""
    try:
        os.link(source, target, follow_symlinks=False)
    except OSError:
        shutil.copy2(source, target, follow_symlinks=False)


def _swap(output: Path, model: str, journal: Path) -> None:
    """Move a finished import (the journal, laid out as ``output``) into ``output``: each old model
    folder out into ``journal/old/`` in the reverse order of :data:`MODEL_PARTS`, then each new one in
    (the models file before the summaries), then the journal is removed. A step is taken only if it
    is not done yet (a new folder still in the journal has its old one still to move out), so an
    interrupted swap is finished by running it again."""
    old = journal / _OLD
    old.mkdir(exist_ok=True)
    for part in reversed(MODEL_PARTS):
        if (journal / part / model).exists() and (output / part / model).exists():
            (output / part / model).rename(old / part)
    for part in MODEL_PARTS:
        if part == SCORES and (journal / MODELS_FILE).exists():
            os.replace(journal / MODELS_FILE, output / MODELS_FILE)
        if (journal / part / model).exists():
            (output / part).mkdir(exist_ok=True)
            (journal / part / model).rename(output / part / model)
    shutil.rmtree(journal)
