"""How much of a model's log-prob work is loading the weights: one process per request file (the
workflow before: one job per model x task x request set) vs one process for all of them (now: one
job per model, ``olmes logprobs`` with several ``--requests FILE --output FILE`` pairs).

Measured on this machine with an embedded model: the request files of ``--tasks`` (every request
set; first ``--limit`` instances) are scored cold (``--no-cache``), first by one ``olmes logprobs``
process per file, then by one process for all; it prints the wall time, the time in ``load`` (the
run records' ``load_time_s``) and the share of the wall time spent loading. Then an estimate for 7B
and 70B models in bfloat16: a load reads the weights at ``--bandwidth`` GB/s, the forward work is
the resources rule's (olmes/logprobs/placement.py: the whole run's tokens at a sustained GPU rate),
over the ``--files`` log-prob files one model gets (60: the full standard with pmi everywhere and
the shipped robustness runs).

    python benchmarks/load_share.py --model smollm2-135m --output load_share.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from olmes.core.tasks import TASKS
from olmes.logprobs.placement import GPU_FLOPS, RUN_TOKENS
from olmes.requests.build import request_sets

OLMES = [sys.executable, "-m", "olmes.cli.main"]
ESTIMATED = {"7B": 7.24e9, "70B": 70.55e9}  # Mistral-7B, Llama-3-70B parameters


def build_requests(folder: Path, tasks: list[str], limit: int) -> list[Path]:
    files = []
    for task in tasks:
        for request_set in request_sets(TASKS[task], True):
            path = folder / f"{task}.{request_set}.jsonl"
            command = [*OLMES, "requests", task, "--request-set", request_set, "--pmi-everywhere"]
            subprocess.run([*command, "--limit", str(limit), "--output", str(path)], check=True)
            files.append(path)
    return files


def score(model: str, pairs: list[tuple[Path, Path]], threads: int) -> tuple[float, list[dict]]:
    """Run one ``olmes logprobs`` over ``pairs``; its wall time and run records."""
    command = [*OLMES, "logprobs", "--model", model, "--no-cache", "--quiet", "--threads", str(threads)]
    for requests, output in pairs:
        command += ["--requests", str(requests), "--output", str(output)]
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    wall = time.perf_counter() - started
    return wall, [json.loads(output.with_name(output.name + ".run.json").read_text()) for _, output in pairs]


def measure(model: str, files: list[Path], folder: Path, threads: int) -> dict:
    outputs = {
        mode: [(path, folder / mode / f"{path.stem}.parquet") for path in files] for mode in ("one", "each")
    }
    for pairs in outputs.values():
        pairs[0][1].parent.mkdir(parents=True, exist_ok=True)
    result = {}
    runs = {
        "each": [score(model, [pair], threads) for pair in outputs["each"]],
        "one": [score(model, outputs["one"], threads)],
    }
    for mode, done in runs.items():
        wall = sum(seconds for seconds, _ in done)
        records = [record for _, records in done for record in records]
        load = sum(record["load_time_s"] or 0 for record in records)
        engine = sum(record["engine_time_s"] for record in records)
        result[mode] = {"processes": len(done), "loads": sum(r["load_time_s"] is not None for r in records),
                        "wall_s": round(wall, 1), "load_s": round(load, 1), "engine_s": round(engine, 1),
                        "load_share": round(load / wall, 3)}  # fmt: skip
    return result


def estimate(files: int, bandwidth_gb_s: float) -> dict:
    """Loading vs forward time of one model's whole run in bfloat16, loading once per file or once."""
    rows = {}
    for name, parameters in ESTIMATED.items():
        load = parameters * 2 / (bandwidth_gb_s * 1e9)
        forward = 2 * parameters * RUN_TOKENS / GPU_FLOPS
        rows[name] = {
            "weights_gb": round(parameters * 2 / 1e9, 1),
            "load_s": round(load, 1),
            "forward_s": round(forward),
            "share_each": round(files * load / (files * load + forward), 3),
            "share_one": round(load / (load + forward), 4),
        }
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--tasks", nargs="+", default=["arc_easy", "boolq", "piqa"])
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--files", type=int, default=60, help="log-prob files per model, for the estimate")
    parser.add_argument("--bandwidth", type=float, default=2.0, help="GB/s a load reads, for the estimate")
    parser.add_argument("--output")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        files = build_requests(Path(folder), args.tasks, args.limit)
        measured = measure(args.model, files, Path(folder), args.threads)
    result = {"model": args.model, "tasks": args.tasks, "limit": args.limit, "files": len(files),
              "threads": args.threads, "measured": measured,
              "estimate": {"files": args.files, "bandwidth_gb_s": args.bandwidth,
                           "models": estimate(args.files, args.bandwidth)}}  # fmt: skip
    print(f"{args.model}, {len(files)} request files ({', '.join(args.tasks)}; limit {args.limit}), cold:")
    for mode, row in measured.items():
        label = "one process per file" if mode == "each" else "one process for all"
        print(
            f"  {label:22} {row['processes']:3} processes, {row['loads']:3} loads: "
            f"wall {row['wall_s']:7.1f} s, load {row['load_s']:6.1f} s ({row['load_share']:.1%}), "
            f"engine {row['engine_s']:6.1f} s"
        )
    print(f"estimate, bfloat16, {args.files} files per model, weights read at {args.bandwidth} GB/s:")
    for name, row in result["estimate"]["models"].items():
        print(
            f"  {name:4} {row['weights_gb']:6.1f} GB: load {row['load_s']:5.1f} s,"
            f" forward {row['forward_s']} s; share of loading: {row['share_each']:.1%} loading per file,"
            f" {row['share_one']:.2%} once"
        )
    if args.output:
        Path(args.output).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
