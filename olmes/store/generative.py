"""The OLMES v0.2 generative tasks' results in the store: where their files go, the checks they pass on
the way in (``olmes publish``) and at rest (``olmes verify``), and the task files the store keeps.

A model's generative results are four files per task, laid out alike in a workflow results folder
(``<results>/generative/<model>/``) and in the store (``<store>/models/<model>/generative/``):
``<task>.generative.json`` (the summary), ``<task>.instances.parquet`` (each instance's metrics),
``<task>.generations.parquet`` and its run record ``<task>.generations.parquet.run.json``. They are
small (the generations are text), so they are kept in git whole.

The checks: every file's SHA-256 as the summary records it; the generations made from this olmes
version's requests (the run record's request SHA-256 against the requests made again here, at the
result's limit); the metrics, the partial label and every instance's row recomputed from the
stored generations and the gold answers made again here; one model fingerprint with the model's other
results. What they cannot catch is what no check of files can: generations made up consistently
(only generating again does; ``olmes reproduce`` compares the first instances).
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from olmes import __version__
from olmes.core.errors import OlmesError
from olmes.core.generative import get_generative_task
from olmes.core.records import ReproducedGeneration, read_run_record, records_bytes, write_records
from olmes.core.records.generative import (
    GENERATIVE_INSTANCE_COLUMNS,
    GENERATIVE_SCORES_FORMAT,
    GenerationInstanceRow,
    GenerationRequestRow,
    GenerativeScoreSummary,
    read_generative_summary,
)
from olmes.core.resources import file_sha256
from olmes.requests.generative import generation_requests
from olmes.scoring.generative_score import (
    generative_metrics,
    instance_frame,
    read_generations,
    stop_counts,
)
from olmes.store.checks import run_cost
from olmes.store.claims import PUBLISHED
from olmes.store.layout import (
    GENERATION_EXAMPLES_SUFFIX,
    GENERATION_INSTANCES_SUFFIX,
    GENERATIVE,
    generative_names,
    generative_tasks,
    model_folder,
    task_files_folder,
)
from olmes.store.naming import shown_name
from olmes.store.portable import portable_run
from olmes.store.verification import Verification

EXAMPLE_INSTANCES = (
    2  # instances whose generation requests the store keeps per task (the site shows the first)
)


# -- the requests of this olmes version -----------------------------------------------------------------


@functools.cache
def canonical_generation_requests(task: str, limit: int | None) -> tuple[GenerationRequestRow, ...]:
    return tuple(generation_requests(task, limit))


@functools.cache
def canonical_generation_sha256(task: str, limit: int | None) -> str:
    """SHA-256 of the generation request file ``olmes requests <task> [--limit N]`` writes."""
    return hashlib.sha256(records_bytes(canonical_generation_requests(task, limit))).hexdigest()


@functools.cache
def generative_task_files(task: str) -> dict[str, bytes]:
    """The store's file of one generative task: the first instances' generation requests (the site
    shows their prompts) and every instance's question and gold answers (its instance browser)."""
    rows = canonical_generation_requests(task, None)
    listed = [{key: row[key] for key in GenerationInstanceRow.__annotations__} for row in rows]
    return {
        f"{task}{GENERATION_INSTANCES_SUFFIX}": records_bytes(listed, compress=True),
        f"{task}{GENERATION_EXAMPLES_SUFFIX}": records_bytes(rows[:EXAMPLE_INSTANCES]),
    }


def check_generative_task_files(store: Path, task: str) -> None:
    """The task's file already in the store must be this version's, byte for byte."""
    for name, data in generative_task_files(task).items():
        path = task_files_folder(store) / name
        if path.is_file() and path.read_bytes() != data:
            raise OlmesError(
                f"{path} differs from the one olmes {__version__} makes; the store was filled by another "
                "olmes version"
            )


# -- one result checked -----------------------------------------------------------------------------------


