"""The OLMES paper's published numbers (v2), shipped as data in ``olmes/tables/paper_data/``.

The paper's results are *reported*, not computed here: no predictions, no standard errors. The
tables and the site show them beside the evaluated models, labeled, and the paper check compares an
evaluated model that regenerates a paper model cell by cell. ``paper_data/README.md`` says where the
numbers were read and how they were checked. Values are kept as the paper prints them (strings with
one decimal, a trailing dagger where MCF won); :func:`paper_value` turns one into a number.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from olmes.core.errors import OlmesError
from olmes.core.methods import CF, MCF
from olmes.core.records import LeaderboardRow, LeaderboardTask, ReportedInput
from olmes.core.resources import file_sha256
from olmes.core.tasks import TASKS

PAPER_DATA = Path(__file__).with_name("paper_data")
PAPER_SOURCE = "OLMES paper (Gu et al., arXiv:2406.08446v2)"
PAPER_URL = "https://arxiv.org/abs/2406.08446v2"
DAGGER = "\u2020"


@cache
def paper_table(name: str) -> tuple[dict[str, str], ...]:
    """The rows of ``paper_data/<name>.csv`` as dicts of strings, in the file's order."""
    path = PAPER_DATA / f"{name}.csv"
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            return tuple(csv.DictReader(handle))
    except OSError as error:
        raise OlmesError(f"{path}: cannot read the paper's data ({error}); reinstall olmes") from error


@dataclass(frozen=True)
class PaperValue:
    """One printed cell: its value in percent and whether the paper marked it with a dagger."""

    value: float
    dagger: bool


def paper_value(text: str) -> PaperValue:
    """``"56.8†"`` -> PaperValue(56.8, True)."""
    dagger = text.endswith(DAGGER)
    try:
        return PaperValue(float(text.removesuffix(DAGGER)), dagger)
    except ValueError as error:
        raise OlmesError(f"paper data: {text!r} is not a number") from error


PAPER_MODELS: tuple[str, ...] = tuple(row["model"] for row in paper_table("models"))


# -- the paper's models as typed records -------------------------------------------------------------

REPORTED_TABLE = "table13_olmes_more_models"
"""The paper table whose rows are the leaderboard's reported rows: Table 13, all 40 models (it repeats
Table 4's 15 rows unchanged)."""


@dataclass(frozen=True)
class ReportedModel:
    """One row of the paper's Table 13: a model's OLMES score per task and its average, as printed."""

    name: str
    scores: dict[str, PaperValue]  # task key -> OLMES score in percent; dagger where MCF was used
    average: PaperValue
    in_table4: bool  # Table 4 prints the same row


@cache
def reported_models() -> tuple[ReportedModel, ...]:
    """The 40 models of Table 13, in the paper's order."""
    models = []
    for row in paper_table(REPORTED_TABLE):
        missing = [task for task in TASKS if task not in row]
        if missing:
            raise OlmesError(f"paper data {REPORTED_TABLE}.csv: no column {missing[0]}; reinstall olmes")
        models.append(
            ReportedModel(
                name=row["model"],
                scores={task: paper_value(row[task]) for task in TASKS},
                average=paper_value(row["average"]),
                in_table4=row["in_table4"] == "yes",
            )
        )
    return tuple(models)


@dataclass(frozen=True)
class PaperModelTable:
    """A paper table with rows per model, as a reported model's page shows it: the CSV's fields to show
    (``task`` holds a task key) and their labels."""

    name: str  # paper_data/<name>.csv
    title: str
    columns: tuple[tuple[str, str], ...]  # (CSV field, label)

    def rows(self, model: str) -> list[dict[str, str]]:
        """The table's rows of ``model``, in the file's order (none when the paper leaves it out)."""
        return [row for row in paper_table(self.name) if row["model"] == model]


MODEL_PAGE_TABLES = (
    PaperModelTable(
        REPORTED_TABLE,
        "OLMES score per task (Table 13; Table 4 prints the same row for its 15 models)",
        (*((task, spec.short_name) for task, spec in TASKS.items()), ("average", "Average")),
    ),
    PaperModelTable(
        "table6_7_cf_mcf",
        "CF and MCF accuracy (Tables 6 and 7)",
        (("task", "Task"), (CF, "CF (recommended normalization)"), (MCF, "MCF")),
    ),
    PaperModelTable(
        "table7_averages",
        "Average scores (Table 7)",
        (("mcf_avg", "MCF average"), ("cf_avg", "CF average"), ("all", "All"), ("max", "Max")),
    ),
    PaperModelTable(
        "table9_12_normalizations",
        "CF accuracy under every normalization (Tables 9-12)",
        (
            ("task", "Task"),
            ("none", "none"),
            ("token", "token"),
            ("char", "char"),
            ("pmi", "pmi"),
            ("best", "Best"),
            ("olmes_norm", "OLMES normalization"),
            ("diff_table9", "Diff to best"),
        ),
    ),
    PaperModelTable(
        "table5_variants",
        "Prompt variants (Table 5)",
        (
            ("task", "Task"),
            ("orig", "Original"),
            ("var1", "Var 1"),
            ("var2", "Var 2"),
            ("var3", "Var 3"),
            ("avg", "Average"),
            ("diff", "Diff"),
            ("stderr", "Std. err."),
        ),
    ),
    PaperModelTable(
        "table8_mmlu_macro_micro",
        "MMLU macro vs micro average (Table 8)",
        (
            ("mcf_macro", "MCF macro"),
            ("mcf_micro", "MCF micro"),
            ("cf_macro", "CF macro"),
            ("cf_micro", "CF micro"),
        ),
    ),
)
"""Every paper table a reported model's page shows, in page order (it shows those with its rows)."""


# -- the leaderboard's reported rows ----------------------------------------------------------------

EVALUATED_SOURCE = "evaluated by olmes (per-instance predictions)"
"""The ``source`` of an evaluated row in a leaderboard that also has reported rows."""


def reported_leaderboard_rows(tasks: list[str]) -> list[LeaderboardRow]:
    """Table 13's models as leaderboard rows over ``tasks`` (scores as fractions, unranked): what the
    paper prints and nothing else, so no standard error, counts, chance, flags or ties."""
    return [_reported_row(model, tasks) for model in reported_models()]


def _reported_row(model: ReportedModel, tasks: list[str]) -> LeaderboardRow:
    return {
        "rank": None, "model": model.name, "display_name": model.name, "partial": False,
        "average": _fraction(model.average), "average_stderr": None,
        "tasks": {task: _reported_cell(model.scores[task]) for task in tasks},
        "kind": "reported", "source": PAPER_SOURCE,
    }  # fmt: skip


def _fraction(value: PaperValue) -> float:
    """A printed percentage (one decimal) as the fraction the leaderboard holds, without float noise."""
    return round(value.value / 100, 3)


def _reported_cell(value: PaperValue) -> LeaderboardTask:
    return {
        "score": _fraction(value), "stderr": None, "formulation": MCF if value.dagger else CF,
        "dagger": value.dagger, "partial": False, "cf_accuracy": None, "mcf_accuracy": None, "n": None,
        "statistically_tied_with": [], "method": None, "chance": None, "flags": [],
    }  # fmt: skip


def reported_input() -> ReportedInput:
    """Where a leaderboard's reported rows came from (the tables' ``index.json``), by SHA-256."""
    path = PAPER_DATA / f"{REPORTED_TABLE}.csv"
    return {"source": PAPER_SOURCE, "url": PAPER_URL, "table": path.name, "sha256": file_sha256(path)}
