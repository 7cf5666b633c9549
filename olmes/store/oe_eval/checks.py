"""``olmes import oe-eval``, the run checked: its tasks' instances and every request against this olmes
version's canonical ones, byte for byte; the first difference is one error line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from olmes.core.errors import OlmesError
from olmes.core.methods import CF, MCF, PMI, Formulation
from olmes.core.records import RequestRow
from olmes.core.tasks import Task
from olmes.requests.build import request_sets, task_instances
from olmes.store.canonical import canonical_requests
from olmes.store.oe_eval.files import GenerativeRun, TaskRun, read_run
from olmes.store.oe_eval.model import check_one_model


@dataclass
class Instance:
    """One instance of the run: which task file it is in, its doc_id there, and its id."""

    run: TaskRun
    doc_id: int
    native_id: str


@dataclass
class ImportedTask:
    """One task of the run, checked: its parts per formulation and the standard's instance limit."""

    task: Task
    parts: dict[Formulation, list[TaskRun]]
    instances: dict[Formulation, list[Instance]]  # the same instances in each formulation's files
    limit: int | None
    positions: dict[tuple[int, int], int]  # (id of a task file, doc_id) -> the instance's position

    def instance(self, request_set: str, position: int) -> Instance:
        return self.instances[MCF if request_set == MCF else CF][position]

    @property
    def count(self) -> int:
        return len(next(iter(self.instances.values())))


def check_run(folder: Path, data_source: str = "bundle") -> list[ImportedTask]:
    """The run's OLMES tasks, each checked against the standard's instances and requests; the first
    difference is one error line. (Its generative tasks: :func:`check_runs`.)"""
    return check_runs(folder, data_source)[0]


def check_runs(folder: Path, data_source: str = "bundle") -> tuple[list[ImportedTask], list[GenerativeRun]]:
    """The run's multiple-choice tasks, checked (:func:`check_run`), and its OLMES v0.2 generative
    tasks' runs as read (:mod:`olmes.store.oe_eval.generative` checks those)."""
    runs = read_run(folder)
    check_one_model(folder, runs)
    grouped: dict[str, dict[Formulation, list[TaskRun]]] = {}
    for run in runs:
        if isinstance(run, TaskRun):
            grouped.setdefault(run.task.key, {}).setdefault(run.formulation, []).append(run)
    generative = [run for run in runs if isinstance(run, GenerativeRun)]
    return [_check_task(parts, data_source) for parts in grouped.values()], generative


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
    for request_set in run_request_sets(checked):
        _check_requests(checked, request_set, data_source)
    return checked


def _instances(runs: list[TaskRun]) -> list[Instance]:
    """The instances of a formulation's task files, in the standard's subject order, then doc_id."""
    found = []
    for run in runs:
        docs: dict[int, Instance] = {}
        for row in run.requests:
            doc_id = int_field(row.get("doc_id"), run, "doc_id")
            if doc_id < run.uncond_offset and doc_id not in docs:
                docs[doc_id] = Instance(run, doc_id, str(row.get("native_id")))
        if sorted(docs) != list(range(len(docs))):
            raise OlmesError(f"{run.paths['requests.jsonl']}: its doc_ids are not 0..{len(docs) - 1}")
        found += [docs[doc_id] for doc_id in range(len(docs))]
    return found


def _check_instances(task: Task, instances: list[Instance], standard: list) -> None:
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


def run_request_sets(checked: ImportedTask) -> list[str]:
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
            doc_id = int_field(row.get("doc_id"), run, "doc_id")
            unconditional = doc_id >= run.uncond_offset
            if unconditional != (request_set == PMI):
                continue
            key = (id(run), doc_id - run.uncond_offset if unconditional else doc_id)
            found[(checked.positions[key], int_field(row.get("idx"), run, "idx"))] = row
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
        if int_field(found.get("label"), instance.run, "label") != row["label"]:
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


def int_field(value, run: TaskRun, field: str, kind: str = "requests.jsonl") -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise OlmesError(f"{run.paths[kind]}: a line's {field} is {value!r}, not a number")
    return value
