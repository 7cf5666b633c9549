"""The checks results pass before ``olmes publish`` writes them (and that ``olmes verify`` runs on a
store at rest): files intact, made from this version's requests (olmes.store.canonical), partial only
when allowed, all of one model, under a display name that says what its weights are, replacing a
result already in the store only when asked."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from olmes import __version__
from olmes.core.errors import OlmesError
from olmes.core.identities import missing_qualifiers, qualified_name, recorded_identity
from olmes.core.records import ModelIdentity, read_run_record, read_score_summary
from olmes.core.resources import file_sha256
from olmes.core.tasks import STANDARD_VARIANT
from olmes.scoring.rotations import ROTATIONS_KIND, read_rotation_report
from olmes.store.blobs import logprob_file
from olmes.store.canonical import canonical_sha256, task_files
from olmes.store.layout import (
    GENERATIVE,
    ROBUSTNESS,
    logprob_name,
    model_record_path,
    run_record_name,
    task_files_folder,
)
from olmes.store.lock import LOCK_NAME
from olmes.store.naming import shown_name
from olmes.store.reading import is_store, read_model_record
from olmes.store.sources import RobustnessResult, Source


@dataclass(frozen=True)
class LogprobFile:
    """A checked log-prob file: its name in the model folder, where it is now, and its SHA-256."""

    name: str
    path: Path
    sha256: str


@dataclass
class Checked:
    """One model x task that passed the checks: its files and what the model record says of it."""

    task: str
    files: list[Path]  # summary, predictions, each log-prob file's run record
    logprobs: list[LogprobFile]
    runs: list[dict]
    summary: dict


def check_task(source: Source, task: str, data_source: str, allow_partial: bool) -> Checked:
    """A model x task's results, checked: files intact, requests canonical, partial only if allowed.
    A refusal names the model by its display name (olmes.store.naming), then the task."""
    where = f"{source_name(source)} {task}"
    summary_path = source.summary_path(task)
    summary = read_score_summary(summary_path)
    if summary.get("variant") is not None:
        raise OlmesError(
            f"{summary_path}: a prompt variant's scores ({summary['variant']}), not the standard's"
        )
    if summary["partial"] and not allow_partial:
        reasons = "; ".join(summary["partial_reasons"]) or "partial"
        raise OlmesError(
            f"{where} is partial ({reasons}); publish it with --partial to list it labelled partial"
        )
    predictions = summary_path.parent / summary["predictions"]["path"]
    _check_hash(predictions, summary["predictions"]["sha256"], where)
    records, logprobs, runs = _checked_logprobs(
        where, task, summary["inputs"], source.logprobs, source.store, summary["limit"], data_source
    )
    return Checked(task, [summary_path, predictions, *records], logprobs, runs, summary)


def _checked_logprobs(
    where: str,
    task: str,
    inputs: dict,
    folder: Path,
    store: Path | None,
    limit: int | None,
    data_source: str,
    variant: str = STANDARD_VARIANT,
) -> tuple[list[Path], list[LogprobFile], list[dict]]:
    """The log-prob files a summary or report recorded (and their run records), checked: unchanged,
    made from this version's requests, all by one model. In a ``store`` they may be its blobs."""
    records, logprobs, runs = [], [], []
    for request_set, entry in inputs.items():
        name = logprob_name(task, request_set)
        path = folder / name if store is None else logprob_file(store, folder, name, entry["sha256"])
        _check_hash(path, entry["sha256"], where)
        run = read_run_record(folder / name)
        if run is None:
            raise OlmesError(f"{folder / name}: no run record beside it; re-run the log-prob job")
        canonical = canonical_sha256(task, request_set, limit, data_source, variant)
        if run["requests_sha256"] != canonical:
            raise OlmesError(
                f"{where} {request_set}: made with other requests (SHA-256 {run['requests_sha256'][:12]}, "
                f"olmes {__version__} makes {canonical[:12]}); re-run it with this olmes version"
            )
        records.append(folder / run_record_name(task, request_set))
        logprobs.append(LogprobFile(name, path, entry["sha256"]))
        runs.append(run)
    fingerprints = {run["model_fingerprint"] for run in runs}
    if len(fingerprints) != 1:
        raise OlmesError(
            f"{where}: its log-prob files come from different models ({', '.join(sorted(fingerprints))})"
        )
    return records, logprobs, runs


