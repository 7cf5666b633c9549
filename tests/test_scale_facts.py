"""scripts/scale_facts.py: the campaign's ledger of what each log-prob job cost, and its tables."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "scale_facts.py"


def _job(results: Path, model: str, name: str, *, computed: int, tokens: int, engine: float, process: float,
         rss_gib: float, sha: str) -> None:  # fmt: skip
    """A finished log-prob job: its (empty) Parquet file, run record and Snakemake benchmark."""
    folder = results / "logprobs" / model
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.parquet").write_bytes(b"")
    record = {
        "model": model, "model_kind": "hf", "model_path": "/m", "model_revision": "r",
        "model_fingerprint": "f" * 32, "dtype": "float32", "device": "cpu", "bos_token_id": None,
        "max_input_tokens": 2048, "max_batch_tokens": 512, "versions": {}, "requests_file": "r.jsonl",
        "requests_sha256": sha, "num_requests": computed + 5, "requests_from_cache": 5,
        "requests_computed": computed, "tokens_forwarded": tokens, "trie_minimal_tokens": tokens,
        "naive_tokens": 3 * tokens, "wall_time_s": engine + 1, "engine_time_s": engine, "load_time_s": 1.0,
        "cache_bytes_written": 2**20, "peak_rss_bytes": int(rss_gib * 2**30),
    }  # fmt: skip
    (folder / f"{name}.parquet.run.json").write_text(json.dumps(record))
    benchmark = results / "benchmarks" / "logprobs" / model / f"{name}.tsv"
    benchmark.parent.mkdir(parents=True, exist_ok=True)
    benchmark.write_text(f"s\th:m:s\tcpu_time\n{process}\t0:00:00\t{process / 2}\n")


def _run(*args: str | Path) -> str:
    command = [sys.executable, SCRIPT, *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def test_ledger_rows_totals_and_no_double_counting(tmp_path: Path) -> None:
    results, ledger = tmp_path / "results", tmp_path / "scale.jsonl"
    _job(results, "M1", "piqa.cf", computed=100, tokens=1000, engine=8, process=10, rss_gib=1.5, sha="a")
    _job(results, "M1", "piqa.mcf", computed=50, tokens=3000, engine=27, process=30, rss_gib=2.5, sha="b")
    assert "2 jobs added" in _run("collect", results, ledger)
    assert "0 jobs added" in _run("collect", results, ledger)  # the same jobs are recorded once
    out = _run("table", ledger)
    assert "| M1 | piqa | mcf | 50 | 3,000 | 3,000 | 30 | 27 | 111 | 0.50 | 2.50 | 1024 |" in out
    # totals: 40 s of process wall time, 35 s in the engine -> 12.5% outside it; the larger peak
    assert "| M1 | 2 | 150 | 10 | 4,000 | 40 | 35 | 12.5% | 2.50 | 2.0 |" in out
