"""Log-prob files and their run records: what the engine wrote, and what produced it."""

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict

from olmes.core.records.formats import Format, ParquetFormat

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
:func:`olmes.logprobs.runner.write_parquet`, checked by :mod:`olmes.scoring.logprob_files`."""
LOGPROB_SCORED = tuple(column.name for column in LOGPROB_COLUMNS if column.required)


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


class CheckReport(TypedDict):
    """What ``olmes check-model --output`` writes (CHECK_FORMAT), and a run record keeps as its
    ``architecture_check`` (an unverified architecture's check)."""

    model: str
    model_type: str
    requests: int
    tree_max_delta: float | None  # None: the tree path crashed (tree_error)
    tree_max_share: float | None  # max |delta| / the float error model's bound (exact: <= 1)
    tree_greedy_flips: int | None
    tree_error: str | None
    tree_exact: bool
    scoring_path: str
    scoring_reason: str
    ok: bool  # False only when the path olmes takes is the tree and it is not exact


class GenerationCounts(TypedDict):
    """What a generations file's run cost in tokens (``olmes generate``; the rest of its run record
    is the log-prob engine's, of the gold answers' bits-per-byte requests)."""

    engine_version: str
    generation_path: str  # "shared-prefix" (keys/values of shared prefixes computed once) or "alone"
    requests: int
    from_cache: int
    prompt_tokens: int  # sum of the prompts' lengths (what generating each alone would prefill)
    prefill_tokens_forwarded: int
    shared_prefix_tokens_saved: int
    generated_tokens: int
    batch_size: int | None
    generation_time_s: float
    tokens_per_s: float | None  # generated tokens per second of generation; None when all were cached


class RunRecord(TypedDict):
    """``<log-prob file>.run.json``: what produced a log-prob file, and what it cost."""

    format: str  # RUN_FORMAT's tag
    model: str
    model_kind: str
    model_path: NotRequired[str]  # the local folder loaded; the store leaves it out (olmes.store.portable)
    model_revision: str
    model_fingerprint: str
    dtype: str
    device: str
    hardware: str  # GPU name or CPU model; "not recorded" in records written before it
    placement: NotRequired[Placement]  # records written before it have none
    identity: NotRequired[ModelIdentity]  # records written before it have none
    bos_token_id: int | None
    max_input_tokens: int
    max_batch_tokens: int | None  # None: all cached on a GPU, whose size is chosen after loading
    scoring_path: NotRequired[ScoringPath]  # records written before it: tree
    scoring_reason: NotRequired[str]
    attn_implementation: NotRequired[str | None]  # None: every request came from the cache
    trust_remote_code: NotRequired[bool]
    architecture_check: NotRequired[CheckReport]  # olmes check-model's report: unverified architectures
    imported: NotRequired[ImportedRun]  # made by another implementation, imported (olmes import)
    generation: NotRequired[GenerationCounts]  # a generations file's run (olmes generate)
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


def run_record_path(logprob_path: str | os.PathLike) -> Path:
    """The run record sits beside its log-prob file: ``<file>.run.json``."""
    return Path(f"{logprob_path}.run.json")


def read_run_record(logprob_path: str | os.PathLike) -> RunRecord | None:
    """The run record of a log-prob file, or None when there is none."""
    path = run_record_path(logprob_path)
    return RUN_FORMAT.read(path) if path.exists() else None


def write_run_record(logprob_path: str | os.PathLike, record: RunRecord) -> None:
    RUN_FORMAT.write(run_record_path(logprob_path), record)


def _hardware_named(run: dict[str, Any]) -> dict[str, Any]:
    """/1 -> /2: the record names its format; ``hardware`` is always there ("not recorded" in records
    written before olmes recorded it, which every reader already took their absence to mean)."""
    if "hardware" in run:
        return run
    keys = list(run)
    at = keys.index("device") + 1 if "device" in keys else len(keys)
    return {**dict(list(run.items())[:at]), "hardware": "not recorded", **dict(list(run.items())[at:])}


RUN_FORMAT = Format(
    "olmes.run",
    RunRecord,
    made_by="re-run the log-prob job",
    upgrades=(_hardware_named,),
    unversioned=True,
)
"""Run records. /1: no ``format`` key (every record before olmes.run/2), ``hardware`` possibly
absent."""

LOGPROB_FORMAT = ParquetFormat("olmes.logprobs", 2, "re-run the log-prob job")
"""Log-prob files (:data:`LOGPROB_COLUMNS`). /1: no format in the schema metadata; /2: the same columns,
the tag in the metadata. A /1 file is read as it is and never rewritten: log-prob files are addressed
by their SHA-256 (summaries, reproduction records, blob hosts)."""

CHECK_FORMAT = Format("olmes.model-check", CheckReport, made_by="run olmes check-model again")
"""``olmes check-model --output``. Inside a run record (``architecture_check``) the report is part of
the run record's format and carries no tag of its own."""
