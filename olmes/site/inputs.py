"""What the site reads: score summaries (+ predictions), the tables folder, and request files.

- Score summaries and their predictions Parquet come through :func:`olmes.tables.results.load_scores`, so
  the site checks the same hashes the tables do.
- The tables folder (``olmes tables --out``) gives the paper's tables, the figure data and the
  paired bootstrap; its ``index.json`` records the SHA-256 of every summary it was built from, and a
  folder built from other summaries is refused. The site computes no table: it formats these.
- Request files (``olmes requests --output``, JSON lines) give the exact prompts of each task's
  first instance and the few-shot prefix shared by its contexts (read as a stream).
- Instance files (``olmes requests --instances``) give the instance browser each instance's
  question, choices and gold, as the task's template states them (nothing is parsed back out of
  a prompt).
- A generative task's generation request file (``<task>.gen.jsonl`` in a results folder, its first
  instances' ``<task>.gen.examples.jsonl`` in a store) gives its page's exact prompt; its instances
  file (the store's ``<task>.gen.instances.jsonl.gz``: question and gold answers of every instance)
  and the request file give its instance browser the questions and answers.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from olmes.core.errors import OlmesError
from olmes.core.records import (
    FIGURE_FORMAT,
    FLAGS_FORMAT,
    INSTANCES_FORMAT,
    LEADERBOARD_FORMAT,
    REPRODUCTION_FORMAT,
    REQUESTS_FORMAT,
    TABLE_FORMAT,
    TABLES_INDEX_FORMAT,
    Format,
    InstanceRow,
    LeaderboardTable,
    ModelTaskFlag,
    ReproductionReport,
    RequestRow,
    TableDocument,
    TablesIndex,
    iter_records,
)
from olmes.core.records.generative import (
    GENERATION_INSTANCES_FORMAT,
    GENERATION_REQUESTS_FORMAT,
    GenerationInstanceRow,
    GenerationRequestRow,
)
from olmes.core.records.tables import GENERATIVE_TABLE_FORMAT
from olmes.core.resources import file_sha256
from olmes.tables.build import OPTIONAL_TABLE_KEYS, TABLE_KEYS, robustness_inputs
from olmes.tables.figures import FIGURE_KEYS
from olmes.tables.results import ModelInfo, ScoreSet, load_scores

Table = TypeVar("Table", TableDocument, LeaderboardTable)
TABLE_FORMATS: dict[str, Format] = {
    "leaderboard": LEADERBOARD_FORMAT,
    "generative_scores": GENERATIVE_TABLE_FORMAT,
}
"""The tables whose records the site reads field by field: their record, beyond :class:`TableDocument`."""

# -- scores and tables ------------------------------------------------------------------------------


@dataclass
class TableSet:
    """The tables folder of ``olmes tables``, each file checked against its record: the paper's
    tables, the figure rows, the flags, and where they came from."""

    tables: dict[str, TableDocument]
    figures: dict[str, list[dict]]
    folder: Path
    index: TablesIndex
    flags: list[ModelTaskFlag]  # flags.json: olmes/scoring/flags.py per model x task
    leaderboard: LeaderboardTable

    def get(self, key: str) -> TableDocument | None:
        return self.tables.get(key)


def load_site_scores(score_paths: list[str | Path], models_file: str | Path | None, tables_dir: Path):
    """Summaries (ordered and named by the models file, else by the tables' index) and the tables
    ``olmes tables`` built from them into ``tables_dir``."""
    scores = load_scores(score_paths, models_file)
    tables = read_tables(tables_dir)
    check_tables_match(scores, tables)
    if models_file is None and tables.index.get("models"):
        scores.models = _models_from_index(scores, tables.index["models"])
    return scores, tables


def _models_from_index(scores: ScoreSet, listed: list[dict]) -> list[ModelInfo]:
    present = {model for model, _ in scores.summaries}
    models = [
        ModelInfo.from_record(entry, f"the tables' index.json: models[{position}]", other_keys=True)
        for position, entry in enumerate(listed)
    ]
    models = [info for info in models if info.name in present]
    named = {info.name for info in models}
    return models + [info for info in scores.models if info.name not in named]


def read_tables(folder: Path) -> TableSet:
    """Every file of a tables folder that the site shows, each checked against its record: a file
    of another olmes, or none, is one error that names it (and the field that is wrong)."""
    folder = Path(folder)
    index_path = folder / "index.json"
    if not index_path.is_file():
        raise OlmesError(
            f"{folder}: no index.json; build the tables first with `olmes tables --out {folder}`"
        )
    index = TABLES_INDEX_FORMAT.read(index_path)
    present = [key for key in OPTIONAL_TABLE_KEYS if (folder / f"{key}.json").is_file()]
    tables = {
        key: _read_table(folder, key, TABLE_FORMATS.get(key, TABLE_FORMAT)) for key in (*TABLE_KEYS, *present)
    }
    figures = {}
    for key in FIGURE_KEYS:
        path = folder / f"{key}.json"
        figures[key] = FIGURE_FORMAT.read(path)["rows"] if path.is_file() else []
    flags_path = folder / "flags.json"
    if not flags_path.is_file():
        raise OlmesError(f"{flags_path} missing (older tables); re-run `olmes tables --out {folder}`")
    flags = FLAGS_FORMAT.read(flags_path)["flags"]
    return TableSet(tables, figures, folder, index, flags, tables["leaderboard"])


def _read_table(folder: Path, key: str, form: Format[Table]) -> Table:
    """``<folder>/<key>.json``, read through its format's upgrades: a table of an olmes before the
    numbers behind its cells (``values``) fails the check as "a olmes.table/1 file; re-run olmes
    tables", the format's own words."""
    path = folder / f"{key}.json"
    if not path.is_file():
        raise OlmesError(f"{path} missing; re-run `olmes tables --out {folder}`")
    return form.read(path)


def check_tables_match(scores: ScoreSet, tables: TableSet) -> None:
    """The tables folder must have been built from exactly these summaries (by SHA-256)."""
    recorded = {(row["model"], row["task"]): row.get("sha256") for row in tables.index.get("inputs", [])}
    for key, path in sorted(scores.paths.items()):
        if key not in recorded:
            raise OlmesError(
                f"{tables.folder} was built without {path} ({key[0]} on {key[1]}); re-run `olmes tables`"
            )
        if recorded[key] != file_sha256(path):
            raise OlmesError(f"{path} changed after {tables.folder} was built; re-run `olmes tables`")
    extra = sorted(set(recorded) - set(scores.paths))
    if extra:
        model, task = extra[0]
        raise OlmesError(
            f"{tables.folder} includes {model} on {task}, which is not among the score summaries given; "
            "pass the same --scores to `olmes tables` and `olmes site`"
        )
    if tables.index.get("robustness_inputs", []) != robustness_inputs(scores):
        raise OlmesError(
            f"{tables.folder} was built from other prompt-variant or rotations results than those given; "
            "pass the same --scores to `olmes tables` and `olmes site`"
        )


def read_reproduction(path: str | Path) -> ReproductionReport:
    """A report of ``olmes reproduce``: the store's first instances recomputed on some machine."""
    return REPRODUCTION_FORMAT.read(path)


# -- requests and instances -------------------------------------------------------------------------


@dataclass
class TaskRequests:
    """One task x request set's requests, reduced to what the site shows: the first instance's rows
    and the few-shot prefix (instruction + shots) of each subject (None for tasks without)."""

    task: str
    request_set: str
    path: Path
    prefixes: dict[str | None, str]
    example: list[RequestRow]  # every row of the first instance
    num_instances: int

    def prefix(self, subject: str | None) -> str:
        return self.prefixes.get(subject, "")


@dataclass
class TaskInstances:
    """One task's instance file (``olmes requests --instances``): rows by instance index."""

    task: str
    path: Path
    rows: dict[int, InstanceRow]


def expand_request_paths(paths: list[str | Path]) -> list[Path]:
    found = []
    for path in map(Path, paths):
        if path.is_dir():
            found += sorted(p for p in path.rglob("*") if p.name.endswith((".jsonl", ".jsonl.gz")))
        elif path.is_file():
            found.append(path)
        else:
            raise OlmesError(f"{path}: no such request file or directory")
    return found


def _is_instance_file(path: Path) -> bool:
    return path.name.removesuffix(".gz").endswith(".instances.jsonl")


GENERATION_INSTANCES_NAME = ".gen.instances.jsonl"
"""How a generative task's instances file ends (before ``.gz``): the store's
``tasks/<task>.gen.instances.jsonl.gz`` (olmes.store.layout.GENERATION_INSTANCES_SUFFIX)."""


def is_generative_file(path: Path) -> bool:
    """A file of an OLMES v0.2 generative task: ``<task>.gen.jsonl`` (a results folder's requests) or
    ``<task>.gen.<anything>.jsonl`` (a store's examples and instances), optionally gzipped."""
    name = path.name.removesuffix(".gz")
    return name.endswith(".jsonl") and ".gen." in name


def is_generation_instances_file(path: Path) -> bool:
    """A generative task's instances file (question and gold answers, no prompt)."""
    return path.name.removesuffix(".gz").endswith(GENERATION_INSTANCES_NAME)


def is_generation_requests_file(path: Path) -> bool:
    """A generation request file of an OLMES v0.2 generative task (its instances file is not one)."""
    return is_generative_file(path) and not is_generation_instances_file(path)


@dataclass
class GenerationRequests:
    """One generative task's generation request file: its rows in file order."""

    task: str
    path: Path
    rows: list[GenerationRequestRow]


def load_generation_requests(paths: list[str | Path]) -> dict[str, GenerationRequests]:
    """The generation request files among ``paths`` (files, or folders searched), by task; of two
    files for one task the one with more rows wins."""
    found: dict[str, GenerationRequests] = {}
    for path in expand_request_paths(paths):
        if not is_generation_requests_file(path):
            continue
        rows = [row for _, row in iter_records(path, GENERATION_REQUESTS_FORMAT)]
        if not rows:
            continue
        task = rows[0]["task"]
        mixed = next((row["task"] for row in rows if row["task"] != task), None)
        if mixed is not None:
            raise OlmesError(f"{path}: mixes generative tasks {task} and {mixed}")
        if task not in found or len(rows) > len(found[task].rows):
            found[task] = GenerationRequests(task, path, rows)
    return found


@dataclass
class GenerationInstances:
    """One generative task's instances file: its rows in file order."""

    task: str
    path: Path
    rows: list[GenerationInstanceRow]


def load_generation_instances(paths: list[str | Path]) -> dict[str, GenerationInstances]:
    """The generative instances files among ``paths`` (files, or folders searched), by task; of two
    files for one task the one with more rows wins."""
    found: dict[str, GenerationInstances] = {}
    for path in expand_request_paths(paths):
        if not is_generation_instances_file(path):
            continue
        rows = [row for _, row in iter_records(path, GENERATION_INSTANCES_FORMAT)]
        if not rows:
            continue
        task = rows[0]["task"]
        mixed = next((row["task"] for row in rows if row["task"] != task), None)
        if mixed is not None:
            raise OlmesError(f"{path}: mixes generative tasks {task} and {mixed}")
        if task not in found or len(rows) > len(found[task].rows):
            found[task] = GenerationInstances(task, path, rows)
    return found


def read_requests_file(path: Path) -> TaskRequests | None:
    """Stream one JSONL request file. Returns None for an empty file."""
    contexts: dict[str | None, list[str]] = {}
    indices: set[int] = set()
    example: list[RequestRow] = []
    first_index = None
    task = request_set = None
    for number, row in iter_records(path, REQUESTS_FORMAT):
        if task is None:
            task, request_set, first_index = row["task"], row["formulation"], row["instance_index"]
        elif (row["task"], row["formulation"]) != (task, request_set):
            raise OlmesError(
                f"{path}:{number}: mixes {task}/{request_set} with {row['task']}/{row['formulation']}"
            )
        if row["instance_index"] == first_index:
            example.append(row)
        indices.add(row["instance_index"])
        texts = contexts.setdefault(row.get("subject"), [])
        if not texts or texts[-1] != row["context"]:
            texts.append(row["context"])
    if task is None:
        return None
    prefixes = _shared_prefixes(contexts)
    return TaskRequests(task, request_set, path, prefixes, example, len(indices))


def _shared_prefixes(contexts: dict[str | None, list[str]]) -> dict[str | None, str]:
    """Instruction + shots per subject: the common prefix of every context, cut after its last blank line.

    With a single context the prefix ends at the context's last blank line (the shots end in one).
    """
    prefixes = {}
    for subject, texts in contexts.items():
        common = os.path.commonprefix([min(texts), max(texts)])
        cut = common.rfind("\n\n")
        prefixes[subject] = common[: cut + 2] if cut >= 0 else ""
    return prefixes


def read_instances_file(path: Path) -> TaskInstances | None:
    """One instance file; None when it is empty."""
    rows: dict[int, InstanceRow] = {}
    task = None
    for number, row in iter_records(path, INSTANCES_FORMAT):
        if task is None:
            task = row["task"]
        elif row["task"] != task:
            raise OlmesError(f"{path}:{number}: mixes tasks {task} and {row['task']}")
        rows[int(row["instance_index"])] = row
    return None if task is None else TaskInstances(task, path, rows)


def load_requests(
    paths: list[str | Path],
) -> tuple[dict[tuple[str, str], TaskRequests], dict[str, TaskInstances]]:
    """Every request file keyed by (task, request set), every instance file keyed by task; of two
    files for one key the one with more instances wins."""
    requests: dict[tuple[str, str], TaskRequests] = {}
    instances: dict[str, TaskInstances] = {}
    for path in expand_request_paths(paths):
        if is_generative_file(path):
            continue  # load_generation_requests, load_generation_instances
        if _is_instance_file(path):
            found = read_instances_file(path)
            if found is not None and len(found.rows) > len(getattr(instances.get(found.task), "rows", ())):
                instances[found.task] = found
            continue
        read = read_requests_file(path)
        if read is None:
            continue
        key = (read.task, read.request_set)
        if key not in requests or read.num_instances > requests[key].num_instances:
            requests[key] = read
    return requests, instances
