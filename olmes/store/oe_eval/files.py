"""The run folder of AI2's OLMES implementation ("oe-eval": the ``olmes`` command of allenai/olmes).

Per task of a run it writes ``task-NNN-<task>-metrics.json`` (the task's and model's configuration,
``num_instances``, ``metrics``), ``task-NNN-<task>-predictions.jsonl`` (per instance, each choice's
``sum_logits``, ``num_tokens``, ``num_chars``, ``is_greedy`` and, for a cloze run with unconditional
requests, ``sum_logits_uncond``) and ``task-NNN-<task>-requests.jsonl`` (every request's exact
context and continuation; the unconditional ones at ``doc_id`` + ``uncond_docid_offset``), and for
the whole run ``metrics.json`` and ``metrics-all.jsonl`` (docs/oe-eval.md). This module reads and
writes those files and names what corresponds to what; it computes no score.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from olmes.core.bounded_json import parse_json
from olmes.core.errors import OlmesError
from olmes.core.generative import GENERATIVE_TASKS, GenerativeTask
from olmes.core.methods import CF, MCF, MCF_METHOD, Formulation, cf_method
from olmes.core.resources import file_sha256
from olmes.core.tasks import TASKS, Task

IMPLEMENTATION = "oe-eval"
EXPORTED = "olmes export"  # the implementation named in files olmes wrote (olmes export oe-eval)
EXPORT_MARK = "olmes_export"  # the key of a metrics file olmes wrote, naming the olmes version
UNCOND_OFFSET = 1_000_000  # its default metric_kwargs.uncond_docid_offset
FORMULATIONS: dict[str, Formulation] = {"rc": CF, "mc": MCF}  # its name of a formulation -> ours
REGIME = "olmes"  # the aliases of the OLMES standard's runs end in "::olmes"
CF_METRICS = {"acc_raw": "none", "acc_per_token": "token", "acc_per_char": "char", "acc_uncond": "pmi"}
"""Its cloze metrics -> our normalization."""
FILE_KINDS = ("metrics.json", "requests.jsonl", "predictions.jsonl")
RUN_FILES = ("metrics.json", "metrics-all.jsonl")  # the whole run's summary and task groups
MODEL_FIELDS = ("model", "model_path")  # what a model_config says of the model: its name, where it was loaded
_METRICS_FILE = re.compile(r"task-(\d+)-(.+)-metrics\.json")


def metric_methods(formulation: Formulation) -> dict[str, str]:
    """Its metrics of a formulation's run -> our scoring method's key."""
    if formulation == MCF:
        return {"acc_raw": MCF_METHOD.key}
    return {metric: cf_method(norm).key for metric, norm in CF_METRICS.items()}


def alias(task: Task, formulation: Formulation, subject: str | None) -> str:
    """Its alias of one task part's run: ``arc_challenge:rc::olmes``, ``mmlu_anatomy:mc::olmes``."""
    name = task.oe_eval_name if subject is None else f"{task.oe_eval_name}_{subject}"
    short = next(key for key, value in FORMULATIONS.items() if value == formulation)
    return f"{name}:{short}::{REGIME}"


_PARTS = {name: (task, subject) for task in TASKS.values() for name, subject in task.oe_eval_names.items()}
GENERATIVE_ALIASES = {task.oe_eval_alias: task for task in GENERATIVE_TASKS.values()}
"""The OLMES v0.2 generative tasks by the alias of their OLMES config (``drop::olmes``): a run of one
is a generation task (docs/oe-eval.md, Generative tasks)."""


@dataclass
class TaskRun:
    """One task of a run folder: its three files, read."""

    index: int
    alias: str
    task: Task
    subject: str | None  # the subject of a task made of subjects
    formulation: Formulation
    metrics: dict[str, Any]  # the metrics file, whole
    requests: list[dict[str, Any]]
    predictions: list[dict[str, Any]]
    paths: dict[str, Path]  # by file kind

    @property
    def uncond_offset(self) -> int:
        kwargs = self.metrics.get("task_config", {}).get("metric_kwargs") or {}
        return int(kwargs.get("uncond_docid_offset", UNCOND_OFFSET))

    @property
    def implementation(self) -> str:
        return EXPORTED if EXPORT_MARK in self.metrics else IMPLEMENTATION

    def files_sha256(self) -> dict[str, str]:
        return {path.name: file_sha256(path) for path in self.paths.values()}


