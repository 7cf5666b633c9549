"""What each log-prob job of a run cost, kept as it is measured, and the scale table made from it.

    python scripts/scale_facts.py collect RESULTS LEDGER   # append the jobs RESULTS computed
    python scripts/scale_facts.py table LEDGER             # print the table and per-model totals (Markdown)

``collect`` reads every run record under ``RESULTS/logprobs/<model>/`` with the job's Snakemake
benchmark (``RESULTS/benchmarks/logprobs/<model>/<task>.<set>.tsv``: the whole process's wall time)
and appends one JSON line per job that computed requests (a job served from the cache measured
nothing) to LEDGER, once per (model, request file SHA-256). The ledger outlives the result files: a
result regenerated later from the cache keeps the facts of the run that computed it.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

from olmes.core.records import read_run_record, write_records

FACTS = (
    "requests_computed", "requests_from_cache", "tokens_forwarded", "trie_minimal_tokens", "naive_tokens",
    "wall_time_s", "engine_time_s", "load_time_s", "peak_rss_bytes", "cache_bytes_written",
)  # fmt: skip


def collect(results: Path, ledger: Path) -> int:
    known = {(row["model"], row["requests_sha256"]) for row in _ledger(ledger)}
    rows = []
    for path in sorted(results.glob("logprobs/*/*.parquet")):
        record = read_run_record(path)
        model, (task, request_set) = path.parent.name, path.name.split(".")[:2]
        if record is None or record["requests_computed"] == 0:
            continue
        if (model, record["requests_sha256"]) in known:
            continue
        row = {
            "model": model,
            "task": task,
            "set": request_set,
            "requests_sha256": record["requests_sha256"],
        }
        row.update({key: record[key] for key in FACTS})
        row.update(_process_times(results / "benchmarks/logprobs" / model / f"{task}.{request_set}.tsv"))
        rows.append(row)
        known.add((model, record["requests_sha256"]))
    write_records(rows, ledger, append=True, ascii_only=True)
    return len(rows)


def _process_times(benchmark: Path) -> dict[str, float | None]:
    """The whole job's wall and CPU seconds (Snakemake's benchmark); CPU / wall below the thread
    count means the job shared the machine, so its speed is not the machine's."""
    if not benchmark.exists():
        return {"process_s": None, "process_cpu_s": None}
    with open(benchmark, encoding="utf-8") as handle:
        measured = next(csv.DictReader(handle, delimiter="\t"))
    return {"process_s": float(measured["s"]), "process_cpu_s": float(measured["cpu_time"])}


def _ledger(ledger: Path) -> list[dict]:
    if not ledger.exists():
        return []
    return [json.loads(line) for line in ledger.read_text(encoding="utf-8").splitlines() if line.strip()]


def table(rows: list[dict]) -> str:
    header = ("model", "task", "set", "requests", "tokens forwarded", "trie-minimal", "wall s", "engine s",
              "tok/s", "cores busy", "peak RSS GiB", "cache KiB")  # fmt: skip
    cells = []
    for row in rows:
        rate = row["tokens_forwarded"] / row["engine_time_s"] if row["engine_time_s"] else 0
        cells.append((
            row["model"], row["task"], row["set"], f"{row['requests_computed']:,}",
            f"{row['tokens_forwarded']:,}",
            f"{row['trie_minimal_tokens']:,}", f"{_wall_s(row):.0f}",
            f"{row['engine_time_s']:.0f}", f"{rate:.0f}", _cores(row), f"{row['peak_rss_bytes'] / 2**30:.2f}",
            f"{row['cache_bytes_written'] / 1024:.0f}",
        ))  # fmt: skip
    return _markdown(header, cells)


def totals(rows: list[dict]) -> str:
    """Per model: what its computing jobs forwarded and took, and the share of the jobs' wall time
    spent outside the engine (process start, imports, model load, reading requests, writing)."""
    header = ("model", "jobs", "requests computed", "from cache", "tokens forwarded", "wall s", "engine s",
              "outside engine", "peak RSS GiB (max)", "cache MiB")  # fmt: skip
    by_model: dict[str, list[dict]] = {}
    for row in rows:
        by_model.setdefault(row["model"], []).append(row)
    cells = []
    for model, jobs in by_model.items():
        wall = sum(_wall_s(job) for job in jobs)
        engine = sum(job["engine_time_s"] for job in jobs)
        cells.append((
            model, str(len(jobs)), f"{sum(job['requests_computed'] for job in jobs):,}",
            f"{sum(job['requests_from_cache'] for job in jobs):,}",
            f"{sum(job['tokens_forwarded'] for job in jobs):,}", f"{wall:,.0f}", f"{engine:,.0f}",
            f"{(wall - engine) / wall:.1%}", f"{max(job['peak_rss_bytes'] for job in jobs) / 2**30:.2f}",
            f"{sum(job['cache_bytes_written'] for job in jobs) / 2**20:.1f}",
        ))  # fmt: skip
    return _markdown(header, cells)


def _markdown(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(cells) + " |" for cells in rows])


def _wall_s(row: dict) -> float:
    """The whole job's wall time (Snakemake's benchmark), or the run record's where there is none."""
    return row["process_s"] or row["wall_time_s"]


def _cores(row: dict) -> str:
    return f"{row['process_cpu_s'] / row['process_s']:.2f}" if row.get("process_cpu_s") else "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="action", required=True)
    collect_parser = sub.add_parser("collect")
    collect_parser.add_argument("results", type=Path)
    collect_parser.add_argument("ledger", type=Path)
    table_parser = sub.add_parser("table")
    table_parser.add_argument("ledger", type=Path)
    args = parser.parse_args()
    if args.action == "collect":
        print(f"{collect(args.results, args.ledger)} jobs added to {args.ledger}")
    else:
        rows = _ledger(args.ledger)
        print(table(rows) + "\n\n" + totals(rows))


if __name__ == "__main__":
    main()
