"""``olmes publish``: writing finished results into the results store, the published leaderboard's
results committed to the repository (its layout: olmes.store.layout; reading it: olmes.store.reading).

:func:`publish` moves finished results (a workflow results folder, or another store) into a store.
It refuses (olmes.store.checks) results made with other requests than this olmes version's (the
run records' request SHA-256 against requests regenerated here, olmes.store.canonical), partial
results unless asked, and an existing model x task unless asked to replace it. Log-prob files go to
the store's blobs/ (or, asked, into the model folder). A publish holds the store's lock
(olmes.store.lock) from its first read of the store to its last write, so two publishes never
interleave. A model folder is built beside the old one, checked with ``olmes verify``'s own checks
(publish accepts exactly what verify passes) and swapped in with one atomic rename, so an
interrupted publish leaves the store as it was or as after success; what a killed one leaves behind
is removed by the next. Nothing in the store depends on the order in which models were published:
two stores filled on two machines merge into the same leaderboard. Nothing in it names a folder of
the publishing machine either: summaries, rotations reports and run records go in in their portable
form (olmes.store.portable).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath

from olmes.core.atomic import atomic_path, make_dir_public
from olmes.core.errors import OlmesError
from olmes.core.generative import GENERATIVE_TASKS
from olmes.core.records import MODEL_FORMAT, STORE_FORMAT, ModelRecord
from olmes.core.resources import file_sha256
from olmes.core.tasks import TASKS
from olmes.store.blobs import LAYOUTS, blob_path, ignore_blobs
from olmes.store.canonical import task_files
from olmes.store.checks import (
    Checked,
    CheckedRobustness,
    LogprobFile,
    check_display_name,
    check_replacement,
    check_robustness,
    check_store_folder,
    check_task,
    check_task_files,
    one_fingerprint,
    results_identity,
    run_cost,
    source_name,
)
from olmes.store.claims import check_new_name
from olmes.store.generative import (
    CheckedGenerative,
    check_generative,
    check_generative_task_files,
    generative_task_files,
    write_portable_summary,
)
from olmes.store.layout import (
    BLOBS,
    GENERATIVE,
    GENERATIVE_SUFFIX,
    LOGPROBS,
    MODEL_RECORD,
    ROBUSTNESS,
    SCORES,
    generative_names,
    model_folder,
    models_folder,
    store_record_path,
    task_files_folder,
)
from olmes.store.lock import describe, is_leftover, staging_model, store_lock
from olmes.store.portable import is_provenance, portable_spec, write_portable
from olmes.store.reading import check_store, is_store, read_model_record
from olmes.store.sources import Source, sources
from olmes.store.verify import verify_model


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
    check_store_folder(store)
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
        gen_tasks = [] if robustness_only else [task for task in source.generative_tasks() if wanted(task)]
        if not chosen and not found and not gen_tasks:
            what = "robustness results" if robustness_only else "score summaries"
            raise OlmesError(f"{origin}: model {source_name(source)} has no {what} to publish")
        checked = [check_task(source, task, data_source, allow_partial) for task in chosen]
        extra = [check_robustness(source, result, data_source) for result in found]
        generative = [
            check_generative(source.generative, source.model, task, source_name(source), allow_partial)
            for task in gen_tasks
        ]
        check_replacement(store, source, checked, extra, replace, robustness_only, generative)
        check_display_name(source, [*checked, *extra, *generative])
        check_new_name(store, source.model, source.info.display_name)
        for item in checked:
            check_task_files(store, item.task, data_source)
        for item in generative:
            check_generative_task_files(store, item.task)
        plans.append((source, checked, extra, generative))
    lines = []
    for source, checked, extra, generative in plans:
        _write_model(store, source, checked, extra, logprobs, data_source, generative)
        partial = sum(item.summary["partial"] for item in checked)
        label = f" ({partial} partial)" if partial else ""
        more = f", {len(extra)} robustness result(s)" if extra else ""
        partial = sum(item.summary["partial"] for item in generative)
        more += f", {len(generative)} generative task(s)" if generative else ""
        more += f" ({partial} partial)" if partial else ""
        lines.append(  # the display name says what went in; the folder, under which name
            f"{source.info.display_name}: {len(checked)} task(s){label}{more} -> "
            f"{model_folder(store, source.model)}"
        )
    return lines


def _ensure_store(store: Path) -> None:
    check_store_folder(store)
    if not is_store(store):
        STORE_FORMAT.write(store_record_path(store), {})
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
    models = models_folder(store)
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
    for folder in (store, task_files_folder(store), store / BLOBS):
        for path in sorted(folder.iterdir()) if folder.is_dir() else []:
            if is_leftover(path.name) and path.is_file() and not path.is_symlink():
                path.unlink()
                print(f"olmes: publish: removed {path}, left by an interrupted write", file=sys.stderr)


def _write_task_files(store: Path, task: str, data_source: str) -> None:
    """The task's instances and request examples, those not in the store yet."""
    check_task_files(store, task, data_source)
    _write_files(store, task_files(task, data_source))


