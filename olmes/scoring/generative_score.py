"""One model x generative task scored: each instance's metrics and its summary (docs/generative.md).

Reads the task's generation request file (gold answers, the bits-per-byte request) and the
generations Parquet of ``olmes generate`` beside it, checks that they are the same instances in the
same order, scores every generation with the task's metric as AI2 defines it
(:mod:`olmes.scoring.generative_metrics`), and writes the per-instance Parquet and the summary: the
mean of each metric with its standard error, bits per byte, and why a result is partial.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from olmes.core.atomic import atomic_path
from olmes.core.errors import OlmesError
from olmes.core.generative import GENERATIVE_VERSION, GenerativeTask, get_generative_task
from olmes.core.records import read_records, read_run_record
from olmes.core.records.generative import (
    GENERATION_COLUMNS,
    GENERATION_REQUESTS_FORMAT,
    GENERATIONS_FORMAT,
    GENERATIVE_INSTANCE_COLUMNS,
    GENERATIVE_INSTANCES_FORMAT,
    GenerationRequestRow,
    GenerativeScoreSummary,
    MetricValue,
    write_generative_summary,
)
from olmes.core.resources import file_sha256
from olmes.scoring.generative_metrics import INSTANCE_METRICS, summarize

SUMMARY_SUFFIX = ".generative.json"
INSTANCES_SUFFIX = ".instances.parquet"
GENERATIONS_SUFFIX = ".generations.parquet"


def read_generation_requests(path: str | Path) -> list[GenerationRequestRow]:
    """A generation request file's rows, each checked."""
    if not Path(path).is_file():
        raise OlmesError(f"generation request file {path} does not exist; write it with olmes requests")
    return read_records(path, GENERATION_REQUESTS_FORMAT)


def read_generations(path: str | Path) -> pa.Table:
    """A generations file, its format and columns checked."""
    path = Path(path)
    if not path.is_file():
        raise OlmesError(f"generations file {path} does not exist; write it with olmes generate")
    GENERATIONS_FORMAT.check_file(path)
    table = pq.read_table(path)
    missing = [column.name for column in GENERATION_COLUMNS if column.name not in table.column_names]
    if missing:
        raise OlmesError(f"{path} lacks column(s) {missing}; generate again (olmes generate)")
    for column in GENERATION_COLUMNS:
        if column.required and table.column(column.name).null_count:
            raise OlmesError(f"{path}: column {column.name} has missing values; generate again")
    return table


def instance_frame(
    task: GenerativeTask, model: str, requests: list[GenerationRequestRow], generations: pa.Table, where: str
) -> dict[str, list]:
    """Each instance's generation scored, as the columns of the per-instance Parquet."""
    rows = generations.to_pylist()
    if len(rows) != len(requests):
        raise OlmesError(
            f"{where} holds {len(rows)} generations for {len(requests)} requests; generate again"
        )
    metric = INSTANCE_METRICS[task.metric]
    columns: dict[str, list] = {column.name: [] for column in GENERATIVE_INSTANCE_COLUMNS}
    for position, (request, row) in enumerate(zip(requests, rows, strict=True)):
        same = (
            row["request_index"] == position
            and row["task"] == request["task"] == task.key
            and row["instance_index"] == request["instance_index"]
            and row["native_id"] == str(request["native_id"])
        )
        if not same:
            raise OlmesError(
                f"{where} row {position} is not request {position} of the request file "
                f"(task {row['task']!r}, instance {row['instance_index']}); generate again"
            )
        values = metric.score(row["generation"], request["answers"])
        columns["model"].append(model)
        columns["task"].append(task.key)
        columns["instance_index"].append(request["instance_index"])
        columns["native_id"].append(str(request["native_id"]))
        columns["generation"].append(row["generation"])
        columns["exact_match"].append(float(values["exact_match"]))
        columns["f1"].append(float(values["f1"]) if "f1" in values else None)
        columns["extracted"].append(metric.extract(row["generation"]) if metric.extract else None)
        columns["bits_per_byte"].append(_bits_per_byte(row["gold_sum_logprob"], row["gold_num_bytes"]))
    return columns


