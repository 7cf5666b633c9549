"""Raw dataset rows from a source, turned into the standard's instances (docs/standard.md section 1).

Two sources give the same instances wherever both hold the split:
- ``hf``: the Hugging Face hub through ``datasets.load_dataset`` (respects ``HF_HOME``, the
  datasets cache and ``HF_HUB_OFFLINE``). ``OLMES_HF_DATASETS_DIR`` may point at a folder of
  local copies of the hub repositories (``<dir>/<owner>/<name>``, as ``hf download`` leaves them).
- ``bundle``: the offline reference bundle (:mod:`olmes.core.bundle`).
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from olmes.core.bundle import bundle_dir, read_dump
from olmes.core.errors import OlmesError
from olmes.core.tasks import SAMPLE_SEED, SAMPLE_SIZE, SAMPLE_THRESHOLD
from olmes.requests.tasks.base import BundleDump, Instance, TaskTemplate

SOURCES = ("bundle", "hf")
UNCONDITIONAL_DOC_ID_OFFSET = 1_000_000  # the dumps' doc_id of pmi rows


def load_instances(task: TaskTemplate, source: str = "bundle", limit: int | None = None) -> list[Instance]:
    """The task's standardized instances in the standard's order, the first ``limit`` of them."""
    _check_source(source)
    if task.subjects:
        return _subject_instances(task, source, limit)
    rows = raw_rows(task, source, task.split)
    if len(rows) != task.split_size:
        raise OlmesError(
            f"{task.key}: the {task.split} split from source {source!r} has {len(rows)} rows, the "
            f"standard's has {task.split_size}; point the task at the standard's dataset"
        )
    instances = [task.standardize(row, index) for index, row in enumerate(rows)]
    return sample_instances(instances)[:limit]


def sample_instances(instances: list[Instance]) -> list[Instance]:
    """OLMES sampling: a split over 1500 instances is cut to 1000, kept in the sampled order."""
    if len(instances) <= SAMPLE_THRESHOLD:
        return instances
    return random.Random(SAMPLE_SEED).sample(instances, SAMPLE_SIZE)


def fewshot_instances(
    task: TaskTemplate, source: str, subject: str | None, other_shots: bool = False
) -> list[Instance]:
    """The shots of a task (of one subject for MMLU): curated, or the first rows of its dev split;
    with ``other_shots`` those of prompt variants var2/var3 (3 of the curated 5 replaced)."""
    if other_shots:
        return task.other_shots()
    if task.fewshot_split is None:
        return task.curated_shots()
    rows = raw_rows(task, source, task.fewshot_split, subject)[: task.num_shots]
    return [task.standardize(row, index) for index, row in enumerate(rows)]


def _subject_instances(task: TaskTemplate, source: str, limit: int | None) -> list[Instance]:
    """Subject by subject in the registry's order; stops loading once ``limit`` is reached."""
    instances: list[Instance] = []
    for subject in task.subjects:
        if limit is not None and len(instances) >= limit:
            break
        rows = raw_rows(task, source, task.split, subject)
        instances.extend(task.standardize(row, index) for index, row in enumerate(rows))
    return instances[:limit]


def _check_source(source: str) -> None:
    if source not in SOURCES:
        raise OlmesError(f"unknown data source {source!r}; choose one of: {', '.join(SOURCES)}")


def raw_rows(task: TaskTemplate, source: str, split: str, subject: str | None = None) -> list[dict[str, Any]]:
    """The raw rows of one split, in dataset order, in the hub's schema."""
    _check_source(source)
    if source == "hf":
        return _hf_rows(task, split, subject)
    if isinstance(task.bundle, BundleDump):
        if split != task.split:
            raise OlmesError(f"the bundle holds only the {task.split} split of {task.key}, not {split}")
        return _dump_rows(task)
    return _arrow_rows(task.bundle.path.format(subject=subject, split=split), task)


# -- hub ------------------------------------------------------------------------------------------
def hf_location(task: TaskTemplate) -> str:
    """The hub id, or the local copy under ``OLMES_HF_DATASETS_DIR`` when that is set."""
    mirror = os.environ.get("OLMES_HF_DATASETS_DIR")
    return str(Path(mirror) / task.hf_path) if mirror else task.hf_path


def _hf_rows(task: TaskTemplate, split: str, subject: str | None) -> list[dict[str, Any]]:
    import datasets

    location = hf_location(task)
    name = subject or task.hf_name
    described = f"{location}" + (f" (config {name})" if name else "") + f" split {split}"
    try:
        dataset = datasets.load_dataset(location, name, split=split)
    except Exception as error:  # datasets raises many types: not found, offline, bad config, ...
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise OlmesError(
            f"cannot load dataset {described} for task {task.key} with source 'hf' ({reason}); "
            "check the dataset id, your network or HF cache, or use source 'bundle'"
        ) from error
    return dataset.to_list()


# -- bundle ---------------------------------------------------------------------------------------
def _arrow_rows(relative: str, task: TaskTemplate) -> list[dict[str, Any]]:
    import datasets

    folder = bundle_dir() / "hf_datasets" / relative
    if not folder.is_dir():
        raise OlmesError(
            f"the offline bundle has no dataset {relative} for task {task.key} (source 'bundle'); "
            "use source 'hf' for it"
        )
    return datasets.load_from_disk(str(folder)).to_list()


def _dump_rows(task: TaskTemplate) -> list[dict[str, Any]]:
    """Raw rows rebuilt from the docs of a reference dump, in ``doc_id`` (= split) order."""
    raw = _arrow_rows(task.raw_companion, task) if task.raw_companion else None
    rows = []
    for doc_id, doc in _dump_docs(task.bundle):
        rows.append(task.bundle_row_from_doc(doc, raw[doc_id] if raw is not None else None))
    return rows


def _dump_docs(bundle: BundleDump) -> Iterator[tuple[int, dict[str, Any]]]:
    docs: dict[int, dict[str, Any]] = {}
    for row in read_dump(bundle.task, bundle.variant):
        if row["doc_id"] < UNCONDITIONAL_DOC_ID_OFFSET:
            docs.setdefault(row["doc_id"], row["doc"])
    if sorted(docs) != list(range(len(docs))):
        raise OlmesError(f"reference dump {bundle.task}/{bundle.variant} does not cover its split")
    for doc_id in range(len(docs)):
        yield doc_id, docs[doc_id]
