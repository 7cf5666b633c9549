"""The OLMES v0.2 generative tasks on the site: the leaderboard's generative table, the page that lists
them (``generative.html``, "OLMES v0.2 generative" in the navigation) and a page per task, each with
the task's facts (:data:`olmes.core.generative.GENERATIVE_TASKS`), its first instance's exact prompt,
every model's scores and an instance browser (the question, the gold answers and each picked model's
generation with its exact match and F1).

The numbers are the tables' ``generative_scores`` (``olmes tables --generative``), shown as they are.
The instance browser reads the per-instance Parquet beside each summary the tables were built from:
``index.json`` records those summaries (``generative_inputs``: the path as given to ``olmes tables``,
its SHA-256), the site reads them there (or where ``olmes site --generative`` says), checks both
hashes, and writes a script file per task (every instance a model has, its question and gold answers
from the task's instances file or generation request file) and per model x task (its generations),
loaded when a reader picks the model (browsers refuse ``fetch`` on ``file://``). An instance neither
file holds is still listed, its question marked as not available. Dataset text and generations reach
the page through ``textContent`` only.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from olmes.core.errors import OlmesError
from olmes.core.generative import GENERATIVE_TASKS, GENERATIVE_VERSION
from olmes.core.records.generative import (
    GENERATIVE_INSTANCES_FORMAT,
    GenerativeScoreSummary,
    read_generative_summary,
)
from olmes.core.records.tables import GenerativeRow, GenerativeScoresTable
from olmes.core.resources import file_sha256
from olmes.site.inputs import GenerationInstances, GenerationRequests, TableSet
from olmes.site.writer import SiteWriter
from olmes.tables.generative import GENERATIVE_KEY, METRIC_LABELS, load_generative

GENERATIVE_PAGE = "generative.html"
GENERATIVE_NAV = "OLMES v0.2 generative"
GENERATIVE_HEADING = f"Generative tasks ({GENERATIVE_VERSION})"
DEFAULT_PICKS = 3
"""How many models the generative instance browser shows at first (the table's first complete ones)."""


class GenerativeFacts(TypedDict):
    """A generative task's facts as its pages show them (from the registry)."""

    key: str
    name: str
    short: str
    description: str
    dataset: str
    split: str
    instances: str
    num_shots: int
    fewshot_source: str | None
    stop_sequences: list[str]  # each as a JSON string literal: whitespace visible ("\n\n")
    max_gen_toks: int
    metric: str
    primary_metric: str
    primary_label: str  # "F1" or "EM"
    version: str


def generative_facts(task: str) -> GenerativeFacts:
    spec = GENERATIVE_TASKS[task]
    return {
        "key": spec.key,
        "name": spec.display_name,
        "short": spec.short_name,
        "description": spec.description,
        "dataset": spec.dataset,
        "split": spec.split,
        "instances": spec.instances_note,
        "num_shots": spec.num_shots,
        "fewshot_source": spec.fewshot_source,
        "stop_sequences": [json.dumps(stop, ensure_ascii=False) for stop in spec.stop_sequences],
        "max_gen_toks": spec.max_gen_toks,
        "metric": spec.metric,
        "primary_metric": spec.primary_metric,
        "primary_label": METRIC_LABELS[spec.primary_metric],
        "version": GENERATIVE_VERSION,
    }


class GenerativeEntry(TypedDict):
    """A model's row of the generative table, with its page where it has one (relative to the root)."""

    record: GenerativeRow
    page: str | None


class GenerativeBoard(TypedDict):
    """The generative table as the leaderboard and the generative page show it."""

    heading: str
    version: str
    key: str  # the table's key in the tables folder (downloads)
    tasks: list[GenerativeFacts]
    rows: list[GenerativeEntry]
    table: GenerativeScoresTable


@dataclass
class GenerativeResult:
    """A model x generative task's summary, where the site read it, and its instances file."""

    summary: GenerativeScoreSummary
    path: Path
    instances: Path


class GenerativeSite:
    """The generative tasks' inputs of the site: the tables' ``generative_scores`` (None without it),
    the summaries it was built from, the tasks' generation request files and instances files."""

    def __init__(
        self,
        tables: TableSet,
        requests: dict[str, GenerationRequests],
        model_pages: dict[str, str],
        paths: list[str | Path] | None = None,
        instances: dict[str, GenerationInstances] | None = None,
    ):
        self.table: GenerativeScoresTable | None = tables.get(GENERATIVE_KEY)  # type: ignore[assignment]
        self.requests, self.model_pages = requests, model_pages
        self.instances = instances or {}
        self.records: list[GenerativeRow] = self.table["records"] if self.table else []
        self.tasks = [task for task in GENERATIVE_TASKS if any(row["tasks"][task] for row in self.records)]
        self.results = _results(tables, paths) if self.table else {}

    def board(self) -> GenerativeBoard | None:
        if self.table is None:
            return None
        return {
            "heading": GENERATIVE_HEADING,
            "version": GENERATIVE_VERSION,
            "key": GENERATIVE_KEY,
            "tasks": [generative_facts(task) for task in GENERATIVE_TASKS],
            "rows": [{"record": row, "page": self.model_pages.get(row["model"])} for row in self.records],
            "table": self.table,
        }


def _results(tables: TableSet, paths: list[str | Path] | None) -> dict[tuple[str, str], GenerativeResult]:
    """The summaries ``index.json`` records (``generative_inputs``), read where it says or where
    ``paths`` (``olmes site --generative``) hold them, each checked against its recorded SHA-256, with
    its instances file checked against the summary's."""
    recorded = {(entry["model"], entry["task"]): entry for entry in tables.index.get("generative_inputs", [])}
    if paths:
        given = load_generative(paths)
        where = dict(given.paths)
        if set(where) != set(recorded):
            raise OlmesError(
                f"{tables.folder} was built from other generative summaries than --generative gives; "
                "pass the same --generative to olmes tables and olmes site"
            )
    else:
        where = {key: Path(entry["path"]) for key, entry in recorded.items()}
    results = {}
    for key, path in sorted(where.items()):
        if not path.is_file():
            raise OlmesError(
                f"{path} (generative scores of {key[0]} on {key[1]}, as {tables.folder}/index.json records "
                "it) not found; run olmes site where olmes tables ran, or pass olmes site --generative"
            )
        if file_sha256(path) != recorded[key]["sha256"]:
            raise OlmesError(f"{path} changed after {tables.folder} was built; re-run olmes tables")
        summary = read_generative_summary(path)
        instances = path.parent / summary["instances"]["path"]
        if not instances.is_file():
            raise OlmesError(f"{path}: its instances file {instances} not found; score the task again")
        if file_sha256(instances) != summary["instances"]["sha256"]:
            raise OlmesError(f"{instances} changed after {path} was written; score the task again")
        GENERATIVE_INSTANCES_FORMAT.check_file(instances)
        results[key] = GenerativeResult(summary, path, instances)
    return results


# -- a task's page -----------------------------------------------------------------------------------


class GenerativePrompt(TypedDict):
    """The first instance's generation request, byte for byte: its shots and its query."""

    shots: str
    query: str
    native_id: str
    instance_index: int
    answers: list[str]
    path: str


class GenerativeScoreRow(TypedDict):
    display_name: str
    page: str | None
    cell: dict[str, Any]  # the table's cell (olmes.core.records.tables.GenerativeTask)


class GenerativeTaskView(TypedDict):
    """What ``task.html`` shows of a generative task."""

    facts: GenerativeFacts
    score_rows: list[GenerativeScoreRow]
    prompt: GenerativePrompt | None
    n_instances: int  # instances a model has
    n_without_text: int  # of them, those whose question neither the instances nor the request file holds
    browser: dict[str, Any]  # the generative browser's setup, as JSON


def _answer_text(answer: list[str]) -> str:
    return " | ".join(answer)


def generative_prompt(requests: GenerationRequests | None) -> GenerativePrompt | None:
    """The first row's context, split where the shots every context shares end (their last blank line)."""
    if requests is None:
        return None
    contexts = [row["context"] for row in requests.rows]
    common = os.path.commonprefix([min(contexts), max(contexts)]) if len(contexts) > 1 else ""
    cut = common.rfind("\n\n")
    shots = common[: cut + 2] if cut >= 0 else ""
    first = requests.rows[0]
    return {
        "shots": shots,
        "query": first["context"][len(shots) :],
        "native_id": first["native_id"],
        "instance_index": first["instance_index"],
        "answers": [_answer_text(answer) for answer in first["answers"]],
        "path": requests.path.name,
    }


def script_data(call: str, *arguments: Any) -> str:
    """A data script: ``OLMES_GEN.<call>(<arguments as JSON>)``, with ``<``, ``>``, ``&`` escaped."""
    from olmes.site.filters import json_script

    return f"window.OLMES_GEN && OLMES_GEN.{call}({','.join(str(json_script(a)) for a in arguments)});\n"


def _float(value) -> float | None:
    return None if value is None or value != value else round(float(value), 4)


def _instance_texts(site: GenerativeSite, task: str) -> dict[int, dict[str, Any]]:
    """Each instance's native id, question and gold answers by instance index, from the task's
    instances file and its generation request file (the request file where both hold one)."""
    texts: dict[int, dict[str, Any]] = {}
    sources: list[GenerationInstances | GenerationRequests] = []
    if task in site.instances:
        sources.append(site.instances[task])
    if task in site.requests:
        sources.append(site.requests[task])
    for source in sources:
        for item in source.rows:
            texts[item["instance_index"]] = {
                "id": item["native_id"],
                "q": item["question"],
                "a": [_answer_text(answer) for answer in item["answers"]],
            }
    return texts


def task_page(site: GenerativeSite, out: SiteWriter, task: str) -> GenerativeTaskView:
    """The generative task's page: its facts, scores, prompt, and its browser's data files."""
    import pyarrow.parquet as pq

    requests = site.requests.get(task)
    models, rows = [], []
    generated: dict[int, str] = {}  # every instance a model has: its native id there
    for position, row in enumerate(site.records):
        cell = row["tasks"][task]
        if cell is None:
            continue
        page = site.model_pages.get(row["model"])
        rows.append({"display_name": row["display_name"], "page": page, "cell": cell})
        result = site.results.get((row["model"], task))
        if result is None:
            continue
        frame = pq.read_table(
            result.instances,
            columns=["instance_index", "native_id", "generation", "exact_match", "f1", "extracted"],
        ).to_pylist()
        data = {
            str(item["instance_index"]): [
                item["generation"],
                _float(item["exact_match"]),
                _float(item["f1"]),
                item["extracted"],
            ]
            for item in frame
        }
        for item in frame:
            generated.setdefault(item["instance_index"], item["native_id"])
        file = f"tasks/{task}/generations-{position}.js"
        out.file(file, script_data("model", row["model"], data))
        models.append(
            {"name": row["model"], "display_name": row["display_name"], "file": file.split("/", 1)[1],
             "score": cell["score"], "partial": cell["partial"]}
        )  # fmt: skip
    texts = _instance_texts(site, task)
    instances = [
        {"i": index, **texts[index]} if index in texts else {"i": index, "id": native_id, "q": None, "a": []}
        for index, native_id in sorted(generated.items())
    ]  # an instance no file holds: its generations, the question marked as not available
    out.file(f"tasks/{task}/instances.js", script_data("instances", instances))
    ranked = sorted(models, key=lambda model: (model["partial"], -model["score"]))
    browser = {
        "task": task,
        "instances_file": f"{task}/instances.js",
        "models": models,
        "picked": [model["name"] for model in ranked if not model["partial"]][:DEFAULT_PICKS]
        or [model["name"] for model in ranked][:DEFAULT_PICKS],
        "has_f1": GENERATIVE_TASKS[task].primary_metric == "f1",
        "has_text": bool(texts),
    }
    return {
        "facts": generative_facts(task),
        "score_rows": rows,
        "prompt": generative_prompt(requests),
        "n_instances": len(instances),
        "n_without_text": sum(item["q"] is None for item in instances),
        "browser": browser,
    }


class GenerativeIndexView(TypedDict):
    """``generative.html``: the generative table in full (bits per byte too) and the six tasks."""

    generative: GenerativeBoard
    tables: TableSet