@dataclass
class CheckedRobustness:
    """One model x task x kind (a prompt variant, or rotations) that passed the checks."""

    kind: str
    task: str
    files: list[Path]  # summary and predictions, or the rotations report; the log-prob run records
    logprobs: list[LogprobFile]
    runs: list[dict]
    instances: int


def check_robustness(source: Source, result: RobustnessResult, data_source: str) -> CheckedRobustness:
    """A prompt variant's summary or a rotations report of ``source``'s model, checked like a
    standard result: files intact, requests this version's (the variant's, at the limit it was run
    with), one model."""
    kind, task, path, logprobs = result.kind, result.task, result.path, result.logprobs
    where = f"{source_name(source)} {task} ({kind})"
    if kind == ROTATIONS_KIND:
        report = read_rotation_report(path)
        # rotations run on a task's first N instances: the requests of limit N
        files, limit, inputs, variant = [path], report["instances"], report["inputs"], STANDARD_VARIANT
        instances = report["instances"]
    else:
        summary = read_score_summary(path)
        if summary.get("variant") != kind:
            found = summary.get("variant") or "standard"
            raise OlmesError(
                f"{path}: holds scores of prompts {found!r}, not of variant {kind!r}; re-run olmes score"
            )
        predictions = path.parent / summary["predictions"]["path"]
        _check_hash(predictions, summary["predictions"]["sha256"], where)
        files, limit, inputs, variant = [path, predictions], summary["limit"], summary["inputs"], kind
        instances = summary["n_instances"]
    records, logprob_files, runs = _checked_logprobs(
        where, task, inputs, logprobs, result.store, limit, data_source, variant
    )
    return CheckedRobustness(kind, task, files + records, logprob_files, runs, instances)


def _check_hash(path: Path, expected: str, where: str) -> None:
    if not path.is_file():
        raise OlmesError(f"{where}: {path} is missing; re-run the workflow for it")
    if file_sha256(path) != expected:
        raise OlmesError(f"{where}: {path} changed after its score summary was written; re-run olmes score")


def source_name(source: Source) -> str:
    """How a message names the model of ``source``: its display name, its name after it where they
    differ (olmes.store.naming)."""
    return shown_name(source.model, source.info.display_name)


def run_cost(runs: list[dict]) -> dict:
    """What a result's run records say it cost, as ``model.json`` states it per task (and verify
    recomputes it): the hardware, the wall time and the tokens forwarded."""
    return {
        "hardware": sorted({run.get("hardware", "not recorded") for run in runs}),
        "wall_time_s": round(sum(run["wall_time_s"] for run in runs), 3),
        "tokens_forwarded": sum(run["tokens_forwarded"] for run in runs),
    }


def one_fingerprint(source: Source, items: list) -> str:
    """The one model fingerprint of everything published for ``source``'s model."""
    found = {run["model_fingerprint"] for item in items for run in item.runs}
    if len(found) != 1:
        raise OlmesError(
            f"the results of {source_name(source)} come from different models ({', '.join(sorted(found))})"
        )
    return found.pop()


def results_identity(source: Source, items: list) -> ModelIdentity | None:
    """What the model is: as its run records say, else as the record it comes from says (another
    store's model.json); None when neither does (results made before identities were recorded)."""
    return recorded_identity(run for item in items for run in item.runs) or source.info.identity


