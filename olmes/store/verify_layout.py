"""``olmes verify``, the store's layout: plain files and folders only (no symbolic link, which could point
outside the store), each in a place the format has for it; an unknown file, a stray summary, a
publish's lock or what an interrupted publish left is named."""

from __future__ import annotations

import os
import re
from pathlib import Path

from olmes.core.bounded_json import parse_json
from olmes.core.errors import OlmesError
from olmes.core.tasks import TASKS
from olmes.scoring.rotations import ROTATIONS_KIND, ROTATIONS_SUFFIX
from olmes.store.blobs import IGNORED_LINE
from olmes.store.layout import (
    BLOBS,
    GENERATIVE,
    GITIGNORE,
    LOGPROBS,
    MODEL_RECORD,
    MODELS,
    REPRODUCTIONS,
    ROBUSTNESS,
    SCORES,
    STORE_RECORD,
    SUMMARY_SUFFIX,
    TASK_FILES,
    generative_names,
    generative_tasks,
    logprob_name,
    models_folder,
    run_record_name,
    stray_generative,
    task_files_folder,
)
from olmes.store.lock import LOCK_NAME, describe, is_leftover, is_stale, read_holder, staging_model
from olmes.store.verification import Verification

STORE_FILES = (STORE_RECORD, GITIGNORE)  # the files of a store's top folder
STORE_FOLDERS = (MODELS, TASK_FILES, BLOBS, REPRODUCTIONS)
IGNORED = (
    f"{IGNORED_LINE}\n"  # a store's .gitignore, as olmes publish writes it (olmes.store.blobs.ignore_blobs)
)
BLOB_NAME = re.compile(r"^[0-9a-f]{64}\.parquet$")


def verify_layout(found: Verification, root: Path, models: list[str]) -> None:
    """Plain files and folders only, each where the store's format has a place for it: a symbolic link
    anywhere (it can point outside the store: /etc/passwd as a predictions file), an unknown file
    (in the store's folders and in the model folders of ``models``) and a stray summary are problems;
    what an interrupted publish left and a publish's lock are notes."""
    for path in _walk(root):
        if path.is_symlink():
            found.problem(
                path,
                f"a symbolic link (to {os.readlink(path)}); a store holds plain files and folders only: "
                "put the file itself there, or remove the link",
            )
    if (root / LOCK_NAME).exists() and not (root / LOCK_NAME).is_symlink():
        holder = read_holder(root)
        found.problem(
            root / LOCK_NAME,
            "a publish's lock, not part of the store (never commit it): "
            + (
                "unreadable; if no publish is running, remove it"
                if holder is None
                else f"left by {describe(holder)}, which no longer runs; the next olmes publish takes it over"
                if is_stale(holder)
                else f"a publish is running ({describe(holder)}); verify the store once it is done"
            ),
        )
    gitignore = root / GITIGNORE
    if (
        gitignore.is_file()
        and not gitignore.is_symlink()
        and gitignore.read_text(encoding="utf-8") != IGNORED
    ):
        found.problem(
            gitignore,
            f"a store's .gitignore holds only {IGNORED.strip()!r} (what it ignores never reaches git: a "
            "published model would silently stay out of the repository); write it as olmes publish does",
        )
    for path in children(root):
        if path.name in (LOCK_NAME, *STORE_FILES) and path.is_file():
            continue
        if path.name not in STORE_FOLDERS or not path.is_dir():
            _leftover_or_unknown(found, path)
    for path in children(task_files_folder(root)):
        if path.is_dir():  # its files: _verify_task_files
            unknown(found, path)
        elif is_leftover(path.name):
            _leftover_or_unknown(found, path)
    for path in children(root / BLOBS):
        if not (path.is_file() and BLOB_NAME.match(path.name)):
            _leftover_or_unknown(found, path)
    for path in children(models_folder(root)):
        if path.is_dir() and staging_model(path.name):
            _leftover_or_unknown(found, path)
        elif not path.is_dir():
            unknown(found, path)
        elif path.name in models:
            verify_model_files(found, path)


def verify_model_files(found: Verification, folder: Path) -> None:
    """A model folder holds its record, its summaries and rotations reports (of tasks of this olmes
    version) and the files they name: predictions, log-prob files and run records; nothing else."""
    expected = {folder / MODEL_RECORD}
    unreadable = []  # (folder, task) of summaries that do not read: their problem is reported elsewhere
    places = [(folder / SCORES, SUMMARY_SUFFIX, folder / LOGPROBS)]
    places += [
        (kind, ROTATIONS_SUFFIX if kind.name == ROTATIONS_KIND else SUMMARY_SUFFIX, kind)
        for kind in children(folder / ROBUSTNESS)
        if kind.is_dir()
    ]
    for place, suffix, logprobs in places:
        for path in children(place):
            if not path.name.endswith(suffix) or not path.is_file():
                continue
            task = path.name.removesuffix(suffix)
            expected.add(path)
            if task not in TASKS:
                found.problem(
                    path, f"a stray summary: {task!r} is not a task of this olmes version; remove it"
                )
                continue
            try:
                data = parse_json(path.read_text(encoding="utf-8"), str(path))
                named = data.get("predictions", {}).get("path") if suffix == SUMMARY_SUFFIX else None
                sets = list(data["inputs"])
            except (OSError, ValueError, KeyError, TypeError, AttributeError, OlmesError):
                unreadable.append((place, task))
                continue
            if isinstance(named, str) and (Path(named).name != named or named in ("", ".", "..")):
                found.problem(path, f"predictions.path {named!r} is not the name of a file beside it")
            elif isinstance(named, str):
                expected.add(place / named)
            for request_set in sets:
                expected |= {
                    logprobs / logprob_name(task, request_set),
                    logprobs / run_record_name(task, request_set),
                }
    generative = folder / GENERATIVE
    for task in generative_tasks(generative) if generative.is_dir() else []:
        expected |= {generative / name for name in generative_names(task)}
    for path in stray_generative(generative) if generative.is_dir() else []:
        expected.add(path)
        found.problem(path, "a stray summary: not a generative task of this olmes version; remove it")
    for path in _walk(folder):
        if path.is_symlink() or path.is_dir() or path in expected:
            continue
        if not any(path.parent == place and path.name.startswith(f"{task}.") for place, task in unreadable):
            unknown(found, path)


def _leftover_or_unknown(found: Verification, path: Path) -> None:
    staged = staging_model(path.name) if path.is_dir() and path.parent.name == MODELS else None
    if staged is not None and staged[1] == "old" and not (path.parent / staged[0]).exists():
        found.problem(
            path.parent / staged[0],
            f"missing: an interrupted publish left it as {path.name}; the next olmes publish puts it back",
        )
    elif staged is not None or (is_leftover(path.name) and path.is_file()):
        found.problem(
            path,
            "left by an interrupted publish, not part of the store (never commit it); "
            "the next olmes publish removes it",
        )
    else:
        unknown(found, path)


def unknown(found: Verification, path: Path) -> None:
    if not path.is_symlink():  # a link is a problem of its own
        what = "folder" if path.is_dir() else "file"
        found.problem(path, f"not a {what} of a results store (its format has no place for it); remove it")


def children(folder: Path) -> list[Path]:
    return sorted(folder.iterdir()) if folder.is_dir() and not folder.is_symlink() else []


def _walk(folder: Path) -> list[Path]:
    """Every file and folder under ``folder``, sorted; a symbolic link is listed, never followed."""
    found = []
    for top, folders, files in os.walk(folder):
        found += [Path(top) / name for name in [*folders, *files]]
    return sorted(found)
