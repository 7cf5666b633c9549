"""The results store: the published leaderboard's results, committed to the repository.

Layout (format ``olmes.store/1``, docs/file-formats.md)::

    <store>/store.json                              {"format": "olmes.store/1"} (+ "logprob_hosts")
    <store>/tasks/<task>.instances.jsonl.gz         the full standard's instances (question, choices, gold)
    <store>/tasks/<task>.<set>.examples.jsonl       requests of the first two instances (site prompts)
    <store>/models/<model>/model.json               provenance: model, revision, hardware, versions, cost
    <store>/models/<model>/logprobs/<task>.<set>.parquet.run.json (+ the .parquet itself when in-tree)
    <store>/models/<model>/scores/<task>.scores.json (+ <task>.predictions.parquet)
    <store>/models/<model>/robustness/<variant>/    a prompt variant's summaries, predictions, log-probs
    <store>/models/<model>/robustness/rotations/    <task>.rotations.json + its mcf and mcf_rot log-probs
    <store>/blobs/<sha256>.parquet                  external log-prob files (not in git: olmes.store.blobs)

:func:`publish` moves finished results (a workflow results folder, or another store) into a store.
It refuses results made with other requests than this olmes version's (the run records' request
SHA-256 against requests regenerated here), partial results unless asked, and an existing model x
task unless asked to replace it. Log-prob files go to the store's blobs/ (or, asked, into the model
folder). A publish holds the store's lock (olmes.store.lock) from its first read of the store to its
last write, so two publishes never interleave. A model folder is built beside the old one, checked
with ``olmes verify``'s own checks (publish accepts exactly what verify passes) and swapped in with
one atomic rename, so an interrupted publish leaves the store as it was or as after success; what a
killed one leaves behind is removed by the next. Nothing in the store depends on the order in which
models were published: two stores filled on two machines merge into the same leaderboard. Nothing
in it names a folder of the publishing machine either: summaries, rotations reports and run records
go in in their portable form (olmes.store.portable).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import hashlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from olmes import __version__
from olmes.core.atomic import atomic_path, make_dir_public, write_json_atomic
from olmes.core.errors import OlmesError
from olmes.core.methods import REQUEST_SETS
from olmes.core.records import (
    STORE_FORMAT,
    ModelIdentity,
    ModelRecord,
    RequestRow,
    StoreRecord,
    read_document,
    read_format,
    read_run_record,
    read_score_summary,
    records_bytes,
)
from olmes.core.resources import file_sha256
from olmes.logprobs.identity import missing_qualifiers, qualified_name, recorded_identity
from olmes.requests.build import instance_rows, requests_of, task_instances
from olmes.requests.prompts import STANDARD_VARIANT
from olmes.requests.tasks import TASKS
from olmes.scoring.rotations import ROTATIONS_KIND, ROTATIONS_SUFFIX, read_rotation_report
from olmes.store.blobs import BLOBS, LAYOUTS, blob_path, check_host, ignore_blobs, logprob_file
from olmes.store.lock import LOCK_NAME, describe, is_leftover, staging_model, store_lock
from olmes.store.portable import LOGPROBS, SCORES, is_provenance, portable_spec, write_portable
from olmes.tables.results import ModelInfo, read_models_file

MODEL_RECORD = "model.json"
ROBUSTNESS = "robustness"  # a model's folder of prompt-variant and answer-order results
EXAMPLE_INSTANCES = 2  # instances whose requests the store keeps per task x set (the site shows the first)


# -- reading a store --------------------------------------------------------------------------------


def is_store(path: str | Path) -> bool:
    return (Path(path) / "store.json").is_file()


def check_store(root: str | Path) -> Path:
    """``root`` as a Path when it is a store of this format; one clear error otherwise."""
    store_record(root)
    return Path(root)


def store_record(root: str | Path) -> StoreRecord:
    """A store's ``store.json``, checked: this format, and hosts that can be fetched from."""
    root = Path(root)
    marker = root / "store.json"
    if not marker.is_file():
        raise OlmesError(
            f"{root} is not an olmes results store (no store.json); create one with olmes publish"
        )
    record = read_document(marker, StoreRecord)
    if record["format"] != STORE_FORMAT:
        raise OlmesError(
            f"{root} is a results store of format {record['format']!r}; this olmes reads {STORE_FORMAT}"
        )
    for host in record.get("logprob_hosts", []):
        check_host(host, str(marker))
    return record


