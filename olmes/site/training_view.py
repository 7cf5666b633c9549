"""The Training pages: one that lists the checkpoint series and shows the atlas of when MCF overtakes CF,
and one per series (``training/<slug>.html``) with its charts, its transitions and the atlas.

Everything comes from the tables' training files (:mod:`olmes.tables.training`, read through
:class:`~olmes.site.inputs.TableSet`): ``training_series`` (the charts' points and bands),
``training_transitions`` (the transitions, drawn and tabled) and ``training_atlas``. A series' page
shows the transitions table's rows of that series only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from olmes.core.records import TableDocument
from olmes.site.charts import PickableChart
from olmes.site.nav_views import SiteInputs, chance, chart_data
from olmes.site.pages import slugify
from olmes.site.training_charts import figure1_spec, series_spec
from olmes.site.writer import SiteWriter
from olmes.tables.training import TRAINING_ATLAS, TRAINING_SERIES, TRAINING_TRANSITIONS, tokens_text


@dataclass(frozen=True)
class SiteSeries:
    """A checkpoint series as the site names it: its name and the slug of its page."""

    name: str
    slug: str

    @property
    def page(self) -> str:
        return f"training/{self.slug}.html"


def training_members(inputs: SiteInputs) -> list[SiteSeries]:
    """The series of the tables' ``training_series``, in its order (none: no Training pages)."""
    names = dict.fromkeys(record["series"] for record in inputs.data.tables.get(TRAINING_SERIES)["records"])
    taken: set[str] = set()
    return [SiteSeries(name, slugify(name, taken)) for name in names]


class SeriesLink(TypedDict):
    """A series as the Training page lists it: its page, how many checkpoints over which tokens, and on
    how many of its tasks MCF has overtaken CF for good."""

    name: str
    page: str
    checkpoints: int
    tokens: str  # first - last checkpoint's training tokens
    crossed: int
    tasks: int


def series_links(inputs: SiteInputs) -> list[SeriesLink]:
    tables = inputs.data.tables
    records, transitions = tables.get(TRAINING_SERIES)["records"], tables.get(TRAINING_TRANSITIONS)["records"]
    links: list[SeriesLink] = []
    for member in training_members(inputs):
        own_records = [record for record in records if record["series"] == member.name]
        tokens = {record["model"]: record["training_tokens"] for record in own_records}
        own = [record for record in transitions if record["series"] == member.name]
        links.append(
            {
                "name": member.name,
                "page": member.page,
                "checkpoints": len(tokens),
                "tokens": f"{tokens_text(min(tokens.values()))} – {tokens_text(max(tokens.values()))}",
                "crossed": sum(record["crossed"] for record in own),
                "tasks": len(own),
            }
        )
    return links


class TrainingIndexView(TypedDict):
    series: list[SeriesLink]
    transitions: TableDocument
    atlas: TableDocument


def training_index_view(inputs: SiteInputs, out: SiteWriter) -> TrainingIndexView:
    tables = inputs.data.tables
    return {
        "series": series_links(inputs),
        "transitions": tables.get(TRAINING_TRANSITIONS),
        "atlas": tables.get(TRAINING_ATLAS),
    }


class TrainingView(TypedDict):
    series: SeriesLink
    others: list[SeriesLink]  # every series, this one too (the links between the series' pages)
    measures: PickableChart | None  # every measure, a row per task
    figure1: PickableChart | None  # the paper's Figure 1: CF vs MCF
    transitions: TableDocument  # this series' rows
    not_yet: list[str]  # the tasks' names where MCF has not overtaken CF for good
    atlas: TableDocument


def training_view(inputs: SiteInputs, out: SiteWriter, member: SiteSeries) -> TrainingView:
    tables = inputs.data.tables
    records = [record for record in tables.get(TRAINING_SERIES)["records"] if record["series"] == member.name]
    transitions = own_rows(tables.get(TRAINING_TRANSITIONS), member.name)
    marks = transitions["records"], chance(inputs.data), inputs.task_names
    links = series_links(inputs)
    return {
        "series": next(link for link in links if link["name"] == member.name),
        "others": links,
        "measures": chart_data(out, "training-measures", series_spec(records, *marks)),
        "figure1": chart_data(out, "figure1", figure1_spec(records, *marks)),
        "transitions": transitions,
        "not_yet": [record["task_name"] for record in transitions["records"] if not record["crossed"]],
        "atlas": tables.get(TRAINING_ATLAS),
    }


def own_rows(table: TableDocument, series: str) -> TableDocument:
    """``table`` (one group, a record per row) with the rows of ``series`` only."""
    keep = [record["series"] == series for record in table["records"]]
    rows = [row for row, kept in zip(table["rows"], keep, strict=True) if kept]
    return {
        **table,
        "rows": rows,
        "values": [values for values, kept in zip(table["values"], keep, strict=True) if kept],
        "records": [record for record, kept in zip(table["records"], keep, strict=True) if kept],
        "groups": [{"label": None, "rows": rows, "reported": False}],
    }
