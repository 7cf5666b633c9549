"""The records that travel between stages in plain files: one typed record per format, one reader
and one writer each (docs/file-formats.md).

Records are TypedDicts: a row stays the JSON object its file holds (json, pandas and the templates
take it as it is), while the type of every field is declared once, here. The readers check every
row against that declaration and name the file and line of the first bad one, so a truncated or
foreign file is one clear error, never a silent wrong score.
"""

import gzip
import json
import os
import types
import typing
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NotRequired, TypedDict, TypeVar

from olmes.atomic import atomic_path, write_json_atomic
from olmes.errors import OlmesError

SUMMARY_SCHEMA = "olmes.scores/1"


class RequestRow(TypedDict):
    """One line of a request file (``olmes requests --output``): what the engine scores."""

    task: str
    formulation: str  # the request set: cf, pmi or mcf
    instance_index: int
    native_id: str | int
    choice: int
    label: int
    subject: NotRequired[str]
    rotation: NotRequired[int]  # the mcf_rot request set only: which answer order
    context: str
    continuation: str
    unconditional: bool
    variant: NotRequired[str]  # a prompt variant's request sets only (docs/standard.md section 6)


class InstanceRow(TypedDict):
    """One line of an instance file (``olmes requests --instances``): what a reader sees."""

    task: str
    instance_index: int
    native_id: str | int
    subject: NotRequired[str]
    question: str
    choices: list[str]
    gold: int


class RunRecord(TypedDict):
    """``<log-prob file>.run.json``: what produced a log-prob file, and what it cost."""

    model: str
    model_kind: str
    model_path: str
    model_revision: str
    model_fingerprint: str
    dtype: str
    device: str
    hardware: NotRequired[str]  # GPU name or CPU model (records written before it have none)
    bos_token_id: int | None
    max_input_tokens: int
    max_batch_tokens: int
    versions: dict[str, str | None]
    requests_file: str
    requests_sha256: str
    num_requests: int
    requests_from_cache: int
    requests_computed: int
    tokens_forwarded: int
    trie_minimal_tokens: int
    naive_tokens: int
    wall_time_s: float
    engine_time_s: float
    load_time_s: float | None
    cache_bytes_written: int
    peak_rss_bytes: int


class ScoreSummary(TypedDict):
    """``<task>.scores.json``: one model x task's accuracies, OLMES score and provenance."""

    schema: str
    model: str
    task: str
    display_name: str
    recommended_norm: str
    n_instances: int
    full_count: int
    limit: int | None
    partial: bool
    partial_reasons: list[str]
    methods: dict[str, dict]
    best_of_two: dict | None
    near_tie_nats: float
    inputs: dict[str, dict]
    olmes: dict | None
    predictions: NotRequired[dict]
    bpb: NotRequired[dict]  # bits per byte of the gold CF continuation (log-prob files with num_bytes)
    variant: NotRequired[str]  # the prompt variant its log-probs were made with; never an OLMES score


Record = TypeVar("Record", RequestRow, InstanceRow, RunRecord, ScoreSummary)


# -- JSON lines: request and instance files -----------------------------------------------------------


def iter_records(path: str | os.PathLike, kind: type[Record]) -> Iterator[tuple[int, Record]]:
    """(line number, record) of a JSON-lines file (gzip-compressed if it ends in .gz), each checked."""
    path = Path(path)
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    yield number, _checked(_parsed(line, f"{path}:{number}"), kind, f"{path}:{number}")
    except OSError as error:
        raise OlmesError(f"{path}: cannot read ({error})") from error


def read_records(path: str | os.PathLike, kind: type[Record]) -> list[Record]:
    return [record for _, record in iter_records(path, kind)]


def write_records(records: Iterable[RequestRow | InstanceRow], path: str | os.PathLike) -> None:
    """JSON lines, UTF-8 as is, written atomically."""
    with atomic_path(path) as temp, open(temp, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


# -- JSON documents: run records and score summaries ---------------------------------------------------


def run_record_path(logprob_path: str | os.PathLike) -> Path:
    """The run record sits beside its log-prob file: ``<file>.run.json``."""
    return Path(f"{logprob_path}.run.json")


def read_run_record(logprob_path: str | os.PathLike) -> RunRecord | None:
    """The run record of a log-prob file, or None when there is none."""
    path = run_record_path(logprob_path)
    return _read_document(path, RunRecord) if path.exists() else None


def write_run_record(logprob_path: str | os.PathLike, record: RunRecord) -> None:
    write_json_atomic(run_record_path(logprob_path), _checked(record, RunRecord, "run record"))


def read_score_summary(path: str | os.PathLike) -> ScoreSummary:
    summary = _read_document(Path(path), ScoreSummary)
    if summary["schema"] != SUMMARY_SCHEMA:
        raise OlmesError(f"{path}: not an olmes score summary (schema {SUMMARY_SCHEMA}); run olmes score")
    return summary


def write_score_summary(path: str | os.PathLike, summary: ScoreSummary) -> None:
    write_json_atomic(path, _checked(summary, ScoreSummary, "score summary"))


def _read_document(path: Path, kind: type[Record]) -> Record:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise OlmesError(f"{path}: cannot read ({error})") from error
    return _checked(_parsed(text, str(path)), kind, str(path))


# -- checking a record against its declaration ---------------------------------------------------------


def _parsed(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as error:
        raise OlmesError(f"{where}: not JSON ({error})") from error


def _checked(record: Any, kind: type[Record], where: str) -> Record:
    """``record`` itself when every declared field is present (unless NotRequired) with its type."""
    name = kind.__name__
    if not isinstance(record, dict):
        raise OlmesError(f"{where}: not an olmes {name} (a JSON object is expected)")
    for field, annotation in typing.get_type_hints(kind).items():
        if field not in record:
            if field in kind.__required_keys__:
                raise OlmesError(f"{where}: not an olmes {name}: field {field!r} is missing")
        elif not _matches(record[field], annotation):
            raise OlmesError(f"{where}: field {field!r} of this {name} is not {_describe(annotation)}")
    return record


def _matches(value: Any, annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin in (types.UnionType, typing.Union):
        return any(_matches(value, member) for member in typing.get_args(annotation))
    if origin is list:
        (item,) = typing.get_args(annotation)
        return isinstance(value, list) and all(_matches(element, item) for element in value)
    if origin is dict:
        return isinstance(value, dict)
    if annotation is type(None):
        return value is None
    if annotation is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, annotation)


def _describe(annotation: Any) -> str:
    return str(annotation).replace("typing.", "").replace("<class '", "").replace("'>", "")