def model_names(root: str | Path) -> list[str]:
    """The store's models, by name (sorted: the store has no order of publication). A folder an
    interrupted publish left (olmes.store.lock.is_leftover) is no model."""
    folder = check_store(root) / "models"
    found = folder.glob(f"*/{MODEL_RECORD}") if folder.is_dir() else []
    return sorted(p.parent.name for p in found if not is_leftover(p.parent.name))


def read_model_record(root: str | Path, model: str, folder: Path | None = None) -> ModelRecord:
    """A store model's record; from ``folder`` instead of ``models/<model>`` when given (a model
    folder being built)."""
    path = (folder or Path(root) / "models" / model) / MODEL_RECORD
    record = read_format(path, ModelRecord, STORE_FORMAT, "publish the model again with olmes publish")
    if record["name"] != model:
        raise OlmesError(f"{path}: the model record of {record['name']!r}, in the folder of {model!r}")
    return record


def model_infos(root: str | Path) -> list[ModelInfo]:
    """How the tables and the site name the store's models (display name, checkpoint series)."""
    return [
        ModelInfo.from_record(
            read_model_record(root, name), str(Path(root) / "models" / name / MODEL_RECORD), other_keys=True
        )
        for name in model_names(root)
    ]


def score_paths(root: str | Path) -> list[Path]:
    """What the tables read: each model's score summaries and its robustness results, if any."""
    models = [Path(root) / "models" / name for name in model_names(root)]
    return [folder / kind for folder in models for kind in (SCORES, ROBUSTNESS) if (folder / kind).is_dir()]


def task_paths(root: str | Path) -> list[Path]:
    folder = check_store(root) / "tasks"
    return [folder] if folder.is_dir() else []


# -- where finished results come from -----------------------------------------------------------------


@dataclass(frozen=True)
class RobustnessResult:
    """One robustness result of a model as found in a results folder or a store."""

    kind: str  # a prompt variant's name, or ROTATIONS_KIND
    task: str
    path: Path  # the variant's score summary, or the rotations report
    logprobs: Path  # the folder of its log-prob files
    store: Path | None  # the store it is in (whose blobs/ may hold its log-prob files), None if none


@dataclass(frozen=True)
class Source:
    """One model's finished results: its score summaries and log-prob files, and how to name it."""

    model: str
    scores: Path
    logprobs: Path
    info: ModelInfo
    store: Path | None  # the store it is in (whose blobs/ may hold its log-prob files), None if none

    def tasks(self) -> list[str]:
        found = {p.name.removesuffix(".scores.json") for p in self.scores.glob("*.scores.json")}
        return [task for task in TASKS if task in found]

    def robustness(self, origin: Path) -> list[RobustnessResult]:
        """Each robustness result of this model in ``origin``: a prompt variant's score summaries
        (kind = the variant) and rotations reports."""
        if self.store is not None:  # the model folder holding scores/ (a model folder being built too)
            folders = sorted(p for p in (self.scores.parent / ROBUSTNESS).glob("*") if p.is_dir())
            places = [(folder.name, folder, folder) for folder in folders]
        else:
            variants = sorted(p for p in (origin / "variants").glob("*") if p.is_dir())
            places = [(v.name, v / "scores" / self.model, v / "logprobs" / self.model) for v in variants]
            places.append((ROTATIONS_KIND, self.scores, self.logprobs))
        found = []
        for kind, folder, logprobs in places:
            suffix = ROTATIONS_SUFFIX if kind == ROTATIONS_KIND else ".scores.json"
            for path in sorted(folder.glob(f"*{suffix}")):
                task = path.name.removesuffix(suffix)
                if task in TASKS:  # a stray summary of no task is not a result (olmes verify names it)
                    found.append(RobustnessResult(kind, task, path, logprobs, self.store))
        return found


