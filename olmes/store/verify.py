"""``olmes verify``: a results store at rest, checked as ``olmes publish`` checks what it moves in.

Why: ``olmes publish`` checks results on their way in, but the store is plain files in git, so a pull
request can edit a committed summary by hand and the site would show it. ``verify`` re-checks the whole
store as it stands: its format, every model record and its one fingerprint, every file's SHA-256 as
recorded, each request set against the requests this olmes version makes, every score recomputed from
the store's own log-probs (and the stored predictions against the recomputed ones), partial results
labelled, the task files, and the README's published table; and the store's layout: plain files and
folders only (no symbolic link, which could point outside the store), each in a place the format has
for it (an unknown file, a stray summary, a publish's lock or what an interrupted publish left is
named); what model.json, the summaries and the run records claim beyond the numbers, each against its
source (olmes.store.claims); model names that read as another's; and each reproduction record, its
comparison made again from the files it keeps (olmes.store.provenance). Each problem is one line
naming its file.
``olmes publish`` runs :func:`verify_model` on each model folder it builds before swapping it in.

What it cannot catch: log-probs fabricated consistently (made-up log-probs with summaries, predictions
and hashes computed from them pass every check here); only running the model again does: a
maintainer's ``olmes reproduce --record`` gives the model its reproduced badge (olmes.store.provenance).
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from olmes.core.bounded_json import parse_json
from olmes.core.errors import OlmesError
from olmes.core.methods import CF, MCF, MCF_METHOD, ROTATIONS, get_method
from olmes.core.records import olmes_score, read_run_record, read_score_summary
from olmes.core.resources import file_sha256
from olmes.core.tasks import TASKS
from olmes.scoring.rotations import ROTATIONS_KIND, ROTATIONS_SUFFIX, analyze, read_rotation_report
from olmes.scoring.score import score_task
from olmes.scoring.statistics import partial_reasons
from olmes.store import claims, provenance
from olmes.store.blobs import IGNORED_LINE, blob_path
from olmes.store.canonical import task_files
from olmes.store.checks import check_robustness, check_task
from olmes.store.layout import (
    BLOBS,
    GITIGNORE,
    LOGPROBS,
    MODEL_RECORD,
    MODELS,
    REPRODUCTION_RECORD,
    REPRODUCTIONS,
    ROBUSTNESS,
    RUN_SUFFIX,
    SCORES,
    STORE_RECORD,
    SUMMARY_SUFFIX,
    TASK_FILES,
    logprob_name,
    model_folder,
    model_record_path,
    models_folder,
    reproduction_record_path,
    run_record_name,
    store_record_path,
    summary_name,
    summary_tasks,
    task_files_folder,
)
from olmes.store.lock import LOCK_NAME, describe, is_leftover, is_stale, read_holder, staging_model
from olmes.store.reading import model_infos, read_model_record, score_paths, store_record
from olmes.store.sources import RobustnessResult, Source, store_source
from olmes.tables.results import ModelInfo, load_scores

README = "README.md"  # beside a store: its table of published results, when it has one, is checked
README_AVERAGES = "OLMES average over the 10 tasks:"  # the README line stating Table 4's averages
README_LINK = "score summary"  # the header of the README table's column linking each row's summary
TABLE_RULE = re.compile(r"^:?-+:?$")  # a cell of the line under a Markdown table's header
LINK = re.compile(r"\]\(([^)\s]+)\)")
RECORD_FIELDS = {"instances": "n_instances", "limit": "limit", "partial": "partial"}  # model.json <- summary
# summary fields checked otherwise than by recomputing them: the files (by SHA-256), the methods (one by one)
NOT_RECOMPUTED = ("inputs", "predictions", "methods")
STORE_FILES = (STORE_RECORD, GITIGNORE)  # the files of a store's top folder
STORE_FOLDERS = (MODELS, TASK_FILES, BLOBS, REPRODUCTIONS)
IGNORED = (
    f"{IGNORED_LINE}\n"  # a store's .gitignore, as olmes publish writes it (olmes.store.blobs.ignore_blobs)
)
BLOB_NAME = re.compile(r"^[0-9a-f]{64}\.parquet$")


@dataclass(frozen=True)
class Problem:
    path: Path
    what: str

    def line(self) -> str:
        return f"olmes: verify: {self.path}: {self.what}"


@dataclass
class Verification:
    """What ``verify_store`` found: the problems, notes (what it skipped and why) and what it checked."""

    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    results: int = 0  # model x task results checked (standard and robustness)

    @contextlib.contextmanager
    def checking(self, path: Path) -> Iterator[None]:
        """Run a check that raises OlmesError; its message becomes a problem of ``path``."""
        try:
            yield
        except OlmesError as error:
            self.problems.append(Problem(path, str(error)))

    def problem(self, path: Path, what: str) -> None:
        self.problems.append(Problem(path, what))

    def summary_line(self, store: Path) -> str:
        what = f"{len(self.models)} model(s), {self.results} result(s) checked in {store}"
        if not self.problems:
            return f"olmes: verify: clean: {what}"
        return f"olmes: verify: {len(self.problems)} problem(s): {what}"


# -- the whole store --------------------------------------------------------------------------------


def verify_store(
    root: str | Path, models: list[str] | None = None, *, logprobs: bool = True, data_source: str = "bundle"
) -> Verification:
    """Check the store at ``root`` (its models, or only ``models``). With ``logprobs`` False, results
    whose external log-prob files are not here are checked without them (a note says so)."""
    root = Path(root)
    found = Verification()
    with found.checking(store_record_path(root)):
        for what in claims.store_record_problems(store_record(root)):
            found.problem(store_record_path(root), what)
    if found.problems:
        return found
    models_dir = models_folder(root)
    folders = (
        sorted(
            p.name
            for p in models_dir.iterdir()
            if p.is_dir() and not p.is_symlink() and not is_leftover(p.name)
        )
        if models_dir.is_dir()
        else []
    )
    chosen = [name for name in folders if models is None or name in models]
    _verify_layout(found, root, chosen)
    for model in chosen:
        _verify_model(found, root, model, logprobs, data_source)
    _verify_names(found, root, folders)
    _verify_reproductions(found, root, chosen, logprobs)
    _verify_task_files(found, root, data_source)
    readme = root.parent / README
    if readme.is_file():
        with found.checking(readme):  # a store too broken to read its table is named above
            found.problems += readme_problems(readme, root)
    return found


def verify_model(
    root: str | Path, model: str, folder: Path, *, logprobs: bool = True, data_source: str = "bundle"
) -> Verification:
    """Check one model folder of the store at ``root`` as :func:`verify_store` checks it, wherever it
    is (``olmes publish`` checks the folder it built, before swapping it in): its files and its
    layout; not the store's shared files."""
    found = Verification()
    _verify_model_files(found, folder)
    _verify_model(found, Path(root), model, logprobs, data_source, folder)
    return found


