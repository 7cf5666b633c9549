"""``olmes import oe-eval``: a run of AI2's OLMES implementation -> an ordinary olmes results folder.

Each request of the run is checked against this olmes version's canonical requests byte for byte
(the instances, in the standard's order, then every context and continuation and every gold); its
``sum_logits`` (and ``sum_logits_uncond``) become log-prob files of olmes's format, whose token
counts are recounted here with the model's tokenizer as the engine counts them (the run's
``num_tokens`` is not trusted: docs/oe-eval.md), and olmes's own scoring scores them. The run's
configuration, its reported metrics and how they compare with ours go into each run record
(``imported``), so ``olmes publish`` and ``olmes verify`` treat the result like any other.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from olmes.core.errors import OlmesError
from olmes.core.methods import CF, MCF, PMI, Formulation, Method, get_method
from olmes.core.records import (
    ImportedRun,
    MetricComparison,
    RequestRow,
    RunRecord,
    write_records,
    write_run_record,
)
from olmes.core.resources import file_sha256
from olmes.core.tasks import Task
from olmes.requests.build import request_sets, task_instances
from olmes.store.canonical import canonical_requests
from olmes.store.layout import (
    LOGPROBS,
    MODELS_FILE,
    REQUESTS,
    SCORES,
    logprob_name,
    predictions_name,
    requests_name,
    summary_name,
)
from olmes.store.oe_eval.files import TaskRun, metric_methods, read_run

PER_TOKEN = "acc_per_token"
IMPORT_PACKAGES = ("transformers", "tokenizers", "pyarrow")
"""What an import's run records list beside olmes and python: what recounted the tokens and wrote
the files here (the log-probs were computed by the run's own software, at the commit it names)."""
ONE_TOKEN_NOTE = (
    "its predictions count 1 token for every continuation (num_tokens 1: a known defect of "
    "oe-eval's HF path at this version), so its acc_per_token is its acc_raw; olmes counts the "
    "continuation's tokens"
)


@dataclass
class _Instance:
    """One instance of the run: which task file it is in, its doc_id there, and its id."""

    run: TaskRun
    doc_id: int
    native_id: str


@dataclass
class ImportedTask:
    """One task of the run, checked: its parts per formulation and the standard's instance limit."""

    task: Task
    parts: dict[Formulation, list[TaskRun]]
    instances: dict[Formulation, list[_Instance]]  # the same instances in each formulation's files
    limit: int | None
    positions: dict[tuple[int, int], int]  # (id of a task file, doc_id) -> the instance's position

    def instance(self, request_set: str, position: int) -> _Instance:
        return self.instances[MCF if request_set == MCF else CF][position]

    @property
    def count(self) -> int:
        return len(next(iter(self.instances.values())))


def check_run(folder: Path, data_source: str = "bundle") -> list[ImportedTask]:
    """The run's OLMES tasks, each checked against the standard's instances and requests; the first
    difference is one error line."""
    grouped: dict[str, dict[Formulation, list[TaskRun]]] = {}
    for run in read_run(folder):
        grouped.setdefault(run.task.key, {}).setdefault(run.formulation, []).append(run)
    return [_check_task(parts, data_source) for parts in grouped.values()]


def _check_task(parts: dict[Formulation, list[TaskRun]], data_source: str) -> ImportedTask:
    task = next(iter(parts.values()))[0].task
    order = list(task.oe_eval_names.values())
    for runs in parts.values():
        runs.sort(key=lambda run: order.index(run.subject))
    instance_lists = {formulation: _instances(runs) for formulation, runs in parts.items()}
    if len(instance_lists) == 2 and [i.native_id for i in instance_lists[CF]] != [
        i.native_id for i in instance_lists[MCF]
    ]:
        raise OlmesError(
            f"the rc and mc runs of {task.key} evaluate different instances; import runs of the same ones"
        )
    instances = next(iter(instance_lists.values()))
    limit = None if len(instances) == task.standard_count else len(instances)
    standard = task_instances(task, limit, data_source)
    _check_instances(task, instances, standard)
    positions = {(id(i.run), i.doc_id): n for found in instance_lists.values() for n, i in enumerate(found)}
    checked = ImportedTask(task, parts, instance_lists, limit, positions)
    for request_set in _request_sets(checked):
        _check_requests(checked, request_set, data_source)
    return checked


def _instances(runs: list[TaskRun]) -> list[_Instance]:
    """The instances of a formulation's task files, in the standard's subject order, then doc_id."""
    found = []
    for run in runs:
        docs: dict[int, _Instance] = {}
        for row in run.requests:
            doc_id = _int(row.get("doc_id"), run, "doc_id")
            if doc_id < run.uncond_offset and doc_id not in docs:
                docs[doc_id] = _Instance(run, doc_id, str(row.get("native_id")))
        if sorted(docs) != list(range(len(docs))):
            raise OlmesError(f"{run.paths['requests.jsonl']}: its doc_ids are not 0..{len(docs) - 1}")
        found += [docs[doc_id] for doc_id in range(len(docs))]
    return found


def _check_instances(task: Task, instances: list[_Instance], standard: list) -> None:
    """The run's instances must be the standard's, or its first N, in the standard's order."""
    if len(instances) > task.standard_count:
        raise OlmesError(
            f"{instances[0].run.paths['requests.jsonl']}: {len(instances)} instances of {task.key}, the "
            f"standard evaluates {task.standard_count} ({task.instances_note}): not the standard's instances"
        )
    for position, (theirs, ours) in enumerate(zip(instances, standard, strict=True)):
        if theirs.native_id != str(ours.native_id):
            raise OlmesError(
                f"{theirs.run.paths['requests.jsonl']}: not the standard's instance set: its instance "
                f"{position} is {theirs.native_id}, the standard's is {ours.native_id} ({task.key}: "
                f"{task.instances_note}, or their first N in that order; oe-eval's --limit samples at "
                "random unless the task sets random_subsample_seed to null)"
            )


def _request_sets(checked: ImportedTask) -> list[str]:
    """The request sets the run's formulations give: rc gives cf (and pmi where the standard has it)."""
    standard = request_sets(checked.task)
    wanted = {CF: (CF, PMI), MCF: (MCF,)}
    return [name for name in standard if any(name in wanted[f] for f in checked.parts)]


def _their_requests(checked: ImportedTask, request_set: str) -> dict[tuple[int, int], dict]:
    """The run's requests of one request set by (instance position, choice)."""
    formulation = MCF if request_set == MCF else CF
    found = {}
    for run in checked.parts[formulation]:
        for row in run.requests:
            doc_id = _int(row.get("doc_id"), run, "doc_id")
            unconditional = doc_id >= run.uncond_offset
            if unconditional != (request_set == PMI):
                continue
            key = (id(run), doc_id - run.uncond_offset if unconditional else doc_id)
            found[(checked.positions[key], _int(row.get("idx"), run, "idx"))] = row
    return found


def _check_requests(checked: ImportedTask, request_set: str, data_source: str) -> None:
    """Every canonical request of the set is in the run with the same context, continuation and gold."""
    theirs = _their_requests(checked, request_set)
    standard = canonical_requests(checked.task.key, request_set, checked.limit, data_source)
    for row in standard:
        instance = checked.instance(request_set, row["instance_index"])
        where = (
            f"{instance.run.paths['requests.jsonl']}: instance {row['instance_index']} "
            f"({row['native_id']}) choice {row['choice']}" + (" unconditional" if request_set == PMI else "")
        )
        found = theirs.get((row["instance_index"], row["choice"]))
        if found is None:
            raise OlmesError(f"{where}: the run has no such request; the standard makes one")
        request = found.get("request") or {}
        for field in ("context", "continuation"):
            if request.get(field) != row[field]:
                raise OlmesError(f"{where}: {_difference(field, str(request.get(field)), row)}")
        if _int(found.get("label"), instance.run, "label") != row["label"]:
            raise OlmesError(f"{where}: gold is {found.get('label')}, the standard's is {row['label']}")
    if len(theirs) != len(standard):
        first = checked.parts[MCF if request_set == MCF else CF][0]
        raise OlmesError(
            f"{first.paths['requests.jsonl']}: {len(theirs)} {request_set} requests of {checked.task.key}, "
            f"the standard makes {len(standard)}"
        )


def _difference(field: str, theirs: str, row: RequestRow) -> str:
    """Where a text first differs from the standard's, and in which part of the prompt."""
    ours = row[field]
    at = next(
        (i for i, (a, b) in enumerate(zip(theirs, ours, strict=False)) if a != b), min(len(theirs), len(ours))
    )
    part = ""
    if field == "context" and row["formulation"] != PMI:
        shots_end = ours.rfind("\n\n") + 2  # the instance's own query follows the last shot
        part = " (in the few-shot examples: another shot set?)" if at < shots_end else " (in the question)"
    return (
        f"{field} differs from the standard's at character {at}{part}: "
        f"{theirs[max(0, at - 20) : at + 30]!r} vs the standard's {ours[max(0, at - 20) : at + 30]!r}"
    )


def _int(value, run: TaskRun, field: str, kind: str = "requests.jsonl") -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise OlmesError(f"{run.paths[kind]}: a line's {field} is {value!r}, not a number")
    return value


# -- log-probs ----------------------------------------------------------------------------------------


def _results(checked: ImportedTask, request_set: str, rows: list[RequestRow], counts: list[int]):
    """(sum_logprob, num_tokens, is_greedy) of each canonical row, from the run's predictions, and how
    many of the run's own token counts differ from ours."""
    formulation = MCF if request_set == MCF else CF
    outputs: dict[tuple[int, int], list[dict]] = {}
    for run in checked.parts[formulation]:
        for prediction in run.predictions:
            doc_id = _int(prediction.get("doc_id"), run, "doc_id", "predictions.jsonl")
            if (id(run), doc_id) in checked.positions:
                outputs[checked.positions[(id(run), doc_id)]] = prediction.get("model_output") or []
    results, differing = [], 0
    key = "sum_logits_uncond" if request_set == PMI else "sum_logits"
    for row, count in zip(rows, counts, strict=True):
        instance = checked.instance(request_set, row["instance_index"])
        where = f"{instance.run.paths['predictions.jsonl']}: doc_id {instance.doc_id} ({instance.native_id})"
        output = outputs.get(row["instance_index"])
        if output is None or len(output) <= row["choice"] or not isinstance(output[row["choice"]], dict):
            raise OlmesError(f"{where}: no model output for choice {row['choice']}")
        choice = output[row["choice"]]
        value = choice.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            missing = "; run the rc task with its unconditional requests" if request_set == PMI else ""
            raise OlmesError(f"{where} choice {row['choice']}: {key} is {value!r}, not a log-prob{missing}")
        if request_set != PMI and choice.get("num_tokens") != count:
            differing += 1
        greedy = choice.get("is_greedy") if request_set != PMI else None
        results.append((float(value), count, greedy if isinstance(greedy, bool) else None))
    return results, differing


# -- writing ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImportTarget:
    """Where the import goes and how the model is named and tokenized."""

    output: Path  # a results folder: requests/<model>/, logprobs/<model>/, scores/<model>/
    model: str
    spec: str | None  # the model spec for the tokenizer and the store; None: the run's model
    commit: str | None
    data_source: str = "bundle"
    display_name: str | None = None  # None: the name with the qualifiers its identity adds


def import_run(folder: Path, target: ImportTarget) -> list[str]:
    """Import a run folder; returns one line per task (and one per disagreeing metric)."""
    from olmes.logprobs.engine import encode_requests
    from olmes.logprobs.identity import model_identity, qualified_name
    from olmes.logprobs.models import DTYPES, load_tokenizer
    from olmes.logprobs.runner import write_parquet

    checked = check_run(folder, target.data_source)
    first = next(iter(checked[0].parts.values()))[0].metrics
    spec = target.spec or _their_model(first)
    resolved, tokenizer, bos = load_tokenizer(spec)
    dtype = _their_dtype(first.get("model_config") or {})
    identity = model_identity(resolved, DTYPES.get(dtype, dtype))
    display_name = target.display_name or qualified_name(target.model, identity)
    _add_to_models_file(target.output / MODELS_FILE, target.model, display_name)
    lines = []
    for item in checked:
        files, records = {}, {}
        for request_set in _request_sets(item):
            rows = list(canonical_requests(item.task.key, request_set, item.limit, target.data_source))
            encoded = encode_requests(tokenizer, [(r["context"], r["continuation"]) for r in rows], bos)
            results, differing = _results(item, request_set, rows, [e.num_cont for e in encoded])
            requests_path = (
                target.output / REQUESTS / target.model / requests_name(item.task.key, request_set)
            )
            write_records(rows, requests_path)
            output = target.output / LOGPROBS / target.model / logprob_name(item.task.key, request_set)
            write_parquet(output, rows, results)  # a pmi row's is_greedy is null: oe-eval does not report it
            files[request_set] = output
            record = _run_record(item, request_set, resolved, spec, dtype, identity, requests_path, rows)
            record["imported"].update(commit=target.commit, num_tokens_recounted=differing)
            records[request_set] = record
        lines += _score_and_compare(item, target, files, records)
    return lines


def _add_to_models_file(path: Path, model: str, display_name: str) -> None:
    """The results folder's models file lists the model with its display name (publish reads it)."""
    from olmes.core.atomic import write_json_atomic
    from olmes.tables.results import read_models_file

    kept = [info for info in read_models_file(path) if info.name != model] if path.is_file() else []
    entries = [{"name": info.name, "display_name": info.display_name} for info in kept]
    write_json_atomic(path, {"models": [*entries, {"name": model, "display_name": display_name}]})


def _score_and_compare(item: ImportedTask, target: ImportTarget, files: dict, records: dict) -> list[str]:
    """Score the task once; compare the run's metrics with ours and write them into the run records,
    then the summary, which records those run records (so it is made after they are written)."""
    from olmes.scoring.score import read_tables, score_task, summarize, write_scores

    inputs = {f"{name}_path": path for name, path in files.items()}
    predictions, first = score_task(target.model, **inputs, limit=item.limit)
    comparison = _comparison(item, first, read_tables(**inputs))
    for request_set, path in files.items():
        records[request_set]["imported"]["comparison"] = [
            entry
            for entry in comparison
            if _formulation_of(entry["method"]) == (MCF if request_set == MCF else CF)
        ]
        write_run_record(path, records[request_set])
    summary = summarize(predictions, {name: files[name] for name in first["inputs"]}, item.limit)
    scores = target.output / SCORES / target.model
    write_scores(
        predictions, summary, scores / predictions_name(item.task.key), scores / summary_name(item.task.key)
    )
    agree = sum(entry["agrees"] for entry in comparison)
    within = sum(entry["agrees_within_error"] and not entry["agrees"] for entry in comparison)
    lines = [
        f"{target.model} {item.task.key}: imported {item.count} instances "
        f"({'full' if item.limit is None else f'first {item.limit}, partial'}; "
        f"{', '.join(sorted(files))}); {agree} of {len(comparison)} reported metrics equal ours"
        + (f", {within} more within float error (its differing decisions are ties)" if within else "")
    ]
    for entry in comparison:
        if not entry["agrees_within_error"]:
            where = f" {entry['subject']}" if "subject" in entry else ""
            lines.append(
                f"  {item.task.key}{where} {entry['metric']}: reported {entry['reported']:.4f}, olmes "
                f"{entry['ours']:.4f} ({entry['method']})" + (f": {entry['note']}" if "note" in entry else "")
            )
    return lines


def _formulation_of(method: str) -> Formulation:
    return get_method(method).formulation


def _comparison(item: ImportedTask, summary: dict, tables: tuple) -> list[MetricComparison]:
    """Each metric the run reported beside ours for the same instances (per subject where it has them),
    with its per-instance decisions compared with ours: a metric whose every differing decision is a
    tie within float error (olmes.core.numerics) agrees within float error."""
    compared = []
    for formulation, runs in item.parts.items():
        table = tables[1] if formulation == MCF else tables[0]
        for run in runs:
            reported = run.metrics.get("metrics") or {}
            one_token = all(
                output.get("num_tokens") == 1
                for prediction in run.predictions
                for output in prediction.get("model_output") or []
            )
            for metric, method in metric_methods(formulation).items():
                stats = summary["methods"].get(method)
                if metric not in reported or stats is None:
                    continue
                if run.subject is not None:
                    stats = stats["subjects"][run.subject]
                entry: MetricComparison = {"metric": metric, "method": method}
                if run.subject is not None:
                    entry["subject"] = run.subject
                entry.update(reported=float(reported[metric]), ours=stats["accuracy"], n=stats["n"])
                entry["agrees"] = abs(entry["reported"] - entry["ours"]) * entry["n"] < 0.5
                differing, ties = _decisions_against(item, run, metric, get_method(method), table)
                entry.update(differing_decisions=differing, ties_within_error=ties)
                entry["agrees_within_error"] = entry["agrees"] or (differing == ties and stats["n"] > 0)
                if metric == PER_TOKEN and one_token and not entry["agrees_within_error"]:
                    entry["note"] = ONE_TOKEN_NOTE
                compared.append(entry)
    return compared


def _decisions_against(
    item: ImportedTask, run: TaskRun, metric: str, method: Method, table
) -> tuple[int, int]:
    """How many of the run's own decisions under ``metric`` (its ``predicted_index_*``) differ from ours,
    and how many of those are ties within float error."""
    from olmes.scoring.agreement import flips_against

    key = "predicted_index_" + metric.removeprefix("acc_")
    positions, picks = [], []
    for prediction in run.predictions:
        doc_id = _int(prediction.get("doc_id"), run, "doc_id", "predictions.jsonl")
        position = item.positions.get((id(run), doc_id))
        if position is None:
            continue
        pick = (prediction.get("metrics") or {}).get(key)
        if isinstance(pick, bool) or not isinstance(pick, int):
            raise OlmesError(
                f"{run.paths['predictions.jsonl']}: doc_id {doc_id}: {key} is {pick!r}, not a choice"
            )
        positions.append(position)
        picks.append(pick)
    rows = np.searchsorted(table.instance_index, np.asarray(positions, dtype=np.int64))
    return flips_against(method, table, rows, np.asarray(picks))


def _run_record(item, request_set, resolved, spec, dtype, identity, requests_path, rows) -> RunRecord:
    """The run record of an imported log-prob file: who computed it (``imported``), the tokenizer's
    model as ``model``; nothing was computed here, so the engine's counts are 0."""
    from olmes.logprobs.runner import versions

    runs = item.parts[MCF if request_set == MCF else CF]
    first = runs[0].metrics
    model_config = first.get("model_config") or {}
    return {
        "model": spec,
        "model_kind": resolved.kind,
        "model_path": str(resolved.path),
        "model_revision": resolved.content_id,
        "model_fingerprint": _fingerprint(first, resolved.content_id, dtype),
        "dtype": dtype,
        "device": str(model_config.get("device") or "not recorded"),
        "hardware": "not recorded (imported)",
        "identity": identity,
        "bos_token_id": None,
        "max_input_tokens": int(model_config.get("max_length") or 2048),
        "max_batch_tokens": None,
        "imported": _imported(runs),
        "versions": versions(IMPORT_PACKAGES),
        "requests_file": str(requests_path),
        "requests_sha256": file_sha256(requests_path),
        "num_requests": len(rows),
        "requests_from_cache": 0,
        "requests_computed": 0,
        "tokens_forwarded": 0,
        "trie_minimal_tokens": 0,
        "naive_tokens": 0,
        "wall_time_s": round(sum(float(run.metrics.get("processing_time") or 0) for run in runs), 3)
        if request_set != PMI
        else 0.0,
        "engine_time_s": 0.0,
        "load_time_s": None,
        "cache_bytes_written": 0,
        "peak_rss_bytes": 0,
    }


def _imported(runs: list[TaskRun]) -> ImportedRun:
    first = runs[0].metrics
    files: dict[str, str] = {}
    for run in runs:
        files.update(run.files_sha256())
    return {
        "implementation": runs[0].implementation,
        "commit": None,
        "run_task": runs[0].alias,
        "run_tasks": len(runs),
        "task_hash": first.get("task_hash"),
        "model_hash": first.get("model_hash"),
        "model_config": first.get("model_config") or {},
        "task_config": first.get("task_config") or {},
        "current_date": first.get("current_date"),
        "files_sha256": files,
        "num_tokens_recounted": 0,
        "comparison": [],
    }


def _fingerprint(metrics: dict, identity: str, dtype: str) -> str:
    """One model of the store: the run's model (its model_hash), the weights named, the precision."""
    key = ["imported", metrics.get("model_hash"), identity, dtype]
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()[:32]


def _their_model(metrics: dict) -> str:
    config = metrics.get("model_config") or {}
    model = config.get("model_path") or config.get("model")
    if not isinstance(model, str) or not model:
        raise OlmesError("the run's model_config names no model; give --model-spec (a hub id or folder)")
    return model


def _their_dtype(model_config: dict) -> str:
    """The precision the run computed in, as its model config says, else ``not recorded``."""
    for value in (model_config.get("dtype"), model_config.get("torch_dtype"),
                  (model_config.get("model_args") or {}).get("dtype")):  # fmt: skip
        if isinstance(value, str) and value not in ("auto", ""):
            return value.removeprefix("torch.")
    return "not recorded"