def sources(origin: str | Path, models: list[str] | None = None) -> list[Source]:
    """The models of a workflow results folder (``results/``) or of another store, all or those named."""
    origin = Path(origin)
    if is_store(origin):
        infos = {info.name: info for info in model_infos(origin)}
        base = origin / "models"
        found = {name: (base / name / SCORES, base / name / LOGPROBS) for name in infos}
    else:
        if not (origin / "scores").is_dir():
            raise OlmesError(
                f"{origin} holds no results (no scores/ folder); give a results folder or a store"
            )
        models_file = origin / "models.json"
        infos = {info.name: info for info in read_models_file(models_file)} if models_file.is_file() else {}
        found = {
            p.name: (p, origin / "logprobs" / p.name)
            for p in sorted((origin / "scores").iterdir())
            if p.is_dir()
        }
    for name in models or []:
        if name not in found:
            raise OlmesError(
                f"{origin} has no results of model {name!r}; it has: {', '.join(found) or 'none'}"
            )
    chosen = models or list(found)
    store = origin if is_store(origin) else None
    return [
        Source(name, *found[name], infos.get(name) or ModelInfo.from_record({"name": name}), store)
        for name in chosen
    ]


# -- the canonical requests of this olmes version ------------------------------------------------------


@functools.cache
def _instances(task: str, limit: int | None, source: str):
    return task_instances(TASKS[task], limit, source)


@functools.cache
def canonical_requests(
    task: str, request_set: str, limit: int | None, source: str, variant: str = STANDARD_VARIANT
) -> tuple[RequestRow, ...]:
    rows = requests_of(TASKS[task], request_set, _instances(task, limit, source), source, True, variant)
    return tuple(rows)


@functools.cache
def canonical_sha256(
    task: str, request_set: str, limit: int | None, source: str = "bundle", variant: str = STANDARD_VARIANT
) -> str:
    """SHA-256 of the request file ``olmes requests`` writes for this task, set, limit and variant."""
    rows = canonical_requests(task, request_set, limit, source, variant)
    return hashlib.sha256(records_bytes(rows)).hexdigest()


@functools.cache  # the same bytes for every model published from one process
def task_files(task: str, source: str = "bundle") -> dict[str, bytes]:
    """The store's files of one task (name -> bytes): its full instance list and its request examples."""
    instances = _instances(task, None, source)
    listed = instance_rows(TASKS[task], instances)
    files = {f"{task}.instances.jsonl.gz": records_bytes(listed, compress=True)}
    for request_set in REQUEST_SETS:
        rows = canonical_requests(task, request_set, None, source)
        example = [row for row in rows if row["instance_index"] < EXAMPLE_INSTANCES]
        files[f"{task}.{request_set}.examples.jsonl"] = records_bytes(example)
    return files


# -- publishing ---------------------------------------------------------------------------------------


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
    """A model x task's results, checked: files intact, requests canonical, partial only if allowed."""
    where = f"{source.model} {task}"
    summary_path = source.scores / f"{task}.scores.json"
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
        name = f"{task}.{request_set}.parquet"
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
        records.append(Path(f"{folder / name}.run.json"))
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


def check_robustness(model: str, result: RobustnessResult, data_source: str) -> CheckedRobustness:
    """A prompt variant's summary or a rotations report, checked like a standard result: files
    intact, requests this version's (the variant's, at the limit it was run with), one model."""
    kind, task, path, logprobs = result.kind, result.task, result.path, result.logprobs
    where = f"{model} {task} ({kind})"
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