def _verify_model(
    found: Verification, root: Path, model: str, logprobs: bool, data_source: str, folder: Path | None = None
) -> None:
    folder = folder or model_folder(root, model)
    record_path = folder / MODEL_RECORD
    found.models.append(model)
    try:
        record = read_model_record(root, model, folder)
        info = ModelInfo.from_record(record, str(record_path), other_keys=True)
    except OlmesError as error:
        found.problem(record_path, str(error))  # nothing else of the model can be read without it
        return
    source = store_source(root, model, info, folder)
    tasks = source.tasks()
    for task in tasks:
        _verify_task(found, source, task, record["tasks"].get(task), logprobs, data_source)
    for task in sorted(set(record["tasks"]) - set(tasks)):
        found.problem(record_path, f"lists task {task} but the model folder has no {summary_name(task)}")
    for result in source.robustness(root):  # a stray summary of no task is left to the layout check
        _verify_robustness(found, model, result, logprobs, data_source)
    _check_fingerprints(found, folder, record)
    _verify_claims(found, root, model, record, source)


def _verify_claims(found: Verification, root: Path, model: str, record: dict, source: Source) -> None:
    """What model.json, the summaries and the run records claim beyond the numbers (olmes.store.claims)."""
    runs: dict[str, list] = {}
    robustness_runs: dict[tuple[str, str], list] = {}
    instances: dict[tuple[str, str], int] = {}  # each robustness result's, as its summary or report says
    results = [(None, task, source.summary_path(task), source.logprobs) for task in source.tasks()]
    results += [(r.kind, r.task, r.path, r.logprobs) for r in source.robustness(root)]
    for kind, task, path, folder in results:
        try:
            document = read_rotation_report(path) if kind == ROTATIONS_KIND else read_score_summary(path)
            found_runs = {s: read_run_record(folder / logprob_name(task, s)) for s in document["inputs"]}
        except OlmesError:
            continue  # its problem is the result's own
        for request_set, run in found_runs.items():
            for what in [] if run is None else claims.run_problems(run):
                found.problem(folder / run_record_name(task, request_set), what)
        if kind != ROTATIONS_KIND:
            for what in claims.summary_problems(document, model, found_runs):
                found.problem(path, what)
        present = [run for run in found_runs.values() if run is not None]
        if kind is None:
            runs[task] = present
        else:
            robustness_runs[(kind, task)] = present
            instances[(kind, task)] = document["instances" if kind == ROTATIONS_KIND else "n_instances"]
    reproduced = provenance.reproduced_identity(root, model, source.scores.parent)
    record_path = source.scores.parent / MODEL_RECORD
    for what in claims.record_problems(record, runs, robustness_runs, reproduced):
        found.problem(record_path, what)
    listed = {
        (kind, task): entry
        for kind, tasks in record.get(ROBUSTNESS, {}).items()
        for task, entry in tasks.items()
    }
    for (kind, task), entry in listed.items():
        if (kind, task) not in instances:
            found.problem(
                record_path, f"robustness.{kind}.{task}: listed, but the model folder has no such result"
            )
        elif entry["instances"] != instances[(kind, task)]:
            found.problem(
                record_path,
                f"robustness.{kind}.{task}: instances is {entry['instances']!r}, its result says "
                f"{instances[(kind, task)]!r}",
            )
    for kind, task in sorted(set(instances) - set(listed)):
        found.problem(
            record_path, f"does not list robustness result {kind} {task}, which the model folder has"
        )


