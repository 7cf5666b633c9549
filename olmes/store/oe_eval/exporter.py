"""``olmes export oe-eval``: a model's results in the run-folder layout of AI2's OLMES implementation.

Per task and formulation (its ``rc`` and ``mc`` runs; MMLU per subject) the files oe-eval writes:
``task-NNN-<task>-metrics.json``, ``-requests.jsonl`` (the standard's requests, the pmi ones at
``doc_id`` + 1000000) and ``-predictions.jsonl`` (each choice's log-prob and token count, each
instance's decisions), then ``metrics-all.jsonl`` and ``metrics.json`` with its task groups:
``<task>::olmes`` is the better of the mc and rc primary scores ("mc_or_rc"), ``mmlu:rc::olmes`` and
``mmlu:mc::olmes`` the macro-average over subjects. A reader of oe-eval's outputs reads ours;
``olmes import oe-eval`` reads them back to the same scores. The OLMES v0.2 generative tasks go out
as oe-eval's generation tasks (``drop::olmes``: :mod:`olmes.store.oe_eval.generative`). Every metrics
file says it was written by olmes (``olmes_export``), so an import never takes it for a run of AI2's
implementation.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd

from olmes import __version__
from olmes.core.atomic import atomic_dir, write_json_atomic
from olmes.core.errors import OlmesError
from olmes.core.methods import CF, MCF, MCF_METHOD, PMI, Formulation
from olmes.core.records import read_score_summary, write_records
from olmes.core.tasks import TASKS, Task
from olmes.requests.build import instance_rows, task_instances
from olmes.store.blobs import logprob_file
from olmes.store.canonical import canonical_requests
from olmes.store.checks import source_name
from olmes.store.layout import logprob_name
from olmes.store.oe_eval.files import (
    CF_METRICS,
    EXPORT_MARK,
    FORMULATIONS,
    UNCOND_OFFSET,
    alias,
    metric_methods,
    task_file,
)
from olmes.store.oe_eval.generative import export_generative
from olmes.store.sources import sources

SUFFIXES = {
    "acc_raw": "raw",
    "acc_per_token": "per_token",
    "acc_per_char": "per_char",
    "acc_uncond": "uncond",
}
"""Its per-instance metric names end in these (predicted_index_raw, ...)."""


def export_model(
    origin: Path, model: str, output: Path, tasks: list[str] | None = None, data_source: str = "bundle"
) -> list[str]:
    """Write ``model``'s standard results of a results folder or store (all tasks, or ``tasks``) into
    ``output``, made anew. Its lines name the model by its display name (olmes.store.naming)."""
    source = sources(origin, [model])[0]
    named = source_name(source)
    entries: list[dict] = []
    chosen = [task for task in source.tasks() if tasks is None or task in tasks]
    generative = [task for task in source.generative_tasks() if tasks is None or task in tasks]
    for task in tasks or []:
        if task not in source.tasks() and task not in source.generative_tasks():
            raise OlmesError(
                f"{origin} has no {task} results of {named}; it has: "
                f"{', '.join(source.tasks() + source.generative_tasks())}"
            )
    with atomic_dir(output, "export") as folder:
        for task_key in chosen:
            summary = read_score_summary(source.summary_path(task_key))
            entries += _export_task(folder, len(entries), source, summary, data_source)
        for task_key in generative:  # OLMES v0.2: one generation task each (olmes.store.oe_eval.generative)
            run = _generations_run(source, task_key)
            entries.append(export_generative(folder, len(entries), source, task_key, _model_config(run)))
        if not entries:
            raise OlmesError(f"{origin} has no standard results of {named} to export")
        groups = _groups(entries)
        everything = groups + entries
        write_records(everything, folder / "metrics-all.jsonl")
        write_json_atomic(folder / "metrics.json", _beaker_summary(everything))
    return [f"{named}: {len(entries)} task files and {len(groups)} task groups written to {output}"]


def _generations_run(source, task_key: str) -> dict:
    """The run record of a generative task's generations (the model it names), else nothing."""
    from olmes.core.records.generative import read_generative_summary
    from olmes.store.layout import generative_names

    summary = read_generative_summary(source.generative / generative_names(task_key)[0])
    return summary["inputs"]["generations"]["run"] or {}