def publish(
    origin: str | Path,
    store: str | Path,
    models: list[str] | None = None,
    *,
    tasks: list[str] | None = None,
    allow_partial: bool = False,
    replace: bool = False,
    data_source: str = "bundle",
    robustness_only: bool = False,
    logprobs: str = "external",
) -> list[str]:
    """Move the finished results of ``models`` (default: all) in ``origin`` into ``store``: the
    standard's score summaries and log-probs, and the robustness results beside them (prompt
    variants, answer orders; with ``robustness_only`` just those, for a model already in the store).
    ``logprobs`` says where the log-prob files go: "external" (the store's blobs/) or "in-store"
    (the model folder).

    Every model x task is checked before anything is written, and each model folder, once built, with
    ``olmes verify``'s checks before it is swapped in; the store's lock is held throughout (a second
    publish waits). Returns one line per model published.
    """
    if logprobs not in LAYOUTS:
        raise OlmesError(f"log-prob layout {logprobs!r} is not one of {', '.join(LAYOUTS)}")
    store, origin = Path(store), Path(origin)
    _check_store_folder(store)
    store.mkdir(parents=True, exist_ok=True)
    said: list[dict] = []
    with store_lock(store, waiting=lambda holder: _lock_waiting(holder, said)):
        _remove_leftovers(store)
        _ensure_store(store)
        return _publish_locked(
            origin, store, models, tasks, allow_partial, replace, data_source, robustness_only, logprobs
        )


def _publish_locked(
    origin: Path,
    store: Path,
    models: list[str] | None,
    tasks: list[str] | None,
    allow_partial: bool,
    replace: bool,
    data_source: str,
    robustness_only: bool,
    logprobs: str,
) -> list[str]:
    plans = []
    for source in sources(origin, models):
        wanted = lambda task: tasks is None or task in tasks  # noqa: E731
        chosen = [] if robustness_only else [task for task in source.tasks() if wanted(task)]
        found = [result for result in source.robustness(origin) if wanted(result.task)]
        if not chosen and not found:
            what = "robustness results" if robustness_only else "score summaries"
            raise OlmesError(f"{origin}: model {source.model} has no {what} to publish")
        checked = [check_task(source, task, data_source, allow_partial) for task in chosen]
        extra = [check_robustness(source.model, result, data_source) for result in found]
        _check_replacement(store, source.model, checked, extra, replace, robustness_only)
        _check_display_name(source, [*checked, *extra])
        for item in checked:
            _check_task_files(store, item.task, data_source)
        plans.append((source, checked, extra))
    lines = []
    for source, checked, extra in plans:
        _write_model(store, source, checked, extra, logprobs, data_source)
        partial = sum(item.summary["partial"] for item in checked)
        label = f" ({partial} partial)" if partial else ""
        more = f", {len(extra)} robustness result(s)" if extra else ""
        lines.append(
            f"{source.model}: {len(checked)} task(s){label}{more} -> {store / 'models' / source.model}"
        )
    return lines


def _fingerprint(model: str, items: list) -> str:
    """The one model fingerprint of everything published for ``model``."""
    found = {run["model_fingerprint"] for item in items for run in item.runs}
    if len(found) != 1:
        raise OlmesError(f"the results of {model} come from different models ({', '.join(sorted(found))})")
    return found.pop()


def _identity(source: Source, items: list) -> ModelIdentity | None:
    """What the model is: as its run records say, else as the record it comes from says (another
    store's model.json); None when neither does (results made before identities were recorded)."""
    return recorded_identity(run for item in items for run in item.runs) or source.info.identity


def _check_display_name(source: Source, items: list) -> None:
    """A model goes in only under a display name that says what its weights are: no 4-bit GGUF of an
    instruct model may read as the full-precision release (olmes.logprobs.identity.qualifiers)."""
    identity = _identity(source, items)
    name = source.info.display_name
    missing = missing_qualifiers(name, identity) if identity else []
    if missing:
        raise OlmesError(
            f"{source.model}: display name {name!r} does not say {' '.join(missing)}; set its display_name "
            f"to {qualified_name(name, identity)!r} in the config (or the models file)"
        )


def _check_store_folder(store: Path) -> None:
    """A store, or a folder that can become one (none, or empty but for a publish lock)."""
    if is_store(store) or not store.exists():
        return
    if not store.is_dir() or any(p.name != LOCK_NAME for p in store.iterdir()):
        raise OlmesError(f"{store} exists and is not an olmes results store; choose an empty or new folder")


def _ensure_store(store: Path) -> None:
    _check_store_folder(store)
    if not is_store(store):
        write_json_atomic(store / "store.json", {"format": STORE_FORMAT})
    check_store(store)