def _verify_task(
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


def _verify_robustness(
    found: Verification, model: str, result: RobustnessResult, logprobs: bool, data_source: str
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
        checked = check_robustness(model, result, data_source)
        files = {file.name.split(".")[1]: file.path for file in checked.logprobs}
        if report is None:
            _check_recomputed(found, result.path, summary, files)
            return
        again = analyze(model, files[MCF], files[ROTATIONS])
        for key in [key for key in again if key != "inputs" and again[key] != report.get(key)]:
            found.problem(result.path, f"{key} is {report.get(key)!r}, its log-probs give {again[key]!r}")
        for key in [key for key in report if key not in again]:
            found.problem(result.path, f"{key} is {report[key]!r}, its log-probs give none")


def _verify_names(found: Verification, root: Path, folders: list[str]) -> None:
    """Model names and display names that read as another's (olmes.store.claims.name_problems)."""
    names = {}
    for model in folders:
        try:
            names[model] = read_model_record(root, model)["display_name"]
        except OlmesError:
            continue  # the record's own problem
    for model, what in claims.name_problems(names):
        found.problem(model_folder(root, model), what)


def _verify_reproductions(found: Verification, root: Path, models: list[str], logprobs: bool) -> None:
    """Each model's reproduction record (olmes.store.provenance), recomputed from the log-probs it
    keeps and the store's; a stale one (the model replaced since) is a note: the model is submitted."""
    for model in models:
        path = reproduction_record_path(root, model)
        try:
            record = provenance.read_record(root, model)
        except OlmesError as error:
            found.problem(path, str(error))
            continue
        if record is None:
            continue
        if provenance.is_stale(root, record):
            found.notes.append(
                f"{path}: stale, the model's log-prob files changed since it was reproduced; it is shown "
                "as submitted until a maintainer reproduces it again"
            )
            continue
        with tempfile.TemporaryDirectory() as work, found.checking(path):
            for what in provenance.record_problems(root, record, Path(work)):
                found.problem(path, what)
    for folder in _children(root / REPRODUCTIONS):
        if not folder.is_dir() or folder.name not in models and not model_folder(root, folder.name).is_dir():
            _unknown(found, folder)
            continue
        try:
            record = provenance.read_record(root, folder.name)
        except OlmesError:
            continue
        named = {REPRODUCTION_RECORD} | {
            logprob_name(task, s)
            for task, files in (record or {}).get("store_files", {}).items()
            for s in files
        }
        for path in _children(folder):
            if path.name not in named or not path.is_file():
                _unknown(found, path)


# -- one result ---------------------------------------------------------------------------------------


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


def _check_fingerprints(found: Verification, folder: Path, record: dict) -> None:
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


# -- the store's shared files ---------------------------------------------------------------------------


def _verify_task_files(found: Verification, root: Path, data_source: str) -> None:
    """``tasks/`` holds exactly the files this olmes version makes for the tasks it has, byte for byte."""
    folder = task_files_folder(root)
    present = (
        sorted(p for p in folder.iterdir() if p.is_file() and not p.is_symlink() and not is_leftover(p.name))
        if folder.is_dir()
        else []
    )  # a link and what an interrupted write left: _verify_layout
    for path in present:
        task = path.name.split(".")[0]
        if task not in TASKS:
            found.problem(path, f"{task!r} is not a task of this olmes version")
            continue
        expected = task_files(task, data_source)
        if path.name not in expected:
            found.problem(path, "not a file olmes makes for the store")
        elif path.read_bytes() != expected[path.name]:
            found.problem(path, "differs from the one this olmes version makes; publish the task again")
    used = {task for model in found.models for task in _model_tasks(root, model)}
    names = {path.name for path in present}
    for task in sorted(used, key=list(TASKS).index):
        for name in sorted(set(task_files(task, data_source)) - names):
            found.problem(folder / name, f"missing; the store has results of {task}")


def _model_tasks(root: Path, model: str) -> list[str]:
    found = summary_tasks(model_folder(root, model) / SCORES)
    return [task for task in TASKS if task in found]  # a stray summary of no task: _verify_layout


# -- the store's layout ------------------------------------------------------------------------------------


def _verify_layout(found: Verification, root: Path, models: list[str]) -> None:
    """Plain files and folders only, each where the store's format has a place for it: a symbolic link
    anywhere (it can point outside the store: /etc/passwd as a predictions file), an unknown file
    (in the store's folders and in the model folders of ``models``) and a stray summary are problems;
    what an interrupted publish left and a publish's lock are notes."""
    for path in _walk(root):
        if path.is_symlink():
            found.problem(
                path,
                f"a symbolic link (to {os.readlink(path)}); a store holds plain files and folders only: "
                "put the file itself there, or remove the link",
            )
    if (root / LOCK_NAME).exists() and not (root / LOCK_NAME).is_symlink():
        holder = read_holder(root)
        found.problem(
            root / LOCK_NAME,
            "a publish's lock, not part of the store (never commit it): "
            + (
                "unreadable; if no publish is running, remove it"
                if holder is None
                else f"left by {describe(holder)}, which no longer runs; the next olmes publish takes it over"
                if is_stale(holder)
                else f"a publish is running ({describe(holder)}); verify the store once it is done"
            ),
        )
    gitignore = root / GITIGNORE
    if (
        gitignore.is_file()
        and not gitignore.is_symlink()
        and gitignore.read_text(encoding="utf-8") != IGNORED
    ):
        found.problem(
            gitignore,
            f"a store's .gitignore holds only {IGNORED.strip()!r} (what it ignores never reaches git: a "
            "published model would silently stay out of the repository); write it as olmes publish does",
        )
    for path in _children(root):
        if path.name in (LOCK_NAME, *STORE_FILES) and path.is_file():
            continue
        if path.name not in STORE_FOLDERS or not path.is_dir():
            _leftover_or_unknown(found, path)
    for path in _children(task_files_folder(root)):
        if path.is_dir():  # its files: _verify_task_files
            _unknown(found, path)
        elif is_leftover(path.name):
            _leftover_or_unknown(found, path)
    for path in _children(root / BLOBS):
        if not (path.is_file() and BLOB_NAME.match(path.name)):
            _leftover_or_unknown(found, path)
    for path in _children(models_folder(root)):
        if path.is_dir() and staging_model(path.name):
            _leftover_or_unknown(found, path)
        elif not path.is_dir():
            _unknown(found, path)
        elif path.name in models:
            _verify_model_files(found, path)


def _verify_model_files(found: Verification, folder: Path) -> None:
    """A model folder holds its record, its summaries and rotations reports (of tasks of this olmes
    version) and the files they name: predictions, log-prob files and run records; nothing else."""
    expected = {folder / MODEL_RECORD}
    unreadable = []  # (folder, task) of summaries that do not read: their problem is reported elsewhere
    places = [(folder / SCORES, SUMMARY_SUFFIX, folder / LOGPROBS)]
    places += [
        (kind, ROTATIONS_SUFFIX if kind.name == ROTATIONS_KIND else SUMMARY_SUFFIX, kind)
        for kind in _children(folder / ROBUSTNESS)
        if kind.is_dir()
    ]
    for place, suffix, logprobs in places:
        for path in _children(place):
            if not path.name.endswith(suffix) or not path.is_file():
                continue
            task = path.name.removesuffix(suffix)
            expected.add(path)
            if task not in TASKS:
                found.problem(
                    path, f"a stray summary: {task!r} is not a task of this olmes version; remove it"
                )
                continue
            try:
                data = parse_json(path.read_text(encoding="utf-8"), str(path))
                named = data.get("predictions", {}).get("path") if suffix == SUMMARY_SUFFIX else None
                sets = list(data["inputs"])
            except (OSError, ValueError, KeyError, TypeError, AttributeError, OlmesError):
                unreadable.append((place, task))
                continue
            if isinstance(named, str) and (Path(named).name != named or named in ("", ".", "..")):
                found.problem(path, f"predictions.path {named!r} is not the name of a file beside it")
            elif isinstance(named, str):
                expected.add(place / named)
            for request_set in sets:
                expected |= {
                    logprobs / logprob_name(task, request_set),
                    logprobs / run_record_name(task, request_set),
                }
    for path in _walk(folder):
        if path.is_symlink() or path.is_dir() or path in expected:
            continue
        if not any(path.parent == place and path.name.startswith(f"{task}.") for place, task in unreadable):
            _unknown(found, path)


def _leftover_or_unknown(found: Verification, path: Path) -> None:
    staged = staging_model(path.name) if path.is_dir() and path.parent.name == MODELS else None
    if staged is not None and staged[1] == "old" and not (path.parent / staged[0]).exists():
        found.problem(
            path.parent / staged[0],
            f"missing: an interrupted publish left it as {path.name}; the next olmes publish puts it back",
        )
    elif staged is not None or (is_leftover(path.name) and path.is_file()):
        found.problem(
            path,
            "left by an interrupted publish, not part of the store (never commit it); "
            "the next olmes publish removes it",
        )
    else:
        _unknown(found, path)


def _unknown(found: Verification, path: Path) -> None:
    if not path.is_symlink():  # a link is a problem of its own
        what = "folder" if path.is_dir() else "file"
        found.problem(path, f"not a {what} of a results store (its format has no place for it); remove it")


def _children(folder: Path) -> list[Path]:
    return sorted(folder.iterdir()) if folder.is_dir() and not folder.is_symlink() else []


def _walk(folder: Path) -> list[Path]:
    """Every file and folder under ``folder``, sorted; a symbolic link is listed, never followed."""
    found = []
    for top, folders, files in os.walk(folder):
        found += [Path(top) / name for name in [*folders, *files]]
    return sorted(found)


# -- the README's published table -------------------------------------------------------------------------


def readme_problems(readme: Path, store: Path) -> list[Problem]:
    """The README's table of published results (rows of store models x tasks, each linking its summary)
    and its averages line (Table 4's Average column) against the store; nothing when no row of the
    README links into this store. Each column is found by its header, so the columns may come in any
    order. Models the README leaves out are no problem: it shows a selection, the site shows the whole
    store."""
    lines = readme.read_text(encoding="utf-8").splitlines()
    rows = store_rows(lines, Path(store).resolve().name)
    problems = []
    for number, cells, columns in rows:
        path = readme.parent / _link_target(cells[columns[README_LINK]])
        if not path.is_file():
            problems.append(Problem(readme, f"line {number} links {path}, which is not in the store"))
            continue
        expected = readme_row(store, read_score_summary(path))
        for header, column in columns.items():
            have = cells[column] if column < len(cells) else ""
            if header in expected and have != expected[header]:
                problems.append(
                    Problem(
                        readme,
                        f"line {number}, column {column + 1}: {have!r}, the store says {expected[header]!r}",
                    )
                )
    if rows:
        problems += _average_problems(readme, lines, store)
    return problems


def store_rows(lines: list[str], store_name: str) -> list[tuple[int, list[str], dict[str, int]]]:
    """(line number, cells, column of each header) of the rows of Markdown tables with a
    ``score summary`` column whose link is a file of the store ``store_name``."""
    found = []
    header: list[str] | None = None
    columns: dict[str, int] | None = None
    for number, line in enumerate(lines, 1):
        if not line.lstrip().startswith("|"):
            header = columns = None
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if columns is None:
            if header is not None and all(TABLE_RULE.match(cell) for cell in cells):
                columns = {name: column for column, name in enumerate(header)}
            else:
                header = cells
            continue
        column = columns.get(README_LINK)
        if (
            column is not None
            and column < len(cells)
            and _link_target(cells[column]).startswith(f"{store_name}/")
        ):
            found.append((number, cells, columns))
    return found


def _link_target(cell: str) -> str:
    """Where a Markdown link in a table cell points (``[name](target)``); empty if it holds none."""
    match = LINK.search(cell)
    return match[1] if match else ""


def readme_row(store: Path, summary: dict) -> dict[str, str]:
    """The cells of a README row, by the header of their column: model, task, OLMES (dagger), CF (its
    norm), MCF, in %."""
    olmes = olmes_score(summary) or {}
    record = read_model_record(store, summary["model"])
    cf = olmes.get("cf_method", "")
    mcf = summary["methods"].get(MCF_METHOD.key)
    return {
        "model": record["display_name"],
        "task": summary["display_name"],
        "OLMES": f"{100 * olmes['score']:.1f}" + ("†" if olmes["dagger"] else "") if olmes else "",
        "CF (normalization)": (
            f"{100 * summary['methods'][cf]['accuracy']:.1f} ({get_method(cf).normalization})" if cf else ""
        ),
        "MCF": f"{100 * mcf['accuracy']:.1f}" if mcf is not None else "",
    }


def _average_problems(readme: Path, lines: list[str], store: Path) -> list[Problem]:
    """The line "OLMES average over the 10 tasks: <model> <average>, ..." is Table 4's Average column."""
    stated_line = next((line for line in lines if line.startswith(README_AVERAGES)), None)
    if stated_line is None:
        return []
    pairs = stated_line.removeprefix(README_AVERAGES).strip().rstrip(".").split(", ")
    stated = dict(pair.rsplit(" ", 1) for pair in pairs if pair)
    averages = model_averages(store)
    return [
        Problem(
            readme,
            f"the averages line says {name} {value}, the store's Table 4 {_percent(averages.get(name))}",
        )
        for name, value in stated.items()
        if value != _percent(averages.get(name))
    ]


def _percent(value: float | None) -> str:
    return "none" if value is None else f"{100 * value:.1f}"


def model_averages(store: Path) -> dict[str, float | None]:
    """Each store model's OLMES average (Table 4's Average column; None unless every task is there),
    by display name."""
    from olmes.tables.score_tables import table4

    table = table4(load_scores(score_paths(store), model_infos(store)))
    return {record["display_name"]: record["Average"] for record in table.records}


# -- what a revision changed ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Changes:
    """The models a working tree's store adds, replaces (changes) and removes against a git revision."""

    base: str
    added: list[str]
    replaced: list[str]
    removed: list[str]
    other: list[str]  # changed store files outside the model folders

    def lines(self) -> list[str]:
        listed = [("added", self.added), ("replaced", self.replaced), ("removed", self.removed)]
        found = [
            f"olmes: verify: against {self.base}: {what}: {', '.join(names)}"
            for what, names in listed
            if names
        ]
        if self.other:
            found.append(f"olmes: verify: against {self.base}: changed store files: {', '.join(self.other)}")
        return found or [f"olmes: verify: against {self.base}: no store file changed"]


def changes(root: Path, base: str) -> Changes:
    """What the store at ``root`` changes against the git revision ``base`` of its repository
    (committed, staged, unstaged and untracked files)."""
    top = Path(_git(root, "rev-parse", "--show-toplevel").strip())
    prefix = root.resolve().relative_to(top.resolve()).as_posix()
    _git(root, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}")
    changed = _git(top, "diff", "--name-only", base, "--", prefix).splitlines()
    changed += _git(top, "ls-files", "--others", "--exclude-standard", "--", prefix).splitlines()
    models, other = set(), set()
    for name in changed:
        parts = Path(name).relative_to(prefix).parts
        if len(parts) > 2 and parts[0] == MODELS and not is_leftover(parts[1]):
            models.add(parts[1])
        else:
            other.add("/".join(parts))
    existed = {name for name in models if _in_revision(top, base, f"{prefix}/{MODELS}/{name}/{MODEL_RECORD}")}
    present = {name for name in models if model_record_path(root, name).is_file()}
    return Changes(
        base,
        added=sorted(present - existed),
        replaced=sorted(present & existed),
        removed=sorted(existed - present),
        other=sorted(other),
    )


def old_model_record(root: Path, base: str, model: str) -> dict:
    """A model's record as the revision ``base`` has it."""
    top = Path(_git(root, "rev-parse", "--show-toplevel").strip())
    prefix = root.resolve().relative_to(top.resolve()).as_posix()
    path = f"{prefix}/{MODELS}/{model}/{MODEL_RECORD}"
    return parse_json(_git(top, "show", f"{base}:{path}"), f"{base}:{path}")


def _in_revision(top: Path, base: str, path: str) -> bool:
    done = subprocess.run(["git", "-C", str(top), "cat-file", "-e", f"{base}:{path}"], capture_output=True)
    return done.returncode == 0


def _git(where: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(where), *args], capture_output=True, text=True)
    if done.returncode != 0:
        detail = done.stderr.strip().splitlines()[-1:] or ["failed"]
        raise OlmesError(
            f"git {' '.join(args)} in {where}: {detail[0]}; --base needs a git revision of its repository"
        )
    return done.stdout
