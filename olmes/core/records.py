"""The records that travel between stages in plain files: one typed record per format, one reader
and one writer each (docs/file-formats.md).

Records are TypedDicts: a row stays the JSON object its file holds (json, pandas and the templates
take it as it is), while the type of every field is declared once, here. The readers check every
row against that declaration and name the file and line of the first bad one, so a truncated or
foreign file is one clear error, never a silent wrong score.
"""

import functools
import gzip
import json
import os
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict, TypeVar, is_typeddict

from olmes.core.atomic import atomic_path, write_json_atomic
from olmes.core.bounded_json import parse_json
from olmes.core.errors import OlmesError
from olmes.core.methods import Formulation

SCORES_FORMAT = "olmes.scores/2"
SCORES_FORMAT_1 = "olmes.scores/1"
"""Score summaries. /2 dropped /1's ``olmes`` field, which repeated ``best_of_two`` (null where the
result is partial): :func:`olmes_score` derives it. ``scripts/migrate_scores.py`` rewrites /1 files."""
ROTATIONS_FORMAT = "olmes.rotations/1"
REPRODUCTION_FORMAT = "olmes.reproduction/2"
"""/2 added the float error model's view: every flipped decision with its margins and whether it is a
tie within float error, each request's |delta| against its bound, the verdict."""
STORE_FORMAT = "olmes.store/1"
"""The results store: its folder layout, ``store.json`` and every ``model.json`` in it."""
SITE_MANIFEST_FORMAT = "olmes.site-manifest/1"
"""A site's ``olmes-manifest.json``: what each of its per-model data files was made from."""


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


Tuning = Literal["base", "instruct", "unknown"]


class ModelIdentity(TypedDict):
    """What an evaluated model is, as its files state it (:mod:`olmes.logprobs.identity`); a fact no
    file states is ``"unknown"``."""

    original: str  # the released model the weights derive from (a hub id), or "unknown"
    tuning: Tuning
    weight_format: str  # gguf, safetensors, pytorch or unknown
    quantization: str  # a GGUF file type (Q4_1, Q4_K_M, F16...), a quantization_config method, or none
    compute_dtype: str  # the precision the log-probs were computed in (a GGUF is dequantized to it)
    evidence: str  # where these facts were read


class Placement(TypedDict):
    """Where a run record's model weights were (:func:`olmes.logprobs.models.placement_record`)."""

    devices: list[str]  # the devices holding weights ("cpu", "cuda:0", ..., "disk")
    device_map: str | None  # the device map asked for: "balanced", "explicit", or None (one device)
    hf_device_map: dict[str, int] | None  # accelerate's map as modules per device (None: not split)
    max_memory: dict[str, int] | None  # the per-GPU budget for weights, bytes


ScoringPath = Literal["tree", "leaves"]
"""The log-prob engine's two paths (olmes.logprobs.architectures says which a model takes)."""


@dataclass(frozen=True)
class Column:
    """One column of a Parquet format: its name, its Arrow type, and who needs it."""

    name: str
    arrow_type: str  # an Arrow type alias (pyarrow.type_for_alias): int64, string, bool, float64
    required: bool  # its readers refuse a file without it (log-probs: olmes predict, score, rotations)
    optional: bool = False  # written only when the request rows have the field (log-probs)


LOGPROB_COLUMNS: tuple[Column, ...] = (
    Column("request_index", "int64", False),  # 0-based line number in the request file
    Column("task", "string", True),
    Column("formulation", "string", True),  # the request set: cf, pmi, mcf or mcf_rot
    Column("instance_index", "int64", True),
    Column("native_id", "string", True),  # the dataset's id, always as a string
    Column("choice", "int64", True),
    Column("label", "int64", True),
    Column("unconditional", "bool", True),
    Column("subject", "string", False, optional=True),
    Column("rotation", "int64", False, optional=True),
    Column("variant", "string", False, optional=True),
    Column("sum_logprob", "float64", True),  # log P(continuation | context), nats
    Column("num_tokens", "int64", True),
    Column("num_chars", "int64", True),  # the continuation's characters, leading space included
    Column("num_bytes", "int64", False),  # its UTF-8 bytes (files written before it lack it)
    Column(
        "is_greedy", "bool", False
    ),  # every continuation token is the argmax; null for an import's pmi rows
)
"""The log-prob Parquet format (docs/file-formats.md), in its column order: written by
:func:`olmes.logprobs.runner.write_parquet`, checked by :mod:`olmes.scoring.score`."""
LOGPROB_SCORED = tuple(column.name for column in LOGPROB_COLUMNS if column.required)

