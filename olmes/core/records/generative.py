"""The files of the OLMES v0.2 generative tasks (:mod:`olmes.core.generative`), stage by stage:
generation requests (JSON lines, ``olmes requests --task <generative task>``), generations (Parquet +
run record, ``olmes generate``), per-instance metrics (Parquet) and the score summary (JSON,
``olmes score-generative``). docs/file-formats.md describes them field by field."""

import os
from typing import NotRequired, TypedDict

from olmes.core.records.formats import Format, ParquetFormat
from olmes.core.records.jsonlines import JsonLinesFormat
from olmes.core.records.logprobs import Column
from olmes.core.records.scores import FileRef, InputFile


class GenerationRequestRow(TypedDict):
    """One line of a generation request file: one instance's prompt, how to generate from it, its gold
    answers, and the bits-per-byte request (AI2's ``perplexity_context`` + the first gold answer)."""

    task: str  # a key of olmes.core.generative.GENERATIVE_TASKS
    instance_index: int  # 0-based position in the task's instance order (sampled order where sampled)
    native_id: str  # the dataset's id, as a string
    question: str  # what the instance asks, for readers (the site's instance browser)
    context: str  # the prompt, byte-identical to AI2's
    stop_sequences: list[str]
    max_gen_toks: int
    answers: list[list[str]]  # the gold answers, each a list of spans (several only in DROP)
    gold_context: str  # the context of the bits-per-byte request
    gold_continuation: str  # " " + the gold answer scored for bits per byte


GENERATION_REQUESTS_FORMAT = JsonLinesFormat("olmes.generation-requests", GenerationRequestRow)


class GenerationInstanceRow(TypedDict):
    """One instance of a generative task as readers see it (the store's
    ``tasks/<task>.gen.instances.jsonl.gz``): a generation request without its prompts, which the store
    keeps only for the first instances."""

    task: str
    instance_index: int
    native_id: str
    question: str
    answers: list[list[str]]


GENERATION_INSTANCES_FORMAT = JsonLinesFormat("olmes.generation-instances", GenerationInstanceRow)

GENERATION_COLUMNS: tuple[Column, ...] = (
    Column("request_index", "int64", True),  # 0-based line number in the request file
    Column("task", "string", True),
    Column("instance_index", "int64", True),
    Column("native_id", "string", True),
    Column("generation", "string", True),  # the decoded tokens, cut at the first stop sequence
    Column("num_tokens", "int64", True),  # tokens generated
    Column("stop_reason", "string", True),  # "stop", "eos" or "length"
    Column("gold_sum_logprob", "float64", True),  # log P(gold_continuation | gold_context), nats
    Column("gold_num_tokens", "int64", True),
    Column("gold_num_bytes", "int64", True),  # UTF-8 bytes of gold_continuation, leading space included
)
"""The generations Parquet format, in its column order: written by
:mod:`olmes.logprobs.generation_runner`, read by :mod:`olmes.scoring.generative_score`."""

GENERATIONS_FORMAT = ParquetFormat("olmes.generations", 1, "generate again (olmes generate)")

GENERATIVE_INSTANCE_COLUMNS: tuple[Column, ...] = (
    Column("model", "string", True),
    Column("task", "string", True),
    Column("instance_index", "int64", True),
    Column("native_id", "string", True),
    Column("generation", "string", True),
    Column("exact_match", "float64", True),
    Column("f1", "float64", False),  # null where the task's metric has no F1 (GSM8K)
    Column("extracted", "string", False),  # GSM8K: the answer read off the generation
    Column("bits_per_byte", "float64", True),
)
"""Per-instance metrics of one model x generative task (``<task>.instances.parquet``)."""

GENERATIVE_INSTANCES_FORMAT = ParquetFormat(
    "olmes.generative-instances", 1, "score the task again (olmes score-generative)"
)


class MetricValue(TypedDict):
    """A metric's mean over instances, with its standard error (sample sd / sqrt(n))."""

    value: float
    stderr: float | None
    n: int


class GenerativeScoreSummary(TypedDict):
    """``<task>.scores.json`` of a generative task: its metrics, bits per byte and provenance."""

    format: str  # GENERATIVE_SCORES_FORMAT's tag
    model: str
    task: str
    display_name: str
    version: str  # olmes.core.generative.GENERATIVE_VERSION
    n_instances: int
    full_count: int
    limit: int | None
    partial: bool
    partial_reasons: list[str]
    primary_metric: str
    metrics: dict[str, MetricValue]  # exact_match, f1 (where the task has it)
    bits_per_byte: MetricValue
    inputs: dict[str, InputFile]  # "generations": the generations file and its run record
    instances: FileRef
    generation_counts: NotRequired[dict[str, int]]  # stop reasons: stop, eos, length


GENERATIVE_SCORES_FORMAT = Format(
    "olmes.generative-scores", GenerativeScoreSummary, made_by="run olmes score-generative"
)


def read_generative_summary(path: str | os.PathLike) -> GenerativeScoreSummary:
    return GENERATIVE_SCORES_FORMAT.read(path)


def write_generative_summary(path: str | os.PathLike, summary: GenerativeScoreSummary) -> None:
    GENERATIVE_SCORES_FORMAT.write(path, summary)
