"""What an evaluated model's page shows: every task's scorings, its runs, its comparisons, its flags.

The run records shown are the engine's (olmes/logprobs/runner.py, run_record and score_file), as the
score summaries carry them; an imported run's has only what the other implementation recorded.
"""

from __future__ import annotations

from typing import Any, TypedDict

from olmes.core.identities import identity_facts
from olmes.core.methods import MCF, METHODS
from olmes.core.records import LeaderboardTask, ScoreSummary
from olmes.core.tasks import TASKS
from olmes.scoring.predictions import NEAR_TIE_NATS
from olmes.site.pages import MethodRow, SiteData, SiteModel, method_labels, method_rows

RUN_HEADLINE = (
    (
        "Computed by",
        "imported",
        lambda imported: (
            f"{imported['implementation']}"
            + (f" at commit {imported['commit']}" if imported.get("commit") else "")
            + ", imported (olmes import)"
        ),
    ),
    ("Revision", "model_revision", str),
    ("dtype", "dtype", str),
    ("Device", "device", str),
    ("Scoring path", "scoring_path", str),
    ("Wall time", "wall_time_s", lambda seconds: f"{seconds:.1f} s"),
    ("Tokens forwarded", "tokens_forwarded", lambda tokens: f"{tokens:,} tokens forwarded"),
    ("Peak memory", "peak_rss_bytes", lambda size: f"{size / 2**30:.2f} GiB peak memory"),
)
"""(label, run record key, format) of what a leaderboard reader wants to know about a run."""


ENGINE_ONLY = frozenset({"scoring_path", "tokens_forwarded", "peak_rss_bytes"})
"""What only olmes's engine measures: an imported run's record has nothing true to show there."""


def run_summary(record: dict | None) -> dict[str, str]:
    """The headline fields of a run record (those it has), formatted, by label."""
    record = record or {}
    skipped = ENGINE_ONLY if "imported" in record else frozenset()
    return {
        label: show(record[key])
        for label, key, show in RUN_HEADLINE
        if record.get(key) is not None and key not in skipped
    }


def run_record_rows(record: dict | None) -> list[tuple[str, str]]:
    """Every key of a run record as (key, text), in its order; ``versions`` gives one row a package."""
    rows = []
    for key, value in (record or {}).items():
        items = (
            [(f"{key}.{name}", item) for name, item in value.items()]
            if isinstance(value, dict)
            else [(key, value)]
        )
        rows += [(name, "" if item is None else str(item)) for name, item in items]
    return rows


class RunView(TypedDict):
    """One request set's log-prob run of a model x task."""

    request_set: str
    path: str | None
    sha256: str | None
    summary: dict[str, str]  # the headline fields, by label
    record: list[tuple[str, str]]  # every field of the run record


class ModelTaskRow(TypedDict):
    """A task of the model's table: every method's accuracy, the leaderboard cell, its runs."""

    task: str
    name: str
    summary: ScoreSummary
    methods: list[MethodRow]  # every method of the registry
    cell: LeaderboardTask | None
    runs: list[RunView]
    mcf_near_ties: int | None
    bpb: float | None


class Comparison(TypedDict):
    """A paired bootstrap comparison of the model with a neighbour on one task."""

    task: str  # the task's display name
    above: bool  # the model is the higher of the two
    other: SiteModel | None  # None: the other model has no page here
    other_name: str
    difference: float | None
    low: float | None
    high: float | None
    tied: bool | None
    n: int


class ModelView(TypedDict):
    """What ``model.html`` receives."""

    model: SiteModel
    rows: list[ModelTaskRow]
    comparisons: list[Comparison]
    reasons: list[str]  # why the model's results are partial
    flags: list[dict[str, Any]]
    identity: list[tuple[str, str]] | None  # what was evaluated; None where not recorded
    provenance: str | None  # how far its results were checked; None: not from a store
    method_labels: dict[str, str]  # every method of the registry, in its order
    task_count: int  # the standard's tasks: an average needs them all
    near_tie_nats: float
    display_names: dict[str, str]  # the evaluated models', by name


def model_view(data: SiteData, model: SiteModel) -> ModelView:
    identity = data.identity(model.name)
    return {
        "model": model,
        "rows": model_rows(data, model),
        "comparisons": comparisons(data, model),
        "reasons": data.partial_reasons(model.name),
        "flags": data.flags(model.name),
        "identity": identity_facts(identity) if identity else None,
        "provenance": data.provenance(model.name),
        "method_labels": method_labels(),
        "task_count": len(TASKS),
        "near_tie_nats": NEAR_TIE_NATS,
        "display_names": data.display_names,
    }


def model_rows(data: SiteData, model: SiteModel) -> list[ModelTaskRow]:
    rows: list[ModelTaskRow] = []
    for task in data.tasks:
        summary = data.scores.get(model.name, task)
        if summary is None:
            continue
        rows.append(
            {
                "task": task,
                "name": TASKS[task].display_name,
                "summary": summary,
                "methods": method_rows(summary, task, METHODS),
                "cell": data.cell(model, task),
                "runs": _runs(summary),
                "mcf_near_ties": summary["methods"].get(MCF, {}).get("near_ties"),
                "bpb": bpb(data, model.name, task),
            }
        )
    return rows


def _runs(summary: ScoreSummary) -> list[RunView]:
    runs: list[RunView] = []
    for request_set, record in (summary.get("inputs") or {}).items():
        run = record.get("run")
        runs.append(
            {
                "request_set": request_set,
                "path": record.get("path"),
                "sha256": record.get("sha256"),
                "summary": run_summary(run),
                "record": run_record_rows(run),
            }
        )
    return runs


def bpb(data: SiteData, model: str, task: str) -> float | None:
    """Bits per byte of the gold CF continuation, as the tables' ``bpb`` table holds it."""
    for record in data.records_by_model["bpb"].get(model, []):
        return (record["tasks"].get(task) or {}).get("value")
    return None


def comparisons(data: SiteData, model: SiteModel) -> list[Comparison]:
    rows: list[Comparison] = []
    for record in data.records_by_model["paired_bootstrap"].get(model.name, []):
        other = record["lower"] if record["higher"] == model.name else record["higher"]
        rows.append(
            {
                "task": TASKS[record["task"]].display_name,
                "above": record["higher"] == model.name,
                "other": data.by_name.get(other),
                "other_name": other,
                "difference": record["difference"],
                "low": record["ci_low"],
                "high": record["ci_high"],
                "tied": record["tied"],
                "n": record["n_shared"],
            }
        )
    return rows