PREDICTION_COLUMNS: tuple[Column, ...] = (
    Column("model", "large_string", True),
    Column("task", "large_string", True),
    Column("method", "large_string", True),  # a key of olmes.core.methods.METHODS
    Column("instance_index", "int64", True),
    Column("native_id", "large_string", True),
    Column("subject", "large_string", True),  # null where the task has no subjects
    Column("label", "int64", True),  # the gold choice
    Column("num_choices", "int64", True),
    Column("prediction", "int64", True),  # the choice with the best score
    Column("correct", "bool", True),
    Column("top_gap", "float64", True),  # best minus second-best score
    Column("near_tie", "bool", True),  # top_gap <= the summary's near_tie_nats
    Column("nonfinite", "bool", False),  # a choice scored NaN or infinite (files before it lack it)
)
"""The predictions Parquet format (docs/file-formats.md), one row per method x instance, in its column
order: written by :func:`olmes.scoring.score.write_predictions`, read by
:func:`olmes.scoring.score.read_predictions_file`."""


class MetricComparison(TypedDict):
    """One metric an imported run reported, beside the same method computed here from its log-probs."""

    metric: str  # the other implementation's name (acc_raw, acc_per_token, ...)
    method: str  # the scoring method it corresponds to (cf_none, cf_token, ...)
    subject: NotRequired[str]  # a task made of subjects: the subject this metric is of
    reported: float
    ours: float
    n: int
    agrees: bool  # the same number of correct instances (a difference within rounding)
    differing_decisions: NotRequired[
        int
    ]  # instances whose decision differs from ours (imports before it: absent)
    ties_within_error: NotRequired[int]  # of those, ties within float error (olmes.core.numerics)
    agrees_within_error: NotRequired[bool]  # agrees, or every differing decision is such a tie
    note: NotRequired[str]  # why a disagreement is expected, where it is


class ImportedRun(TypedDict):
    """Where an imported log-prob file came from (``olmes import``): the other implementation's run,
    its configuration and its own reported metrics, and how they compare with ours."""

    implementation: str  # "oe-eval": AI2's OLMES implementation; "olmes export": files olmes wrote
    commit: str | None  # the implementation's source commit, as the importer was told (its files hold none)
    run_task: str  # the run's task alias (arc_challenge:rc::olmes), or for subjects the first one
    run_tasks: int  # how many of the run's task files this log-prob file was made from
    task_hash: str | None
    model_hash: str | None
    model_config: dict[str, Any]
    task_config: dict[str, Any]  # of the first task file (subjects differ only in their names)
    current_date: str | None
    files_sha256: dict[str, str]  # each file read, by name
    num_tokens_recounted: int  # continuations whose token count here differs from the file's
    comparison: list[MetricComparison]


class RunRecord(TypedDict):
    """``<log-prob file>.run.json``: what produced a log-prob file, and what it cost."""

    model: str
    model_kind: str
    model_path: NotRequired[str]  # the local folder loaded; the store leaves it out (olmes.store.portable)
    model_revision: str
    model_fingerprint: str
    dtype: str
    device: str
    hardware: NotRequired[str]  # GPU name or CPU model (records written before it have none)
    placement: NotRequired[Placement]  # records written before it have none
    identity: NotRequired[ModelIdentity]  # records written before it have none
    bos_token_id: int | None
    max_input_tokens: int
    max_batch_tokens: int | None  # None: all cached on a GPU, whose size is chosen after loading
    scoring_path: NotRequired[ScoringPath]  # records written before it: tree
    scoring_reason: NotRequired[str]
    attn_implementation: NotRequired[str | None]  # None: every request came from the cache
    trust_remote_code: NotRequired[bool]
    architecture_check: NotRequired[dict[str, Any]]  # olmes check-model's report: unverified architectures
    imported: NotRequired[ImportedRun]  # made by another implementation, imported (olmes import)
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


