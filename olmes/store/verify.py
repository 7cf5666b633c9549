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
By job: one result re-checked (:mod:`olmes.store.verify_results`), the layout
(:mod:`olmes.store.verify_layout`), the README's table (:mod:`olmes.store.readme_table`), what a git
revision changed (:mod:`olmes.store.revision`); what was found is :mod:`olmes.store.verification`.
``olmes publish`` runs :func:`verify_model` on each model folder it builds before swapping it in.

What it cannot catch: log-probs fabricated consistently (made-up log-probs with summaries, predictions
and hashes computed from them pass every check here); only running the model again does: a
maintainer's ``olmes reproduce --record`` gives the model its reproduced badge (olmes.store.provenance).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from olmes.core.errors import OlmesError
from olmes.core.generative import GENERATIVE_TASKS
from olmes.core.records import read_run_record, read_score_summary
from olmes.core.tasks import TASKS
from olmes.scoring.rotations import ROTATIONS_KIND, read_rotation_report
from olmes.store import claims, provenance
from olmes.store.canonical import task_files
from olmes.store.generative import generative_task_files, verify_generative
from olmes.store.layout import (
    GENERATIVE,
    MODEL_RECORD,
    REPRODUCTION_RECORD,
    REPRODUCTIONS,
    ROBUSTNESS,
    SCORES,
    generative_tasks,
    logprob_name,
    model_folder,
    models_folder,
    reproduction_record_path,
    run_record_name,
    store_record_path,
    summary_name,
    summary_tasks,
    task_files_folder,
)
from olmes.store.lock import is_leftover
from olmes.store.reading import read_model_record, store_record
from olmes.store.readme_table import README, readme_problems
from olmes.store.sources import Source, store_source
from olmes.store.upgrade import earlier_documents
from olmes.store.verification import Verification
from olmes.store.verify_layout import children, unknown, verify_layout, verify_model_files
from olmes.store.verify_results import check_fingerprints, verify_robustness, verify_task
from olmes.tables.results import ModelInfo

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
    verify_layout(found, root, chosen)
    for model in chosen:
        _verify_model(found, root, model, logprobs, data_source)
    _verify_names(found, root, folders)
    _verify_reproductions(found, root, chosen, logprobs)
    _verify_task_files(found, root, data_source)
    _note_earlier_formats(found, root, chosen)
    readme = root.parent / README
    if readme.is_file():
        with found.checking(readme):  # a store too broken to read its table is named above
            found.problems += readme_problems(readme, root)
    return found


def _note_earlier_formats(found: Verification, root: Path, models: list[str]) -> None:
    """A note of the documents of an earlier format version: read as they are, upgraded on request.
    A document no format takes is a problem named above, not counted here."""
    try:
        earlier = earlier_documents(root, models)
    except OlmesError:
        return
    if earlier:
        counts = ", ".join(f"{tag}: {count}" for tag, count in sorted(earlier.items()))
        found.notes.append(
            f"{sum(earlier.values())} document(s) of an earlier format version ({counts}), each read through "
            f"its upgrades; olmes upgrade {root} rewrites them"
        )


def verify_model(
    root: str | Path, model: str, folder: Path, *, logprobs: bool = True, data_source: str = "bundle"
) -> Verification:
    """Check one model folder of the store at ``root`` as :func:`verify_store` checks it, wherever it
    is (``olmes publish`` checks the folder it built, before swapping it in): its files and its
    layout; not the store's shared files."""
    found = Verification()
    verify_model_files(found, folder)
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
        verify_task(found, source, task, record["tasks"].get(task), logprobs, data_source)
    for task in sorted(set(record["tasks"]) - set(tasks)):
        found.problem(record_path, f"lists task {task} but the model folder has no {summary_name(task)}")
    for result in source.robustness(root):  # a stray summary of no task is left to the layout check
        verify_robustness(found, source, result, logprobs, data_source)
    verify_generative(found, source.generative, model, record, record_path)
    check_fingerprints(found, folder, record)
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
    for folder in children(root / REPRODUCTIONS):
        if not folder.is_dir() or folder.name not in models and not model_folder(root, folder.name).is_dir():
            unknown(found, folder)
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
        for path in children(folder):
            if path.name not in named or not path.is_file():
                unknown(found, path)


# -- the store's shared files ---------------------------------------------------------------------------


def _verify_task_files(found: Verification, root: Path, data_source: str) -> None:
    """``tasks/`` holds exactly the files this olmes version makes for the tasks it has, byte for byte."""
    folder = task_files_folder(root)
    present = (
        sorted(p for p in folder.iterdir() if p.is_file() and not p.is_symlink() and not is_leftover(p.name))
        if folder.is_dir()
        else []
    )  # a link and what an interrupted write left: verify_layout
    for path in present:
        task = path.name.split(".")[0]
        if task in GENERATIVE_TASKS and ".gen." in path.name:
            expected = generative_task_files(task)
            if path.name not in expected:
                found.problem(path, "not a file olmes makes for the store")
            elif path.read_bytes() != expected[path.name]:
                found.problem(path, "differs from the one this olmes version makes; publish the task again")
            continue
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
    generative = {
        task for model in found.models for task in generative_tasks(model_folder(root, model) / GENERATIVE)
    }
    for task in [task for task in GENERATIVE_TASKS if task in generative]:
        for name in sorted(set(generative_task_files(task)) - names):
            found.problem(folder / name, f"missing; the store has generative results of {task}")


def _model_tasks(root: Path, model: str) -> list[str]:
    found = summary_tasks(model_folder(root, model) / SCORES)
    return [task for task in TASKS if task in found]  # a stray summary of no task: _verify_layout