def _bits_per_byte(sum_logprob: float, num_bytes: int) -> float:
    """-log2 P(gold) per UTF-8 byte of the gold continuation (leading space included), as the ten
    tasks' bits per byte (:func:`olmes.scoring.statistics.bits_per_byte`)."""
    return -sum_logprob / (math.log(2) * num_bytes)


def write_instances(columns: dict[str, list], path: Path) -> None:
    fields = [
        pa.field(column.name, pa.type_for_alias(column.arrow_type)) for column in GENERATIVE_INSTANCE_COLUMNS
    ]
    schema = pa.schema(fields, metadata=GENERATIVE_INSTANCES_FORMAT.metadata())
    table = pa.Table.from_pydict(columns, schema=schema)
    with atomic_path(path) as temporary:
        pq.write_table(table, temporary)


def _metric_value(values: list[float]) -> MetricValue:
    stats = summarize(values)
    return {"value": stats["mean"], "stderr": stats["stderr"], "n": stats["n"]}


def partial_reasons(task: GenerativeTask, n: int, limit: int | None) -> list[str]:
    """Why a result is not a full OLMES v0.2 run of the task (empty when it is)."""
    reasons = []
    if n < task.standard_count:
        reasons.append(f"{n} of the standard's {task.standard_count} instances")
    if limit is not None and limit < task.standard_count and n >= task.standard_count:
        reasons.append(f"limit {limit}")
    return reasons


def generative_metrics(task: GenerativeTask, columns: dict[str, list], limit: int | None) -> dict:
    """The summary's numbers of one model x task's scored instances: everything but its files."""
    n = len(columns["instance_index"])
    metrics = {"exact_match": _metric_value(columns["exact_match"])}
    if any(value is not None for value in columns["f1"]):
        metrics["f1"] = _metric_value(columns["f1"])
    finite_bpb = [value for value in columns["bits_per_byte"] if np.isfinite(value)]
    reasons = partial_reasons(task, n, limit)
    return {
        "task": task.key,
        "display_name": task.display_name,
        "version": GENERATIVE_VERSION,
        "n_instances": n,
        "full_count": task.standard_count,
        "limit": limit,
        "partial": bool(reasons),
        "partial_reasons": reasons,
        "primary_metric": task.primary_metric,
        "metrics": metrics,
        "bits_per_byte": _metric_value(finite_bpb),
    }


def stop_counts(generations: pa.Table) -> dict[str, int]:
    return dict(sorted(Counter(generations.column("stop_reason").to_pylist()).items()))


def score_generative(
    task_key: str,
    model: str,
    requests_path: str | Path,
    generations_path: str | Path,
    summary_path: str | Path,
    *,
    limit: int | None = None,
) -> GenerativeScoreSummary:
    """Score one model x generative task; write ``<task>.instances.parquet`` beside the summary."""
    task = get_generative_task(task_key)
    requests = read_generation_requests(requests_path)
    generations = read_generations(generations_path)
    columns = instance_frame(task, model, requests, generations, str(generations_path))
    summary_path = Path(summary_path)
    instances_path = summary_path.with_name(task.key + INSTANCES_SUFFIX)
    write_instances(columns, instances_path)
    summary: GenerativeScoreSummary = {
        "format": "",
        "model": model,
        **generative_metrics(task, columns, limit),
        "inputs": {
            "generations": {
                "path": _relative(generations_path, summary_path),
                "sha256": file_sha256(Path(generations_path)),
                "run": _run_of(generations_path),
            }
        },
        "instances": {"path": instances_path.name, "sha256": file_sha256(instances_path)},
        "generation_counts": stop_counts(generations),
    }
    write_generative_summary(summary_path, summary)
    return summary


def _relative(path: str | Path, summary_path: Path) -> str:
    return os.path.relpath(Path(path).resolve(), summary_path.resolve().parent)


def _run_of(generations_path: str | Path):
    return read_run_record(generations_path)  # beside it, <file>.run.json; None when there is none
