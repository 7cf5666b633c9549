"""The OLMES v0.2 generative tasks (:mod:`olmes.core.generative`) in the tables: ``generative_scores``.

:func:`load_generative` reads the summaries of ``olmes score-generative`` (``<task>.generative.json``,
files or folders searched for them) into a :class:`GenerativeSet`; :func:`generative_table` makes the
table: a row per model (the models file's order and names), per task its primary metric (F1, GSM8K's
exact match) with its standard error, and bits per byte, and the generative average over the six tasks,
only for a model with all six complete (none partial). The OLMES score stays the ten tasks' average
(v0.1, the paper's); every generative column is labelled with its version, "OLMES v0.2".
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from olmes.core.errors import OlmesError
from olmes.core.generative import GENERATIVE_TASKS, GENERATIVE_VERSION
from olmes.core.records.generative import GenerativeScoreSummary, read_generative_summary
from olmes.core.records.tables import GenerativeInput, GenerativeRow, GenerativeTask
from olmes.core.resources import file_sha256
from olmes.tables.render import MISSING, PARTIAL_MARK, Cell, Table, percent_cell, text_cell
from olmes.tables.results import ModelInfo

GENERATIVE_KEY = "generative_scores"
GENERATIVE_SUFFIX = ".generative.json"
METRIC_LABELS = {"f1": "F1", "exact_match": "EM"}
"""How a column names a task's primary metric."""


@dataclass
class GenerativeSet:
    """Every generative summary given to ``olmes tables --generative``, by (model, task), and the
    models of a models file (their order and names, for models without ten-task scores)."""

    summaries: dict[tuple[str, str], GenerativeScoreSummary]
    paths: dict[tuple[str, str], Path]
    listed: list[ModelInfo] = field(default_factory=list)

    @property
    def model_names(self) -> set[str]:
        return {model for model, _ in self.summaries}

    def get(self, model: str, task: str) -> GenerativeScoreSummary | None:
        return self.summaries.get((model, task))

    def inputs(self) -> list[GenerativeInput]:
        """What ``index.json`` records of them: each summary's path as given and its SHA-256."""
        return [
            {
                "model": model,
                "task": task,
                "path": str(path),
                "sha256": file_sha256(path),
                "partial": self.summaries[(model, task)]["partial"],
            }
            for (model, task), path in sorted(self.paths.items())
        ]


