"""What ``olmes verify`` found: each problem one line naming its file, the notes, the summary line."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from olmes.core.errors import OlmesError


@dataclass(frozen=True)
class Problem:
    path: Path
    what: str

    def line(self) -> str:
        return f"olmes: verify: {self.path}: {self.what}"


@dataclass
class Verification:
    """What ``verify_store`` found: the problems, notes (what it skipped and why) and what it checked."""

    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    results: int = 0  # model x task results checked (standard and robustness)

    @contextlib.contextmanager
    def checking(self, path: Path) -> Iterator[None]:
        """Run a check that raises OlmesError; its message becomes a problem of ``path``."""
        try:
            yield
        except OlmesError as error:
            self.problems.append(Problem(path, str(error)))

    def problem(self, path: Path, what: str) -> None:
        self.problems.append(Problem(path, what))

    def summary_line(self, store: Path) -> str:
        what = f"{len(self.models)} model(s), {self.results} result(s) checked in {store}"
        if not self.problems:
            return f"olmes: verify: clean: {what}"
        return f"olmes: verify: {len(self.problems)} problem(s): {what}"