class SubjectStats(TypedDict):
    """One subject's accuracy (tasks averaged over subjects)."""

    accuracy: float
    stderr: float | None
    n: int
    correct: int


class MethodStats(TypedDict):
    """One scoring method's accuracy on one model x task. For a task made of subjects, ``accuracy``
    is the macro-average over them and the micro fields pool every instance."""

    accuracy: float
    stderr: float | None
    n: int
    correct: int
    near_ties: int
    micro_accuracy: NotRequired[float]
    micro_stderr: NotRequired[float | None]
    subjects: NotRequired[dict[str, SubjectStats]]


class BestOfTwo(TypedDict):
    """max(CF under the recommended normalization, MCF): the OLMES score where the run is complete."""

    score: float
    formulation: Formulation  # the winner; MCF only when strictly better
    dagger: bool  # formulation is MCF
    method: str  # the winning method's key
    cf_method: str  # the recommended CF method's key
    cf_accuracy: float
    mcf_accuracy: float


class BitsPerByte(TypedDict):
    bpb: float
    stderr: float | None
    n: int


class InputFile(TypedDict):
    """A log-prob file a summary or report was computed from."""

    path: str
    sha256: str
    run: RunRecord | None


class FileRef(TypedDict):
    path: str  # relative to the file that holds the reference
    sha256: str


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
    methods: dict[str, MethodStats]  # by method key, in the registry's order
    best_of_two: BestOfTwo | None  # None when CF (recommended) or MCF was not scored
    near_tie_nats: float
    inputs: dict[str, InputFile]  # by request set
    predictions: NotRequired[FileRef]
    bpb: NotRequired[BitsPerByte]  # bits per byte of the gold CF continuation (log-prob files with num_bytes)
    variant: NotRequired[str]  # the prompt variant its log-probs were made with; never an OLMES score


def olmes_score(summary: ScoreSummary) -> BestOfTwo | None:
    """The OLMES score of a summary: its best-of-two, unless the result is partial."""
    return None if summary["partial"] else summary["best_of_two"]


class LetterShare(TypedDict):
    predicted: float
    gold: float


class RotationsReport(TypedDict):
    """``<task>.rotations.json`` (``olmes rotations``): MCF under every answer order."""

    format: str
    model: str
    task: str
    instances: int
    rotations: int
    accuracy_by_rotation: list[float]
    mean_accuracy: float
    spread: float
    standard_accuracy: float
    consistent_accuracy: float
    permutation_averaged_accuracy: float
    letters: dict[str, LetterShare]
    inputs: dict[str, InputFile]


class Flip(TypedDict):
    """One instance x method whose decision differs between two computations of its log-probs."""

    method: str
    instance_index: int
    here: int  # the choice picked here
    there: int  # the choice picked by the other computation
    margin_here: float  # how far ``here`` beat ``there`` here (>= 0)
    margin_there: float  # how far ``there`` beat ``here`` in the other computation (>= 0)
    bound: float  # the float error model's bound on the two choices' scores together
    within_error: bool  # margin_here + margin_there <= bound: a tie within float error


class ReproducedTask(TypedDict):
    instances: int
    task: str
    requests: int
    max_abs_delta: float
    max_share_of_tolerance: float  # max over requests of |delta| / the error model's bound
    beyond_tolerance: int  # requests whose |delta| exceeds the bound
    decisions: int
    identical: int
    ties_within_error: int  # flipped decisions the error model explains
    unexplained_flips: int  # flipped decisions it does not
    differing_methods: list[str]  # the methods with a decision that differs
    flips: list[Flip]


