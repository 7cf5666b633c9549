"""What a reported model's page shows: the OLMES paper's own numbers for it, as the paper prints them.

A reported row of the leaderboard (``olmes tables --reported``) has no predictions behind it, so its
page is the paper's tables (:data:`olmes.tables.reported.MODEL_PAGE_TABLES`) cut to that model: only
those that have rows for it, the printed strings unchanged, a task key shown as the task's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from olmes.core.errors import OlmesError
from olmes.core.tasks import TASKS
from olmes.site.pages import SiteModel
from olmes.tables.reported import (
    MODEL_PAGE_TABLES,
    PAPER_SOURCE,
    PAPER_URL,
    PaperModelTable,
    paper_value,
)


@dataclass(frozen=True)
class PaperSection:
    """One paper table's rows of one model, ready to show."""

    key: str  # the paper data file, without .csv
    title: str
    header: list[str]
    rows: list[list[str]]
    numeric: list[bool]  # per column: every cell a number (aligned and shown as one)


class ReportedView(TypedDict):
    """What ``reported.html`` receives."""

    model: SiteModel
    sections: list[PaperSection]
    url: str  # the paper's
    paper_source: str  # how the pages name the paper


def reported_view(model: SiteModel) -> ReportedView:
    return {
        "model": model,
        "sections": paper_sections(model.name),
        "url": PAPER_URL,
        "paper_source": PAPER_SOURCE,
    }


def paper_sections(model: str) -> list[PaperSection]:
    """The paper's tables that have rows for ``model``, in :data:`MODEL_PAGE_TABLES` order."""
    sections = []
    for table in MODEL_PAGE_TABLES:
        rows = table.rows(model)
        if rows:
            sections.append(_section(table, rows))
    return sections


def _section(table: PaperModelTable, rows: list[dict[str, str]]) -> PaperSection:
    return PaperSection(
        key=table.name,
        title=table.title,
        header=[label for _, label in table.columns],
        rows=[[_shown(name, row[name]) for name, _ in table.columns] for row in rows],
        numeric=[all(_is_number(row[name]) for row in rows) for name, _ in table.columns],
    )


def _is_number(text: str) -> bool:
    try:
        paper_value(text)
    except OlmesError:
        return False
    return True


def _shown(column: str, text: str) -> str:
    return TASKS[text].display_name if column == "task" else text
