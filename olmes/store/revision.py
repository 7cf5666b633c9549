"""``olmes verify --base``: what a working tree's store changes against a git revision (the models it
adds, replaces and removes), and a model record as a revision has it."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from olmes.core.bounded_json import parse_json
from olmes.core.errors import OlmesError
from olmes.store.layout import MODEL_RECORD, MODELS, model_record_path
from olmes.store.lock import is_leftover
from olmes.store.naming import shown_name, store_shown_name


@dataclass(frozen=True)
class Changes:
    """The models a working tree's store adds, replaces (changes) and removes against a git revision."""

    base: str
    added: list[str]
    replaced: list[str]
    removed: list[str]
    other: list[str]  # changed store files outside the model folders
    # how the lines name each model: its display name (a removed one's as ``base`` had it), then its
    # name where they differ (olmes.store.naming); a model missing here is named by its name
    shown: dict[str, str] = field(default_factory=dict)

    def lines(self) -> list[str]:
        listed = [("added", self.added), ("replaced", self.replaced), ("removed", self.removed)]
        found = [
            f"olmes: verify: against {self.base}: {what}: {', '.join(self.shown.get(n, n) for n in names)}"
            for what, names in listed
            if names
        ]
        if self.other:
            found.append(f"olmes: verify: against {self.base}: changed store files: {', '.join(self.other)}")
        return found or [f"olmes: verify: against {self.base}: no store file changed"]


def changes(root: Path, base: str) -> Changes:
    """What the store at ``root`` changes against the git revision ``base`` of its repository
    (committed, staged, unstaged and untracked files)."""
    top = Path(_git(root, "rev-parse", "--show-toplevel").strip())
    prefix = root.resolve().relative_to(top.resolve()).as_posix()
    _git(root, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}")
    changed = _git(top, "diff", "--name-only", base, "--", prefix).splitlines()
    changed += _git(top, "ls-files", "--others", "--exclude-standard", "--", prefix).splitlines()
    models, other = set(), set()
    for name in changed:
        parts = Path(name).relative_to(prefix).parts
        if len(parts) > 2 and parts[0] == MODELS and not is_leftover(parts[1]):
            models.add(parts[1])
        else:
            other.add("/".join(parts))
    existed = {name for name in models if _in_revision(top, base, f"{prefix}/{MODELS}/{name}/{MODEL_RECORD}")}
    present = {name for name in models if model_record_path(root, name).is_file()}
    shown = {name: store_shown_name(root, name) for name in present}
    shown.update({name: _old_shown_name(root, base, name) for name in existed - present})
    return Changes(
        base,
        added=sorted(present - existed),
        replaced=sorted(present & existed),
        removed=sorted(existed - present),
        other=sorted(other),
        shown=shown,
    )


def _old_shown_name(root: Path, base: str, model: str) -> str:
    """A removed model as a message names it, by its display name in ``base`` (its name when that
    record does not read)."""
    try:
        record = old_model_record(root, base, model)
    except (OlmesError, ValueError):
        return model
    display = record.get("display_name") if isinstance(record, dict) else None
    return shown_name(model, display if isinstance(display, str) else None)


def old_model_record(root: Path, base: str, model: str) -> dict:
    """A model's record as the revision ``base`` has it."""
    top = Path(_git(root, "rev-parse", "--show-toplevel").strip())
    prefix = root.resolve().relative_to(top.resolve()).as_posix()
    path = f"{prefix}/{MODELS}/{model}/{MODEL_RECORD}"
    return parse_json(_git(top, "show", f"{base}:{path}"), f"{base}:{path}")


def _in_revision(top: Path, base: str, path: str) -> bool:
    done = subprocess.run(["git", "-C", str(top), "cat-file", "-e", f"{base}:{path}"], capture_output=True)
    return done.returncode == 0


def _git(where: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(where), *args], capture_output=True, text=True)
    if done.returncode != 0:
        detail = done.stderr.strip().splitlines()[-1:] or ["failed"]
        raise OlmesError(
            f"git {' '.join(args)} in {where}: {detail[0]}; --base needs a git revision of its repository"
        )
    return done.stdout
