"""Portable provenance: the store's form of a score summary, rotations report or run record.

A results folder's files name the machine's folders: a summary's ``inputs.<set>.path`` is where the
log-prob file was (``/tmp/.../logprobs/<model>/<task>.cf.parquet``), a run record's ``model_path``
is the model's local or cache folder and its ``requests_file`` the request file as given. None of
these means anything to a reader of the store, and they make the same results published from two
folders differ byte for byte. ``olmes publish`` writes the store's form instead
(docs/file-formats.md#the-results-store):

- ``inputs.<set>.path``: the log-prob file's path relative to the model folder, where the store
  keeps it (``logprobs/<task>.<set>.parquet``, ``robustness/<kind>/<task>.<set>.parquet``); an
  external file is found by its SHA-256 in ``blobs/`` (:mod:`olmes.store.blobs`);
- ``model_path``: left out (the spec, revision and fingerprint say which weights);
- ``model`` (the spec), and ``model.json``'s ``spec``: a local folder or file given by an absolute
  path is named by its last part (:func:`portable_spec`);
- ``requests_file``: the file's name (its SHA-256, kept, is what identifies it).

Every number, hash and other field is kept as it is, so the form of a form is itself.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath, PureWindowsPath

from olmes.core.records import (
    ROTATIONS_FORMAT,
    RUN_FORMAT,
    RunRecord,
    read_score_summary,
    write_score_summary,
)
from olmes.scoring.rotations import ROTATIONS_SUFFIX, read_rotation_report
from olmes.store.layout import LOGPROBS, RUN_SUFFIX, SCORES, SUMMARY_SUFFIX, logprob_name


def portable_spec(spec: str) -> str:
    """A model spec as the store records it: a local folder or file given by its absolute path is named
    by its last part (``/home/me/ckpt/step-1000`` -> ``step-1000``); the run record's kind, revision
    (the files' SHA-256) and fingerprint say which weights. Hub ids and short names are kept."""
    for path in (PurePosixPath(spec), PureWindowsPath(spec)):
        if path.is_absolute():
            return path.name
    return spec


def portable_run(run: RunRecord) -> RunRecord:
    """A run record without the machine's folders (fields kept in their order)."""
    out = {key: value for key, value in run.items() if key != "model_path"}
    out["model"] = portable_spec(run["model"])
    # the name whichever system wrote the path: PureWindowsPath splits on / and \ alike
    out["requests_file"] = PureWindowsPath(run["requests_file"]).name
    return out  # type: ignore[return-value]


def portable_inputs(inputs: dict, task: str, folder: str) -> dict:
    """A summary's or report's ``inputs``, each log-prob file named where the store keeps it:
    ``folder`` (relative to the model folder) / ``<task>.<set>.parquet``."""
    return {
        request_set: {
            **entry,
            "path": f"{folder}/{logprob_name(task, request_set)}",
            "run": None if entry["run"] is None else portable_run(entry["run"]),
        }
        for request_set, entry in inputs.items()
    }


def logprob_folder(document: PurePosixPath) -> str:
    """The folder (relative to the model folder) of the log-prob files of the summary or report at
    ``document`` (also relative to it): ``logprobs`` for a standard summary, else its own folder."""
    parent = document.parent
    return LOGPROBS if parent == PurePosixPath(SCORES) else parent.as_posix()


def is_provenance(name: str) -> bool:
    """Whether a file of this name has a store form (otherwise it is copied byte for byte)."""
    return name.endswith((SUMMARY_SUFFIX, ROTATIONS_SUFFIX, RUN_SUFFIX))


def write_portable(source: Path, target: Path, relative: PurePosixPath) -> None:
    """Write the store form of the provenance file ``source`` to ``target``, which is at
    ``relative`` in its model folder (atomically; ``source`` may be ``target``)."""
    name = source.name
    if name.endswith(RUN_SUFFIX):
        RUN_FORMAT.write(target, portable_run(RUN_FORMAT.read(source)))
        return
    folder = logprob_folder(relative)
    if name.endswith(ROTATIONS_SUFFIX):
        report = read_rotation_report(source)
        report["inputs"] = portable_inputs(report["inputs"], report["task"], folder)
        ROTATIONS_FORMAT.write(target, report)
        return
    summary = read_score_summary(source)
    summary["inputs"] = portable_inputs(summary["inputs"], summary["task"], folder)
    write_score_summary(target, summary)
