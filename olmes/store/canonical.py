"""The canonical requests of this olmes version, made again here: what publish, verify, import and
reproduce compare results with, and the task files (``tasks/``) a store keeps of them."""

from __future__ import annotations

import functools
import hashlib

from olmes.core.methods import REQUEST_SETS
from olmes.core.records import RequestRow, records_bytes
from olmes.core.tasks import STANDARD_VARIANT, TASKS
from olmes.requests.build import instance_rows, requests_of, task_instances
from olmes.store.layout import examples_name, instances_name

EXAMPLE_INSTANCES = 2  # instances whose requests the store keeps per task x set (the site shows the first)


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
    files = {instances_name(task): records_bytes(listed, compress=True)}
    for request_set in REQUEST_SETS:
        rows = canonical_requests(task, request_set, None, source)
        example = [row for row in rows if row["instance_index"] < EXAMPLE_INSTANCES]
        files[examples_name(task, request_set)] = records_bytes(example)
    return files
