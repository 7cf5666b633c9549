"""The pages of the site's navigation, in one registry: :data:`PAGES`.

Each :class:`Page` states once its path, template, navigation title, when it exists and its view (what
its template receives, a record per page); the navigation lists the pages that exist and the site
build writes them, both from here. A task made of subjects (MMLU) has a page of its own
(:class:`SubjectPages`). The model, reported-model and task pages are not in the navigation: the
site build writes them from :mod:`~olmes.site.model_view`, :mod:`~olmes.site.reported` and
:mod:`~olmes.site.task_view`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypedDict

from olmes.core.errors import OlmesError
from olmes.core.methods import NORMALIZATIONS
from olmes.core.records import LeaderboardTask, ReproductionReport
from olmes.core.tasks import TASKS
from olmes.site import charts
from olmes.site.downloads import subjects_csv
from olmes.site.pages import SiteData, SiteModel
from olmes.site.svg import static_svg
from olmes.site.task_view import SubjectColumn, SubjectRow, subject_table, subjects
from olmes.site.writer import SiteWriter
from olmes.tables.results import PARTIAL_GROUP
from olmes.tables.score_tables import table8_key

TABLE_OPEN_ROWS = 50
"""A longer table (the leaderboard, a per-model table) shows this many rows until the reader unfolds it:
the browser lays out only the rows shown, and 540 rows of 13 cells took it over a second."""
INLINE_TABLE_ROWS = 200
"""A table of comparisons (the leaderboard's paired bootstrap: a row per adjacent pair per task) is shown
in the page up to this many rows; beyond, the page links its downloads (at 500 models it has 4,990 rows,
megabytes the leaderboard would load before its first render)."""


@dataclass(frozen=True)
class SiteInputs:
    """What decides which pages exist and what they show."""

    data: SiteData
    reproduction: list[ReproductionReport]

    @property
    def has_checkpoints(self) -> bool:
        """Some model is a checkpoint of a declared series: Figure 1 has data."""
        return bool(self.data.tables.figures.get("figure1_checkpoints"))

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


@dataclass(frozen=True)
class Page:
    """One page of the navigation."""

    path: str  # relative to the site's root
    template: str
    title: str  # its navigation label
    exists: Callable[[SiteInputs], bool]
    view: View

    def pages(self, inputs: SiteInputs) -> list[Page]:
        return [self] if self.exists(inputs) else []


@dataclass(frozen=True)
class SubjectPages:
    """A page per scored task made of subjects, titled with the task's name."""

    template: str

    def pages(self, inputs: SiteInputs) -> list[Page]:
        return [
            Page(f"{task}.html", self.template, TASKS[task].display_name, _always, _subjects_view(task))
            for task in inputs.data.subject_tasks()
        ]


def site_pages(inputs: SiteInputs) -> list[Page]:
    """The pages of the navigation that exist for these inputs, in its order."""
    return [page for entry in PAGES for page in entry.pages(inputs)]


def _always(inputs: SiteInputs) -> bool:
    return True


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
    """A row of the leaderboard: its model (evaluated or reported), its cells, why it is partial."""

    model: SiteModel
    cells: dict[str, LeaderboardTask | None]
    reasons: list[str]


class LeaderboardGroup(TypedDict):
    """A group of the tables' leaderboard (complete runs; partial runs, never ranked), its rows split
    into those the page shows at first and those it holds until the reader unfolds the table."""

    partial: bool
    shown: list[LeaderboardEntry]
    later: list[LeaderboardEntry]


class LeaderboardView(TypedDict):
    rows: list[LeaderboardEntry]
    groups: list[LeaderboardGroup]
    collapsed: bool  # longer than TABLE_OPEN_ROWS: the page shows the first rows only
    has_reported: bool
    inline_table_rows: int


def leaderboard_entries(data: SiteData) -> list[LeaderboardEntry]:
    """Every row of the leaderboard table in its order, evaluated and reported alike."""
    evaluated, reported = iter(data.models), iter(data.reported_models)
    rows: list[LeaderboardEntry] = []
    for row in data.leaderboard:
        model = next(reported if row.get("kind") == "reported" else evaluated)
        reasons = [] if model.kind == "reported" else data.partial_reasons(model.name)
        rows.append({"model": model, "cells": row["tasks"], "reasons": reasons})
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


def leaderboard_view(inputs: SiteInputs, out: SiteWriter) -> LeaderboardView:
    rows = leaderboard_entries(inputs.data)
    return {
        "rows": rows,
        "groups": leaderboard_groups(inputs.data, rows),
        "collapsed": len(rows) > TABLE_OPEN_ROWS,
        "has_reported": any(row["model"].kind == "reported" for row in rows),
        "inline_table_rows": INLINE_TABLE_ROWS,
    }


# -- the pages of the paper's tables and figures -------------------------------------------------------


class NoView(TypedDict):
    """A page that shows the tables and facts every page has."""


def no_view(inputs: SiteInputs, out: SiteWriter) -> NoView:
    return {}


class NormalizationView(TypedDict):
    recommended_for: dict[str, list[str]]  # each normalization's scored tasks, in their order


def normalization_view(inputs: SiteInputs, out: SiteWriter) -> NormalizationView:
    tasks = inputs.data.tasks
    return {
        "recommended_for": {
            norm: [task for task in tasks if TASKS[task].recommended_norm == norm] for norm in NORMALIZATIONS
        }
    }


class CfMcfView(TypedDict):
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
    models = inputs.data.models
    weakest_first = [m.display_name for m in reversed(models) if not m.partial] + [
        m.display_name for m in reversed(models) if m.partial
    ]
    rows = inputs.data.tables.figures.get("figure2_cf_vs_mcf", [])
    figure2 = charts.figure2_spec(rows, weakest_first, inputs.task_names, chance(inputs.data), inputs.ranking)
    return {"figure2": chart_data(out, "figure2", figure2)}


class SubjectsView(TypedDict):
    task: str
    table8_key: str
    columns: list[SubjectColumn]  # those of the chart's first models
    subject_rows: list[SubjectRow]
    subjects_chart: charts.PickableChart | None


def _subjects_view(task: str) -> View:
    def view(inputs: SiteInputs, out: SiteWriter) -> SubjectsView:
        columns, rows, chart_rows = subjects(inputs.data, task)
        chart = chart_data(out, f"{task}-subjects", charts.subjects_spec(chart_rows, inputs.ranking))
        if chart is not None:
            out.file(f"downloads/{task}_subjects.csv", subjects_csv(columns, rows))
            columns, rows = subject_table(columns, rows, chart.shown)
        return {
            "task": task,
            "table8_key": table8_key(task),
            "columns": columns,
            "subject_rows": rows,
            "subjects_chart": chart,
        }

    return view


class CheckpointsView(TypedDict):
    figure1: charts.PickableChart | None


def checkpoints_view(inputs: SiteInputs, out: SiteWriter) -> CheckpointsView:
    rows = inputs.data.tables.figures["figure1_checkpoints"]
    figure1 = charts.figure1_spec(rows, inputs.task_names, inputs.ranking)
    return {"figure1": chart_data(out, "figure1", figure1)}


class RobustnessView(TypedDict):
    letter_bias: charts.PickableChart | None


def robustness_view(inputs: SiteInputs, out: SiteWriter) -> RobustnessView:
    letter_bias = charts.letter_bias_spec(inputs.data.tables.figures["letter_bias"], inputs.ranking)
    return {"letter_bias": chart_data(out, "letter-bias", letter_bias)}


class MethodsView(TypedDict):
    bootstrap: dict[str, int]  # the paired bootstrap's resamples and seed


def methods_view(inputs: SiteInputs, out: SiteWriter) -> MethodsView:
    return {"bootstrap": inputs.data.tables.index.get("bootstrap", {})}


PAGES: tuple[Page | SubjectPages, ...] = (
    Page("index.html", "leaderboard.html", "Leaderboard", _always, leaderboard_view),
    Page("normalization.html", "normalization.html", "Normalization", _always, normalization_view),
    Page("cf-vs-mcf.html", "cf_mcf.html", "CF vs MCF", _always, cf_mcf_view),
    SubjectPages("subjects.html"),
    Page(
        "checkpoints.html",
        "checkpoints.html",
        "Checkpoints",
        lambda inputs: inputs.has_checkpoints,
        checkpoints_view,
    ),
    Page("robustness.html", "robustness.html", "Robustness", _always, robustness_view),
    Page(
        "reproduction.html",
        "reproduction.html",
        "Reproduction",
        lambda inputs: bool(inputs.reproduction),
        no_view,
    ),
    Page("paper-check.html", "paper_check.html", "Paper check", lambda inputs: inputs.paper_checked, no_view),
    Page("methods.html", "methods.html", "Methods", _always, methods_view),
)
"""Every page of the navigation, in its order."""
