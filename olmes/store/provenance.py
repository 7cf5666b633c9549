"""How far a store model's results are confirmed: its provenance level, and the reproduction record
that earns the higher one.

No check of self-reported files can prove that they came from the named weights: consistent made-up
log-probs pass every recomputation. Only running the model again does. So a store model is

- *submitted*: its numbers recomputed from its log-probs by ``olmes verify``, its identity as its run
  records claim it; or
- *reproduced*: a maintainer ran ``olmes reproduce --record`` on the base branch (a pull request may
  not add or change ``reproductions/``, olmes.store.submission): the first N instances of every task
  recomputed from the named weights on the maintainer's machine, within the float error model.

The record (``reproductions/<model>/reproduction.json``, format ``olmes.reproduction/2`` with the
record's fields: date, olmes commit, the identity read from the weights, the SHA-256 of each store
log-prob file compared) keeps the recomputed log-probs beside it (``<task>.<set>.parquet``), so
``olmes verify`` recomputes the whole comparison from the two sets of files, every number and the
verdict, without the model. A model replaced since it was reproduced (other log-prob files) makes
its record stale: the model is *submitted* again until a maintainer reproduces it again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from olmes.core.errors import OlmesError
from olmes.core.numerics import share_of_tolerance
from olmes.core.records import (
    REPRODUCTION_FORMAT,
    ModelIdentity,
    ReproducedTask,
    ReproductionReport,
    read_score_summary,
)
from olmes.scoring.agreement import compare_decisions
from olmes.store.blobs import model_logprob_file
from olmes.store.layout import (
    SCORES,
    logprob_name,
    model_folder,
    reproduction_folder,
    reproduction_record_path,
    summary_name,
)

Level = Literal["reproduced", "submitted"]
KEY = ["instance_index", "choice", "unconditional"]
RECORD_FIELDS = ("date", "olmes_commit", "identity", "store_files")  # a record's, beyond a report's
TOTALS = ("requests", "beyond_tolerance", "decisions", "identical", "ties_within_error", "unexplained_flips")


# -- the comparison (olmes reproduce makes it; olmes verify makes it again from the record) -------------


def compare_task(task: str, instances: int, mine: dict[str, Path], theirs: dict[str, Path]) -> ReproducedTask:
    """A task's recomputed log-prob files (request set -> path) against the store's of the same
    requests: each request's |delta| and share of the error model's bound, each decision compared."""
    deltas, shares = [], []
    for request_set in mine:
        here, there = pd.read_parquet(mine[request_set]), pd.read_parquet(theirs[request_set])
        joined = here.merge(there, on=KEY, how="outer", suffixes=("", "_store"), indicator=True)
        if (joined["_merge"] != "both").any():
            raise OlmesError(
                f"{task} {request_set}: the requests recomputed here are not the store's; "
                "re-publish the model with this olmes version"
            )
        deltas.append(np.abs(joined["sum_logprob"] - joined["sum_logprob_store"]).to_numpy())
        shares.append(
            share_of_tolerance(joined["sum_logprob"], joined["sum_logprob_store"], joined["num_tokens"])
        )
    share = np.concatenate(shares)
    compared = compare_decisions(mine, theirs)
    flips = compared["flips"]
    return {
        "instances": instances,
        "task": task,
        "requests": len(share),
        "max_abs_delta": float(np.concatenate(deltas).max()),
        "max_share_of_tolerance": float(share.max()),
        "beyond_tolerance": int((share > 1).sum()),
        "decisions": compared["decisions"],
        "identical": compared["identical"],
        "ties_within_error": sum(flip["within_error"] for flip in flips),
        "unexplained_flips": sum(not flip["within_error"] for flip in flips),
        "differing_methods": sorted({flip["method"] for flip in flips}),
        "flips": flips,
    }


def totals(tasks: list[ReproducedTask]) -> dict:
    """The report's sums and maxima over its tasks, and its verdict: DIFFERS only for a flip the
    error model does not explain."""
    found = {key: sum(task[key] for task in tasks) for key in TOTALS}
    found["max_abs_delta"] = max(task["max_abs_delta"] for task in tasks)
    found["max_share_of_tolerance"] = max(task["max_share_of_tolerance"] for task in tasks)
    found["verdict"] = (
        "DIFFERS"
        if found["unexplained_flips"]
        else "reproduced within float error"
        if found["ties_within_error"]
        else "reproduced"
    )
    return found


def store_subset(store: Path, model: str, task: str, request_set: str, limit: int, workdir: Path) -> Path:
    """The store's log-prob rows of the first ``limit`` instances, as a log-prob file of their own."""
    frame = pd.read_parquet(model_logprob_file(store, model, task, request_set))
    path = workdir / "store" / logprob_name(task, request_set)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame[frame["instance_index"] < limit].to_parquet(path, index=False)
    return path


