"""What a submission may change: the check a pull request against the results store passes before
anything of it is fetched or run (``olmes check-submission``, run by scripts/submission_check.sh).

Why an allow-list: a submission is verified by the base branch's code, so a pull request that also
changes code, a workflow, the store's own files or its maintainers' reproduction records could make
the check pass or break the next publish. It may add, change or delete files only in model folders
(``<store>/models/<name>/``), each at a place the store's layout defines
(:func:`olmes.store.layout.is_model_file`), add the task files olmes makes (checked byte for byte by
``olmes verify``), and change the rows of the README's table of store results. Every other path is
refused: code, dotfiles, locks, leftovers of a publish, ``store.json``, ``reproductions/``, and any
link, submodule or executable file. Git is asked without rename detection, so a rename counts as a
deletion of its old path and an addition of its new one, and both must be allowed.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from olmes.core.errors import OlmesError
from olmes.core.methods import REQUEST_SETS
from olmes.core.tasks import TASKS
from olmes.store.layout import (
    MODEL_NAME,
    MODELS,
    REPRODUCTIONS,
    TASK_FILES,
    examples_name,
    instances_name,
    is_model_file,
)
from olmes.store.readme_table import README, README_AVERAGES, store_rows

PLAIN_FILE = "100644"  # git's mode of a plain, non-executable file
MODES = {"120000": "a symbolic link", "160000": "a submodule", "100755": "an executable file"}
SHOWN = 5  # refused paths named in the one line


@dataclass(frozen=True)
class Change:
    """One path a pull request changes, as ``git diff --raw --no-renames`` says it."""

    status: str  # A added, M modified, D deleted, T type changed
    mode: str  # the new mode (the old one for a deletion)
    path: str


@dataclass(frozen=True)
class Accepted:
    """A pull request whose paths a submission may change: the models it touches, what it deletes."""

    models: list[str]
    deleted: list[str]
    readme: bool

    def lines(self) -> list[str]:
        found = [f"accepted: the paths of model folder(s) {', '.join(self.models) or '(none)'}"]
        if self.deleted:
            found.append(f"deletes {len(self.deleted)} file(s): {_shown(self.deleted)}")
        if self.readme:
            found.append(f"changes the rows of {README}'s table of store results")
        return found


def check_submission(repo: Path, base: str, pr: str, store: str = "leaderboard") -> Accepted:
    """The paths pull request ``pr`` changes against ``base`` (from their merge base), accepted; one
    :class:`OlmesError` line naming the refused ones otherwise."""
    changes = pull_request_changes(repo, base, pr)
    refused = [f"{change.path} ({reason})" for change in changes if (reason := refusal(change, store))]
    readme = [change for change in changes if change.path == README]
    if readme and readme[0].status == "M" and not _only_table_rows(repo, base, pr, store):
        refused.append(f"{README} (lines outside its table of store results)")
    if refused:
        raise OlmesError(
            f"refused: this pull request changes {len(refused)} path(s) a submission may not change: "
            f"{_shown(refused)}; a submission adds or changes only files of its model folders "
            f"({store}/{MODELS}/<name>/) and the rows of {README}'s results table, and is verified by the "
            "base branch's code: put other changes in a separate pull request"
        )
    models = sorted({PurePosixPath(c.path).parts[2] for c in changes if _in_models(c.path, store)})
    deleted = [change.path for change in changes if change.status == "D"]
    return Accepted(models, deleted, bool(readme))


def refusal(change: Change, store: str) -> str | None:
    """Why a submission may not make this change; None when it may."""
    if change.path == README:
        return None if change.status == "M" else "the README is changed, never added or removed"
    if change.status != "D" and change.mode != PLAIN_FILE:
        return MODES.get(change.mode, f"git mode {change.mode}, not a plain file")
    path = PurePosixPath(change.path)
    if path.parts[0] != store:
        return f"outside {store}/"
    inside = path.relative_to(store)
    if inside.parts[0] == REPRODUCTIONS:
        return f"{REPRODUCTIONS}/ is written by maintainers on the base branch (olmes reproduce --record)"
    if inside.parts[0] == TASK_FILES and len(inside.parts) == 2 and inside.name in TASK_FILE_NAMES:
        return None if change.status == "A" else "a task file is added by a first submission, never changed"
    if inside.parts[0] != MODELS or len(inside.parts) < 3:
        return "a file of the store's maintainers, not of a model folder"
    if not MODEL_NAME.match(inside.parts[1]):
        return f"{inside.parts[1]!r} is not a model name (letters, digits, . _ + -, no leading dot)"
    if not is_model_file(PurePosixPath(*inside.parts[2:])):
        return "not a place the store's layout has for a file"
    return None


TASK_FILE_NAMES = frozenset(
    [instances_name(task) for task in TASKS]
    + [examples_name(task, request_set) for task in TASKS for request_set in REQUEST_SETS]
)


def pull_request_changes(repo: Path, base: str, pr: str) -> list[Change]:
    """Every path ``pr`` changes since its merge base with ``base``, renames and copies as a deletion
    and an addition (``--no-renames``)."""
    raw = _git(repo, "diff", "--raw", "-z", "--no-renames", "--no-abbrev", f"{base}...{pr}")
    fields = raw.split("\0")
    changes = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        if not meta.startswith(":"):
            continue
        old_mode, new_mode, _old, _new, status = meta[1:].split(" ")
        changes.append(Change(status[0], old_mode if status[0] == "D" else new_mode, path))
    return changes


def _only_table_rows(repo: Path, base: str, pr: str, store: str) -> bool:
    """Whether the README of ``pr`` differs from the base's only in rows of its store results table
    and in its averages line (both checked against the store by ``olmes verify``)."""
    before = _git(repo, "show", f"{base}:{README}").splitlines()
    after = _git(repo, "show", f"{pr}:{README}").splitlines()
    return _outside_table(before, store) == _outside_table(after, store)


def _outside_table(lines: list[str], store: str) -> list[str]:
    rows = {number for number, _cells, _columns in store_rows(lines, store)}
    return [
        line
        for number, line in enumerate(lines, 1)
        if number not in rows and not line.startswith(README_AVERAGES)
    ]


def _in_models(path: str, store: str) -> bool:
    parts = PurePosixPath(path).parts
    return len(parts) > 3 and parts[0] == store and parts[1] == MODELS


def _shown(items: list[str]) -> str:
    more = f" and {len(items) - SHOWN} more" if len(items) > SHOWN else ""
    return ", ".join(items[:SHOWN]) + more


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if done.returncode != 0:
        detail = (done.stderr.strip().splitlines() or ["failed"])[-1]
        raise OlmesError(f"git {' '.join(args)}: {detail}; run it in a clone that has both revisions")
    return done.stdout
