"""``olmes import oe-eval``, the run records of imported log-prob files: who computed them
(``imported``: the run's configuration, files and metrics), the tokenizer's model as ``model``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from olmes.core.methods import CF, MCF, PMI
from olmes.core.records import ImportedRun, RunRecord
from olmes.core.resources import file_sha256
from olmes.store.oe_eval.checks import ImportedTask
from olmes.store.oe_eval.files import TaskRun
from olmes.store.oe_eval.model import ImportModel

IMPORT_PACKAGES = ("transformers", "tokenizers", "pyarrow")
"""What an import's run records list beside olmes and python: what recounted the tokens and wrote
the files here (the log-probs were computed by the run's own software, at the commit it names)."""


def run_record(
    item: ImportedTask,
    request_set: str,
    model: ImportModel,
    requests_path: Path,
    requests_file: Path,
    rows: list,
) -> RunRecord:
    """The run record of an imported log-prob file: who computed it (``imported``), the tokenizer's
    model as ``model``; nothing was computed here, so the engine's counts are 0. ``requests_path`` is
    the request file as written (staged), ``requests_file`` where it will be."""
    from olmes.logprobs.runner import versions

    runs = item.parts[MCF if request_set == MCF else CF]
    first = runs[0].metrics
    model_config = first.get("model_config") or {}
    return {
        "model": model.spec,
        "model_kind": model.resolved.kind,
        "model_path": str(model.resolved.path),
        "model_revision": model.resolved.content_id,
        "model_fingerprint": _fingerprint(first, model.resolved.content_id, model.dtype),
        "dtype": model.dtype,
        "device": str(model_config.get("device") or "not recorded"),
        "hardware": "not recorded (imported)",
        "identity": model.identity,
        "bos_token_id": None,
        "max_input_tokens": int(model_config.get("max_length") or 2048),
        "max_batch_tokens": None,
        "imported": _imported(runs),
        "versions": versions(IMPORT_PACKAGES),
        "requests_file": str(requests_file),
        "requests_sha256": file_sha256(requests_path),
        "num_requests": len(rows),
        "requests_from_cache": 0,
        "requests_computed": 0,
        "tokens_forwarded": 0,
        "trie_minimal_tokens": 0,
        "naive_tokens": 0,
        "wall_time_s": round(sum(float(run.metrics.get("processing_time") or 0) for run in runs), 3)
        if request_set != PMI
        else 0.0,
        "engine_time_s": 0.0,
        "load_time_s": None,
        "cache_bytes_written": 0,
        "peak_rss_bytes": 0,
    }


def _imported(runs: list[TaskRun]) -> ImportedRun:
    first = runs[0].metrics
    files: dict[str, str] = {}
    for run in runs:
        files.update(run.files_sha256())
    return {
        "implementation": runs[0].implementation,
        "commit": None,
        "run_task": runs[0].alias,
        "run_tasks": len(runs),
        "task_hash": first.get("task_hash"),
        "model_hash": first.get("model_hash"),
        "model_config": first.get("model_config") or {},
        "task_config": first.get("task_config") or {},
        "current_date": first.get("current_date"),
        "files_sha256": files,
        "num_tokens_recounted": 0,
        "comparison": [],
    }


def _fingerprint(metrics: dict, identity: str, dtype: str) -> str:
    """One model of the store: the run's model (its model_hash), the weights named, the precision."""
    key = ["imported", metrics.get("model_hash"), identity, dtype]
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()[:32]
