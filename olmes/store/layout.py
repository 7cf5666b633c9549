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
    <store>/blobs/<sha256>.parquet                  external log-prob files (not in git: olmes.store.blobs)

A workflow results folder::

    <results>/models.json                           the models' display names (olmes.tables.results)
    <results>/requests/[<model>/]<task>.<set>.jsonl
    <results>/logprobs/<model>/<task>.<set>.parquet (+ .run.json)
    <results>/scores/<model>/<task>.scores.json (+ <task>.predictions.parquet)
    <results>/variants/<variant>/{scores,logprobs}/<model>/   a prompt variant's, laid out the same
"""

from __future__ import annotations

from pathlib import Path

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
VARIANTS = "variants"  # a results folder's prompt variants, each laid out as a results folder
MODELS_FILE = "models.json"  # a results folder's models file
SUMMARY_SUFFIX = ".scores.json"
RUN_SUFFIX = ".run.json"


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
    return f"{task}.predictions.parquet"


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


def summary_tasks(folder: Path) -> set[str]:
    """The tasks of the score summaries in ``folder`` (any name; the caller keeps those of a task)."""
    return {path.name.removesuffix(SUMMARY_SUFFIX) for path in folder.glob(f"*{SUMMARY_SUFFIX}")}