class ReproductionReport(TypedDict):
    """``results/reproduction/<model>.json`` (``olmes reproduce``): a store model scored again here;
    with ``--record``, also ``<store>/reproductions/<model>/reproduction.json``."""

    format: str
    model: str
    spec: str
    limit: int
    hardware: str
    store_hardware: list[str]
    same_fingerprint: bool
    wall_time_s: float
    requests: int
    max_abs_delta: float
    max_share_of_tolerance: float
    beyond_tolerance: int
    decisions: int
    identical: int
    ties_within_error: int
    unexplained_flips: int
    verdict: Literal["reproduced", "reproduced within float error", "DIFFERS"]
    tasks: list[ReproducedTask]
    # a reproduction record in a store (olmes reproduce --record; olmes.store.provenance) has these too
    date: NotRequired[str]  # UTC, when it was recomputed
    olmes_commit: NotRequired[str]  # the olmes code that recomputed it (git commit, or the version)
    identity: NotRequired[ModelIdentity]  # read from the weights it was recomputed from
    store_files: NotRequired[dict[str, dict[str, str]]]  # task -> request set -> store log-prob SHA-256


class StoredTask(TypedDict):
    """One task of a store model (``model.json``'s ``tasks``, and of each robustness kind)."""

    instances: int
    limit: NotRequired[int | None]  # standard results only
    partial: NotRequired[bool]  # standard results only
    requests_sha256: NotRequired[dict[str, str]]  # by request set; standard results only
    hardware: list[str]
    wall_time_s: float
    tokens_forwarded: int
    published: str


class ModelRecord(TypedDict):
    """``<store>/models/<model>/model.json``: a published model's provenance."""

    format: str
    name: str
    display_name: str
    series: NotRequired[str]
    training_tokens: NotRequired[float]
    checkpoint: NotRequired[str]
    identity: NotRequired[ModelIdentity]  # from its run records (scripts/migrate_identity.py for older ones)
    spec: str
    kind: str
    revision: str
    fingerprint: str
    dtype: str
    device: str
    versions: dict[str, str | None]
    wall_time_s: float
    tokens_forwarded: int
    tasks: dict[str, StoredTask]
    robustness: NotRequired[dict[str, dict[str, StoredTask]]]  # by variant or "rotations", then task


class StoreRecord(TypedDict):
    """``<store>/store.json``: what marks a folder as a results store."""

    format: str
    # where ``olmes fetch-logprobs`` finds the store's external log-prob files (olmes.store.blobs)
    logprob_hosts: NotRequired[list[str]]


class SiteDataSource(TypedDict):
    """What one model x task data file of the site's instance browser is made from: if all of it is
    unchanged, a rebuild copies the file from the previous site (``olmes.site.build``)."""

    model: str
    task: str
    predictions_sha256: str  # as the model's score summary records it
    instances_sha256: str | None  # the task's instance file (its gold answers are checked)
    olmes_version: str
    data_format: int  # olmes.site.build.BROWSER_DATA_FORMAT


class SiteDataFile(TypedDict):
    """One data file of the site: its SHA-256 and its sources."""

    sha256: str
    source: SiteDataSource


class SiteManifest(TypedDict):
    """``olmes-manifest.json`` of a site (``olmes site``): its per-model data files by path."""

    format: str
    olmes_version: str
    data_files: dict[str, SiteDataFile]


class TaskFlag(TypedDict):
    """A sign that a model x task result went wrong (:func:`olmes.scoring.flags.task_flags`)."""

    code: Literal["below_chance", "one_answer", "near_ties", "nan"]
    method: str | None  # the method key it concerns
    message: str


class LeaderboardTask(TypedDict):
    """One model x task of the leaderboard: what its cell shows (``olmes tables``' ``leaderboard``)."""

    score: float | None  # the best-of-two score; None when CF (recommended) or MCF was not scored
    stderr: float | None  # of the method that decided the score
    formulation: Formulation | None  # the winner: MCF exactly where dagger
    dagger: bool
    partial: bool
    cf_accuracy: float | None
    mcf_accuracy: float | None
    n: int | None  # instances scored; None on a reported row (the paper gives no counts)
    statistically_tied_with: list[str]  # model names: the paired bootstrap's ties with its neighbours
    method: str | None  # the deciding method's key
    chance: float | None  # accuracy of guessing uniformly on the instances scored; None on a reported row
    flags: list[TaskFlag]  # those of the score's two formulations (recommended CF and MCF)