def check_display_name(source: Source, items: list) -> None:
    """A model goes in only under a display name that says what its weights are: no 4-bit GGUF of an
    instruct model may read as the full-precision release (olmes.core.identities.qualifiers)."""
    identity = results_identity(source, items)
    problem = display_name_problem(source.info.display_name, identity)
    if problem:
        raise OlmesError(f"{source.model}: {problem}")


def display_name_problem(name: str, identity: ModelIdentity | None) -> str | None:
    """What is wrong with ``name`` as the display name of weights of ``identity`` (None: nothing): it
    must say the qualifiers (tuning, quantization, GGUF) and, where the original is a known hub
    model, name it by its family (the first word of the repository's name: ``SmolLM2`` of
    ``HuggingFaceTB/SmolLM2-135M-Instruct``), so that a 135M model cannot be listed as another one."""
    if identity is None:
        return None
    missing = missing_qualifiers(name, identity)
    if missing:
        return (
            f"display name {name!r} does not say {' '.join(missing)}; set its display_name to "
            f"{qualified_name(name, identity)!r} in the config (or the models file)"
        )
    family = _family(identity["original"])
    if family and family not in _letters(name):
        return (
            f"display name {name!r} does not name the model it is ({identity['original']}); give it a "
            f"display_name that names it (with {family!r})"
        )
    return None


def _family(original: str) -> str | None:
    """The first word of a hub id's repository name, lower case (None when the original is unknown)."""
    if "/" not in original:
        return None
    words = re.split(r"[^a-z0-9]+", original.split("/", 1)[1].lower())
    return next((word for word in words if word), None)


def _letters(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def check_store_folder(store: Path) -> None:
    """A store, or a folder that can become one (none, or empty but for a publish lock)."""
    if is_store(store) or not store.exists():
        return
    if not store.is_dir() or any(p.name != LOCK_NAME for p in store.iterdir()):
        raise OlmesError(f"{store} exists and is not an olmes results store; choose an empty or new folder")


def check_replacement(
    store: Path,
    source: Source,
    checked: list[Checked],
    extra: list[CheckedRobustness],
    replace: bool,
    only: bool,
    generative: list | None = None,
) -> None:
    """An existing model x task (or robustness result, or generative task), or a model made from
    other weights, is replaced only when asked; robustness results alone join a model of the same
    weights. A refusal names the model as the store does (its display name there)."""
    model = source.model
    generative = generative or []
    fingerprint = one_fingerprint(source, [*checked, *extra, *generative])
    if not model_record_path(store, model).is_file():
        if only:
            raise OlmesError(
                f"{store} has no model {source_name(source)}; publish its standard results first"
            )
        return
    record = read_model_record(store, model)
    named = shown_name(model, record["display_name"])
    if record["fingerprint"] != fingerprint and (only or not replace):
        raise OlmesError(
            f"{store} has {named} from other weights or settings (fingerprint {record['fingerprint']}, "
            f"these results {fingerprint}); "
            + (
                "robustness results join the weights of its standard results"
                if only
                else "pass --replace to replace it"
            )
        )
    if replace:
        return
    present = [item.task for item in checked if item.task in record["tasks"]]
    present += [
        f"{item.task} ({item.kind})"
        for item in extra
        if item.task in record.get(ROBUSTNESS, {}).get(item.kind, {})
    ]
    present += [f"{item.task} (generative)" for item in generative if item.task in record.get(GENERATIVE, {})]
    if present:
        raise OlmesError(
            f"{store} already has {named} on {', '.join(present)}; pass --replace to replace "
            f"{'it' if len(present) == 1 else 'them'}"
        )


def check_task_files(store: Path, task: str, data_source: str) -> None:
    """The task's files already in the store must be this version's, byte for byte."""
    for name, data in task_files(task, data_source).items():
        path = task_files_folder(store) / name
        if path.is_file() and path.read_bytes() != data:
            raise OlmesError(
                f"{path} differs from the one olmes {__version__} makes; the store was filled by "
                "another olmes version or data source"
            )
