"""``olmes import oe-eval``: a run of AI2's OLMES implementation -> an ordinary olmes results folder.

Each request of the run is checked against this olmes version's canonical requests byte for byte
(the instances, in the standard's order, then every context and continuation and every gold); its
``sum_logits`` (and ``sum_logits_uncond``) become log-prob files of olmes's format, whose token
counts are recounted here with the model's tokenizer as the engine counts them (the run's
``num_tokens`` is not trusted: docs/oe-eval.md), and olmes's own scoring scores them. The run's
configuration, its reported metrics and how they compare with ours go into each run record
(``imported``), so ``olmes publish`` and ``olmes verify`` treat the result like any other.

Ambiguity is refused, never resolved by a guess: two lines for one request or one instance, a
prediction of another instance than its doc_id's requests, files that name different models, a run
of another model than ``--model-spec``. Nothing is written until everything is checked and built,
and then it is swapped in whole (:func:`staged_import`).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import math
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from olmes.core.atomic import write_json_atomic
from olmes.core.bounded_json import parse_json
from olmes.core.errors import OlmesError
from olmes.core.methods import CF, MCF, PMI, Formulation, Method, get_method
from olmes.core.records import (
    ImportedRun,
    MetricComparison,
    ModelIdentity,
    RequestRow,
    RunRecord,
    write_records,
    write_run_record,
)
from olmes.core.resources import file_sha256
from olmes.core.tasks import Task
from olmes.logprobs.options import HUB_ID
from olmes.requests.build import request_sets, task_instances
from olmes.scoring.logprob_files import LOGPROB_TOLERANCE
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
from olmes.store.oe_eval.files import MODEL_FIELDS, TaskRun, metric_methods, model_configs, read_run

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
    runs = read_run(folder)
    _check_one_model(folder, runs)
    grouped: dict[str, dict[Formulation, list[TaskRun]]] = {}
    for run in runs:
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
            position = checked.positions.get((id(run), doc_id))
            if position is not None:
                _check_same_instance(prediction, checked.instance(request_set, position))
                outputs[position] = prediction.get("model_output") or []
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
        if value > LOGPROB_TOLERANCE:
            raise OlmesError(
                f"{where} choice {row['choice']}: {key} is {value!r}, positive: not a log-prob (at most 0); "
                "import a run whose predictions are as oe-eval wrote them"
            )
        if request_set != PMI and choice.get("num_tokens") != count:
            differing += 1
        greedy = choice.get("is_greedy") if request_set != PMI else None
        results.append((float(value), count, greedy if isinstance(greedy, bool) else None))
    return results, differing


def _check_same_instance(prediction: dict, instance: _Instance) -> None:
    """A prediction that names its instance (native_id) must name the one its doc_id's requests are of."""
    named = prediction.get("native_id")
    if named is not None and str(named) != instance.native_id:
        raise OlmesError(
            f"{instance.run.paths['predictions.jsonl']}: doc_id {instance.doc_id} is {named}, its requests' "
            f"is {instance.native_id}: which instance its log-probs are of is ambiguous; import the files "
            "of one run as oe-eval wrote them"
        )


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


@dataclass(frozen=True)
class _Model:
    """The model of an import: its spec resolved, its tokenizer, the precision the run computed in."""

    spec: str
    resolved: Any  # olmes.logprobs.models.ResolvedModel
    tokenizer: Any
    bos: int | None
    dtype: str
    identity: ModelIdentity


def import_run(folder: Path, target: ImportTarget) -> list[str]:
    """Import a run folder; returns one line per task (and one per disagreeing metric). Everything is
    checked and written into a staging folder first; only a finished import changes the output."""
    from olmes.core.identities import qualified_name
    from olmes.logprobs.identity import model_identity
    from olmes.logprobs.models import DTYPES, load_tokenizer

    checked = check_run(folder, target.data_source)
    first = next(iter(checked[0].parts.values()))[0].metrics
    spec = target.spec or _their_model(first)
    resolved, tokenizer, bos = load_tokenizer(spec)
    dtype = _their_dtype(first.get("model_config") or {})
    model = _Model(spec, resolved, tokenizer, bos, dtype, model_identity(resolved, DTYPES.get(dtype, dtype)))
    _check_spec_is_their_model(first, model)
    display_name = target.display_name or qualified_name(target.model, model.identity)
    lines = []
    with staged_import(target.output, target.model, {item.task.key for item in checked}) as staging:
        # read under the import's lock, after an interrupted import's models file has been moved in
        models_file = _models_file_with(target.output / MODELS_FILE, target.model, display_name)
        write_json_atomic(staging / MODELS_FILE, models_file)
        for item in checked:
            lines += _import_task(item, target, model, staging)
    return lines


