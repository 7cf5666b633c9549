"""The one loop of the tables with a row per model: rows = models (complete group first, then partial
runs), columns = per-task quantities in a given order, then averages over the tasks.

Both kinds of such tables use it: the score tables (:mod:`olmes.tables.score_tables`, one column per
task, a :class:`TaskCell`) and the paper's layouts (:mod:`olmes.tables.paper_layouts`, several
columns per task, a :class:`Column` each).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from olmes.core.records import ScoreSummary
from olmes.tables.render import MISSING, PARTIAL_MARK, Cell, Table, percent, percent_cell, text_cell
from olmes.tables.results import PARTIAL_GROUP, PARTIAL_NOTE, ModelInfo, ScoreSet, task_name, task_short_name

CellFn = Callable[[dict], tuple[float | None, str, dict]]
"""summary -> (value, display text, record fields) for one model x task cell."""


@dataclass(frozen=True)
class TaskCell:
    """The one column of a task in a score table: ``cell`` gives its value, text and record fields;
    its record is ``{"value", "partial", **fields}``, none where the model has no summary."""

    task: str
    cell: CellFn

    @property
    def header(self) -> str:
        return task_name(self.task)

    @property
    def latex(self) -> str:
        return task_short_name(self.task)

    def show(self, summary: ScoreSummary | None) -> tuple[Cell, dict | None]:
        value, text, fields = self.cell(summary) if summary is not None else (None, MISSING, {})
        marked = summary is not None and summary["partial"] and text != MISSING
        record = None if summary is None else {"value": value, "partial": summary["partial"], **fields}
        return Cell(value, text + (PARTIAL_MARK if marked else "")), record


@dataclass(frozen=True)
class Column:
    """One column of a layout: one quantity of one task. ``value`` reads it from the task's summary;
    ``show`` writes it (percent by default)."""

    task: str
    field: str  # its key in the JSON records
    label: str  # its header under the task's name
    value: Callable[[ScoreSummary], float | list[str] | None]
    show_value: Callable[[float | list[str] | None], str] = percent

    @property
    def header(self) -> str:
        return f"{task_name(self.task)} {self.label}"

    @property
    def latex(self) -> str:
        return self.label

    def show(self, summary: ScoreSummary | None) -> tuple[Cell, dict | None]:
        value = None if summary is None else self.value(summary)
        mark = PARTIAL_MARK if summary is not None and summary["partial"] and value is not None else ""
        cell = Cell(None if isinstance(value, list) else value, self.show_value(value) + mark)
        return cell, {self.field: value}


class ModelScores(Protocol):
    """What the loop reads of its models' results: a :class:`~olmes.tables.results.ScoreSet`, or the
    accuracies a paper prints (:class:`~olmes.tables.reported_scores.ReportedScores`)."""

    models: list[ModelInfo]

    def get(self, model: str, task: str) -> ScoreSummary | None: ...
    def model_is_partial(self, model: str) -> bool: ...
    def complete_on_all_tasks(self, model: str) -> bool: ...


Averages = dict[str, Callable[[str], float | None]]
"""Average columns by label: each a function of a model, called only for models complete on every task."""


@dataclass(frozen=True)
class ReportedRows:
    """A paper's models as a table's last model group (``REPORTED_GROUP``), with their averages."""

    scores: ModelScores
    averages: Averages
    label: str
    summary_label: str = ""  # the group of ``summary_rows`` over these models
    summary_rows: list[tuple[str, list[Cell], dict]] = ()


def model_table(
    scores: ScoreSet,
    key: str,
    title: str,
    caption: str,
    columns: list[TaskCell] | list[Column],
    averages: Averages | None = None,
    *,
    average_cell: Callable[[float | None], Cell] = percent_cell,
    summary_rows: list[tuple[str, list[Cell], dict]] = (),
    header_groups: bool = False,
    reported: ReportedRows | None = None,
) -> Table:
    """Rows = models (complete group first, then partial runs, then the ``reported`` models), columns =
    ``columns`` in the given order, then the ``averages`` (each a function of the model, called only
    for models complete on every task; otherwise the column shows "—"). A model's record holds each
    column's fields under its task (``tasks``) and the averages by label under ``averages`` (empty
    where the table has none): one record shape for every such table (olmes.table/3); a reported
    model's record adds ``kind: "reported"``. ``summary_rows`` (label, cells, record) close the table
    as a group of their own, those of the reported models after them; ``header_groups`` spans each
    task's name over its columns in LaTeX."""
    averages = averages or {}
    grouped: dict[str | None, list[list[Cell]]] = {None: [], PARTIAL_GROUP: []}
    records = []
    for info in scores.models:
        found = _model_row(scores, info, columns, averages, average_cell)
        if found is not None:
            grouped[PARTIAL_GROUP if found[1]["partial"] else None].append(found[0])
            records.append(found[1])
    if reported is not None:
        if list(reported.averages) != list(averages):
            raise RuntimeError(f"{key}: its reported rows need the averages {list(averages)}")
        grouped[reported.label] = []
        for info in reported.scores.models:
            found = _model_row(reported.scores, info, columns, reported.averages, average_cell)
            if found is not None:
                grouped[reported.label].append(found[0])
                records.append({**found[1], "kind": "reported"})
    groups = [(label, rows) for label, rows in grouped.items() if rows]
    reported_labels = () if reported is None else (reported.label,)
    if summary_rows:
        groups.append((None, [cells for _, cells, _ in summary_rows]))
        records += [{"summary": label, **record} for label, _, record in summary_rows]
    if reported is not None and reported.summary_rows:
        groups.append((reported.summary_label, [cells for _, cells, _ in reported.summary_rows]))
        records += [
            {"summary": label, "kind": "reported", **record} for label, _, record in reported.summary_rows
        ]
        reported_labels += (reported.summary_label,)
    header = ["Model"] + [column.header for column in columns] + list(averages)
    latex = ["Model"] + [column.latex for column in columns] + list(averages)
    spans = None
    if header_groups:
        spans = [("", 1)] + _spans([task_short_name(column.task) for column in columns])
        spans += [("Average", len(averages))] if averages else []
    return Table(
        key, title, caption + " " + PARTIAL_NOTE, header, groups, records,
        latex_header=latex, header_groups=spans,
        reported_labels=reported_labels,
    )  # fmt: skip


