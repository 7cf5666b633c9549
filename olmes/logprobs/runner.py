"""Request file -> log-prob Parquet and run record, through the log-prob cache and the engine.

Output columns, in request-file order: the request's identifying fields (``request_index`` = its
0-based line number, ``task``, ``formulation``, ``instance_index``, ``native_id`` as a string,
``choice``, ``label``, ``unconditional``, ``subject`` and ``rotation`` when the file has them) and
``sum_logprob``, ``num_tokens``, ``num_chars`` and ``num_bytes`` (characters and UTF-8 bytes of the
continuation, leading space included), ``is_greedy``. The run record ``<output>.run.json`` says what produced
them (docs/file-formats.md).
"""

from __future__ import annotations

import os
import platform
import resource
import time
from importlib import metadata
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from olmes import __version__
from olmes.core.atomic import atomic_path
from olmes.core.errors import OlmesError
from olmes.core.records import (
    LOGPROB_COLUMNS,
    LOGPROB_FORMAT,
    REQUESTS_FORMAT,
    RequestRow,
    RunRecord,
    read_records,
    write_run_record,
)
from olmes.core.resources import file_sha256
from olmes.logprobs.cache import ChunkWriter, LogprobCache, request_key
from olmes.logprobs.engine import score
from olmes.logprobs.identity import model_identity
from olmes.logprobs.models import LoadedModel, ModelPlan, placement_record
from olmes.logprobs.options import DEFAULT_MAX_BATCH_TOKENS
from olmes.logprobs.tally import Scores
from olmes.logprobs.trie import MAX_INPUT_TOKENS


def read_requests(path: Path) -> list[RequestRow]:
    """A request file's rows, each checked; a bad line is reported with its number."""
    if not path.is_file():
        raise OlmesError(f"request file {path} does not exist")
    return read_records(path, REQUESTS_FORMAT)