def _import_task(item: ImportedTask, target: ImportTarget, model: _Model, staging: Path) -> list[str]:
    """One task's requests, log-probs, run records and scores, written into ``staging`` (laid out as
    the output folder); the records name the files where they will be, in the output folder."""
    from olmes.logprobs.engine import encode_requests
    from olmes.logprobs.runner import write_parquet

    files, records = {}, {}
    for request_set in _request_sets(item):
        rows = list(canonical_requests(item.task.key, request_set, item.limit, target.data_source))
        encoded = encode_requests(
            model.tokenizer, [(r["context"], r["continuation"]) for r in rows], model.bos
        )
        results, differing = _results(item, request_set, rows, [e.num_cont for e in encoded])
        requests_path = staging / REQUESTS / target.model / requests_name(item.task.key, request_set)
        write_records(rows, requests_path)
        output = staging / LOGPROBS / target.model / logprob_name(item.task.key, request_set)
        write_parquet(output, rows, results)  # a pmi row's is_greedy is null: oe-eval does not report it
        files[request_set] = output
        requests_file = target.output / requests_path.relative_to(staging)
        record = _run_record(item, request_set, model, requests_path, requests_file, rows)
        record["imported"].update(commit=target.commit, num_tokens_recounted=differing)
        records[request_set] = record
    return _score_and_compare(item, target, staging, files, records)


def _models_file_with(path: Path, model: str, display_name: str) -> dict:
    """The results folder's models file with ``model`` listed under ``display_name`` (publish reads
    it): every other entry, and every other key of the model's own (series, training_tokens,
    checkpoint, ...), exactly as the file has them. A models file that does not read is refused."""
    from olmes.tables.results import read_models_file

    if not path.is_file():
        return {"models": [{"name": model, "display_name": display_name}]}
    read_models_file(path)  # the one-line error of a file that is no models file
    text = path.read_text(encoding="utf-8")
    try:
        data = parse_json(text, str(path))  # JSON keeps numbers as written (YAML reads 2e12 as text)
    except ValueError:
        data = yaml.safe_load(text)  # a models file in YAML, which read_models_file reads too
    entries = [dict(entry) for entry in data["models"]]
    mine = next((entry for entry in entries if entry["name"] == model), None)
    if mine is None:
        entries.append({"name": model, "display_name": display_name})
    else:
        mine["display_name"] = display_name
    return {**data, "models": entries}


# -- all or nothing: staged, then swapped in ----------------------------------------------------------

MODEL_PARTS = (REQUESTS, LOGPROBS, SCORES)
"""A model's folders in a results folder, in the order a swap moves them in; they move out in the
reverse order. The score summaries, which make a model x task a result, are out first and in last."""
_PREFIX = ".import."  # .import.<model>.building-XXXX (being built), .import.<model>.swap (being swapped in)
_BUILDING, _SWAP, _OLD = ".building-", ".swap", "old"