@dataclass
class GenerativeRun:
    """One OLMES v0.2 generative task of a run folder (``drop::olmes``): its three files, read."""

    index: int
    alias: str
    task: GenerativeTask
    metrics: dict[str, Any]
    requests: list[dict[str, Any]]
    predictions: list[dict[str, Any]]
    paths: dict[str, Path]

    @property
    def implementation(self) -> str:
        return EXPORTED if EXPORT_MARK in self.metrics else IMPLEMENTATION

    def files_sha256(self) -> dict[str, str]:
        return {path.name: file_sha256(path) for path in self.paths.values()}


def read_run(folder: Path) -> list[TaskRun | GenerativeRun]:
    """Every OLMES task of a run folder (the ten tasks' rc and mc runs, MMLU per subject, and the
    OLMES v0.2 generative tasks), in the run's order; any other task is named and refused."""
    if not folder.is_dir():
        raise OlmesError(f"{folder} is not a folder; give the output folder of an oe-eval run")
    found = sorted(
        (int(m.group(1)), path) for path in folder.iterdir() if (m := _METRICS_FILE.fullmatch(path.name))
    )
    if not found:
        raise OlmesError(
            f"{folder} holds no task-NNN-<task>-metrics.json: not the output folder of an oe-eval run"
        )
    runs = [_task_run(index, path) for index, path in found]
    seen: dict[str, Path] = {}
    for run in runs:
        if run.alias in seen:
            raise OlmesError(
                f"{folder}: task {run.alias} is there twice ({seen[run.alias].name}, "
                f"{run.paths['metrics.json'].name}); import one run of it"
            )
        seen[run.alias] = run.paths["metrics.json"]
    return runs


def _task_run(index: int, metrics_path: Path) -> TaskRun | GenerativeRun:
    metrics = _json(metrics_path)
    config = metrics.get("task_config") if isinstance(metrics, dict) else None
    if not isinstance(config, dict):
        raise OlmesError(f"{metrics_path}: no task_config; not a metrics file of oe-eval")
    name = (config.get("metadata") or {}).get("alias") or metrics.get("task_name") or ""
    generative = GENERATIVE_ALIASES.get(name)
    if generative is None:
        task, subject, formulation = _olmes_task(name, metrics_path)
    stem = metrics_path.name.removesuffix("metrics.json")
    paths = {kind: metrics_path.with_name(stem + kind) for kind in FILE_KINDS}
    for kind, path in paths.items():
        if not path.is_file():
            hint = " (run oe-eval with --save-raw-requests true)" if kind == "requests.jsonl" else ""
            raise OlmesError(f"{path} is missing: olmes needs the {kind} of each task{hint}")
    requests = _requests(paths["requests.jsonl"])
    predictions = [row for _, row in _one_line_each(paths["predictions.jsonl"], ("doc_id",), "prediction")]
    if generative is not None:
        return GenerativeRun(index, name, generative, metrics, requests, predictions, paths)
    return TaskRun(index, name, task, subject, formulation, metrics, requests, predictions, paths)


def _requests(path: Path) -> list[dict[str, Any]]:
    """A requests file's lines: one per request (doc_id and idx), one native_id per doc_id."""
    rows = _one_line_each(path, ("doc_id", "idx"), "request")
    named: dict[int, tuple[int, Any]] = {}
    for number, row in rows:
        doc_id, native_id = row.get("doc_id"), row.get("native_id")
        if not _is_int(doc_id):
            continue  # the importer names a doc_id that is no number
        first, first_id = named.setdefault(doc_id, (number, native_id))
        if first_id != native_id:
            raise OlmesError(
                f"{path}: lines {first} and {number} give doc_id {doc_id} two instances ({first_id!r}, "
                f"{native_id!r}): which one it is is ambiguous; import the files as oe-eval wrote them"
            )
    return [row for _, row in rows]