RowKind = Literal["evaluated", "reported"]
"""A leaderboard row scored here from per-instance predictions, or copied from a paper (no stderr, no
predictions, never statistically tied with anything)."""


class LeaderboardRow(TypedDict):
    """One model of the leaderboard, in rank order (the ``leaderboard`` table's records)."""

    rank: int | None  # None: no average (a task missing or partial)
    model: str
    display_name: str
    partial: bool
    average: float | None  # Table 4's
    average_stderr: float | None
    tasks: dict[str, LeaderboardTask | None]  # every task of the tables; None where not scored
    # only in a leaderboard built with reported rows (olmes tables --reported):
    kind: NotRequired[RowKind]
    source: NotRequired[str]  # who produced the numbers: this pipeline, or the paper that printed them


class TableInput(TypedDict):
    model: str
    task: str
    path: str
    sha256: str
    partial: bool


class RobustnessInput(TypedDict):
    result: list[str]  # (model, task, kind)
    path: str
    sha256: str


class ReportedInput(TypedDict):
    """The paper data a leaderboard's reported rows were copied from (``olmes tables --reported``)."""

    source: str
    url: str
    table: str  # the file of olmes/tables/paper_data/
    sha256: str


class TablesIndex(TypedDict):
    """``<tables>/index.json`` (``olmes tables``): every file written and every input, by SHA-256."""

    olmes_version: str
    files: list[str]
    models: list[dict[str, Any]]  # the models' display records (olmes.tables.results.ModelInfo), in order
    tasks: list[str]
    bootstrap: dict[str, int]  # resamples, seed
    inputs: list[TableInput]
    robustness_inputs: list[RobustnessInput]
    reported: NotRequired[ReportedInput]  # only with reported rows (olmes tables --reported)


class TableGroup(TypedDict):
    """Rows of a table shown together: the leaderboard's partial runs, a paper layout's model family."""

    label: str | None  # None: the table's first, unlabelled group
    rows: list[list[str]]  # the cells as shown


class TableLayout(TypedDict):
    """A table of ``olmes tables`` as shown (``<tables>/<key>.json``, less its records): header, rows
    in groups, and ``values``, the number behind each shown cell (what a page sorts by)."""

    key: str
    title: str
    caption: str
    header: list[str]
    rows: list[list[str]]  # every group's rows, in order
    groups: list[TableGroup]
    values: list[list[float | None]]  # parallel to ``rows``
    text_columns: int  # leading columns of text (names); the others are numbers
    header_groups: list[list[str | int]] | None  # (label, columns spanned) above the header in LaTeX


class TableDocument(TableLayout):
    """``<tables>/<key>.json``: a table and its structured records (each table its own fields)."""

    records: list[dict[str, Any]]


class LeaderboardTable(TableLayout):
    """``<tables>/leaderboard.json``: the leaderboard, its records checked field by field."""

    records: list[LeaderboardRow]


class FigureDocument(TypedDict):
    """``<tables>/<key>.json`` of a figure (:mod:`olmes.tables.figures`): its data, a row per point."""

    key: str
    description: str
    columns: list[str]
    rows: list[dict[str, Any]]


class ModelTaskFlag(TaskFlag):
    """A flag of ``<tables>/flags.json``: whose result it concerns, and the flag."""

    model: str
    task: str


class FlagsDocument(TypedDict):
    """``<tables>/flags.json`` (``olmes tables``): every flag of every model x task."""

    flags: list[ModelTaskFlag]


Record = TypeVar(
    "Record",
    RequestRow,
    InstanceRow,
    RunRecord,
    ScoreSummary,
    RotationsReport,
    ReproductionReport,
    ModelRecord,
    TablesIndex,
    TableDocument,
    LeaderboardTable,
    FigureDocument,
    FlagsDocument,
)


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
    except UnicodeDecodeError as error:  # a binary file (a Parquet file given as requests, say)
        raise OlmesError(
            f"{path}: not UTF-8 text ({error.reason}), so not an olmes JSON-lines file ({kind.__name__}); "
            "give a file written by olmes requests"
        ) from error


