"""``olmes verify``, one result: a score summary or rotations report re-checked, every number recomputed
from the store's own log-probs (and the stored predictions against the recomputed ones), its partial
label, its entry in model.json, and one model fingerprint over the model folder."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from olmes.core.bounded_json import parse_json
from olmes.core.errors import OlmesError
from olmes.core.methods import CF, MCF, ROTATIONS
from olmes.core.records import read_score_summary
from olmes.core.resources import file_sha256
from olmes.scoring.rotations import ROTATIONS_KIND, analyze, read_rotation_report
from olmes.scoring.score import score_task
from olmes.scoring.statistics import partial_reasons
from olmes.store.blobs import blob_path
from olmes.store.checks import check_robustness, check_task
from olmes.store.layout import MODEL_RECORD, RUN_SUFFIX, logprob_name
from olmes.store.sources import RobustnessResult, Source
from olmes.store.verification import Verification

RECORD_FIELDS = {"instances": "n_instances", "limit": "limit", "partial": "partial"}  # model.json <- summary
# summary fields checked otherwise than by recomputing them: the files (by SHA-256), the methods (one by one)
NOT_RECOMPUTED = ("inputs", "predictions", "methods")


def verify_task(
    found: Verification, source: Source, task: str, entry: dict | None, logprobs: bool, data_source: str
) -> None:
    path = source.summary_path(task)
    found.results += 1
    with found.checking(path):
        summary = read_score_summary(path)
        _check_label(found, path, summary)
        _check_record_entry(found, source.scores.parent / MODEL_RECORD, task, entry, summary)
        absent = _absent_logprobs(source.store, source.logprobs, task, summary["inputs"])
        if absent and not logprobs:
            found.notes.append(f"{path}: not recomputed, its log-prob files are not here (--no-logprobs)")
            _check_predictions_hash(found, path, summary)
            return
        checked = check_task(source, task, data_source, allow_partial=True)
        files = {file.name.split(".")[1]: file.path for file in checked.logprobs}
        _check_recomputed(found, path, summary, files)


def verify_robustness(
    found: Verification, source: Source, result: RobustnessResult, logprobs: bool, data_source: str
) -> None:
    found.results += 1
    with found.checking(result.path):
        report = read_rotation_report(result.path) if result.kind == ROTATIONS_KIND else None
        summary = report or read_score_summary(result.path)
        if _absent_logprobs(result.store, result.logprobs, result.task, summary["inputs"]) and not logprobs:
            found.notes.append(
                f"{result.path}: not recomputed, its log-prob files are not here (--no-logprobs)"
            )
            return
        checked = check_robustness(source, result, data_source)
        files = {file.name.split(".")[1]: file.path for file in checked.logprobs}
        if report is None:
            _check_recomputed(found, result.path, summary, files)
            return
        again = analyze(source.model, files[MCF], files[ROTATIONS])
        for key in [key for key in again if key != "inputs" and again[key] != report.get(key)]:
            found.problem(result.path, f"{key} is {report.get(key)!r}, its log-probs give {again[key]!r}")
        for key in [key for key in report if key not in again]:
            found.problem(result.path, f"{key} is {report[key]!r}, its log-probs give none")


def _check_label(found: Verification, path: Path, summary: dict) -> None:
    """A result with a limit, fewer instances than the standard or one formulation must say partial, why."""
    inputs = summary["inputs"]
    reasons = partial_reasons(
        summary["task"], summary["n_instances"], summary["limit"], CF in inputs, MCF in inputs
    )
    if summary.get("variant") is not None:
        reasons.append(f"prompt variant {summary['variant']}, not the standard's prompts")
    if summary["partial"] != bool(reasons) or summary["partial_reasons"] != reasons:
        found.problem(
            path,
            f"labelled partial={summary['partial']} {summary['partial_reasons']}, but it is "
            f"partial={bool(reasons)} {reasons}",
        )


def _check_record_entry(
    found: Verification, record: Path, task: str, entry: dict | None, summary: dict
) -> None:
    """The model record's entry of a task says what its summary says."""
    if entry is None:
        found.problem(record, f"does not list task {task}, whose score summary is in the model folder")
        return
    for key, summary_key in RECORD_FIELDS.items():
        if entry.get(key) != summary[summary_key]:
            found.problem(
                record, f"{task}: {key} is {entry.get(key)!r}, its summary says {summary[summary_key]!r}"
            )
    recorded = {name: item["run"]["requests_sha256"] for name, item in summary["inputs"].items()}
    if entry.get("requests_sha256") != recorded:
        found.problem(record, f"{task}: requests_sha256 differs from its summary's run records")


