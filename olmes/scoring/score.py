"""One model x task scored: its predictions of every method and its score summary (docs/file-formats.md).

Reading the log-prob files is :mod:`olmes.scoring.logprob_files`, the decisions and the predictions
files :mod:`olmes.scoring.predictions`, the accuracies and the best-of-two
:mod:`olmes.scoring.statistics`; this module puts them together into the summary and writes both.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from olmes.core.methods import CF, MCF, PMI, cf_method, missing_pmi
from olmes.core.records import SCORES_FORMAT, InputFile, ScoreSummary, read_run_record, write_score_summary
from olmes.core.resources import file_sha256
from olmes.core.tasks import get_task
from olmes.scoring.logprob_files import prompt_variant, read_logprobs, read_tables, single_value
from olmes.scoring.predictions import (
    NEAR_TIE_NATS,
    check_same_instances,
    labelled,
    predictions_frame,
    write_predictions,
)
from olmes.scoring.statistics import bits_per_byte, method_stats, olmes_result, partial_reasons


def write_scores(
    predictions: pd.DataFrame, summary: ScoreSummary, predictions_path: Path, summary_path: Path
) -> None:
    """Write a model x task's predictions and its summary, which records the predictions file."""
    write_predictions(predictions, predictions_path)
    summary["predictions"] = {
        "path": os.path.relpath(Path(predictions_path).resolve(), Path(summary_path).resolve().parent),
        "sha256": file_sha256(Path(predictions_path)),
    }
    write_score_summary(summary_path, summary)


def score_task(
    model: str,
    *,
    cf_path: str | Path | None = None,
    pmi_path: str | Path | None = None,
    mcf_path: str | Path | None = None,
    limit: int | None = None,
    require_pmi: bool = False,
) -> tuple[pd.DataFrame, ScoreSummary]:
    """Score one model x task under every method its log-prob files allow, in one go.

    Returns the predictions frame (see :func:`method_predictions`, plus ``model`` and ``task``
    columns) and the summary of :func:`summarize`.
    """
    cf, mcf = read_tables(cf_path, pmi_path, mcf_path)
    predictions = labelled(predictions_frame(cf, mcf), model, (cf or mcf).task)
    inputs = {CF: cf_path, PMI: pmi_path, MCF: mcf_path}
    present = {request_set: Path(path) for request_set, path in inputs.items() if path is not None}
    return predictions, summarize(predictions, present, limit, require_pmi)


def summarize(
    predictions: pd.DataFrame, inputs: dict[str, Path], limit: int | None = None, require_pmi: bool = False
) -> ScoreSummary:
    """The summary of one model x task (docs/file-formats.md) from its predictions of every method.

    ``inputs`` maps request sets (cf, pmi, mcf) to the log-prob files the predictions came from (recorded with
    their SHA-256 and run records). pmi is required when the task's standard has pmi requests, or
    with ``require_pmi`` (runs that ask for all four normalizations on every task). The caller adds
    the predictions file's location.
    """
    model = str(predictions["model"].iloc[0])
    task = single_value(predictions, "task", inputs.get(CF) or inputs[MCF])
    spec = get_task(task)
    found = set(predictions["method"])
    if CF in inputs and (spec.has_pmi or require_pmi) and cf_method(PMI).key not in found:
        raise missing_pmi(inputs[CF])
    if CF in inputs and MCF in inputs:
        check_same_instances(predictions, inputs[CF], inputs[MCF])
    methods = method_stats(predictions, task)
    n_instances = int((predictions["method"] == predictions["method"].iloc[0]).sum())
    reasons = partial_reasons(task, n_instances, limit, CF in inputs, MCF in inputs)
    variant = prompt_variant(inputs)
    if variant is not None:
        reasons.append(f"prompt variant {variant}, not the standard's prompts")
    summary = {
        "format": SCORES_FORMAT.tag,
        "model": model,
        "task": task,
        "display_name": spec.display_name,
        "recommended_norm": spec.recommended_norm,
        "n_instances": n_instances,
        "full_count": spec.standard_count,
        "limit": limit,
        "partial": bool(reasons),
        "partial_reasons": reasons,
        "methods": methods,
        "best_of_two": olmes_result(methods, spec),
        "near_tie_nats": NEAR_TIE_NATS,
        "inputs": {request_set: input_record(path) for request_set, path in inputs.items()},
    }
    if variant is not None:
        summary["variant"] = variant
    if CF in inputs:
        bpb = bits_per_byte(read_logprobs(inputs[CF], CF))
        if bpb is not None:
            summary["bpb"] = bpb
    return summary


def input_record(path: Path) -> InputFile:
    """Where an input file was, its SHA-256 and its run record (what made it)."""
    return {"path": str(path), "sha256": file_sha256(path), "run": read_run_record(path)}