def _export_task(folder: Path, start: int, source, summary: dict, data_source: str) -> list[dict]:
    task = TASKS[summary["task"]]
    limit = summary["limit"]
    frames = {}
    for request_set, entry in summary["inputs"].items():
        name = logprob_name(task.key, request_set)
        path = (
            source.logprobs / name
            if source.store is None
            else logprob_file(source.store, source.logprobs, name, entry["sha256"])
        )
        frames[request_set] = _checked_frame(path, task, request_set, limit, data_source)
    predictions = pd.read_parquet(source.scores / summary["predictions"]["path"])
    instances = task_instances(task, limit, data_source)
    rows = instance_rows(task, instances)
    written = []
    for formulation in (CF, MCF):
        if formulation not in frames:
            continue
        for subject in task.oe_eval_names.values():
            positions = [i for i, row in enumerate(rows) if row.get("subject") == subject]
            if not positions:
                continue
            index = start + len(written)
            run = summary["inputs"][formulation]["run"] or {}  # the run record of its log-prob file
            written.append(
                _write_part(
                    folder,
                    index,
                    task,
                    formulation,
                    subject,
                    positions,
                    frames,
                    predictions,
                    summary,
                    run,
                    rows,
                    limit,
                )  # fmt: skip
            )
    return written


def _checked_frame(path: Path, task: Task, request_set: str, limit, data_source: str) -> pd.DataFrame:
    """A log-prob file whose rows are the canonical requests', in their order (context and
    continuation come from the canonical requests, which the store's files were checked against)."""
    frame = pd.read_parquet(path)
    rows = canonical_requests(task.key, request_set, limit, data_source)
    keys = list(zip(frame["instance_index"], frame["choice"], strict=True))
    if keys != [(row["instance_index"], row["choice"]) for row in rows]:
        raise OlmesError(f"{path}: its rows are not this olmes version's {task.key} {request_set} requests")
    frame["context"] = [row["context"] for row in rows]
    frame["continuation"] = [row["continuation"] for row in rows]
    return frame


def _write_part(folder, index, task, formulation, subject, positions, frames, predictions, summary, run,
                rows, limit) -> dict:  # fmt: skip
    """The three files of one task part's run; returns its metrics entry."""
    name = alias(task, formulation, subject)
    oe_name = name.split(":")[0]
    offset = {position: doc_id for doc_id, position in enumerate(positions)}
    main = frames[formulation]
    main = main[main["instance_index"].isin(offset)]
    uncond = frames.get(PMI) if formulation == CF else None
    if uncond is not None:
        uncond = uncond[uncond["instance_index"].isin(offset)]
    requests = [_request(oe_name, row, offset, rows, 0) for row in main.itertuples()]
    if uncond is not None:
        requests += [_request(oe_name, row, offset, rows, UNCOND_OFFSET) for row in uncond.itertuples()]
    config = _task_config(task, formulation, name, oe_name, limit, uncond is not None)
    model_config = _model_config(run)
    hashes = {
        "task_hash": _hash(config),
        "model_hash": _hash(model_config),
    }
    chosen = predictions[predictions["instance_index"].isin(offset)]
    per_instance = _predictions(main, uncond, chosen, offset, formulation, hashes)
    metrics = _metrics(summary, formulation, subject, task)
    write_records(requests, task_file(folder, index, oe_name, "requests.jsonl"))
    write_records(per_instance, task_file(folder, index, oe_name, "predictions.jsonl"))
    entry = {
        "task_name": oe_name,
        **hashes,
        "model_config": model_config,
        "task_config": config,
        "compute_config": {"batch_size": None, "output_dir": None},
        "processing_time": run.get("wall_time_s", 0.0) if formulation == CF or subject is None else 0.0,
        "current_date": None,
        "num_instances": len(positions),
        "beaker_info": {},
        "metrics": metrics,
        "task_idx": index,
        EXPORT_MARK: {"olmes": __version__, "model": summary["model"], "task": task.key},
    }
    write_json_atomic(task_file(folder, index, oe_name, "metrics.json"), entry)
    return entry