@dataclass
class CheckedGenerative:
    """One model x generative task that passed the checks."""

    task: str
    files: list[Path]  # summary, instances, generations, run record
    run: dict
    summary: GenerativeScoreSummary

    @property
    def runs(self) -> list[dict]:
        return [self.run]


def check_generative(
    folder: Path, model: str, task: str, where: str, allow_partial: bool
) -> CheckedGenerative:
    """The generative result of ``model`` on ``task`` in ``folder``, checked (see the module); a
    refusal is one line starting with ``where`` (the model as messages name it, and the task)."""
    where = f"{where} {task}"
    get_generative_task(task)
    summary_path = folder / generative_names(task)[0]
    summary = read_generative_summary(summary_path)
    if summary["model"] != model:
        raise OlmesError(f"{summary_path}: holds results of model {summary['model']!r}, not {model!r}")
    if summary["task"] != task:
        raise OlmesError(f"{summary_path}: holds results of task {summary['task']!r}, not {task!r}")
    if summary["partial"] and not allow_partial:
        reasons = "; ".join(summary["partial_reasons"]) or "partial"
        raise OlmesError(
            f"{where} is partial ({reasons}); publish it with --partial to list it labelled partial"
        )
    _, instances_name, generations_name, run_name = generative_names(task)
    entry = summary["inputs"].get("generations")
    if entry is None or entry["path"] != generations_name or summary["instances"]["path"] != instances_name:
        raise OlmesError(f"{summary_path}: its files are not named as the layout says; score the task again")
    for name, sha256 in (
        (generations_name, entry["sha256"]),
        (instances_name, summary["instances"]["sha256"]),
    ):
        _check_hash(folder / name, sha256, where)
    run = read_run_record(folder / generations_name)
    if run is None:
        raise OlmesError(f"{folder / run_name}: missing; generate again (olmes generate)")
    canonical = canonical_generation_sha256(task, summary["limit"])
    if run["requests_sha256"] != canonical:
        raise OlmesError(
            f"{where}: generated from other requests (SHA-256 {run['requests_sha256'][:12]}, olmes "
            f"{__version__} makes {canonical[:12]}); generate it again with this olmes version"
        )
    if entry["run"] is None or portable_run(entry["run"]) != portable_run(run):
        raise OlmesError(
            f"{summary_path}: inputs.generations.run is not the run record beside the generations"
        )
    _check_recomputed(folder, summary_path, summary, model, task)
    return CheckedGenerative(task, [folder / name for name in generative_names(task)], run, summary)


def _check_hash(path: Path, expected: str, where: str) -> None:
    if not path.is_file():
        raise OlmesError(f"{where}: {path} is missing; re-run the workflow for it")
    if file_sha256(path) != expected:
        raise OlmesError(f"{where}: {path} changed after its summary was written; score the task again")


def _check_recomputed(
    folder: Path, path: Path, summary: GenerativeScoreSummary, model: str, task: str
) -> None:
    """Every number of the summary and every row of its instances file, from the generations and the
    gold answers made again here."""
    requests = list(canonical_generation_requests(task, summary["limit"]))
    generations = read_generations(folder / summary["inputs"]["generations"]["path"])
    columns = instance_frame(get_generative_task(task), model, requests, generations, str(path))
    again = generative_metrics(get_generative_task(task), columns, summary["limit"])
    again["generation_counts"] = stop_counts(generations)
    for key, value in again.items():
        if summary.get(key) != value:
            raise OlmesError(f"{path}: {key} is {summary.get(key)!r}, its generations give {value!r}")
    stored = pq.read_table(folder / summary["instances"]["path"]).to_pydict()
    for column in GENERATIVE_INSTANCE_COLUMNS:
        if stored.get(column.name) != columns[column.name]:
            raise OlmesError(
                f"{folder / summary['instances']['path']}: column {column.name} differs from the one its "
                "generations give; score the task again"
            )


def portable_summary(summary: GenerativeScoreSummary) -> GenerativeScoreSummary:
    """A summary in the store's form: its run record without the machine's folders."""
    entry = summary["inputs"]["generations"]
    run = None if entry["run"] is None else portable_run(entry["run"])
    return {**summary, "inputs": {"generations": {**entry, "run": run}}}  # type: ignore[return-value]