def read_records(path: str | os.PathLike, kind: type[Record]) -> list[Record]:
    return [record for _, record in iter_records(path, kind)]


def write_records(
    records: Iterable[Mapping[str, Any]],
    path: str | os.PathLike,
    *,
    append: bool = False,
    ascii_only: bool = False,
) -> None:
    """JSON lines, UTF-8, written atomically (the one JSON-lines writer of olmes, see
    :func:`_json_lines`). ``append`` keeps the file's present bytes before the new lines (the file is
    still replaced whole, so an interrupted append adds nothing); ``ascii_only`` escapes non-ASCII
    characters as ``\\uXXXX``."""
    kept = Path(path).read_bytes() if append and os.path.exists(path) else b""
    with atomic_path(path) as temp, open(temp, "wb") as handle:
        handle.write(kept)
        for line in _json_lines(records, ascii_only):
            handle.write(line.encode("utf-8"))


def records_bytes(records: Iterable[Mapping[str, Any]], *, compress: bool = False) -> bytes:
    """The bytes :func:`write_records` writes for ``records`` (the bytes whose SHA-256 a run record
    holds); ``compress``: gzip with no time or name in the header, so the same rows give the same
    bytes (and git diff) every time."""
    data = "".join(_json_lines(records, False)).encode("utf-8")
    return gzip.compress(data, compresslevel=9, mtime=0) if compress else data


def _json_lines(records: Iterable[Mapping[str, Any]], ascii_only: bool) -> Iterator[str]:
    """The JSON-lines format: one compact JSON object a line, each line ending in ``\\n``."""
    for record in records:
        yield json.dumps(record, ensure_ascii=ascii_only) + "\n"


# -- JSON documents: run records and score summaries ---------------------------------------------------


def run_record_path(logprob_path: str | os.PathLike) -> Path:
    """The run record sits beside its log-prob file: ``<file>.run.json``."""
    return Path(f"{logprob_path}.run.json")


def read_run_record(logprob_path: str | os.PathLike) -> RunRecord | None:
    """The run record of a log-prob file, or None when there is none."""
    path = run_record_path(logprob_path)
    return read_document(path, RunRecord) if path.exists() else None


def write_run_record(logprob_path: str | os.PathLike, record: RunRecord) -> None:
    write_json_atomic(run_record_path(logprob_path), _checked(record, RunRecord, "run record"))


def read_score_summary(path: str | os.PathLike) -> ScoreSummary:
    document = _parsed_document(Path(path))
    schema = document.get("schema") if isinstance(document, dict) else None
    if schema == SCORES_FORMAT_1:
        raise OlmesError(
            f"{path}: score summary of format {SCORES_FORMAT_1}; update it with "
            "python scripts/migrate_scores.py FOLDER (or re-run olmes score)"
        )
    if schema != SCORES_FORMAT:
        raise OlmesError(f"{path}: not an olmes score summary ({SCORES_FORMAT}); run olmes score")
    return _checked(document, ScoreSummary, str(path))


def write_score_summary(path: str | os.PathLike, summary: ScoreSummary) -> None:
    write_json_atomic(path, _checked(summary, ScoreSummary, "score summary"))


def read_document(path: str | os.PathLike, kind: type[Record]) -> Record:
    """A JSON document checked against its record (formats without a ``format`` field)."""
    return _checked(_parsed_document(Path(path)), kind, str(path))