def _lock_waiting(holder: dict, said: list[dict]) -> None:
    """While a publish waits for another one's lock: one line per holder (``said`` holds those said)."""
    if holder not in said:
        said.append(holder)
        print(f"olmes: publish: waiting for the store's lock, held by {describe(holder)}", file=sys.stderr)


def _remove_leftovers(store: Path) -> None:
    """What interrupted publishes left (olmes.store.lock), removed with a line each; the store's lock
    is held, so none of it belongs to a running publish. A model folder left swapped out with no
    model folder in its place (an interruption between the two renames where no atomic exchange
    exists) is put back: the store as it was."""
    models = store / "models"
    for path in sorted(models.iterdir()) if models.is_dir() else []:
        found = staging_model(path.name)
        if found is None or path.is_symlink() or not path.is_dir():
            continue
        model, label = found
        if label == "old" and not (models / model).exists():
            path.rename(models / model)
            print(f"olmes: publish: put {models / model} back from {path.name}, where an interrupted "
                  "publish had left it", file=sys.stderr)  # fmt: skip
            continue
        shutil.rmtree(path)
        print(f"olmes: publish: removed {path}, left by an interrupted publish", file=sys.stderr)
    for folder in (store, store / "tasks", store / BLOBS):
        for path in sorted(folder.iterdir()) if folder.is_dir() else []:
            if is_leftover(path.name) and path.is_file() and not path.is_symlink():
                path.unlink()
                print(f"olmes: publish: removed {path}, left by an interrupted write", file=sys.stderr)


def _check_replacement(
    store: Path, model: str, checked: list[Checked], extra: list[CheckedRobustness], replace: bool, only: bool
) -> None:
    """An existing model x task (or robustness result), or a model made from other weights, is
    replaced only when asked; robustness results alone join a model of the same weights."""
    fingerprint = _fingerprint(model, [*checked, *extra])
    if not (store / "models" / model / MODEL_RECORD).is_file():
        if only:
            raise OlmesError(f"{store} has no model {model!r}; publish its standard results first")
        return
    record = read_model_record(store, model)
    if record["fingerprint"] != fingerprint and (only or not replace):
        raise OlmesError(
            f"{store} has {model} from other weights or settings (fingerprint {record['fingerprint']}, "
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
    if present:
        raise OlmesError(
            f"{store} already has {model} on {', '.join(present)}; pass --replace to replace "
            f"{'it' if len(present) == 1 else 'them'}"
        )


def _check_task_files(store: Path, task: str, data_source: str) -> None:
    """The task's files already in the store must be this version's, byte for byte."""
    for name, data in task_files(task, data_source).items():
        path = store / "tasks" / name
        if path.is_file() and path.read_bytes() != data:
            raise OlmesError(
                f"{path} differs from the one olmes {__version__} makes; the store was filled by "
                "another olmes version or data source"
            )


def _write_task_files(store: Path, task: str, data_source: str) -> None:
    """The task's instances and request examples, those not in the store yet."""
    _check_task_files(store, task, data_source)
    for name, data in task_files(task, data_source).items():
        path = store / "tasks" / name
        if not path.is_file():
            with atomic_path(path) as temp:
                temp.write_bytes(data)


def _write_model(
    store: Path,
    source: Source,
    checked: list[Checked],
    extra: list[CheckedRobustness],
    layout: str,
    data_source: str,
) -> None:
    """Build the model's new folder (kept results + new ones) beside the old one, check it as
    ``olmes verify`` would, then swap it in (with the task files it needs)."""
    final = store / "models" / source.model
    swapped: list[bool] = []  # once the new folder is in place, the blobs it names stay
    with _logprob_writer(store, layout, lambda: bool(swapped)) as place, _staging(final) as staging:
        origins: dict[Path, Path] = {}  # each file of the staging folder -> where it was copied from
        old = read_model_record(store, source.model) if (final / MODEL_RECORD).is_file() else None
        same_weights = old is not None and old["fingerprint"] == _fingerprint(
            source.model, [*checked, *extra]
        )
        kept = old["tasks"] if same_weights else {}  # a model made from other weights is replaced whole
        new = {item.task for item in checked}
        for task in [t for t in kept if t not in new]:
            for path in final.glob(f"*/{task}.*"):
                _copy_into(staging, f"{path.parent.name}/{path.name}", path, origins)
        for item in checked:
            for path in item.files:
                kind = SCORES if path.parent == source.scores else LOGPROBS
                _copy_into(staging, f"{kind}/{path.name}", path, origins)
            place(item.logprobs, staging / LOGPROBS)
        tasks = {task: entry for task, entry in kept.items() if task not in new}
        tasks.update({item.task: _task_entry(item) for item in checked})
        kept_robustness = old.get(ROBUSTNESS, {}) if same_weights else {}
        robustness = _write_robustness(final, staging, kept_robustness, extra, place, origins)
        record = _model_record(source, [*checked, *extra], tasks)
        if robustness:
            record[ROBUSTNESS] = robustness
        write_json_atomic(staging / MODEL_RECORD, record)
        _verify_staged(store, source.model, staging, final, origins, data_source)
        for item in checked:
            _write_task_files(store, item.task, data_source)
        _swap_in(staging, final)
        swapped.append(True)


@contextlib.contextmanager
def _staging(final: Path) -> Iterator[Path]:
    """An empty folder beside ``final`` (``.<model>.publishing-XXXX``, olmes.store.lock), removed
    again unless the body swapped it in; the next publish removes one a killed publish left."""
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}.publishing-"))
    make_dir_public(staging)
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _verify_staged(
    store: Path, model: str, staging: Path, final: Path, origins: dict[Path, Path], data_source: str
) -> None:
    """The model folder about to be swapped in, checked by ``olmes verify``'s own functions (not a
    copy of them): publish puts in exactly what verify passes. The first problem is the one line of
    the refusal, naming the file it was copied from."""
    from olmes.store.verify import verify_model  # verify reads the store with this module's functions

    problems = verify_model(store, model, staging, data_source=data_source).problems
    if not problems:
        return
    first = problems[0]
    path = origins.get(first.path) or (
        final / first.path.relative_to(staging) if first.path.is_relative_to(staging) else first.path
    )
    what = first.what.replace(str(staging), str(final))
    more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
    raise OlmesError(f"{model} not published, olmes verify would refuse it: {path}: {what}{more}")


