"""The generative tasks' documents: AI2's, from its request dumps in the reference bundle, and, where
the bundle also holds the raw split (Natural Questions), the same documents rebuilt from that split
with oe-eval's sampling rule (``random.Random(GENERATIVE_SAMPLE_SEED).sample(rows, limit)``)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from olmes.core.bundle import bundle_dir, read_dump
from olmes.core.errors import OlmesError
from olmes.core.generative import GENERATIVE_SAMPLE_SEED, GenerativeTask


def dump_rows(task: GenerativeTask) -> list[dict[str, Any]]:
    """AI2's request rows of the task (one per instance, in its instance order), checked for order
    and count."""
    rows = list(read_dump(task.oe_eval_name, task.bundle_variant))
    if [row["doc_id"] for row in rows] != list(range(len(rows))):
        raise OlmesError(f"{task.key}: the reference dump's rows are not one per instance in order")
    if len(rows) != task.standard_count:
        raise OlmesError(
            f"{task.key}: the reference dump holds {len(rows)} instances, the standard {task.standard_count}"
        )
    return rows


def dump_documents(task: GenerativeTask) -> list[dict[str, Any]]:
    """The task's instances as AI2's documents, in AI2's order (sampled order where sampled)."""
    return [row["doc"] for row in dump_rows(task)]


def _nq_document(row: dict[str, Any], index: int) -> dict[str, Any]:
    """oe-eval's Natural Questions document of one raw row (``question``, ``answer``)."""
    answers = list(row["answer"])
    return {"index": index, "question": row["question"], "answers": answers, "choices": answers[:1]}


RAW_SPLITS: dict[str, tuple[str, Callable[[dict[str, Any], int], dict[str, Any]]]] = {
    "naturalqs_open": ("nq_open/none/validation", _nq_document),
}
"""The generative tasks whose raw split the bundle holds: its folder under ``hf_datasets/`` and how a
raw row (with its position in the split) becomes oe-eval's document."""


def sample_documents(task: GenerativeTask, documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """oe-eval's instances of a split's documents: a ``limit`` below the split's size samples that many
    with ``random.Random(GENERATIVE_SAMPLE_SEED)``, kept in sampled order; else all, in split order."""
    if task.limit is not None and task.limit < len(documents):
        return random.Random(GENERATIVE_SAMPLE_SEED).sample(documents, task.limit)
    return documents


def raw_documents(task: GenerativeTask) -> list[dict[str, Any]]:
    """The task's instances rebuilt from the raw split in the bundle, sampled as oe-eval samples."""
    if task.key not in RAW_SPLITS:
        raise OlmesError(f"the reference bundle holds no raw split of {task.key}")
    import datasets

    relative, make_document = RAW_SPLITS[task.key]
    folder = bundle_dir() / "hf_datasets" / relative
    if not folder.is_dir():
        raise OlmesError(f"the reference bundle has no dataset {relative} for {task.key}")
    rows = datasets.load_from_disk(str(folder)).to_list()
    if len(rows) != task.split_size:
        raise OlmesError(f"{task.key}: the raw split has {len(rows)} rows, the standard's {task.split_size}")
    return sample_documents(task, [make_document(row, index) for index, row in enumerate(rows)])