@contextlib.contextmanager
def staged_import(output: Path, model: str, tasks: set[str]) -> Iterator[Path]:
    """Yield a folder laid out as the results folder ``output`` to write an import of ``model`` into;
    when the body has finished, its model folders and models file replace ``output``'s.

    Why this way: an import refused halfway (a NaN, a positive log-prob, a truncated file) or killed
    must not leave some of its files beside the output's old ones: a model x task's requests,
    log-probs, run records, predictions and summary are one result. So everything is built in
    ``output/.import.<model>.building-XXXX`` (the model folders' files of other tasks hard-linked in,
    the imported tasks' files all new: none of a task's old files stays beside its new ones), and
    nothing of ``output`` changes until it is complete. Then one rename makes it the journal
    ``.import.<model>.swap`` (the commit point) and :func:`_swap` moves the three model folders and
    the models file in. A swap is several renames, so it is ordered to never show a mix: the old
    folders move out (into the journal) summaries first, then the new ones in summaries last; at any
    instant a model x task's files that are there are all old or all new, and its summary is there
    only with all its files. A swap killed midway is finished by the next import into ``output``,
    which (holding its lock) also removes the building folders of killed imports. The two hidden
    folders live in ``output`` itself, on the file system of the folders they are renamed to."""
    made = not output.exists()
    output.mkdir(parents=True, exist_ok=True)
    try:
        with _import_lock(output):
            _clean_up_interrupted(output)
            staging = Path(tempfile.mkdtemp(dir=output, prefix=f"{_PREFIX}{model}{_BUILDING}"))
            try:
                for part in MODEL_PARTS:
                    _link_other_tasks(output / part / model, staging / part / model, tasks)
                try:
                    yield staging
                except OlmesError as error:  # a staged file is named as the output's it would be
                    raise OlmesError(str(error).replace(str(staging), str(output))) from None
                _swap(output, model, staging.rename(output / f"{_PREFIX}{model}{_SWAP}"))
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    finally:
        if made and not any(output.iterdir()):
            output.rmdir()  # a refused import into a new folder leaves none


@contextlib.contextmanager
def _import_lock(output: Path) -> Iterator[None]:
    """One import at a time into a results folder, so that one import never takes another's staging
    for a killed one's: a ``flock`` of the folder, which the system releases when its holder ends,
    even killed (SIGKILL). Where there is no flock (Windows) the folder is not locked."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    fd = os.open(output, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise OlmesError(
                f"another olmes import is writing into {output}; wait for it to finish and import again"
            ) from None
        yield
    finally:
        os.close(fd)


def _clean_up_interrupted(output: Path) -> None:
    """What killed imports left in ``output``: a swap is finished, a building folder removed."""
    for path in sorted(output.iterdir()):
        if not path.name.startswith(_PREFIX) or path.is_symlink() or not path.is_dir():
            continue
        if path.name.endswith(_SWAP):
            model = path.name.removeprefix(_PREFIX).removesuffix(_SWAP)
            _swap(output, model, path)
            print(f"olmes: import: finished moving {model} in, left half moved by an interrupted import "
                  f"({path})", file=sys.stderr)  # fmt: skip
        elif _BUILDING in path.name:
            shutil.rmtree(path)
            print(f"olmes: import: removed {path}, left by an interrupted import", file=sys.stderr)


def _link_other_tasks(current: Path, staged: Path, tasks: set[str]) -> None:
    """The staged model folder starts as the current one without any file of the imported ``tasks``
    (``<task>.*``): hard links, so nothing is copied and the current files stay as they are."""
    staged.mkdir(parents=True)
    if not current.is_dir():
        return
    for path in current.iterdir():
        if path.name.partition(".")[0] in tasks:
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.copytree(path, staged / path.name, symlinks=True, copy_function=_link)
        else:
            _link(path, staged / path.name)


def _link(source: str | Path, target: str | Path) -> None:
    """A hard link (a symbolic link as itself), or a copy where the file system has none."""
    try:
        os.link(source, target, follow_symlinks=False)
    except OSError:
        shutil.copy2(source, target, follow_symlinks=False)


def _swap(output: Path, model: str, journal: Path) -> None:
    """Move a finished import (the journal, laid out as ``output``) into ``output``: each old model
    folder out into ``journal/old/`` in the reverse order of :data:`MODEL_PARTS`, then each new one in
    (the models file before the summaries), then the journal is removed. A step is taken only if it
    is not done yet (a new folder still in the journal has its old one still to move out), so an
    interrupted swap is finished by running it again."""
    old = journal / _OLD
    old.mkdir(exist_ok=True)
    for part in reversed(MODEL_PARTS):
        if (journal / part / model).exists() and (output / part / model).exists():
            (output / part / model).rename(old / part)
    for part in MODEL_PARTS:
        if part == SCORES and (journal / MODELS_FILE).exists():
            os.replace(journal / MODELS_FILE, output / MODELS_FILE)
        if (journal / part / model).exists():
            (output / part).mkdir(exist_ok=True)
            (journal / part / model).rename(output / part / model)
    shutil.rmtree(journal)


def _score_and_compare(
    item: ImportedTask, target: ImportTarget, staging: Path, files: dict, records: dict
) -> list[str]:
    """Score the task once; compare the run's metrics with ours and write them into the run records,
    then the summary, which records those run records (so it is made after they are written) and
    names its log-prob files where they will be."""
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


def _run_record(
    item: ImportedTask, request_set: str, model: _Model, requests_path: Path, requests_file: Path, rows: list
) -> RunRecord:
    """The run record of an imported log-prob file: who computed it (``imported``), the tokenizer's
    model as ``model``; nothing was computed here, so the engine's counts are 0. ``requests_path`` is
    the request file as written (staged), ``requests_file`` where it will be."""
    from olmes.logprobs.runner import versions

    runs = item.parts[MCF if request_set == MCF else CF]
    first = runs[0].metrics
    model_config = first.get("model_config") or {}
    return {
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
        "imported": _imported(runs),
        "versions": versions(IMPORT_PACKAGES),
        "requests_file": str(requests_file),
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
    model = _named_model(metrics)
    if model is None:
        raise OlmesError("the run's model_config names no model; give --model-spec (a hub id or folder)")
    return model


def _named_model(metrics: dict) -> str | None:
    """The model a metrics file names: its model_config's model_path, else model (what oe-eval loads)."""
    config = metrics.get("model_config") or {}
    model = config.get("model_path") or config.get("model")
    return model if isinstance(model, str) and model else None