def _swap_in(staging: Path, final: Path) -> None:
    """Put the built folder at ``final`` in one atomic step: a rename when there is none yet, else an
    exchange of the two (renameat2 RENAME_EXCHANGE), after which ``staging`` holds the old folder and
    is removed. Where no exchange exists (not Linux, or a file system without it): the old folder is
    renamed aside as ``.<model>.old-XXXX`` and the new one in; an interruption between the two leaves
    no model folder, and the next publish puts the old one back (:func:`_remove_leftovers`)."""
    if not final.exists():
        os.rename(staging, final)
        return
    if _exchange(staging, final):
        return  # the old folder is in staging now, removed by _staging
    old = final.parent / f".{final.name}.old-{staging.name.rsplit('-', 1)[-1]}"
    os.rename(final, old)
    try:
        os.rename(staging, final)
    except BaseException:
        os.rename(old, final)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _exchange(first: Path, second: Path) -> bool:
    """Swap two paths atomically (Linux renameat2 RENAME_EXCHANGE); False where that is not possible."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # a C library without it (glibc < 2.28)
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):  # not supported here
        return False
    raise OSError(code, os.strerror(code), str(second))


def _write_robustness(
    final: Path,
    staging: Path,
    kept: dict,
    extra: list[CheckedRobustness],
    place: PlaceLogprobs,
    origins: dict[Path, Path],
) -> dict:
    """Copy the kept robustness results and the new ones into ``staging``; return the record's entry."""
    new = {(item.kind, item.task) for item in extra}
    for kind, entries in kept.items():
        for task in [t for t in entries if (kind, t) not in new]:
            for path in (final / ROBUSTNESS / kind).glob(f"{task}.*"):
                _copy_into(staging, f"{ROBUSTNESS}/{kind}/{path.name}", path, origins)
    for item in extra:
        for path in item.files:
            _copy_into(staging, f"{ROBUSTNESS}/{item.kind}/{path.name}", path, origins)
        place(item.logprobs, staging / ROBUSTNESS / item.kind)
    entries = {kind: {t: e for t, e in tasks.items() if (kind, t) not in new} for kind, tasks in kept.items()}
    for item in extra:
        entries.setdefault(item.kind, {})[item.task] = {
            "instances": item.instances,
            **_cost(item.runs),
            "published": _now(),
        }
    return {
        kind: {task: entries[kind][task] for task in TASKS if task in entries[kind]}
        for kind in sorted(entries)
        if entries[kind]
    }