def _write_files(store: Path, files: dict[str, bytes]) -> None:
    """Task files (name -> bytes) not in the store's tasks/ yet."""
    for name, data in files.items():
        path = task_files_folder(store) / name
        if not path.is_file():
            with atomic_path(path) as temp:
                temp.write_bytes(data)


def _write_generative(
    final: Path, staging: Path, kept: dict, new: list[CheckedGenerative], origins: dict[Path, Path]
) -> dict:
    """Copy the kept generative results and the new ones into ``staging`` (summaries and run records
    in the store's portable form); return the model record's ``generative`` entry."""
    replaced = {item.task for item in new}
    for task in [task for task in kept if task not in replaced]:
        for name in generative_names(task):
            _copy_into(staging, f"{GENERATIVE}/{name}", final / GENERATIVE / name, origins)
    for item in new:
        for path in item.files:
            relative = f"{GENERATIVE}/{path.name}"
            if path.name.endswith(GENERATIVE_SUFFIX):
                origins[staging / relative] = path
                (staging / GENERATIVE).mkdir(parents=True, exist_ok=True)
                write_portable_summary(path, staging / relative)
            else:
                _copy_into(staging, relative, path, origins)
    entries = {task: entry for task, entry in kept.items() if task not in replaced}
    entries.update({item.task: _generative_entry(item) for item in new})
    return {task: entries[task] for task in GENERATIVE_TASKS if task in entries}


def _generative_entry(item: CheckedGenerative) -> dict:
    summary = item.summary
    return {
        "instances": summary["n_instances"],
        "limit": summary["limit"],
        "partial": summary["partial"],
        "requests_sha256": {"generations": item.run["requests_sha256"]},
        **run_cost(item.runs),
        "published": _now(),
    }


def _write_model(
    store: Path,
    source: Source,
    checked: list[Checked],
    extra: list[CheckedRobustness],
    layout: str,
    data_source: str,
    generative: list[CheckedGenerative],
) -> None:
    """Build the model's new folder (kept results + new ones) beside the old one, check it as
    ``olmes verify`` would, then swap it in (with the task files it needs)."""
    final = model_folder(store, source.model)
    swapped: list[bool] = []  # once the new folder is in place, the blobs it names stay
    with _logprob_writer(store, layout, lambda: bool(swapped)) as place, _staging(final) as staging:
        origins: dict[Path, Path] = {}  # each file of the staging folder -> where it was copied from
        old = read_model_record(store, source.model) if (final / MODEL_RECORD).is_file() else None
        everything = [*checked, *extra, *generative]
        same_weights = old is not None and old["fingerprint"] == one_fingerprint(source, everything)
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
        kept_generative = old.get(GENERATIVE, {}) if same_weights else {}
        generative_entries = _write_generative(final, staging, kept_generative, generative, origins)
        record = _model_record(source, everything, tasks)
        if same_weights and not checked and not extra:  # generative results join the model as it is
            record.update({key: old[key] for key in RUN_FIELDS if key in old})
        if robustness:
            record[ROBUSTNESS] = robustness
        if generative_entries:
            record[GENERATIVE] = generative_entries
        MODEL_FORMAT.write(staging / MODEL_RECORD, record)
        _verify_staged(store, source, staging, final, origins, data_source)
        for item in checked:
            _write_task_files(store, item.task, data_source)
        for item in generative:
            _write_files(store, generative_task_files(item.task))
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
    store: Path, source: Source, staging: Path, final: Path, origins: dict[Path, Path], data_source: str
) -> None:
    """The model folder about to be swapped in, checked by ``olmes verify``'s own functions (not a
    copy of them): publish puts in exactly what verify passes. The first problem is the one line of
    the refusal, naming the file it was copied from."""
    problems = verify_model(store, source.model, staging, data_source=data_source).problems
    if not problems:
        return
    first = problems[0]
    path = origins.get(first.path) or (
        final / first.path.relative_to(staging) if first.path.is_relative_to(staging) else first.path
    )
    what = first.what.replace(str(staging), str(final))
    more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
    raise OlmesError(
        f"{source_name(source)} not published, olmes verify would refuse it: {path}: {what}{more}"
    )


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
            **run_cost(item.runs),
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
        **run_cost(item.runs),
        "published": _now(),
    }


RUN_FIELDS = ("spec", "kind", "revision", "dtype", "device", "versions")  # model.json's fields from a run


def _model_record(source: Source, items: list, tasks: dict) -> ModelRecord:
    """Provenance of the model's results: what model, which weights, where, with what, at what cost."""
    run = items[0].runs[0]
    info = source.info.entry()
    identity = results_identity(source, items)
    if identity is not None:
        info["identity"] = identity
    ordered = {task: tasks[task] for task in TASKS if task in tasks}
    return {
        "format": MODEL_FORMAT.tag,
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
