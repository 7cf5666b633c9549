"""The site's models and the facts every page shares: :class:`SiteData`, read once.

The numbers come from the score summaries (per task and method) and from the tables of
``olmes tables`` (averages and their standard errors, the paired bootstrap, the figure data);
nothing the tables computed is computed again here. The leaderboard (its order and ranks, every
cell's score, ties, chance and flags) is the ``leaderboard`` table's rows, shown as they are and
under their own field names. What one page shows is gathered by the module of its kind:
:mod:`~olmes.site.nav_views` (the leaderboard and the other pages of the navigation),
:mod:`~olmes.site.model_view`, :mod:`~olmes.site.reported`, :mod:`~olmes.site.task_view` (with
:mod:`~olmes.site.prompts` and :mod:`~olmes.site.predictions`); the downloads by
:mod:`~olmes.site.downloads`. The templates format; these modules gather.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypedDict

from olmes.core.methods import METHODS
from olmes.core.records import LeaderboardRow, LeaderboardTask, ModelIdentity, RowKind, ScoreSummary
from olmes.core.tasks import TASKS
from olmes.site.inputs import TableSet, TaskInstances, TaskRequests
from olmes.tables.results import ScoreSet


def slugify(name: str, taken: set[str]) -> str:
    """A file-name-safe, unique slug for a model name."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "model"
    slug, number = base, 2
    while slug.lower() in taken:
        slug, number = f"{base}-{number}", number + 1
    taken.add(slug.lower())
    return slug


@dataclass
class SiteModel:
    """A model as the pages show it: its row of the tables' ``leaderboard`` (rank, and Table 4's
    average and that average's standard error) and the slug of its page."""

    name: str
    display_name: str
    slug: str
    partial: bool
    average: float | None
    average_stderr: float | None
    rank: int | None = None
    kind: RowKind = "evaluated"  # "reported": a row the tables copied from the OLMES paper

    @property
    def page(self) -> str:
        """The model's page, relative to the site's root: reported models have pages of their own."""
        return f"{'reported' if self.kind == 'reported' else 'models'}/{self.slug}.html"


def reported_site_models(rows: list[LeaderboardRow]) -> list[SiteModel]:
    """The leaderboard's reported rows (``olmes tables --reported``) as models, in its order; their
    slugs are unique among themselves (their pages are a folder of their own)."""
    taken: set[str] = set()
    return [
        SiteModel(
            name=row["model"],
            display_name=row["display_name"],
            slug=slugify(row["model"], taken),
            partial=row["partial"],
            average=row["average"],
            average_stderr=row["average_stderr"],
            rank=row["rank"],
            kind="reported",
        )
        for row in rows
        if row.get("kind") == "reported"
    ]


class TaskFacts(TypedDict):
    """A task's facts as every page names and describes it (from :data:`olmes.core.tasks.TASKS`)."""

    key: str
    name: str
    short: str
    dataset: str
    split: str
    instances: str
    norm: str
    norm_formula: str
    why: str
    has_pmi: bool
    num_shots: int
    fewshot_split: str | None  # where its shots come from; None: curated by OLMES
    subjects: int  # how many subjects it averages over (0: none)


def task_facts(task: str) -> TaskFacts:
    spec = TASKS[task]
    return {
        "key": task,
        "name": spec.display_name,
        "short": spec.short_name,
        "dataset": spec.dataset,
        "split": spec.split,
        "instances": spec.instances_note,
        "norm": spec.recommended_norm,
        "norm_formula": spec.recommended_method.formula,
        "why": spec.why_norm,
        "has_pmi": spec.has_pmi,
        "num_shots": spec.num_shots,
        "fewshot_split": spec.fewshot_split,
        "subjects": len(spec.subjects),
    }


def method_labels() -> dict[str, str]:
    """Every scoring method's label by its key, in the registry's order (as a page names them)."""
    return {key: method.label for key, method in METHODS.items()}


class MethodRow(TypedDict):
    """One scoring method's numbers on a model x task, as a model page and a task page list them."""

    method: str
    accuracy: float | None  # None: the method was not scored
    se: float | None
    near_ties: int | None
    recommended: bool  # the task's recommended CF method
    decisive: bool  # the method that gives the OLMES score