PlaceLogprobs = Callable[[list[LogprobFile], Path], None]


@contextlib.contextmanager
def _logprob_writer(store: Path, layout: str, swapped: Callable[[], bool]) -> Iterator[PlaceLogprobs]:
    """A function putting log-prob files where ``layout`` says: into a (staging) model folder, or
    into the store's blobs/ (unless there already, intact). Blobs are written before the model folder
    that names them is swapped in, so the blobs it added are removed again if the publish fails
    before ``swapped()`` (a KeyboardInterrupt while the old folder is removed keeps them)."""
    created: list[Path] = []

    def place(files: list[LogprobFile], folder: Path) -> None:
        for file in files:
            if layout == "in-store":
                _copy(file.path, folder / file.name)
                continue
            blob = blob_path(store, file.sha256)
            if blob.is_file() and file_sha256(blob) == file.sha256:
                continue
            ignore_blobs(store)
            created.append(blob)
            _copy(file.path, blob)

    try:
        yield place
    except BaseException:
        for blob in [] if swapped() else created:
            blob.unlink(missing_ok=True)
        raise


def _now() -> str:
    """When a result is published: ``SOURCE_DATE_EPOCH`` (seconds since 1970, UTC) when set, so that
    two publishes of the same results give the same store bytes (the reproducible-builds
    convention), else the clock's time."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is not None and not epoch.strip().isdigit():
        raise OlmesError(f"SOURCE_DATE_EPOCH={epoch!r} is not a whole number of seconds; unset or fix it")
    seconds = time.time() if epoch is None else int(epoch)
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _cost(runs: list[dict]) -> dict:
    return {
        "hardware": sorted({run.get("hardware", "not recorded") for run in runs}),
        "wall_time_s": round(sum(run["wall_time_s"] for run in runs), 3),
        "tokens_forwarded": sum(run["tokens_forwarded"] for run in runs),
    }


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target) as temp:
        shutil.copyfile(source, temp)


def _copy_into(staging: Path, relative: str, source: Path, origins: dict[Path, Path]) -> None:
    """Copy ``source`` to ``relative`` in the model folder being built; a summary, rotations report
    or run record in the store's portable form (olmes.store.portable), every other file as it is."""
    origins[staging / relative] = source
    if is_provenance(source.name):
        write_portable(source, staging / relative, PurePosixPath(relative))
    else:
        _copy(source, staging / relative)


def _task_entry(item: Checked) -> dict:
    summary = item.summary
    return {
        "instances": summary["n_instances"],
        "limit": summary["limit"],
        "partial": summary["partial"],
        "requests_sha256": {
            request_set: entry["run"]["requests_sha256"] for request_set, entry in summary["inputs"].items()
        },
        **_cost(item.runs),
        "published": _now(),
    }


def _model_record(source: Source, items: list, tasks: dict) -> ModelRecord:
    """Provenance of the model's results: what model, which weights, where, with what, at what cost."""
    run = items[0].runs[0]
    info = source.info.entry()
    identity = _identity(source, items)
    if identity is not None:
        info["identity"] = identity
    ordered = {task: tasks[task] for task in TASKS if task in tasks}
    return {
        "format": STORE_FORMAT,
        **info,
        "spec": portable_spec(run["model"]),
        "kind": run["model_kind"],
        "revision": run["model_revision"],
        "fingerprint": run["model_fingerprint"],
        "dtype": run["dtype"],
        "device": run["device"],
        "versions": run["versions"],
        "wall_time_s": round(sum(entry["wall_time_s"] for entry in ordered.values()), 3),
        "tokens_forwarded": sum(entry["tokens_forwarded"] for entry in ordered.values()),
        "tasks": ordered,
    }
