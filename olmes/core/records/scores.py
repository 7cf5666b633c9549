"""Score summaries, predictions and rotations reports: what ``olmes score`` and ``olmes rotations`` write."""

import os
from typing import Any, NotRequired, TypedDict

from olmes.core.errors import OlmesError
from olmes.core.methods import Formulation
from olmes.core.records.formats import Format, ParquetFormat
from olmes.core.records.logprobs import RUN_FORMAT, Column, RunRecord

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
order: written by :func:`olmes.scoring.predictions.write_predictions`, read by
:func:`olmes.scoring.predictions.read_predictions_file`."""


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

    format: str  # SCORES_FORMAT's tag
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


def _drop_repeated_score(summary: dict[str, Any]) -> dict[str, Any]:
    """/1 -> /2: drop ``olmes``, which repeated ``best_of_two`` (null where partial): :func:`olmes_score`
    derives it. A /1 file whose ``olmes`` is not what /2 derives is refused, never rewritten."""
    kept = {key: value for key, value in summary.items() if key != "olmes"}
    if summary.get("olmes") != (None if kept.get("partial", True) else kept.get("best_of_two")):
        raise OlmesError("its olmes field is not its best_of_two; score the task again (olmes score)")
    return kept


def _named_format(summary: dict[str, Any]) -> dict[str, Any]:
    """/2 -> /3: the tag moves from ``schema`` to ``format``, the key of every other olmes file."""
    return summary


def upgrade_inputs(document: dict[str, Any], where: str) -> None:
    """The run records a summary or report holds in ``inputs``, each read through its own upgrades."""
    for request_set, entry in document.get("inputs", {}).items():
        if isinstance(entry, dict) and isinstance(entry.get("run"), dict):
            entry["run"] = RUN_FORMAT.upgraded(entry["run"], f"{where}: inputs.{request_set}.run")


SCORES_FORMAT = Format(
    "olmes.scores",
    ScoreSummary,
    made_by="run olmes score",
    upgrades=(_drop_repeated_score, _named_format),
    legacy_key="schema",
    nested=upgrade_inputs,
)
"""Score summaries: /1 and /2 kept the tag in ``schema``."""

ROTATIONS_FORMAT = Format(
    "olmes.rotations", RotationsReport, made_by="run olmes rotations", nested=upgrade_inputs
)

PREDICTION_FORMAT = ParquetFormat("olmes.predictions", 2, "score the task again (olmes score)")
"""Predictions files (:data:`PREDICTION_COLUMNS`). /1: no format in the schema metadata."""


def read_score_summary(path: str | os.PathLike) -> ScoreSummary:
    return SCORES_FORMAT.read(path)


def write_score_summary(path: str | os.PathLike, summary: ScoreSummary) -> None:
    SCORES_FORMAT.write(path, summary)
