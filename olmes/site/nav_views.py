"""What each page of the navigation shows: the leaderboard, the pages of the paper's tables and figures
(one per task made of subjects), robustness, reproduction, methods. Each view gathers its page's record
from :class:`SiteInputs` (and writes the page's chart data and downloads); its template formats it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypedDict

from olmes.core import numerics
from olmes.core.errors import OlmesError
from olmes.core.identities import identity_line
from olmes.core.methods import METHODS, NORMALIZATIONS
from olmes.core.records import LeaderboardRow, LeaderboardTask, ReproductionReport
from olmes.core.tasks import TASKS
from olmes.scoring.predictions import NEAR_TIE_NATS
from olmes.site import charts
from olmes.site.browser_files import DataFiles
from olmes.site.downloads import subjects_csv
from olmes.site.generative import GenerativeBoard, GenerativeIndexView, GenerativeSite
from olmes.site.inputs import TableSet
from olmes.site.letter_bias_chart import letter_bias_spec
from olmes.site.pages import SiteData, SiteModel, TaskFacts, method_labels, task_facts
from olmes.site.predictions import BrowserData
from olmes.site.svg import static_svg
from olmes.site.task_view import SubjectColumn, SubjectRow, subject_table, subjects
from olmes.site.writer import SiteWriter
from olmes.tables.reported import PAPER_SOURCE
from olmes.tables.results import PARTIAL_GROUP
from olmes.tables.score_tables import table8_key
from olmes.tables.signal_noise import SignalNoiseTerms, signal_noise_terms

TABLE_OPEN_ROWS = 50
"""A longer table (the leaderboard, a per-model table) shows this many rows until the reader unfolds it:
the browser lays out only the rows shown, and 540 rows of 13 cells took it over a second."""
INLINE_TABLE_ROWS = 200
"""A table of comparisons (the leaderboard's paired bootstrap: a row per adjacent pair per task) is shown
in the page up to this many rows; beyond, the page links its downloads (at 500 models it has 4,990 rows,
megabytes the leaderboard would load before its first render)."""


@dataclass(frozen=True)
class SiteInputs:
    """What decides which pages exist and what they show, and the previous site's browser data files
    that the task pages may reuse."""

    data: SiteData
    reproduction: list[ReproductionReport]
    data_files: DataFiles
    browser: BrowserData
    generative: GenerativeSite  # the OLMES v0.2 generative tasks (none without olmes tables --generative)

    @property
    def paper_checked(self) -> bool:
        """Some evaluated model regenerates a paper model: the tables' paper check has a summary row."""
        return bool(self.data.tables.get("paper_check_summary")["records"])

    @property
    def ranking(self) -> list[str]:
        """Display names, strongest first: who a chart draws first."""
        return [model.display_name for model in self.data.models]

    @property
    def task_names(self) -> list[str]:
        return [TASKS[task].display_name for task in self.data.tasks]


View = Callable[[SiteInputs, SiteWriter], Mapping[str, Any]]
"""What a page's template receives; it may write the page's data files (a chart's, a download)."""


def chart_data(
    out: SiteWriter, chart_id: str, chart: charts.PickableChart | None
) -> charts.PickableChart | None:
    """Write ``charts/<chart_id>.js``, the rows of the models a reader can add to the chart (when
    there are any), and return the chart for its page, with its first state drawn as SVG."""
    if chart is None:
        return None
    if chart.others:
        out.file(f"charts/{chart_id}.js", chart.data_script(chart_id))
    return replace(chart, svg=static_svg(chart.spec, chart_id))


# -- the leaderboard ---------------------------------------------------------------------------------


class LeaderboardEntry(TypedDict):
    """A row of the leaderboard: its model (evaluated or reported), its cells, why it is partial, what
    the model is (one line) and how far its results were checked."""

    model: SiteModel
    cells: dict[str, LeaderboardTask | None]
    record: LeaderboardRow  # the tables' row: its rank's and average's intervals, its tie group
    reasons: list[str]
    identity: str
    provenance: str | None


class LeaderboardGroup(TypedDict):
    """A group of the tables' leaderboard (complete runs; partial runs, never ranked), its rows split
    into those the page shows at first and those it holds until the reader unfolds the table."""

    partial: bool
    shown: list[LeaderboardEntry]
    later: list[LeaderboardEntry]


class TieGroup(TypedDict):
    """A tie group of the leaderboard (olmes/tables/rank_intervals.py): the ranks it spans."""

    first: int
    last: int
    size: int


class LeaderboardView(TypedDict):
    rows: list[LeaderboardEntry]
    groups: list[LeaderboardGroup]
    tie_groups: dict[int, TieGroup]  # by number
    collapsed: bool  # longer than TABLE_OPEN_ROWS: the page shows the first rows only
    has_reported: bool
    inline_table_rows: int
    tables: TableSet
    reproduction: list[ReproductionReport]
    task_count: int  # the standard's tasks: an average needs them all
    method_labels: dict[str, str]
    display_names: dict[str, str]  # the evaluated models', by name
    paper_source: str
    generative: GenerativeBoard | None  # the generative tasks' table (OLMES v0.2), where built


def leaderboard_entries(data: SiteData) -> list[LeaderboardEntry]:
    """Every row of the leaderboard table in its order, evaluated and reported alike."""
    evaluated, reported = iter(data.models), iter(data.reported_models)
    rows: list[LeaderboardEntry] = []
    for row in data.leaderboard:
        model = next(reported if row.get("kind") == "reported" else evaluated)
        reasons = [] if model.kind == "reported" else data.partial_reasons(model.name)
        rows.append(
            {
                "model": model,
                "cells": row["tasks"],
                "record": row,
                "reasons": reasons,
                "identity": identity_line(data.identity(model.name)),
                "provenance": data.provenance(model.name),
            }
        )
    return rows


def leaderboard_groups(data: SiteData, rows: list[LeaderboardEntry]) -> list[LeaderboardGroup]:
    """``rows`` (in the table's order) cut into the table's groups; of a long table, the first
    :data:`TABLE_OPEN_ROWS` rows of all groups together are shown at first."""
    table = data.tables.leaderboard
    if sum(len(group["rows"]) for group in table["groups"]) != len(rows):
        raise OlmesError(f"{data.tables.folder}/leaderboard.json: its groups do not hold its records")
    groups: list[LeaderboardGroup] = []
    start = 0
    for group in table["groups"]:
        members = rows[start : start + len(group["rows"])]
        first = max(TABLE_OPEN_ROWS - start, 0)
        groups.append(
            {"partial": group["label"] == PARTIAL_GROUP, "shown": members[:first], "later": members[first:]}
        )
        start += len(members)
    return groups


def tie_groups(rows: list[LeaderboardRow]) -> dict[int, TieGroup]:
    """The leaderboard's tie groups, by number, from its ranked rows (in rank order)."""
    found: dict[int, TieGroup] = {}
    for row in rows:
        if row["tie_group"] is not None:
            group = found.setdefault(row["tie_group"], {"first": row["rank"], "last": row["rank"], "size": 0})
            group["last"], group["size"] = row["rank"], group["size"] + 1
    return found


def leaderboard_view(inputs: SiteInputs, out: SiteWriter) -> LeaderboardView:
    rows = leaderboard_entries(inputs.data)
    return {
        "rows": rows,
        "groups": leaderboard_groups(inputs.data, rows),
        "tie_groups": tie_groups(inputs.data.leaderboard),
        "collapsed": len(rows) > TABLE_OPEN_ROWS,
        "has_reported": any(row["model"].kind == "reported" for row in rows),
        "inline_table_rows": INLINE_TABLE_ROWS,
        "tables": inputs.data.tables,
        "reproduction": inputs.reproduction,
        "task_count": len(TASKS),
        "method_labels": method_labels(),
        "display_names": inputs.data.display_names,
        "paper_source": PAPER_SOURCE,
        "generative": inputs.generative.board(),
    }


def generative_index_view(inputs: SiteInputs, out: SiteWriter) -> GenerativeIndexView:
    board = inputs.generative.board()
    if board is None:
        raise OlmesError("the generative page exists only with the tables' generative_scores")
    return {"generative": board, "tables": inputs.data.tables}


# -- the pages of the paper's tables and figures -------------------------------------------------------


class TablesView(TypedDict):
    """A page that shows tables of ``olmes tables`` (and the facts every page has)."""

    tables: TableSet


def tables_view(inputs: SiteInputs, out: SiteWriter) -> TablesView:
    return {"tables": inputs.data.tables}


def normalization_methods() -> list[tuple[str, str]]:
    """(normalization, formula) of each CF method, in the registry's order."""
    return [(method.normalization, method.formula) for method in METHODS.values() if method.normalization]


class NormalizationView(TypedDict):
    tables: TableSet
    normalizations: list[tuple[str, str]]  # (normalization, formula) of each CF method
    recommended_for: dict[str, list[str]]  # each normalization's scored tasks, in their order


def normalization_view(inputs: SiteInputs, out: SiteWriter) -> NormalizationView:
    tasks = inputs.data.tasks
    return {
        "tables": inputs.data.tables,
        "normalizations": normalization_methods(),
        "recommended_for": {
            norm: [task for task in tasks if TASKS[task].recommended_norm == norm] for norm in NORMALIZATIONS
        },
    }


class CfMcfView(TypedDict):
    tables: TableSet
    figure2: charts.PickableChart | None


def chance(data: SiteData) -> dict[str, float]:
    """Accuracy of guessing per task (percent), by task display name: the leaderboard cell's
    ``chance`` of the first model (in rank order) scored on the task."""
    out = {}
    for task in data.tasks:
        cell = next((cells[task] for cells in data.cells.values() if cells.get(task)), None)
        if cell is not None:
            out[TASKS[task].display_name] = round(100 * cell["chance"], 2)
    return out


def cf_mcf_view(inputs: SiteInputs, out: SiteWriter) -> CfMcfView:
    rows = inputs.data.tables.figures.get("figure2_cf_vs_mcf", [])
    figure2 = chart_data(
        out, "figure2", charts.figure2_spec(rows, inputs.task_names, chance(inputs.data), inputs.ranking)
    )
    if figure2 is not None:  # the figure as drawn at first, for a paper or a slide
        out.file(FIGURE2_SVG, figure2.svg)
    return {"tables": inputs.data.tables, "figure2": figure2}


FIGURE2_SVG = "downloads/figure2_cf_vs_mcf.svg"


class SubjectsView(TypedDict):
    tables: TableSet
    task: str
    facts: TaskFacts
    table8_key: str
    columns: list[SubjectColumn]  # those of the chart's first models
    subject_rows: list[SubjectRow]
    subjects_chart: charts.PickableChart | None


def subjects_view(inputs: SiteInputs, out: SiteWriter, member: str) -> SubjectsView:
    task = member
    columns, rows, chart_rows = subjects(inputs.data, task)
    chart = chart_data(out, f"{task}-subjects", charts.subjects_spec(chart_rows, inputs.ranking))
    if chart is not None:
        out.file(f"downloads/{task}_subjects.csv", subjects_csv(columns, rows))
        columns, rows = subject_table(columns, rows, chart.shown)
    return {
        "tables": inputs.data.tables,
        "task": task,
        "facts": task_facts(task),
        "table8_key": table8_key(task),
        "columns": columns,
        "subject_rows": rows,
        "subjects_chart": chart,
    }


class RobustnessView(TypedDict):
    tables: TableSet
    letter_bias: charts.PickableChart | None


def robustness_view(inputs: SiteInputs, out: SiteWriter) -> RobustnessView:
    letter_bias = letter_bias_spec(inputs.data.tables.figures["letter_bias"], inputs.ranking)
    return {"tables": inputs.data.tables, "letter_bias": chart_data(out, "letter-bias", letter_bias)}


class ErrorModel(TypedDict):
    """The float error model (:mod:`olmes.core.numerics`): nats per token, and relative to the sum."""

    token_nats: float
    relative: float


def error_model() -> ErrorModel:
    return {"token_nats": numerics.TOKEN_NATS, "relative": numerics.RELATIVE}


class ReproductionView(TypedDict):
    reproduction: list[ReproductionReport]
    display_names: dict[str, str]  # model -> its display name (a report names the store folder)
    error_model: ErrorModel


def reproduction_view(inputs: SiteInputs, out: SiteWriter) -> ReproductionView:
    names = {model.name: model.display_name for model in inputs.data.models}
    return {"reproduction": inputs.reproduction, "display_names": names, "error_model": error_model()}


class MethodsView(TypedDict):
    tables: TableSet
    bootstrap: dict[str, int]  # the paired bootstrap's resamples and seed
    task_count: int
    normalizations: list[tuple[str, str]]  # (normalization, formula) of each CF method
    tasks_by_norm: dict[str, list[str]]  # the standard's tasks' names by recommended normalization
    subject_tasks: list[tuple[str, int]]  # (name, subjects) of the standard's tasks made of subjects
    near_tie_nats: float
    error_model: ErrorModel
    top_models: int  # how many models a chart draws at first
    signal_noise: SignalNoiseTerms  # the settings of the table task_signal_noise


def methods_view(inputs: SiteInputs, out: SiteWriter) -> MethodsView:
    by_norm: dict[str, list[str]] = {}
    for spec in TASKS.values():
        by_norm.setdefault(spec.recommended_norm, []).append(spec.display_name)
    return {
        "tables": inputs.data.tables,
        "bootstrap": inputs.data.tables.index.get("bootstrap", {}),
        "task_count": len(TASKS),
        "normalizations": normalization_methods(),
        "tasks_by_norm": by_norm,
        "subject_tasks": [
            (spec.display_name, len(spec.subjects)) for spec in TASKS.values() if spec.subjects
        ],
        "near_tie_nats": NEAR_TIE_NATS,
        "error_model": error_model(),
        "top_models": charts.TOP_MODELS,
        "signal_noise": signal_noise_terms(),
    }