def store_sha256(store: Path, model: str, task: str, folder: Path | None = None) -> dict[str, str]:
    """Each request set's log-prob file SHA-256, as the model's score summary of ``task`` records it
    (in ``folder`` instead of the store's model folder when given: one being published)."""
    summary = read_score_summary((folder or model_folder(store, model)) / SCORES / summary_name(task))
    return {request_set: entry["sha256"] for request_set, entry in summary["inputs"].items()}


# -- the record in the store --------------------------------------------------------------------------


def read_record(store: Path, model: str) -> ReproductionReport | None:
    """A store model's reproduction record, checked for the record's fields; None when there is none."""
    path = reproduction_record_path(store, model)
    if not path.is_file():
        return None
    record = REPRODUCTION_FORMAT.read(path)
    missing = [key for key in RECORD_FIELDS if key not in record]
    if missing:
        raise OlmesError(f"{path}: a reproduction report, not a record (no {', '.join(missing)})")
    if record["model"] != model:
        raise OlmesError(f"{path}: the reproduction of {record['model']!r}, in the folder of {model!r}")
    return record


def is_stale(store: Path, record: ReproductionReport, folder: Path | None = None) -> bool:
    """Whether the model's log-prob files (in ``folder`` when given) are no longer those the record
    compared (it was replaced)."""
    for task, files in record["store_files"].items():
        try:
            if store_sha256(store, record["model"], task, folder) != files:
                return True
        except OlmesError:
            return True
    return False


def level(store: Path, model: str) -> Level:
    """The model's provenance level, as the site shows it: reproduced when its record is current and
    its verdict is not DIFFERS (``olmes verify`` has recomputed the record; the Pages build runs it
    first)."""
    try:
        record = read_record(store, model)
    except OlmesError:
        return "submitted"
    if record is None or record["verdict"] == "DIFFERS" or is_stale(store, record):
        return "submitted"
    return "reproduced"


def recorded_files(store: Path, record: ReproductionReport) -> dict[str, dict[str, Path]]:
    """The recomputed log-prob files a record keeps, by task and request set."""
    folder = reproduction_folder(store, record["model"])
    return {
        task: {request_set: folder / logprob_name(task, request_set) for request_set in files}
        for task, files in record["store_files"].items()
    }


def record_problems(store: Path, record: ReproductionReport, workdir: Path) -> list[str]:
    """A current record's comparison made again from its recomputed log-probs and the store's: every
    task's numbers, the totals and the verdict must be the record's."""
    found = []
    tasks = []
    stated = {task["task"]: task for task in record["tasks"]}
    if set(stated) != set(record["store_files"]):
        return ["its tasks are not those of its store_files"]
    for task, mine in recorded_files(store, record).items():
        absent = [path.name for path in mine.values() if not path.is_file()]
        if absent:
            found.append(f"{task}: the recomputed log-prob file(s) {', '.join(absent)} are missing")
            continue
        instances = stated[task]["instances"]
        theirs = {s: store_subset(store, record["model"], task, s, instances, workdir / task) for s in mine}
        again = compare_task(task, instances, mine, theirs)
        tasks.append(again)
        found += [
            f"{task}: {key} is {stated[task].get(key)!r}, its files give {value!r}"
            for key, value in again.items()
            if stated[task].get(key) != value
        ]
    if tasks and not found:
        found += [
            f"{key} is {record.get(key)!r}, its tasks give {value!r}"
            for key, value in totals(tasks).items()
            if record.get(key) != value
        ]
    return found


def reproduced_identity(store: Path, model: str, folder: Path | None = None) -> ModelIdentity | None:
    """The identity a reproduction read from the weights of the model's log-prob files (in ``folder``
    when given: one being published); None when there is none, or it was made of other files."""
    try:
        record = read_record(store, model)
    except OlmesError:
        return None
    return None if record is None or is_stale(store, record, folder) else record["identity"]
