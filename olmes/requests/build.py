"""Standardized instances -> request rows (context, continuation) for CF, its pmi rows, and MCF,
and the instance rows (question, choices, gold) that readers of the results see.

Row order follows the reference dumps: every row by instance then choice. The reference dumps put
CF's unconditional (pmi) rows after all conditional ones in one file; here they are a request set of
their own ("pmi"), so that the CF file followed by the pmi file is the reference dump's order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from olmes.core.errors import OlmesError
from olmes.core.methods import CF, MCF, PMI, REQUEST_SETS, ROTATIONS
from olmes.core.records import InstanceRow, RequestRow
from olmes.core.tasks import STANDARD_VARIANT, Task
from olmes.requests import prompts
from olmes.requests.data import fewshot_instances, load_instances
from olmes.requests.tasks import Instance, TaskTemplate, get_template


def build_requests(
    task: str | Task,
    request_set: str,
    limit: int | None = None,
    source: str = "bundle",
    pmi_everywhere: bool = False,
) -> list[RequestRow]:
    """All request rows of a task and request set (cf, pmi or mcf); ``pmi_everywhere`` allows pmi
    rows for tasks whose standard has none."""
    return requests_of(task, request_set, task_instances(task, limit, source), source, pmi_everywhere)


def template_of(task: str | Task) -> TaskTemplate:
    """The template of a task given by its key or by its facts (the :mod:`olmes.core.tasks` record)."""
    return get_template(task if isinstance(task, str) else task.key)


def request_sets(task: Task, pmi_everywhere: bool = False) -> tuple[str, ...]:
    """The request sets a run of ``task`` scores: cf and mcf, and pmi where pmi is scored."""
    return REQUEST_SETS if task.has_pmi or pmi_everywhere else tuple(s for s in REQUEST_SETS if s != PMI)


def task_instances(task: str | Task, limit: int | None = None, source: str = "bundle") -> list[Instance]:
    """The standardized instances a task's requests are built from (the first ``limit``)."""
    if limit is not None and limit <= 0:
        raise OlmesError(f"--limit must be a positive number of instances, got {limit}")
    return load_instances(template_of(task), source, limit)


def instance_rows(task: str | Task, instances: list[Instance]) -> list[InstanceRow]:
    """What a reader sees of each instance: its question, the choice texts and the gold choice."""
    task = template_of(task)
    rows = []
    for index, instance in enumerate(instances):
        row = {"task": task.key, "instance_index": index, "native_id": instance.native_id}
        if instance.subject is not None:
            row["subject"] = instance.subject
        row.update(question=task.question(instance), choices=list(instance.choices), gold=instance.gold)
        rows.append(row)
    return rows


def requests_of(
    task: str | Task,
    request_set: str,
    instances: list[Instance],
    source: str = "bundle",
    pmi_everywhere: bool = False,
    variant: str = STANDARD_VARIANT,
) -> list[RequestRow]:
    """The request rows of ``instances`` (from :func:`task_instances`) in one request set, worded as
    the standard or as a variant of the paper's Table 5 (``prompts.VARIANTS``). A variant's rows
    carry a ``variant`` field, so its log-probs and scores can never pass for the standard's."""
    if variant not in prompts.VARIANTS:
        raise OlmesError(f"unknown variant {variant!r}; choose one of: {', '.join(prompts.VARIANTS)}")
    variant_prompts = prompts.VARIANTS[variant]
    rows = _request_rows(template_of(task), request_set, instances, source, pmi_everywhere, variant_prompts)
    if variant != STANDARD_VARIANT:
        for row in rows:
            row["variant"] = variant
    return rows


