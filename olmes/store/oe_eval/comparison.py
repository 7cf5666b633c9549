"""``olmes import oe-eval``, scores: the imported log-probs scored by olmes, and each metric the run
reported compared with ours, decision by decision (ties within float error named)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from olmes.core.errors import OlmesError
from olmes.core.methods import CF, MCF, Formulation, Method, get_method
from olmes.core.records import MetricComparison, write_run_record
from olmes.store.layout import SCORES, predictions_name, summary_name
from olmes.store.naming import shown_name
from olmes.store.oe_eval.checks import ImportedTask, int_field
from olmes.store.oe_eval.files import TaskRun, metric_methods
from olmes.store.oe_eval.model import ImportTarget

PER_TOKEN = "acc_per_token"
ONE_TOKEN_NOTE = (
    "its predictions count 1 token for every continuation (num_tokens 1: a known defect of "
    "oe-eval's HF path at this version), so its acc_per_token is its acc_raw; olmes counts the "
    "continuation's tokens"
)


def score_and_compare(
    item: ImportedTask, target: ImportTarget, staging: Path, files: dict, records: dict
) -> list[str]:
    """Score the task once; compare the run's metrics with ours and write them into the run records,
    then the summary, which records those run records (so it is made after they are written) and
    names its log-prob files where they will be. The first line names the model by its display name
    (``target.display_name``: the one the import lists it under), then its name."""
    from olmes.scoring.logprob_files import read_tables
    from olmes.scoring.score import score_task, summarize, write_scores

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
    for name, entry in summary["inputs"].items():
        entry["path"] = str(target.output / files[name].relative_to(staging))
    scores = staging / SCORES / target.model
    write_scores(
        predictions, summary, scores / predictions_name(item.task.key), scores / summary_name(item.task.key)
    )
    agree = sum(entry["agrees"] for entry in comparison)
    within = sum(entry["agrees_within_error"] and not entry["agrees"] for entry in comparison)
    lines = [
        f"{shown_name(target.model, target.display_name)} {item.task.key}: imported {item.count} instances "
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
        doc_id = int_field(prediction.get("doc_id"), run, "doc_id", "predictions.jsonl")
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