def expand_generative_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Summary files as given, and folders searched recursively for ``*.generative.json``."""
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found += sorted(path.rglob(f"*{GENERATIVE_SUFFIX}"))
        elif path.is_file():
            found.append(path)
        else:
            raise OlmesError(f"{path}: no such generative score summary or directory")
    if not found:
        raise OlmesError(
            f"no generative score summaries (*{GENERATIVE_SUFFIX}) found under --generative "
            f"{' '.join(map(str, paths))}; give those written by olmes score-generative"
        )
    return found


def load_generative(paths: Iterable[str | Path], listed: Iterable[ModelInfo] = ()) -> GenerativeSet:
    """The generative summaries under ``paths``, each checked against its format; a task outside the
    registry, or two summaries of one model x task, is an error naming the files."""
    summaries: dict[tuple[str, str], GenerativeScoreSummary] = {}
    where: dict[tuple[str, str], Path] = {}
    for path in expand_generative_paths(paths):
        summary = read_generative_summary(path)
        if summary["task"] not in GENERATIVE_TASKS:
            raise OlmesError(
                f"{path}: task {summary['task']!r} is not an OLMES v0.2 generative task; "
                f"known: {', '.join(GENERATIVE_TASKS)}"
            )
        key = (summary["model"], summary["task"])
        if key in where:
            raise OlmesError(
                f"{path} and {where[key]} both hold generative scores of model {key[0]!r} on "
                f"{key[1]}; keep one"
            )
        summaries[key], where[key] = summary, path
    return GenerativeSet(summaries, where, list(listed))


def ordered_models(generative: GenerativeSet, models: list[ModelInfo]) -> list[ModelInfo]:
    """The models with generative results, as the tables order and name models: those of the ten
    tasks' scores first (``models``, the models file's order), then the models file's others, then
    the rest by name."""
    present, ordered, seen = generative.model_names, [], set()
    for info in [*models, *generative.listed]:
        if info.name in present and info.name not in seen:
            ordered.append(info)
            seen.add(info.name)
    ordered += [ModelInfo.from_record({"name": name}) for name in sorted(present - seen)]
    return ordered


def generative_cell(summary: GenerativeScoreSummary) -> GenerativeTask:
    primary = summary["metrics"][summary["primary_metric"]]
    return {
        "score": primary["value"],
        "stderr": primary["stderr"],
        "n": primary["n"],
        "primary_metric": summary["primary_metric"],
        "metrics": summary["metrics"],
        "bits_per_byte": summary["bits_per_byte"],
        "partial": summary["partial"],
        "partial_reasons": summary["partial_reasons"],
        "version": summary["version"],
    }


def generative_row(generative: GenerativeSet, info: ModelInfo) -> GenerativeRow:
    """A model's row: its cells, and the average of the six primary metrics where all six are complete
    (none partial), with standard error sqrt(sum se^2) / 6; else why there is none."""
    tasks = {}
    for task in GENERATIVE_TASKS:
        summary = generative.get(info.name, task)
        tasks[task] = None if summary is None else generative_cell(summary)
    missing = [GENERATIVE_TASKS[task].display_name for task, cell in tasks.items() if cell is None]
    partial = [
        GENERATIVE_TASKS[task].display_name for task, cell in tasks.items() if cell and cell["partial"]
    ]
    average = stderr = reason = None
    if missing or partial:
        reason = "; ".join(
            [*([f"not scored on {', '.join(missing)}"] if missing else []),
             *([f"partial on {', '.join(partial)}"] if partial else [])]
        )  # fmt: skip
        reason = f"no generative average: {reason} (it needs all {len(GENERATIVE_TASKS)} tasks, none partial)"
    else:
        cells = [cell for cell in tasks.values() if cell is not None]
        average = sum(cell["score"] for cell in cells) / len(cells)
        errors = [cell["stderr"] for cell in cells]
        if all(error is not None for error in errors):
            stderr = math.sqrt(sum(error**2 for error in errors)) / len(cells)
    return {
        "model": info.name,
        "display_name": info.display_name,
        "partial": bool(partial),
        "average": average,
        "average_stderr": stderr,
        "no_average": reason,
        "version": GENERATIVE_VERSION,
        "tasks": tasks,
    }


def bpb_cell(value: float | None, partial: bool) -> Cell:
    if value is None:
        return Cell(None, MISSING)
    return Cell(value, f"{value:.3f}" + (PARTIAL_MARK if partial else ""))


def generative_table(generative: GenerativeSet, models: list[ModelInfo]) -> Table:
    """``generative_scores``: a row per model (:func:`ordered_models`), its generative average and
    standard error, per task the primary metric (%) and its standard error, then per task bits per
    byte (lower is better), and why a model has no average."""
    tasks = list(GENERATIVE_TASKS.values())
    version = GENERATIVE_VERSION
    header = ["Model", f"Generative average ({version})", "s.e."]
    short = ["Model", "Avg.", "s.e."]
    for task in tasks:
        header += [f"{task.short_name} {METRIC_LABELS[task.primary_metric]} ({version})", "s.e."]
        short += [task.short_name, "s.e."]
    header += [f"{task.short_name} bits per byte ({version})" for task in tasks] + ["Note"]
    short += [task.short_name for task in tasks] + ["Note"]
    rows, records = [], []
    for info in ordered_models(generative, models):
        record = generative_row(generative, info)
        records.append(record)
        cells = [
            text_cell(info.display_name),
            percent_cell(record["average"]),
            percent_cell(record["average_stderr"]),
        ]
        for task in tasks:
            cell = record["tasks"][task.key]
            mark = PARTIAL_MARK if cell and cell["partial"] else ""
            cells += [
                percent_cell(cell["score"], mark) if cell else Cell(None, MISSING),
                percent_cell(cell["stderr"] if cell else None),
            ]
        for task in tasks:
            cell = record["tasks"][task.key]
            cells.append(
                bpb_cell(cell["bits_per_byte"]["value"] if cell else None, bool(cell and cell["partial"]))
            )
        cells.append(text_cell(record["no_average"] or ""))
        rows.append(cells)
    metrics = ", ".join(f"{task.short_name} {METRIC_LABELS[task.primary_metric]}" for task in tasks)
    caption = (
        f"Generative tasks ({version}): the six generative tasks AI2 standardized after the OLMES paper, "
        f"scored from greedy generations ({metrics}; %), each with its standard error (s.e.), and the "
        "gold answer's bits per byte (lower is better). The generative average is the mean of the six "
        f"primary metrics, only for a model with all six scored and none partial; its s.e. is "
        f"sqrt(sum of the six s.e.^2) / 6. It is not the OLMES score, which stays the average of the "
        f"paper's ten multiple-choice tasks (OLMES v0.1). {PARTIAL_MARK} marks a partial result."
    )
    header_groups = [
        ("", 1), (f"Average ({version})", 2), (f"Primary metric (%), {version}", 2 * len(tasks)),
        ("Bits per byte", len(tasks)), ("", 1),
    ]  # fmt: skip
    return Table(
        GENERATIVE_KEY, f"Generative tasks ({version})", caption, header, [(None, rows)], records,
        latex_header=short, header_groups=header_groups,
    )  # fmt: skip