def _request_rows(
    task: TaskTemplate,
    request_set: str,
    instances: list[Instance],
    source: str,
    pmi_everywhere: bool,
    variant: prompts.Variant,
) -> list[RequestRow]:
    wording = variant.wording
    if request_set == ROTATIONS:
        return _rotation_rows(task, instances, _ShotCache(task, source, variant), wording)
    if request_set not in REQUEST_SETS:
        raise OlmesError(f"unknown request set {request_set!r}; choose one of: {', '.join(REQUEST_SETS)}")
    if request_set not in request_sets(task, pmi_everywhere):
        raise OlmesError(
            f"the standard scores {task.key} without pmi; --pmi-everywhere makes its pmi requests anyway"
        )
    if request_set == PMI:
        return [
            row
            for index, instance in enumerate(instances)
            for row in _unconditional_rows(task, index, instance, wording)
        ]
    shots = _ShotCache(task, source, variant)
    render = _cf_rows if request_set == CF else _mcf_rows
    rows: list[RequestRow] = []
    for index, instance in enumerate(instances):
        rows.extend(render(task, index, instance, shots.rendered(instance, request_set), wording))
    return rows


class _ShotCache:
    """Rendered shots per subject (a task without subjects has one set): built once, reused."""

    def __init__(self, task: TaskTemplate, source: str, variant: prompts.Variant) -> None:
        self.task, self.source, self.variant = task, source, variant
        self._rendered: dict[tuple[str | None, str], list[str]] = {}

    def rendered(self, instance: Instance, request_set: str) -> list[str]:
        key = (instance.subject, request_set)
        if key not in self._rendered:
            examples = fewshot_instances(self.task, self.source, instance.subject, self.variant.other_shots)
            render = self.task.cf_shot if request_set == CF else self.task.mcf_shot
            self._rendered[key] = [render(example, self.variant.wording) for example in examples]
        return self._rendered[key]


def _row(task: TaskTemplate, request_set: str, index: int, instance: Instance, choice: int) -> dict[str, Any]:
    row = {
        "task": task.key,
        "formulation": request_set,
        "instance_index": index,
        "native_id": instance.native_id,
        "choice": choice,
        "label": instance.gold,
    }
    if instance.subject is not None:
        row["subject"] = instance.subject
    return row


def _cf_rows(
    task: TaskTemplate, index: int, instance: Instance, shots: list[str], wording: prompts.Wording
) -> Iterable[RequestRow]:
    instruction = task.instruction(instance)
    pairs = zip(task.cf_queries(instance, wording), task.cf_continuations(instance), strict=True)
    for choice, (query, continuation) in enumerate(pairs):
        row = _row(task, CF, index, instance, choice)
        row["context"] = prompts.fewshot_context(instruction, shots, query)
        row["continuation"] = continuation
        row["unconditional"] = False
        yield row


def _unconditional_rows(
    task: TaskTemplate, index: int, instance: Instance, wording: prompts.Wording
) -> Iterable[RequestRow]:
    for choice, continuation in enumerate(task.cf_continuations(instance)):
        row = _row(task, PMI, index, instance, choice)
        row["context"] = wording.answer_line  # the pmi baseline: the bare answer line
        row["continuation"] = continuation
        row["unconditional"] = True
        yield row


def rotated(instance: Instance, rotation: int) -> Instance:
    """The instance with its choices shown from choice ``rotation`` on (mod k); the gold moves along."""
    k = len(instance.choices)
    order = [(rotation + position) % k for position in range(k)]
    return dataclasses.replace(
        instance, choices=tuple(instance.choices[i] for i in order), gold=order.index(instance.gold)
    )


def _rotation_rows(
    task: TaskTemplate, instances: list[Instance], shots: _ShotCache, wording
) -> list[RequestRow]:
    """MCF rows of rotations 1..k-1 of every instance (the shots are the standard's)."""
    rows = []
    for index, instance in enumerate(instances):
        for rotation in range(1, len(instance.choices)):
            for row in _mcf_rows(
                task, index, rotated(instance, rotation), shots.rendered(instance, MCF), wording
            ):
                row["formulation"], row["rotation"] = ROTATIONS, rotation
                rows.append(row)
    return rows


def _mcf_rows(
    task: TaskTemplate, index: int, instance: Instance, shots: list[str], wording: prompts.Wording
) -> Iterable[RequestRow]:
    context = prompts.fewshot_context(task.instruction(instance), shots, task.mcf_query(instance, wording))
    for choice, continuation in enumerate(prompts.mcf_continuations(len(instance.choices))):
        row = _row(task, MCF, index, instance, choice)
        row["context"] = context
        row["continuation"] = continuation
        row["unconditional"] = False
        yield row
