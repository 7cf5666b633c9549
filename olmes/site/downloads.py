"""The site's downloads made from its data: the leaderboard as CSV and JSON, a task's subjects as CSV.

The tables' own files (CSV, JSON, LaTeX) are copied into ``downloads/tables/`` as they are; these are
the leaderboard's cells cut to :data:`DOWNLOAD_FIELDS`, one line a model.
"""

from __future__ import annotations

import json

from olmes import __version__
from olmes.core.csvtext import csv_document, csv_text
from olmes.core.records import LeaderboardTask
from olmes.site.pages import SiteData

DOWNLOAD_FIELDS = (
    "score", "stderr", "formulation", "dagger", "partial", "cf_accuracy", "mcf_accuracy", "n",
    "statistically_tied_with",
)  # fmt: skip
"""The fields of a leaderboard cell that ``leaderboard.csv`` and ``leaderboard.json`` carry."""
ROW_FIELDS = ("rank", "model", "display_name", "partial", "average", "average_stderr", "kind", "source")
"""The fields of a leaderboard row that the downloads carry (``kind`` and ``source``: where the tables
have reported rows)."""


def _download_cell(cell: LeaderboardTask | None) -> dict | None:
    """A leaderboard cell in the downloads: its :data:`DOWNLOAD_FIELDS`, or null without a score."""
    if cell is None or cell["score"] is None:
        return None
    return {name: cell[name] for name in DOWNLOAD_FIELDS}


def leaderboard_records(data: SiteData) -> list[dict]:
    """The leaderboard rows as the downloads hold them: a task without a score is null."""
    return [
        {
            **{name: row[name] for name in ROW_FIELDS if name in row},
            "tasks": {task: _download_cell(row["tasks"].get(task)) for task in data.tasks},
        }
        for row in data.leaderboard
    ]


def _percent(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.2f}"


def leaderboard_csv(data: SiteData) -> str:
    """``downloads/leaderboard.csv``: a line per model, percentages, four columns per task; the names,
    formulations and kinds are text (``olmes.core.csvtext``)."""
    header = ["rank", "model", "display_name", "partial", "average", "average_stderr"]
    for task in data.tasks:
        header += [task, f"{task}_stderr", f"{task}_formulation", f"{task}_partial"]
    kinds = [name for name in ("kind", "source") if any(name in row for row in data.leaderboard)]
    lines = [header + kinds]
    for record in leaderboard_records(data):
        row = [
            record["rank"] or "",
            csv_text(record["model"]),
            csv_text(record["display_name"]),
            record["partial"],
            _percent(record["average"]),
            _percent(record["average_stderr"]),
        ]
        for task in data.tasks:
            cell = record["tasks"][task]
            if cell is None:
                row += ["", "", "", ""]
            else:
                row += [
                    _percent(cell["score"]),
                    _percent(cell["stderr"]),
                    csv_text(cell["formulation"]),
                    cell["partial"],
                ]
        lines.append(row + [csv_text(record[name]) for name in kinds])
    return csv_document(lines)


def leaderboard_json(data: SiteData) -> str:
    """``downloads/leaderboard.json``: the records of :func:`leaderboard_records`, fractions."""
    document = {
        "olmes_version": __version__,
        "tasks": data.tasks,
        "note": "scores are fractions; formulation mcf = dagger; partial results are no OLMES scores",
        "models": leaderboard_records(data),
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def subjects_csv(columns: list[dict], rows: list[dict]) -> str:
    """Every model's per-subject accuracies (fractions), one line per subject x model x formulation;
    the subjects, names and labels are text (``olmes.core.csvtext``)."""
    lines: list[list] = [["subject", "n", "model", "display_name", "formulation", "accuracy", "partial"]]
    for row in rows:
        for column, accuracy in zip(columns, row["accuracies"], strict=True):
            if accuracy is not None:
                model = column["model"]
                lines.append(
                    [csv_text(row["subject"]), row["n"], csv_text(model.name), csv_text(model.display_name),
                     csv_text(column["label"]), accuracy, column["partial"]]
                )  # fmt: skip
    return csv_document(lines)
