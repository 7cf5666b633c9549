"""The data of the paper's Figures 1 and 2: CF vs MCF accuracy per model and task.

Figure data is data, not display: accuracies are fractions at full precision, written as
``<key>.csv`` and ``<key>.json`` (``key``, ``description``, ``columns``, ``rows``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from olmes.core.atomic import write_text_atomic
from olmes.core.csvtext import csv_text
from olmes.core.methods import CF, MCF
from olmes.core.records import FIGURE_FORMAT
from olmes.core.tasks import TASKS
from olmes.tables.reported_scores import ReportedScores
from olmes.tables.results import ModelInfo, ScoreSet, method_accuracy, recommended_method, task_name
from olmes.tables.robustness import letter_bias_data
from olmes.tables.score_tables import olmes_average

FIGURE_COLUMNS = [
    "task", "task_name", "model", "display_name", "kind", "series", "checkpoint", "training_tokens",
    "cf_method", "cf_accuracy", "cf_stderr", "mcf_accuracy", "mcf_stderr", "best_formulation", "n", "partial",
]  # fmt: skip


def _figure_row(scores: ScoreSet, info: ModelInfo, task: str) -> dict | None:
    summary = scores.get(info.name, task)
    if summary is None:
        return None
    cf = summary["methods"].get(recommended_method(task), {})
    mcf = summary["methods"].get(MCF, {})
    best = summary.get("best_of_two") or {}
    return {
        "task": task,
        "task_name": task_name(task),
        "model": info.name,
        "display_name": info.display_name,
        "kind": "evaluated",
        "series": info.series,
        "checkpoint": info.checkpoint,
        "training_tokens": info.training_tokens,
        "cf_method": recommended_method(task),
        "cf_accuracy": cf.get("accuracy"),
        "cf_stderr": cf.get("stderr"),
        "mcf_accuracy": mcf.get("accuracy"),
        "mcf_stderr": mcf.get("stderr"),
        "best_formulation": best.get("formulation"),
        "n": summary["n_instances"],
        "partial": summary["partial"],
    }


def figure2_data(scores: ScoreSet, reported: ReportedScores | None = None) -> list[dict]:
    """CF (recommended normalization) vs MCF accuracy per task per model, the models in the paper's
    order: by overall performance (the OLMES average), weakest first; those without an average after
    them, in the models' order. With ``reported``, the paper's models too (as it prints them: no
    standard errors or counts), by the average it prints; every task of the registry then."""
    entries = [
        (olmes_average(scores, info.name), functools.partial(_figure_row, scores, info))
        for info in scores.models
    ]
    if reported is not None:
        entries += [
            (reported.average(info.name), functools.partial(_reported_row, reported, info))
            for info in reported.models
        ]
    entries.sort(key=lambda entry: (entry[0] is None, entry[0] or 0.0))  # stable: the models' order
    tasks = scores.tasks if reported is None else list(TASKS)
    rows = (row_of(task) for task in tasks for _, row_of in entries)
    return [row for row in rows if row is not None]


def _reported_row(reported: ReportedScores, info: ModelInfo, task: str) -> dict | None:
    """A paper model's CF and MCF accuracy on a task as the figure holds it (no errors, no counts)."""
    summary = reported.get(info.name, task)
    if summary is None:
        return None
    cf, mcf = (method_accuracy(summary, method) for method in (recommended_method(task), MCF))
    return {
        "task": task, "task_name": task_name(task), "model": info.name, "display_name": info.display_name,
        "kind": "reported", "series": None, "checkpoint": None, "training_tokens": None,
        "cf_method": recommended_method(task), "cf_accuracy": cf, "cf_stderr": None, "mcf_accuracy": mcf,
        "mcf_stderr": None, "best_formulation": MCF if mcf > cf else CF, "n": None, "partial": False,
    }  # fmt: skip


def figure1_data(scores: ScoreSet) -> list[dict]:
    """CF vs MCF over training: models declared with a series and training_tokens, by series and tokens."""
    members = [info for info in scores.models if info.series is not None and info.training_tokens is not None]
    members.sort(key=lambda info: (info.series, info.training_tokens))
    rows = (_figure_row(scores, info, task) for info in members for task in scores.tasks)
    return [row for row in rows if row is not None]


def write_figure(
    rows: list[dict], key: str, description: str, out: Path, columns: list[str] = FIGURE_COLUMNS
) -> list[Path]:
    paths = [out / f"{key}.csv", out / f"{key}.json"]
    frame = pd.DataFrame(_csv_rows(rows), columns=columns)
    write_text_atomic(paths[0], frame.to_csv(index=False, lineterminator="\n"))
    FIGURE_FORMAT.write(paths[1], {"key": key, "description": description, "columns": columns, "rows": rows})
    return paths


def _csv_rows(rows: list[dict]) -> list[dict]:
    """The rows as the CSV file holds them: every string value is text (``olmes.core.csvtext``)."""
    return [
        {key: csv_text(value) if isinstance(value, str) else value for key, value in row.items()}
        for row in rows
    ]


LETTER_BIAS_COLUMNS = ["model", "display_name", "task", "task_name", "letter", "predicted", "gold"]


@dataclass(frozen=True)
class Figure:
    """One figure's data: its key (the file stem), what it shows, its rows and their columns."""

    key: str
    description: str
    data: Callable[[ScoreSet, ReportedScores | None], list[dict]]
    columns: list[str] = field(default_factory=lambda: FIGURE_COLUMNS)


FIGURES = (
    Figure(
        "letter_bias",
        "MCF letter bias: per model, task and letter, the share of predictions and of gold answers at "
        "that letter over every answer order (olmes rotations).",
        lambda scores, reported: letter_bias_data(scores),
        LETTER_BIAS_COLUMNS,
    ),
    Figure(
        "figure1_checkpoints",
        "Figure 1: CF vs MCF accuracy (fractions) over training checkpoints of each declared series.",
        lambda scores, reported: figure1_data(scores),
    ),
    Figure(
        "figure2_cf_vs_mcf",
        "Figure 2: CF (recommended normalization) vs MCF accuracy (fractions) per task and model, models "
        "by OLMES average, weakest first; kind 'reported': as the OLMES paper prints it (Tables 6-7).",
        figure2_data,
    ),
)
"""Every figure of the tables folder, in the order it is written; adding one means adding it here."""

FIGURE_KEYS = tuple(figure.key for figure in FIGURES)


def write_figures(scores: ScoreSet, out: Path, reported: ReportedScores | None = None) -> list[Path]:
    """The figures' data under ``out`` (Figure 2 with the paper's models where ``reported``); return the
    paths written."""
    return [
        path
        for figure in FIGURES
        for path in write_figure(
            figure.data(scores, reported), figure.key, figure.description, out, figure.columns
        )
    ]