def score_file(
    model: ModelPlan | LoadedModel,
    requests: list[RequestRow],
    requests_path: Path,
    output: Path,
    cache_root: Path,
    *,
    max_batch_tokens: int | None = None,
    use_cache: bool = True,
    progress: bool = False,
    flush_every: int = 2048,
    known: dict | None = None,
    check: dict | None = None,
) -> RunRecord:
    """Score requests (reusing the results cached under ``cache_root``), write the Parquet output and
    the run record.

    ``model`` may be a plan (:func:`olmes.logprobs.models.prepare`): its weights are loaded only when some
    request is not cached, so a fully cached job costs a process start and a cache read; a plan loads
    once, so further files scored with it reuse the weights. The run record gets the job's scale facts:
    load (when this file loaded the weights) and engine time, peak memory, cache bytes written.
    ``max_batch_tokens`` None takes the device's default
    (:func:`olmes.logprobs.chunks.default_max_batch_tokens`; on a GPU chosen once the weights are
    loaded). ``known``: the results known so far (request key -> result), read from the cache when
    None; the new results are added to it. ``check``: an ``olmes check-model`` report of the model
    (made for an architecture not on the verified list), kept in the run record.
    """
    started = time.perf_counter()
    pairs = [(row["context"], row["continuation"]) for row in requests]
    keys = [request_key(*pair) for pair in pairs]
    cache = LogprobCache(cache_root, model.fingerprint)
    if known is None:
        known = cache.load().rows if use_cache else {}
    missing = _first_uncached(keys, known)
    loads_now = bool(missing) and isinstance(model, ModelPlan) and model.loaded is None
    lm = model.load() if missing and isinstance(model, ModelPlan) else model
    load_time_s = lm.load_time_s if loads_now else None
    writer = ChunkWriter(cache, [keys[i] for i in missing], every_requests=flush_every)
    scoring = time.perf_counter()
    try:
        scores = (
            score(lm, [pairs[i] for i in missing], max_batch_tokens, on_done=writer, progress=progress)
            if missing
            else None
        )
    finally:
        writer.flush()  # keep what finished, also when the run is interrupted
    engine_time_s = time.perf_counter() - scoring
    for position, index in enumerate(missing):
        known[keys[index]] = (
            float(scores.sum_logprob[position]),
            int(scores.num_tokens[position]),
            bool(scores.is_greedy[position]),
        )
    write_parquet(output, requests, [known[key] for key in keys])
    record = run_record(lm, requests_path, len(requests), len(missing), scores, max_batch_tokens)
    record["wall_time_s"] = round(time.perf_counter() - started, 3)
    record["engine_time_s"] = round(engine_time_s, 3)
    record["load_time_s"] = None if load_time_s is None else round(load_time_s, 3)
    record["cache_bytes_written"] = writer.bytes_written
    if check is not None:
        record["architecture_check"] = check
    record["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    write_run_record(output, record)
    return record


def score_files(
    model: ModelPlan | LoadedModel,
    jobs: list[tuple[Path, Path]],
    cache_root: Path,
    *,
    use_cache: bool = True,
    **options,
) -> list[RunRecord]:
    """Score each (request file, output) pair with :func:`score_file`, one Parquet file and run record
    per pair, the weights loaded at most once (by the first file with an uncached request) and the
    cache read once.

    Each output is written as soon as its file is scored, so an interrupted run keeps the finished
    files, and the cache keeps the finished chunks of the others for the rerun."""
    requests = [read_requests(path) for path, _ in jobs]  # every file checked before any work
    cache = LogprobCache(cache_root, model.fingerprint)
    known = cache.load().rows if use_cache else {}
    return [
        score_file(model, rows, path, output, cache_root, use_cache=use_cache, known=known, **options)
        for rows, (path, output) in zip(requests, jobs, strict=True)
    ]


def _first_uncached(keys: list[bytes], known: dict) -> list[int]:
    """Indices of the requests to compute: not cached, and each distinct request once."""
    chosen, seen = [], set()
    for index, key in enumerate(keys):
        if key not in known and key not in seen:
            seen.add(key)
            chosen.append(index)
    return chosen


def write_parquet(output: Path, requests: list[RequestRow], results: list[tuple[float, int, bool]]) -> None:
    """The log-prob file of ``requests`` and their (sum_logprob, num_tokens, is_greedy) results, in the
    columns of :data:`olmes.core.records.LOGPROB_COLUMNS`."""
    computed = {
        "request_index": range(len(requests)),
        "native_id": [str(r["native_id"]) for r in requests],
        "sum_logprob": [r[0] for r in results],
        "num_tokens": [r[1] for r in results],
        "num_chars": [len(r["continuation"]) for r in requests],
        "num_bytes": [len(r["continuation"].encode("utf-8")) for r in requests],
        "is_greedy": [r[2] for r in results],
    }
    columns = {}
    for column in LOGPROB_COLUMNS:
        if column.optional and not any(column.name in r for r in requests):
            continue
        values = computed.get(column.name) or [r.get(column.name) for r in requests]
        columns[column.name] = pa.array(values, pa.type_for_alias(column.arrow_type))
    with atomic_path(output) as temp:
        pq.write_table(pa.table(columns, metadata=LOGPROB_FORMAT.metadata()), temp)


def run_record(
    model: ModelPlan | LoadedModel,
    requests_path: Path,
    total: int,
    computed: int,
    scores: Scores | None,
    max_batch_tokens: int | None,
) -> RunRecord:
    """The run record without the timings and memory, which :func:`score_file` adds at the end
    (``scores`` None: every request came from the cache; then a GPU's automatic chunk size, which
    depends on the memory left after loading, was never chosen and is recorded as None)."""
    if scores is not None:
        max_batch_tokens = scores.max_batch_tokens
    elif max_batch_tokens is None and model.device.type != "cuda":
        max_batch_tokens = DEFAULT_MAX_BATCH_TOKENS
    loaded = isinstance(model, LoadedModel)
    path, reason = (model.scoring_path, model.scoring_reason) if loaded else model.scoring
    return {
        "model": model.resolved.spec,
        "model_kind": model.resolved.kind,
        "model_path": str(model.resolved.path),
        "model_revision": model.resolved.content_id,
        "model_fingerprint": model.fingerprint,
        "dtype": str(model.dtype).removeprefix("torch."),
        "device": str(model.device),
        "placement": placement_record(model),
        "hardware": hardware(model.device),
        "identity": model_identity(model.resolved, model.dtype),
        "bos_token_id": model.bos_token_id,
        "max_input_tokens": MAX_INPUT_TOKENS,
        "max_batch_tokens": max_batch_tokens,
        "scoring_path": path,
        "scoring_reason": reason,
        "attn_implementation": getattr(model, "attn_implementation", None),
        "trust_remote_code": model.trust_remote_code,
        "versions": versions(),
        "requests_file": str(requests_path),
        "requests_sha256": file_sha256(Path(requests_path)),
        "num_requests": total,
        "requests_from_cache": total - computed,
        "requests_computed": computed,
        "tokens_forwarded": scores.tokens_forwarded if scores else 0,
        "trie_minimal_tokens": scores.trie_tokens if scores else 0,
        "naive_tokens": scores.naive_tokens if scores else 0,
    }


def hardware(device) -> str:
    """What computed the log-probs: the GPU's name, or the CPU's model and core count."""
    if getattr(device, "type", str(device)) == "cuda":
        import torch

        return f"{torch.cuda.get_device_name(device)} (cuda)"
    name = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{name} ({os.cpu_count()} CPUs)"


ENGINE_PACKAGES = ("torch", "transformers", "tokenizers", "numpy", "pyarrow")
"""The packages that make the engine's log-probs and their files."""


def versions(packages: tuple[str, ...] = ENGINE_PACKAGES) -> dict:
    """The versions a run record lists: olmes, python and ``packages``, those that made its files
    (None for one not installed)."""
    found = {"olmes": __version__, "python": platform.python_version()}
    for package in packages:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = None
    return found
