"""What a task's pages show: its scores per model and method, its prompts, its instance browser's
setup, and for a task made of subjects (MMLU) the page of its per-subject accuracies."""

from __future__ import annotations

from typing import Any, TypedDict

from olmes.core.methods import CF, MCF, METHODS
from olmes.core.records import LeaderboardTask, ScoreSummary
from olmes.core.tasks import TASKS
from olmes.scoring.predictions import NEAR_TIE_NATS
from olmes.site.charts import FORMULATION_LABELS
from olmes.site.generative import GenerativeTaskView
from olmes.site.pages import (
    MethodRow,
    SiteData,
    SiteModel,
    TaskFacts,
    method_labels,
    method_rows,
    task_facts,
)
from olmes.site.prompts import PromptBlock, prompt_blocks

DEFAULT_PICKS = 3
"""How many models the instance browser shows at first: the task's best complete runs."""


def task_methods(data: SiteData, task: str) -> list[str]:
    """The methods any model was scored with on the task, in the registry's order."""
    found = set()
    for _, summary in data.scored(task):
        found |= set(summary["methods"])
    return [method for method in METHODS if method in found]


class TaskScoreRow(TypedDict):
    """A model of the task page's score table."""

    model: SiteModel
    summary: ScoreSummary
    methods: list[MethodRow]  # the task's methods (:func:`task_methods`)
    cell: LeaderboardTask | None


def task_score_rows(data: SiteData, task: str, methods: list[str]) -> list[TaskScoreRow]:
    return [
        {
            "model": model,
            "summary": summary,
            "methods": method_rows(summary, task, methods),
            "cell": data.cell(model, task),
        }
        for model, summary in data.scored(task)
    ]


def browser_models(data: SiteData, task: str) -> list[dict]:
    """The models scored on the task, best first by its OLMES score (partial runs after the
    others, then those without a score): what the browser's model picker lists."""
    rows = []
    for model, summary in data.scored(task):
        cell = data.cell(model, task) or {}
        rows.append(
            {
                "name": model.name,
                "display_name": model.display_name,
                "slug": model.slug,
                "score": cell.get("score"),
                "partial": summary["partial"],
                "decisive": (summary.get("best_of_two") or {}).get("method"),
            }
        )
    return sorted(rows, key=lambda row: (row["partial"], row["score"] is None, -(row["score"] or 0)))


def browser_setup(
    task: str, methods: list[str], instances: list[dict], files: list[str], models: list[dict]
) -> dict[str, Any]:
    """The instance browser's setup, inlined in the task page: its methods, the ``files`` of its
    instances, the ``models`` of its picker (:func:`browser_models`, each with its data file) and
    those shown at first."""
    return {
        "task": task,
        "recommended": TASKS[task].recommended_method.key,
        "methods": methods,
        "method_labels": {method: METHODS[method].label for method in methods},
        "near_tie_nats": NEAR_TIE_NATS,
        "instance_files": files,
        "subjects": sorted({item["s"] for item in instances if "s" in item}),
        "models": models,
        "picked": [model["name"] for model in models if not model["partial"]][:DEFAULT_PICKS],
    }


class TaskView(TypedDict):
    """What ``task.html`` receives."""

    task: str
    facts: TaskFacts
    score_rows: list[TaskScoreRow]
    methods: list[str]
    prompts: list[PromptBlock]
    n_instances: int
    browser: dict[str, Any]  # the instance browser's setup (:func:`browser_setup`), as JSON
    method_labels: dict[str, str]  # every method of the registry, in its order
    display_names: dict[str, str]  # the evaluated models', by name
    generative: GenerativeTaskView | None  # an OLMES v0.2 generative task's page (the rest empty)


def generative_task_view(view: GenerativeTaskView) -> TaskView:
    """The page of an OLMES v0.2 generative task: ``task.html`` shows ``generative`` only."""
    return {
        "task": view["facts"]["key"],
        "facts": None,  # type: ignore[typeddict-item]  # the ten tasks' facts; a generative page has its own
        "score_rows": [],
        "methods": [],
        "prompts": [],
        "n_instances": view["n_instances"],
        "browser": view["browser"],
        "method_labels": {},
        "display_names": {},
        "generative": view,
    }


def task_view(
    data: SiteData, task: str, methods: list[str], browser: dict[str, Any], n_instances: int
) -> TaskView:
    return {
        "task": task,
        "facts": task_facts(task),
        "score_rows": task_score_rows(data, task, methods),
        "methods": methods,
        "prompts": prompt_blocks(data.requests, task),
        "n_instances": n_instances,
        "browser": browser,
        "method_labels": method_labels(),
        "display_names": data.display_names,
        "generative": None,
    }


# -- tasks made of subjects (MMLU) -------------------------------------------------------------------


class SubjectColumn(TypedDict):
    model: SiteModel
    label: str  # the formulation
    partial: bool


class SubjectRow(TypedDict):
    subject: str  # as shown: words, not the hub config's name
    n: int
    accuracies: list[float | None]  # a fraction per column; None where the column has no score


def subjects(data: SiteData, task: str) -> tuple[list[SubjectColumn], list[SubjectRow], list[dict]]:
    """Per-subject accuracies of a task under its recommended CF method and MCF: the table's columns
    (a model x formulation each), its rows (a subject each), and rows for the chart."""
    formulations = (
        (TASKS[task].recommended_method.key, FORMULATION_LABELS[CF]),
        (MCF, FORMULATION_LABELS[MCF]),
    )
    columns: list[SubjectColumn] = []
    by_subject: dict[str, dict] = {}
    chart_rows = []
    for model, summary in data.scored(task):
        for method, label in formulations:
            stats = summary["methods"].get(method)
            if not stats or "subjects" not in stats:
                continue
            columns.append({"model": model, "label": label, "partial": summary["partial"]})
            for subject, values in stats["subjects"].items():
                entry = by_subject.setdefault(subject, {"n": values["n"], "values": {}})
                entry["values"][len(columns) - 1] = values["accuracy"]
                chart_rows.append(
                    {
                        "subject": subject.replace("_", " "),
                        "model": model.display_name,
                        "formulation": label,
                        "accuracy": values["accuracy"],
                    }
                )
    rows: list[SubjectRow] = [
        {
            "subject": subject.replace("_", " "),
            "n": by_subject[subject]["n"],
            "accuracies": [by_subject[subject]["values"].get(k) for k in range(len(columns))],
        }
        for subject in sorted(by_subject)
    ]
    return columns, rows, chart_rows


def subject_table(
    columns: list[SubjectColumn], rows: list[SubjectRow], shown: list[str]
) -> tuple[list[SubjectColumn], list[SubjectRow]]:
    """The per-subject table's columns and rows for the models ``shown`` (display names) only: the
    chart's first models; the page adds a picked model's columns, the CSV download holds them all."""
    keep = [k for k, column in enumerate(columns) if column["model"].display_name in shown]
    return [columns[k] for k in keep], [
        {**row, "accuracies": [row["accuracies"][k] for k in keep]} for row in rows
    ]