def _one_line_each(path: Path, fields: tuple[str, ...], what: str) -> list[tuple[int, dict[str, Any]]]:
    """The numbered lines of a file of one line per ``fields`` (a request: its doc_id and idx; a
    prediction: its doc_id). A second line for one is refused even when it is identical: which line
    counts would be a guess, and a file of repeated lines is not what oe-eval writes."""
    rows = _json_lines(path)
    seen: dict[tuple, tuple[int, dict[str, Any]]] = {}
    for number, row in rows:
        key = tuple(row.get(field) for field in fields)
        if not all(_is_int(value) for value in key):
            continue  # the importer names a doc_id or idx that is no number
        if key in seen:
            first, earlier = seen[key]
            named = ", ".join(f"{field} {value}" for field, value in zip(fields, key, strict=True))
            raise OlmesError(
                f"{path}: lines {first} and {number} are both the {what} of {named} "
                f"({'identical' if earlier == row else 'they differ'}): which one counts is ambiguous; "
                f"import a run with one line per {what}, as oe-eval writes it"
            )
        seen[key] = (number, row)
    return rows


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def model_configs(
    folder: Path, runs: list[TaskRun] | list[TaskRun | GenerativeRun]
) -> list[tuple[str, dict[str, Any]]]:
    """Every ``model_config`` of a run folder, with the file (and line) it is in: each task's metrics
    file and, where the run has them, its ``metrics.json`` and each line of ``metrics-all.jsonl``."""
    found = [(run.paths["metrics.json"].name, run.metrics.get("model_config")) for run in runs]
    summary, groups = (folder / name for name in RUN_FILES)
    if summary.is_file():
        data = _json(summary)
        found.append((summary.name, data.get("model_config") if isinstance(data, dict) else None))
    if groups.is_file():
        found += [(f"{groups.name}:{number}", row.get("model_config")) for number, row in _json_lines(groups)]
    return [(where, config) for where, config in found if isinstance(config, dict)]


def _olmes_task(name: str, path: Path) -> tuple[Task, str | None, Formulation]:
    """The task, subject and formulation of a run's task: its alias (``arc_challenge:rc::olmes``) or,
    for a task given to oe-eval as a JSON spec (which gets no alias), its name (``arc_challenge``,
    ``arc_challenge:mc``). Whether it is the standard's run is for its requests to show."""
    base, *modifiers = name.partition("::")[0].split(":")
    formulation = modifiers[0] if modifiers else "rc"
    if base in _PARTS and formulation in FORMULATIONS and len(modifiers) <= 1:
        task, subject = _PARTS[base]
        return task, subject, FORMULATIONS[formulation]
    raise OlmesError(
        f"{path}: task {name!r} is not a run of an OLMES task (<task>:rc::olmes or <task>:mc::olmes of "
        f"{', '.join(TASKS)}, MMLU per subject; or an OLMES v0.2 generative task: "
        f"{', '.join(GENERATIVE_ALIASES)}); olmes imports only those"
    )


def _json(path: Path) -> Any:
    try:
        return parse_json(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise OlmesError(f"{path}: not readable JSON ({error})") from None


def _json_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Each JSON object of a JSON-lines file with its line number (blank lines skipped)."""
    rows = []
    try:
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    row = parse_json(line, f"{path}:{number}")
                except ValueError as error:
                    raise OlmesError(f"{path}:{number}: not a JSON line ({error})") from None
                if not isinstance(row, dict):
                    raise OlmesError(f"{path}:{number}: not a JSON object")
                rows.append((number, row))
    except (OSError, UnicodeDecodeError) as error:
        raise OlmesError(f"{path}: cannot be read ({error})") from None
    return rows


def task_file(folder: Path, index: int, name: str, kind: str) -> Path:
    """Where oe-eval writes one file of a task: ``task-000-arc_challenge-metrics.json``."""
    return folder / f"task-{index:03d}-{name}-{kind}"