def _model_row(
    scores: ModelScores,
    info: ModelInfo,
    columns: list[TaskCell] | list[Column],
    averages: Averages,
    average_cell: Callable[[float | None], Cell],
) -> tuple[list[Cell], dict] | None:
    """A model's row and record; None when it has none of the columns' tasks."""
    summaries = {column.task: scores.get(info.name, column.task) for column in columns}
    if all(summary is None for summary in summaries.values()):
        return None
    partial = scores.model_is_partial(info.name)
    row = [text_cell(info.display_name + (" (partial)" if partial else ""))]
    record = {"model": info.name, "display_name": info.display_name, "partial": partial, "tasks": {}}
    for column in columns:
        cell, fields = column.show(summaries[column.task])
        row.append(cell)
        if fields is not None:
            record["tasks"].setdefault(column.task, {}).update(fields)
    complete = scores.complete_on_all_tasks(info.name)
    written = record["averages"] = {}
    for label, average in averages.items():
        value = average(info.name) if complete else None
        row.append(average_cell(value))
        written[label] = value
    return row, record


def _spans(labels: list[str]) -> list[tuple[str, int]]:
    """Consecutive equal labels as (label, count): the task names spanning their columns."""
    spans: list[tuple[str, int]] = []
    for label in labels:
        if spans and spans[-1][0] == label:
            spans[-1] = (label, spans[-1][1] + 1)
        else:
            spans.append((label, 1))
    return spans
