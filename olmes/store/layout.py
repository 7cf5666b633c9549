"""The folder layout of a results store (format ``olmes.store/1``, docs/file-formats.md) and of the
workflow results folders it is published from: every name of their files and folders, said once.

A store::

    <store>/store.json                              {"format": "olmes.store/1"} (+ "logprob_hosts")
    <store>/tasks/<task>.instances.jsonl.gz         the full standard's instances (question, choices, gold)
    <store>/tasks/<task>.<set>.examples.jsonl       requests of the first two instances (site prompts)
    <store>/models/<model>/model.json               provenance: model, revision, hardware, versions, cost
    <store>/models/<model>/logprobs/<task>.<set>.parquet.run.json (+ the .parquet itself when in-tree)
    <store>/models/<model>/scores/<task>.scores.json (+ <task>.predictions.parquet)
    <store>/models/<model>/robustness/<variant>/    a prompt variant's summaries, predictions, log-probs
    <store>/models/<model>/robustness/rotations/    <task>.rotations.json + its mcf and mcf_rot log-probs
    <store>/models/<model>/generative/              an OLMES v0.2 generative task's summary, instances,
                                                    generations and their run record (olmes.store.generative)
    <store>/tasks/<task>.gen.examples.jsonl         a generative task's first two generation requests
    <store>/tasks/<task>.gen.instances.jsonl.gz     its instances: question and gold answers
    <store>/blobs/<sha256>.parquet                  external log-prob files (not in git: olmes.store.blobs)
    <store>/reproductions/<model>/reproduction.json  a maintainer's reproduction of the model (its badge)
    <store>/reproductions/<model>/<task>.<set>.parquet  the log-probs recomputed there, first N instances

A workflow results folder::

    <results>/models.json                           the models' display names (olmes.tables.results)
    <results>/requests/[<model>/]<task>.<set>.jsonl
    <results>/logprobs/<model>/<task>.<set>.parquet (+ .run.json)
    <results>/scores/<model>/<task>.scores.json (+ <task>.predictions.parquet)
    <results>/variants/<variant>/{scores,logprobs}/<model>/   a prompt variant's, laid out the same
    <results>/requests/<task>.gen.jsonl             a generative task's generation requests
    <results>/generative/<model>/                   its generative results, laid out as in the store
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from olmes.core.generative import GENERATIVE_TASKS
from olmes.core.methods import MCF, REQUEST_SETS, ROTATIONS
from olmes.core.tasks import STANDARD_VARIANT, TASKS, VARIANT_NAMES
from olmes.scoring.generative_score import GENERATIONS_SUFFIX, INSTANCES_SUFFIX
from olmes.scoring.generative_score import SUMMARY_SUFFIX as GENERATIVE_SUFFIX
from olmes.scoring.rotations import ROTATIONS_KIND, ROTATIONS_SUFFIX

STORE_RECORD = "store.json"
GITIGNORE = ".gitignore"
MODELS = "models"  # the store's folder of model folders
TASK_FILES = "tasks"  # the store's folder of each task's instances and request examples
BLOBS = "blobs"  # the store's folder of external log-prob files (git ignores it)
MODEL_RECORD = "model.json"
SCORES = "scores"  # a model's standard score summaries (their log-probs are in LOGPROBS)
LOGPROBS = "logprobs"
ROBUSTNESS = "robustness"  # a model's folder of prompt-variant and answer-order results
REQUESTS = "requests"  # a results folder's request files
GENERATIVE = "generative"  # a model's generative results, in a store's model folder and a results folder
GENERATION_EXAMPLES_SUFFIX = ".gen.examples.jsonl"  # a generative task's files in the store's tasks/
GENERATION_INSTANCES_SUFFIX = ".gen.instances.jsonl.gz"
VARIANTS = "variants"  # a results folder's prompt variants, each laid out as a results folder
MODELS_FILE = "models.json"  # a results folder's models file
REPRODUCTIONS = "reproductions"  # the store's folder of reproduction records (written on the base branch)
REPRODUCTION_RECORD = "reproduction.json"
SUMMARY_SUFFIX = ".scores.json"
RUN_SUFFIX = ".run.json"
PREDICTIONS_SUFFIX = ".predictions.parquet"
MODEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")  # a model's name, its folder: ASCII, no leading dot


def store_record_path(store: str | Path) -> Path:
    return Path(store) / STORE_RECORD


def models_folder(store: str | Path) -> Path:
    return Path(store) / MODELS


def model_folder(store: str | Path, model: str) -> Path:
    return models_folder(store) / model


def model_record_path(store: str | Path, model: str) -> Path:
    return model_folder(store, model) / MODEL_RECORD


def task_files_folder(store: str | Path) -> Path:
    return Path(store) / TASK_FILES


def summary_name(task: str) -> str:
    return f"{task}{SUMMARY_SUFFIX}"


def predictions_name(task: str) -> str:
    return f"{task}{PREDICTIONS_SUFFIX}"


def logprob_name(task: str, request_set: str) -> str:
    return f"{task}.{request_set}.parquet"


def run_record_name(task: str, request_set: str) -> str:
    return f"{logprob_name(task, request_set)}{RUN_SUFFIX}"


def requests_name(task: str, request_set: str) -> str:
    return f"{task}.{request_set}.jsonl"


def instances_name(task: str) -> str:
    return f"{task}.instances.jsonl.gz"


def examples_name(task: str, request_set: str) -> str:
    return f"{task}.{request_set}.examples.jsonl"


def generative_names(task: str) -> tuple[str, str, str, str]:
    """The four files of one model x generative task: summary, instances, generations, run record."""
    generations = f"{task}{GENERATIONS_SUFFIX}"
    return (
        f"{task}{GENERATIVE_SUFFIX}",
        f"{task}{INSTANCES_SUFFIX}",
        generations,
        f"{generations}{RUN_SUFFIX}",
    )


def generative_tasks(folder: Path) -> list[str]:
    """The generative tasks whose summary is in ``folder``, in the registry's order (a stray summary
    of no task: :func:`stray_generative`)."""
    found = {p.name.removesuffix(GENERATIVE_SUFFIX) for p in folder.glob(f"*{GENERATIVE_SUFFIX}")}
    return [task for task in GENERATIVE_TASKS if task in found]


def stray_generative(folder: Path) -> list[Path]:
    """Generative summaries in ``folder`` of no generative task of this olmes version."""
    return sorted(
        path
        for path in folder.glob(f"*{GENERATIVE_SUFFIX}")
        if path.name.removesuffix(GENERATIVE_SUFFIX) not in GENERATIVE_TASKS
    )


def summary_tasks(folder: Path) -> set[str]:
    """The tasks of the score summaries in ``folder`` (any name; the caller keeps those of a task)."""
    return {path.name.removesuffix(SUMMARY_SUFFIX) for path in folder.glob(f"*{SUMMARY_SUFFIX}")}


def reproduction_folder(store: str | Path, model: str) -> Path:
    return Path(store) / REPRODUCTIONS / model


def reproduction_record_path(store: str | Path, model: str) -> Path:
    return reproduction_folder(store, model) / REPRODUCTION_RECORD


def is_model_file(relative: PurePosixPath) -> bool:
    """Whether ``relative`` (a path inside a model folder) is a place the layout has for a file: the
    record, a task's summary and predictions, its log-prob files and run records, and the same under
    ``robustness/<variant>/``, or a rotations report and its log-probs under ``robustness/rotations/``.
    Shape only: which of them a model must have is ``olmes verify``'s (its summaries name them)."""
    parts = relative.parts
    if parts == (MODEL_RECORD,):
        return True
    if len(parts) == 2 and parts[0] == GENERATIVE:
        return any(parts[1] in generative_names(task) for task in GENERATIVE_TASKS)
    if len(parts) == 2 and parts[0] in (SCORES, LOGPROBS):
        return _is_result_file(parts[1], summaries=parts[0] == SCORES, logprobs=parts[0] == LOGPROBS)
    if len(parts) == 3 and parts[0] == ROBUSTNESS:
        if parts[1] == ROTATIONS_KIND:
            return _is_task_file(parts[2], ROTATIONS_SUFFIX) or _is_logprob_file(parts[2], (MCF, ROTATIONS))
        return parts[1] in VARIANT_NAMES and parts[1] != STANDARD_VARIANT and _is_result_file(parts[2])
    return False


def _is_result_file(name: str, summaries: bool = True, logprobs: bool = True) -> bool:
    """A standard or variant result's file: summary or predictions, or a log-prob file or run record."""
    if summaries and (_is_task_file(name, SUMMARY_SUFFIX) or _is_task_file(name, PREDICTIONS_SUFFIX)):
        return True
    return logprobs and _is_logprob_file(name, REQUEST_SETS)


def _is_task_file(name: str, suffix: str) -> bool:
    return name.endswith(suffix) and name.removesuffix(suffix) in TASKS


def _is_logprob_file(name: str, request_sets: tuple[str, ...]) -> bool:
    stem = name.removesuffix(RUN_SUFFIX)
    return any(stem == logprob_name(task, request_set) for task in TASKS for request_set in request_sets)