def _request(oe_name: str, row, offset: dict, rows: list, shift: int) -> dict:
    doc_id = offset[row.instance_index]
    instance = rows[row.instance_index]
    return {
        "request_type": "loglikelihood",
        "doc": {"id": instance["native_id"], **{k: instance[k] for k in ("question", "choices", "gold")}},
        "request": {"context": row.context, "continuation": row.continuation},
        "idx": int(row.choice),
        "task_name": oe_name,
        "doc_id": doc_id + shift,
        "native_id": instance["native_id"],
        "label": int(row.label),
    }


def _predictions(main, uncond, chosen, offset, formulation: Formulation, hashes: dict) -> list[dict]:
    """Per instance: each choice's output (as oe-eval writes it) and the decisions of each metric."""
    uncond_sums = {} if uncond is None else {
        (r.instance_index, r.choice): float(r.sum_logprob) for r in uncond.itertuples()
    }  # fmt: skip
    outputs: dict[int, list] = {}
    for row in main.itertuples():
        output = {
            "sum_logits": float(row.sum_logprob),
            "num_tokens": int(row.num_tokens),
            "num_tokens_all": None,
            "is_greedy": bool(row.is_greedy) if row.is_greedy is not None else None,
            "logits_per_token": float(row.sum_logprob) / max(int(row.num_tokens), 1),
            "logits_per_char": float(row.sum_logprob) / max(int(row.num_chars), 1),
            "num_chars": int(row.num_chars),
        }
        if (row.instance_index, row.choice) in uncond_sums:
            output["sum_logits_uncond"] = uncond_sums[(row.instance_index, row.choice)]
        outputs.setdefault(int(row.instance_index), []).append(output)
    decisions = {(r.method, r.instance_index): r for r in chosen.itertuples()}
    lines = []
    for position, doc_id in offset.items():
        metrics, label, native_id = {}, None, None
        for metric, method in metric_methods(formulation).items():
            decision = decisions.get((method, position))
            if decision is None:
                continue
            suffix = SUFFIXES[metric]
            metrics[f"predicted_index_{suffix}"] = int(decision.prediction)
            metrics[f"acc_{suffix}"] = int(bool(decision.correct))
            label, native_id = int(decision.label), str(decision.native_id)
        metrics["correct_choice"] = label
        lines.append({
            "doc_id": doc_id, "native_id": native_id, "metrics": metrics, "model_output": outputs[position],
            "label": label, **hashes,
        })  # fmt: skip
    return lines


def _metrics(summary: dict, formulation: Formulation, subject: str | None, task: Task) -> dict:
    """The task part's metrics as oe-eval names them, and its primary score."""
    found = {}
    for metric, method in metric_methods(formulation).items():
        stats = summary["methods"].get(method)
        if stats is None:
            continue
        found[metric] = (stats["subjects"][subject] if subject is not None else stats)["accuracy"]
    found["primary_score"] = found[_primary_metric(task, formulation)]
    return found


def _primary_metric(task: Task, formulation: Formulation) -> str:
    if formulation == MCF:
        return next(metric for metric, method in metric_methods(MCF).items() if method == MCF_METHOD.key)
    return next(metric for metric, norm in CF_METRICS.items() if norm == task.recommended_norm)