def _absent_logprobs(store: Path | None, folder: Path, task: str, inputs: dict) -> list[str]:
    """The request sets whose log-prob file is neither in the model folder nor in the store's blobs."""
    return [
        name
        for name, entry in inputs.items()
        if not (folder / logprob_name(task, name)).is_file()
        and (store is None or not blob_path(store, entry["sha256"]).is_file())
    ]


def _check_predictions_hash(found: Verification, path: Path, summary: dict) -> None:
    predictions = path.parent / summary["predictions"]["path"]
    if not predictions.is_file() or file_sha256(predictions) != summary["predictions"]["sha256"]:
        found.problem(predictions, "missing, or not the predictions file its score summary records")


def _check_recomputed(found: Verification, path: Path, summary: dict, files: dict[str, Path]) -> None:
    """Every number of a summary, and its predictions file, as its log-prob files give them again."""
    inputs = {f"{name}_path": file for name, file in files.items()}
    predictions, again = score_task(summary["model"], **inputs, limit=summary["limit"])
    for key in [*again, *(key for key in summary if key not in again)]:  # bpb, best_of_two, labels...
        stored, recomputed = summary.get(key), again.get(key)
        if key in NOT_RECOMPUTED or stored == recomputed:
            continue
        if stored is None or recomputed is None or isinstance(stored, dict) and isinstance(recomputed, dict):
            found.problem(path, f"{key} {_difference(stored, recomputed)}")
        else:
            found.problem(path, f"{key} is {stored!r}, its log-probs give {recomputed!r}")
    for method in sorted(set(again["methods"]) | set(summary["methods"])):
        stored, recomputed = summary["methods"].get(method), again["methods"].get(method)
        if stored != recomputed:
            found.problem(path, f"methods.{method} {_difference(stored, recomputed)}")
    stored_file = path.parent / summary["predictions"]["path"]
    with found.checking(stored_file):
        stored = pd.read_parquet(stored_file)
        if not stored.reset_index(drop=True).equals(predictions.reset_index(drop=True)):
            differ = _differing_rows(stored, predictions)
            found.problem(stored_file, f"{differ} prediction row(s) differ from those its log-probs give")


def _difference(stored: dict | None, recomputed: dict | None) -> str:
    if stored is None or recomputed is None:
        if stored is None:
            return f"is absent, its log-probs give {recomputed!r}"
        return f"is {stored!r}, its log-probs give none"
    keys = [key for key in sorted(set(stored) | set(recomputed)) if stored.get(key) != recomputed.get(key)]
    return ", ".join(
        f"{key} is {stored.get(key)!r}, its log-probs give {recomputed.get(key)!r}" for key in keys
    )


def _differing_rows(stored: pd.DataFrame, recomputed: pd.DataFrame) -> int:
    if stored.shape != recomputed.shape or list(stored.columns) != list(recomputed.columns):
        return max(len(stored), len(recomputed))
    left, right = stored.reset_index(drop=True), recomputed.reset_index(drop=True)
    same = (left == right) | (left.isna() & right.isna())
    return int((~same.all(axis=1)).sum())


def check_fingerprints(found: Verification, folder: Path, record: dict) -> None:
    """One model folder, one model: model.json, every run record and every summary's runs agree."""
    seen: dict[str, list[str]] = {record["fingerprint"]: [MODEL_RECORD]}
    for path in sorted(folder.rglob("*.json")):
        name = str(path.relative_to(folder))
        try:
            data = parse_json(path.read_text(encoding="utf-8"), str(path))
        except (ValueError, OlmesError) as error:
            found.problem(path, f"not readable JSON ({error}); publish the model again")
            continue
        inputs = data.get("inputs", {}) if isinstance(data, dict) else {}
        runs = (
            [data]
            if name.endswith(RUN_SUFFIX)
            else [e.get("run") for e in inputs.values() if isinstance(e, dict)]
        )
        runs = [run for run in runs if isinstance(run, dict)]  # another shape: the file's own problem
        for fingerprint in {run.get("model_fingerprint") for run in runs} - {None}:
            seen.setdefault(fingerprint, []).append(name)
    if len(seen) > 1:
        listed = "; ".join(f"{fp} in {len(names)} file(s), e.g. {names[0]}" for fp, names in seen.items())
        found.problem(
            folder / MODEL_RECORD, f"the model folder holds results of {len(seen)} models: {listed}"
        )
