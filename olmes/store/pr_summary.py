"""The Markdown job summary of ``olmes verify --summary``: what a pull request changes on the
leaderboard (models added, replaced, removed; their scores, flags and partial labels) and whether the
store verified. GitHub shows it on the run's page (``$GITHUB_STEP_SUMMARY``); every text that comes
from the store is escaped, so a model's name cannot inject Markdown or HTML."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from olmes.core.errors import OlmesError
from olmes.core.records import olmes_score, read_score_summary
from olmes.core.tasks import TASKS
from olmes.scoring.flags import task_flags
from olmes.store.layout import SCORES, model_folder, summary_name
from olmes.store.reading import read_model_record
from olmes.store.readme_table import model_averages
from olmes.store.revision import Changes, old_model_record
from olmes.store.verification import Verification

SHOWN_PROBLEMS = 50  # problem lines the summary lists (all are in the job's log)


def summary_markdown(root: Path, verification: Verification, changes: Changes | None) -> str:
    lines = ["## Leaderboard submission check", ""]
    if changes is not None:
        lines += ["OLMES = the better of CF and MCF, † where MCF won; flags: olmes.scoring.flags.", ""]
    lines += _verdict(verification)
    if changes is not None:
        lines += ["", f"### Changes against `{_text(changes.base)}`", ""]
        lines += _changes(root, changes, verification)
    return "\n".join(lines) + "\n"


def _verdict(verification: Verification) -> list[str]:
    checked = f"{len(verification.models)} model(s), {verification.results} result(s) checked"
    if not verification.problems:
        lines = [f"**verify: clean** ({checked})."]
    else:
        lines = [f"**verify: {len(verification.problems)} problem(s)** ({checked}):", "", "```"]
        lines += [problem.line().replace("`", "'") for problem in verification.problems[:SHOWN_PROBLEMS]]
        more = len(verification.problems) - SHOWN_PROBLEMS
        lines += ([f"... and {more} more (see the job's log)"] if more > 0 else []) + ["```"]
    if verification.notes:
        lines += ["", *[f"- note: {_text(note)}" for note in verification.notes]]
    return lines


def _changes(root: Path, changes: Changes, verification: Verification) -> list[str]:
    lines = []
    if not (changes.added or changes.replaced or changes.removed):
        lines.append("No model added, replaced or removed.")
    averages = _averages(root)
    for kind, names in (("added", changes.added), ("replaced", changes.replaced)):
        for model in names:
            lines += _model_section(root, model, kind, averages)
    for model in changes.removed:
        try:
            display = old_model_record(root, changes.base, model).get("display_name", model)
        except (OlmesError, ValueError):
            display = model
        lines += [f"#### {_text(display)} (`{_text(model)}`): removed", ""]
    if changes.other:
        lines += ["Other store files changed: " + ", ".join(f"`{_text(name)}`" for name in changes.other), ""]
    return lines


def _averages(root: Path) -> dict[str, float | None]:
    try:
        return model_averages(root)
    except OlmesError:
        return {}  # the store's problems are listed above


def _model_section(root: Path, model: str, kind: str, averages: dict[str, float | None]) -> list[str]:
    try:
        display = read_model_record(root, model)["display_name"]
    except OlmesError:
        return [f"#### `{_text(model)}`: {kind}, its model record is unreadable (see the problems)", ""]
    average = averages.get(display)
    stated = f"{100 * average:.1f}" if average is not None else "none (not every task complete)"
    lines = [f"#### {_text(display)} (`{_text(model)}`): {kind}", "", f"OLMES average: **{stated}**", ""]
    lines += ["| task | OLMES | partial | flags |", "|---|---|---|---|"]
    for task in TASKS:
        path = model_folder(root, model) / SCORES / summary_name(task)
        if path.is_file():
            lines.append(_task_row(path))
    return [*lines, ""]


def _task_row(path: Path) -> str:
    try:
        summary = read_score_summary(path)
        predictions = pd.read_parquet(path.parent / summary["predictions"]["path"])
        flags = [flag["message"] for flag in task_flags(summary, predictions)]
    except (OlmesError, OSError, ValueError, KeyError) as error:
        return f"| `{_text(path.name)}` | unreadable: {_text(str(error))} | | |"
    olmes = olmes_score(summary)
    score = f"{100 * olmes['score']:.1f}" + (" †" if olmes["dagger"] else "") if olmes else "none"
    partial = "; ".join(summary["partial_reasons"]) if summary["partial"] else ""
    return (
        f"| {_text(summary['display_name'])} | {score} | {_text(partial)} | "
        f"{'<br>'.join(_text(flag) for flag in flags)} |"
    )


def _text(value: str) -> str:
    """Store text made safe in a Markdown table cell: HTML escaped, no cell breaks or code spans."""
    return html.escape(str(value)).replace("|", "&#124;").replace("`", "&#96;").replace("\n", " ")