def write_portable_summary(source: Path, target: Path) -> None:
    GENERATIVE_SCORES_FORMAT.write(target, portable_summary(read_generative_summary(source)))


# -- a store model's generative results at rest ----------------------------------------------------------


def verify_generative(found: Verification, folder: Path, model: str, record: dict, record_path: Path) -> None:
    """Each generative result in a model folder re-checked as publish checks it (its numbers
    recomputed), and model.json's ``generative`` entries against them."""
    listed = record.get(GENERATIVE, {})
    present = generative_tasks(folder) if folder.is_dir() else []
    for task in present:
        path = folder / generative_names(task)[0]
        found.results += 1
        with found.checking(path):
            checked = check_generative(folder, model, task, shown_name(model, record["display_name"]), True)
            for what in _entry_problems(task, listed.get(task), checked):
                found.problem(record_path, what)
    for task in sorted(set(listed) - set(present)):
        found.problem(record_path, f"generative.{task}: listed, but the model folder has no such result")


def _entry_problems(task: str, entry: dict | None, checked: CheckedGenerative) -> list[str]:
    where = f"generative.{task}"
    if entry is None:
        return [f"does not list generative task {task}, whose summary is in the model folder"]
    summary = checked.summary
    expected = {
        "instances": summary["n_instances"],
        "limit": summary["limit"],
        "partial": summary["partial"],
        "requests_sha256": {"generations": checked.run["requests_sha256"]},
        **run_cost(checked.runs),
    }
    found = [f"{where}: unknown key {key!r}" for key in sorted(set(entry) - {*expected, "published"})]
    found += [
        f"{where}: {key} is {entry.get(key)!r}, its result says {value!r}"
        for key, value in expected.items()
        if entry.get(key) != value
    ]
    if not PUBLISHED.match(str(entry.get("published"))):
        found.append(
            f"{where}: published {entry.get('published')!r} is not a UTC time (YYYY-MM-DDTHH:MM:SSZ)"
        )
    return found


# -- a store model's first instances generated again (olmes reproduce) -----------------------------------


def reproduce_generations(
    store: Path, model: str, task: str, first: int, loaded, workdir: Path, cache_root: Path
) -> ReproducedGeneration:
    """Generate the first ``first`` instances of ``task`` again with the loaded model (never from the
    cache) and compare them with the store's generations."""
    from olmes.logprobs.generation_runner import generate_file

    rows = list(canonical_generation_requests(task, first))
    requests_path = workdir / GENERATIVE / f"{task}.gen.jsonl"
    write_records(rows, requests_path)
    mine = workdir / GENERATIVE / generative_names(task)[2]
    generate_file(loaded, rows, requests_path, mine, cache_root, use_cache=False)
    theirs = model_folder(store, model) / GENERATIVE / generative_names(task)[2]
    return compare_generations(task, first, mine, theirs)


def compare_generations(task: str, first: int, mine: Path, theirs: Path) -> ReproducedGeneration:
    """The first ``first`` generations of two generations files compared: text character for
    character, and the gold answers' log-probs."""
    here = read_generations(mine).slice(0, first).to_pydict()
    there = read_generations(theirs).slice(0, first).to_pydict()
    if here["instance_index"] != there["instance_index"]:
        raise OlmesError(f"{theirs}: its first {first} instances are not those generated again here")
    differing = [
        index
        for index, ours, stored in zip(
            here["instance_index"], here["generation"], there["generation"], strict=True
        )
        if ours != stored
    ]
    deltas = [abs(a - b) for a, b in zip(here["gold_sum_logprob"], there["gold_sum_logprob"], strict=True)]
    return {
        "task": task,
        "instances": len(here["instance_index"]),
        "identical": len(here["instance_index"]) - len(differing),
        "differing": differing,
        "max_abs_delta": max(deltas, default=0.0),
    }