@dataclass(frozen=True)
class _ModelName:
    """A model as a run or a spec names it, compared as people write names: a hub id's organization
    and name without case, a path by its last folder (a local copy of org/name is a folder called
    name, wherever it is), a name without an organization by its name alone."""

    org: str | None
    name: str

    @classmethod
    def of(cls, text: str) -> _ModelName:
        if HUB_ID.match(text):
            org, name = text.partition("@")[0].split("/")
            return cls(org.lower(), name.lower())
        return cls(None, re.split(r"[\\/]", text.rstrip("/\\"))[-1].removesuffix(".gguf").lower())

    def same(self, other: _ModelName) -> bool:
        return self.name == other.name and (self.org == other.org or None in (self.org, other.org))


def _same_named(first, second) -> bool:
    """Whether two values of a model_config field name one model (an absent one only equals absent)."""
    if isinstance(first, str) and isinstance(second, str):
        return _ModelName.of(first).same(_ModelName.of(second))
    return first == second


def _check_one_model(folder: Path, runs: list[TaskRun]) -> None:
    """Every file of the run names one model (model and model_path, as :class:`_ModelName` compares
    them): files of two runs, of two models, are never imported as one."""
    configs = model_configs(folder, runs)
    for field in MODEL_FIELDS:  # every pair: a name without an organization matches any organization's
        for (first_where, first), (where, config) in itertools.combinations(configs, 2):
            if not _same_named(first.get(field), config.get(field)):
                raise OlmesError(
                    f"{folder}: {first_where} and {where} name different models ({field} "
                    f"{first.get(field)!r}, {config.get(field)!r}); import the files of one run of one model"
                )


def _check_spec_is_their_model(metrics: dict, model: _Model) -> None:
    """The model the run names must be the spec's: the spec as written, or the release its identity
    names (a short name's or a GGUF's original). A run that names none contradicts no spec."""
    from olmes.core.identities import UNKNOWN

    theirs = _named_model(metrics)
    original = model.identity["original"]
    ours = [model.spec] + ([original] if original not in (UNKNOWN, model.spec) else [])
    if theirs is None or any(_ModelName.of(theirs).same(_ModelName.of(name)) for name in ours):
        return
    known = f" ({original})" if len(ours) > 1 else ""
    raise OlmesError(
        f"the run evaluated {theirs} (its model_config), not the model of --model-spec {model.spec}"
        f"{known}; give the --model-spec of the model the run evaluated (its hub id, or its folder)"
    )


def _their_dtype(model_config: dict) -> str:
    """The precision the run computed in, as its model config says, else ``not recorded``."""
    for value in (model_config.get("dtype"), model_config.get("torch_dtype"),
                  (model_config.get("model_args") or {}).get("dtype")):  # fmt: skip
        if isinstance(value, str) and value not in ("auto", ""):
            return value.removeprefix("torch.")
    return "not recorded"
