"""Generation request file -> generations Parquet and run record, through the generation cache and the
generation engine, with the gold answers' bits-per-byte requests scored by the log-prob engine through
the log-prob cache (the same keys as :mod:`olmes.logprobs.runner`).

Output columns (:data:`olmes.core.records.generative.GENERATION_COLUMNS`), in request-file order:
``request_index``, ``task``, ``instance_index``, ``native_id`` (a string), ``generation`` (decoded,
cut at the first stop sequence), ``num_tokens``, ``stop_reason``, ``gold_sum_logprob``,
``gold_num_tokens``, ``gold_num_bytes`` (UTF-8 bytes of ``gold_continuation``). The run record
``<output>.run.json`` is the log-prob engine's (of the gold requests) with the generation counts under
``generation``.
"""

from __future__ import annotations

import resource
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from olmes.core.atomic import atomic_path
from olmes.core.records import RunRecord, write_run_record
from olmes.core.records.generative import GENERATION_COLUMNS, GENERATIONS_FORMAT
from olmes.logprobs.architectures import TREE
from olmes.logprobs.cache import ChunkWriter, LogprobCache, request_key
from olmes.logprobs.engine import score
from olmes.logprobs.generation import GENERATION_ENGINE_VERSION, GenerationRequest, generate
from olmes.logprobs.generation_cache import GenerationCache, GenerationChunkWriter, generation_key
from olmes.logprobs.models import LoadedModel, ModelPlan
from olmes.logprobs.runner import _first_uncached, run_record


def _request(row: dict) -> GenerationRequest:
    return GenerationRequest(row["context"], tuple(row["stop_sequences"]), int(row["max_gen_toks"]))


def generate_file(
    model: ModelPlan | LoadedModel,
    requests: list[dict],
    requests_path: Path,
    output: Path,
    cache_root: Path,
    *,
    batch_size: int | None = None,
    use_cache: bool = True,
    progress: bool = False,
    flush_every: int = 256,
) -> RunRecord:
    """Generate what is not cached, score the gold (context, continuation) pairs that are not cached,
    write the generations Parquet and the run record. A plan loads its weights only when something is
    not cached (a fully cached job never loads them)."""
    started = time.perf_counter()
    gen_requests = [_request(row) for row in requests]
    gen_keys = [generation_key(r.context, r.stop_sequences, r.max_gen_toks) for r in gen_requests]
    pairs = [(row["gold_context"], row["gold_continuation"]) for row in requests]
    gold_keys = [request_key(*pair) for pair in pairs]
    gen_cache = GenerationCache(cache_root, model.fingerprint)
    gold_cache = LogprobCache(cache_root, model.fingerprint)
    generated = gen_cache.load().rows if use_cache else {}
    known = gold_cache.load().rows if use_cache else {}
    gen_missing = _first_uncached(gen_keys, generated)
    gold_missing = _first_uncached(gold_keys, known)
    needs_model = bool(gen_missing or gold_missing)
    loads_now = needs_model and isinstance(model, ModelPlan) and model.loaded is None
    lm = model.load() if needs_model and isinstance(model, ModelPlan) else model
    load_time_s = lm.load_time_s if loads_now else None

    gen_writer = GenerationChunkWriter(
        gen_cache, [gen_keys[i] for i in gen_missing], every_requests=flush_every
    )
    generating = time.perf_counter()
    run = None
    try:
        if gen_missing:
            run = generate(
                lm,
                [gen_requests[i] for i in gen_missing],
                batch_size=batch_size,
                on_done=gen_writer,
                progress=progress,
            )
    finally:
        gen_writer.flush()  # keep what finished, also when the run is interrupted
    generation_time_s = time.perf_counter() - generating
    if run is not None:
        for position, index in enumerate(gen_missing):
            generated[gen_keys[index]] = run.generations[position]

    gold_writer = ChunkWriter(gold_cache, [gold_keys[i] for i in gold_missing], every_requests=2048)
    scoring = time.perf_counter()
    scores = None
    try:
        if gold_missing:
            scores = score(lm, [pairs[i] for i in gold_missing], None, on_done=gold_writer, progress=progress)
    finally:
        gold_writer.flush()
    engine_time_s = time.perf_counter() - scoring
    for position, index in enumerate(gold_missing):
        known[gold_keys[index]] = (
            float(scores.sum_logprob[position]),
            int(scores.num_tokens[position]),
            bool(scores.is_greedy[position]),
        )

    write_generations(output, requests, [generated[k] for k in gen_keys], [known[k] for k in gold_keys])
    record = run_record(lm, requests_path, len(requests), len(gold_missing), scores, None)
    path = lm.scoring_path
    record["generation"] = {
        "engine_version": GENERATION_ENGINE_VERSION,
        "generation_path": "shared-prefix" if path == TREE else "alone",
        "requests": len(requests),
        "from_cache": len(requests) - len(gen_missing),
        "prompt_tokens": run.prompt_tokens if run else 0,
        "prefill_tokens_forwarded": run.prefill_tokens_forwarded if run else 0,
        "shared_prefix_tokens_saved": run.shared_prefix_tokens_saved if run else 0,
        "generated_tokens": run.generated_tokens if run else 0,
        "batch_size": run.batch_size if run else batch_size,
        "generation_time_s": round(generation_time_s, 3),
        "tokens_per_s": round(run.generated_tokens / max(run.elapsed_s, 1e-9), 1) if run else None,
    }
    record["wall_time_s"] = round(time.perf_counter() - started, 3)
    record["engine_time_s"] = round(engine_time_s + generation_time_s, 3)
    record["load_time_s"] = None if load_time_s is None else round(load_time_s, 3)
    record["cache_bytes_written"] = gen_writer.bytes_written + gold_writer.bytes_written
    record["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    write_run_record(output, record)
    return record


def write_generations(output: Path, requests: list[dict], generations, gold) -> None:
    """The generations file: :data:`GENERATION_COLUMNS`, one row per request, in request order."""
    values = {
        "request_index": range(len(requests)),
        "task": [r["task"] for r in requests],
        "instance_index": [r["instance_index"] for r in requests],
        "native_id": [str(r["native_id"]) for r in requests],
        "generation": [g.text for g in generations],
        "num_tokens": [g.num_tokens for g in generations],
        "stop_reason": [g.stop_reason for g in generations],
        "gold_sum_logprob": [g[0] for g in gold],
        "gold_num_tokens": [g[1] for g in gold],
        "gold_num_bytes": [len(r["gold_continuation"].encode("utf-8")) for r in requests],
    }
    columns = {c.name: pa.array(values[c.name], pa.type_for_alias(c.arrow_type)) for c in GENERATION_COLUMNS}
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(output) as temp:
        pq.write_table(pa.table(columns, metadata=GENERATIONS_FORMAT.metadata()), temp)