def method_rows(summary: ScoreSummary, task: str, methods: Iterable[str]) -> list[MethodRow]:
    """A row per method of ``methods``, in their order, from a model x task's score summary."""
    recommended = TASKS[task].recommended_method.key
    best = summary.get("best_of_two")
    rows: list[MethodRow] = []
    for method in methods:
        stats = summary["methods"].get(method)
        rows.append(
            {
                "method": method,
                "accuracy": stats["accuracy"] if stats else None,
                "se": stats.get("stderr") if stats else None,
                "near_ties": stats.get("near_ties") if stats else None,
                "recommended": method == recommended,
                "decisive": bool(best) and best["method"] == method,
            }
        )
    return rows


class SiteData:
    """The inputs of every page, and the leaderboard's models in its order, read once."""

    def __init__(
        self,
        scores: ScoreSet,
        tables: TableSet,
        requests: dict[tuple[str, str], TaskRequests],
        instances: dict[str, TaskInstances],
    ):
        self.scores, self.tables, self.requests, self.instances = scores, tables, requests, instances
        self.tasks = list(scores.tasks)
        self.leaderboard: list[LeaderboardRow] = tables.leaderboard["records"]  # in rank order
        self.rows = [row for row in self.leaderboard if row.get("kind", "evaluated") == "evaluated"]
        self.reported_models = reported_site_models(self.leaderboard)
        taken: set[str] = set()
        slugs = {info.name: slugify(info.name, taken) for info in scores.models}
        self.models = [
            SiteModel(
                row["model"],
                row["display_name"],
                slugs.get(row["model"]) or slugify(row["model"], taken),
                row["partial"],
                row["average"],
                row["average_stderr"],
                row["rank"],
            )
            for row in self.rows
        ]
        self.by_name = {model.name: model for model in self.models}
        self.display_names = {model.name: model.display_name for model in self.models}
        self.cells = {row["model"]: row["tasks"] for row in self.rows}
        self.infos = {info.name: info for info in scores.models}

    def identity(self, name: str) -> ModelIdentity | None:
        """What the model is (weights, tuning, format), as its runs recorded it; None where not recorded."""
        info = self.infos.get(name)
        return info.identity if info else None

    def provenance(self, name: str) -> str | None:
        """How far the model's results were checked (its store's level); None: not from a store."""
        info = self.infos.get(name)
        return info.provenance if info else None

    def cell(self, model: SiteModel, task: str) -> LeaderboardTask | None:
        """The model's leaderboard cell on a task, as the tables wrote it; None where not scored."""
        return self.cells[model.name].get(task)

    def flags(self, model: str) -> list[dict]:
        """The flags of a model on every task, from the tables' flags.json."""
        return self.records_by_model["flags"].get(model, [])

    @functools.cached_property
    def records_by_model(self) -> dict[str, dict[str, list[dict]]]:
        """Records of the tables by model name, made once, so that a model page is no scan of every
        model's records: ``flags`` (flags.json), ``bpb`` (the bpb table) and ``paired_bootstrap``
        (each comparison under both its models)."""
        sources = {
            "flags": (self.tables.flags, ("model",)),
            "bpb": ((self.tables.get("bpb") or {}).get("records", []), ("model",)),
            "paired_bootstrap": (
                (self.tables.get("paired_bootstrap") or {}).get("records", []),
                ("higher", "lower"),
            ),
        }
        indexes: dict[str, dict[str, list[dict]]] = {}
        for what, (records, fields) in sources.items():
            index = indexes[what] = {}
            for record in records:
                for field in fields:
                    index.setdefault(record[field], []).append(record)
        return indexes

    def partial_reasons(self, name: str) -> list[str]:
        """Why a model's results are partial, a line per partial task (from its score summaries)."""
        reasons = []
        for task in self.tasks:
            summary = self.scores.get(name, task)
            if summary and summary["partial"]:
                reasons.append(f"{TASKS[task].display_name}: {'; '.join(summary['partial_reasons'])}")
        return reasons

    def scored(self, task: str) -> list[tuple[SiteModel, ScoreSummary]]:
        """The models scored on a task, in the leaderboard's order, with their score summaries."""
        found = ((model, self.scores.get(model.name, task)) for model in self.models)
        return [(model, summary) for model, summary in found if summary is not None]

    def subject_tasks(self) -> list[str]:
        """The scored tasks that are averaged over subjects: each gets a page of its subjects."""
        return [task for task in self.tasks if TASKS[task].subjects]