def _task_config(task: Task, formulation: Formulation, name: str, oe_name: str, limit, uncond: bool) -> dict:
    config = {
        "task_name": oe_name,
        "task_core": oe_name,
        "split": task.split,
        "num_shots": task.num_shots,
        "fewshot_source": f"OLMES:{task.key}",
        "primary_metric": _primary_metric(task, formulation),
        "limit": limit,
        "random_subsample_seed": None,
        "metric_kwargs": {"uncond_docid_offset": UNCOND_OFFSET} if uncond else None,
        "metadata": {"regimes": ["OLMES-v0.1"], "alias": name},
        "version": None,
    }
    return config


def _model_config(run: dict) -> dict:
    """What the run record says of the model, in oe-eval's keys."""
    return {
        "model": run.get("model"),
        "revision": run.get("model_revision"),
        "dtype": run.get("dtype"),
        "max_length": run.get("max_input_tokens"),
        "model_type": "olmes",
        "metadata": {"fingerprint": run.get("model_fingerprint")},
    }


def _hash(config: dict) -> str:
    return hashlib.md5(json.dumps(config, sort_keys=True).encode(), usedforsecurity=False).hexdigest()


def _groups(entries: list[dict]) -> list[dict]:
    """oe-eval's task groups of the exported parts: macro over subjects, then the better of mc and rc."""
    by_alias = {entry["task_config"]["metadata"]["alias"]: entry for entry in entries}
    groups, made = [], {}
    for task in TASKS.values():
        for formulation in (CF, MCF):
            short = next(k for k, v in FORMULATIONS.items() if v == formulation)
            parts = [by_alias.get(alias(task, formulation, s)) for s in task.oe_eval_names.values()]
            if not task.subjects:
                made[(task.key, formulation)] = parts[0]
                continue
            if any(part is None for part in parts):
                continue  # oe-eval groups only complete subject sets
            group = _group(f"{task.oe_eval_name}:{short}::olmes", parts, "macro")
            group["metrics"]["primary_score"] = sum(p["metrics"]["primary_score"] for p in parts) / len(parts)
            groups.append(group)
            made[(task.key, formulation)] = group
        both = [made.get((task.key, MCF)), made.get((task.key, CF))]
        if all(both):
            group = _group(f"{task.oe_eval_name}::olmes", both, "mc_or_rc")
            best = max(range(2), key=lambda i: both[i]["metrics"]["primary_score"])
            group["metrics"]["primary_score"] = both[best]["metrics"]["primary_score"]
            group["task_config"]["metadata"]["used_mc_or_rc"] = ("mc", "rc")[best]
            groups.append(group)
    return groups


def _group(name: str, parts: list[dict], primary: str) -> dict:
    first = parts[0]
    return {
        "task_name": name,
        "task_hash": _hash({"hashes": sorted(p["task_hash"] for p in parts)}),
        "model_hash": first["model_hash"],
        "model_config": first["model_config"],
        "task_config": {
            **first["task_config"],
            "task_name": name,
            "primary_metric": primary,
            "metadata": {"alias": name, "num_tasks": len(parts)},
        },  # fmt: skip
        "compute_config": first["compute_config"],
        "processing_time": sum(p["processing_time"] for p in parts),
        "current_date": None,
        "num_instances": sum(p["num_instances"] for p in parts),
        "beaker_info": {},
        "metrics": {},
        "task_idx": None,
        EXPORT_MARK: first[EXPORT_MARK],
    }


def _beaker_summary(entries: list[dict]) -> dict:
    """The run's ``metrics.json``: every alias's primary score, each entry's metrics, the model."""
    return {
        "all_primary_scores": [
            f"{e['task_config']['metadata']['alias']}: {e['metrics']['primary_score']:.6}" for e in entries
        ],
        "tasks": [
            {
                "alias": e["task_config"]["metadata"]["alias"],
                "metrics": e["metrics"],
                "num_instances": e["num_instances"],
                "processing_time": e["processing_time"],
                "task_config": e["task_config"],
            }  # fmt: skip
            for e in entries
        ],
        "model_config": entries[0]["model_config"],
    }