def _parsed_document(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise OlmesError(f"{path}: cannot read ({error})") from error
    return _parsed(text, str(path))


def read_format(path: str | os.PathLike, kind: type[Record], format_: str, made_by: str) -> Record:
    """A JSON document whose ``format`` field must be ``format_``, checked against ``kind``."""
    document = _parsed_document(Path(path))
    if not isinstance(document, dict) or document.get("format") != format_:
        raise OlmesError(f"{path}: not a {kind.__name__} ({format_}); {made_by}")
    return _checked(document, kind, str(path))


# -- checking a record against its declaration ---------------------------------------------------------


def _parsed(text: str, where: str) -> Any:
    try:
        return parse_json(text, where)
    except ValueError as error:
        raise OlmesError(f"{where}: not JSON ({error})") from error


def _checked(record: Any, kind: type[Record], where: str) -> Record:
    """``record`` itself when every declared field is present (unless NotRequired) with its type,
    nested records included."""
    name = kind.__name__
    if not isinstance(record, dict):
        raise OlmesError(f"{where}: not an olmes {name} (a JSON object is expected)")
    problem = _problem(record, kind)
    if problem is not None:
        field, what = problem
        if what is None:
            raise OlmesError(f"{where}: not an olmes {name}: field {field!r} is missing")
        raise OlmesError(f"{where}: field {field!r} of this {name} is not {what}")
    return record


def _problem(record: dict, kind: type) -> tuple[str, str | None] | None:
    """(dotted field, what it should be; None when missing) of the first bad field of a record."""
    for field, annotation in _fields(kind).items():
        if field not in record:
            if field in kind.__required_keys__:
                return field, None
        elif not _matches(record[field], annotation):
            inner = _inner_problem(record[field], annotation)
            if inner is not None:
                return f"{field}.{inner[0]}", inner[1]
            return field, _describe(annotation)
    return None


@functools.cache
def _fields(kind: type) -> dict[str, Any]:
    """A record's fields and their annotations (resolved once per record type: a store of 500 models
    has thousands of documents to check)."""
    return typing.get_type_hints(kind)


def _inner_problem(value: Any, annotation: Any) -> tuple[str, str | None] | None:
    """Where a nested record (directly, or as a list's element or a dict's value) goes wrong, for a
    precise message; None when the value is wrong as a whole."""
    origin = typing.get_origin(annotation)
    if is_typeddict(annotation) and isinstance(value, dict):
        return _problem(value, annotation)
    if origin in (types.UnionType, typing.Union):
        members = [member for member in typing.get_args(annotation) if member is not type(None)]
        return _inner_problem(value, members[0]) if value is not None and members else None
    if origin is list and isinstance(value, list):
        items, item = enumerate(value), typing.get_args(annotation)[0]
    elif origin is dict and isinstance(value, dict):
        items, item = value.items(), typing.get_args(annotation)[1]
    else:
        return None
    for key, element in items:
        if not _matches(element, item):
            inner = _inner_problem(element, item)
            return (f"{key}.{inner[0]}", inner[1]) if inner else (str(key), _describe(item))
    return None


def _matches(value: Any, annotation: Any) -> bool:
    return _matcher(annotation)(value)


@functools.cache
def _matcher(annotation: Any) -> Callable[[Any], bool]:
    """The check of a value against ``annotation``, built once per annotation (a summary of MMLU is
    hundreds of checks, a store of 500 models thousands of summaries)."""
    if annotation is Any:
        return lambda value: True
    origin = typing.get_origin(annotation)
    if origin in (types.UnionType, typing.Union):
        members = [_matcher(member) for member in typing.get_args(annotation)]
        return lambda value: any(member(value) for member in members)
    if origin is Literal:
        allowed = typing.get_args(annotation)
        return lambda value: value in allowed
    if is_typeddict(annotation):
        return lambda value: isinstance(value, dict) and _problem(value, annotation) is None
    if origin is list:
        item = _matcher(typing.get_args(annotation)[0])
        return lambda value: isinstance(value, list) and all(item(element) for element in value)
    if origin is dict:
        item = _matcher(typing.get_args(annotation)[1])
        return lambda value: isinstance(value, dict) and all(item(element) for element in value.values())
    if annotation is type(None):
        return lambda value: value is None
    if annotation in (float, int):
        kinds = int | float if annotation is float else int
        return lambda value: isinstance(value, kinds) and not isinstance(value, bool)
    return lambda value: isinstance(value, annotation)


def _describe(annotation: Any) -> str:
    return str(annotation).replace("typing.", "").replace("<class '", "").replace("'>", "")
