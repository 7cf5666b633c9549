"""The evidence for the float32 error model (olmes/core/numerics.py, docs/numerics.md): how far two
correct computations of the same requests differ, across CPU kernel settings and chunk sizes, for both
embedded models on all 10 tasks.

    python benchmarks/error_model.py --limit 10 --models SmolLM2-135M   # ~6 min a setting on 2 cores
    python benchmarks/error_model.py --limit 5 --models Gemma-3-270M
    python benchmarks/error_model.py --compare-only                     # the report over both

Each setting runs in a process of its own (the kernel variables are read when torch starts): the first
``--limit`` instances of every task and request set (cf, pmi, mcf) of each store model, scored here
from scratch (no cache). The reference is the default kernels at the CPU's default chunk (512 tokens);
every other setting, and the published store's own log-probs (computed on another machine), are
compared with it request by request. The report (``report.json``, printed as a table) gives per model,
task and setting the max |delta|, the max of |delta| / bound (how much of the bound the worst request
uses) and the fitted constants: the smallest per-token error that explains every measured delta.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
STORE = ROOT / "leaderboard"
SETTINGS = {  # name -> (environment, chunk); the first is the reference
    "default": ({}, 512),
    "chunk64": ({}, 64),
    "avx2": ({"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}, 512),
    "sse41": ({"ATEN_CPU_CAPABILITY": "default", "ONEDNN_MAX_CPU_ISA": "SSE41"}, 512),
}
KEY = ["task", "formulation", "instance_index", "choice", "unconditional"]


def run_setting(out: Path, model: str, limit: int, chunk: int) -> None:
    """Score the first ``limit`` instances of every task of ``model`` into ``out`` (one Parquet)."""
    from olmes.core.records import write_records
    from olmes.logprobs.models import prepare
    from olmes.logprobs.runner import score_file
    from olmes.store.canonical import canonical_requests
    from olmes.store.reading import read_model_record

    record = read_model_record(STORE, model)
    loaded = prepare(record["spec"], dtype=record["dtype"], device="cpu").load()
    parts = []
    for task, entry in record["tasks"].items():
        for request_set in entry["requests_sha256"]:
            rows = list(canonical_requests(task, request_set, limit, "bundle"))
            requests_path = out / "requests" / f"{task}.{request_set}.jsonl"
            write_records(rows, requests_path)
            output = out / "logprobs" / f"{task}.{request_set}.parquet"
            score_file(loaded, rows, requests_path, output, out / "cache", max_batch_tokens=chunk,
                       use_cache=False)  # fmt: skip
            frame = pd.read_parquet(output)
            frame["context_chars"] = [len(row["context"]) for row in rows]
            parts.append(frame)
    pd.concat(parts).to_parquet(out / "all.parquet", index=False)


def store_rows(model: str, instances: pd.DataFrame) -> pd.DataFrame:
    """The store's rows of the instances measured here (each task's first ones)."""
    from olmes.store.blobs import model_logprob_file
    from olmes.store.reading import read_model_record

    record = read_model_record(STORE, model)
    parts = []
    for task, entry in record["tasks"].items():
        for request_set in entry["requests_sha256"]:
            frame = pd.read_parquet(model_logprob_file(STORE, model, task, request_set))
            limit = instances.loc[instances["task"] == task, "instance_index"].max() + 1
            parts.append(frame[frame["instance_index"] < limit])
    return pd.concat(parts)


def compare(out: Path, models: list[str]) -> dict:
    from olmes.core.numerics import share_of_tolerance

    rows = []
    for model in models:
        reference = pd.read_parquet(out / model / "default" / "all.parquet")
        others = {name: out / model / name / "all.parquet" for name in SETTINGS if name != "default"}
        frames = {name: pd.read_parquet(path) for name, path in others.items() if path.exists()}
        frames["store"] = store_rows(model, reference)
        for name, frame in frames.items():
            joined = reference.merge(frame[KEY + ["sum_logprob"]], on=KEY, suffixes=("", "_other"))
            assert len(joined) == len(reference), (model, name)
            delta = (joined["sum_logprob"] - joined["sum_logprob_other"]).abs().to_numpy()
            share = share_of_tolerance(
                joined["sum_logprob"], joined["sum_logprob_other"], joined["num_tokens"]
            )
            for (task, formulation), index in joined.groupby(["task", "formulation"]).groups.items():
                at = joined.index.get_indexer(index)
                tokens = joined["num_tokens"].to_numpy()[at]
                rows.append({
                    "model": model, "setting": name, "task": task, "request_set": formulation,
                    "requests": len(at), "mean_tokens": float(tokens.mean()), "max_tokens": int(tokens.max()),
                    "max_abs_delta": float(delta[at].max()),
                    "max_delta_per_token": float((delta[at] / tokens).max()),
                    "max_share_of_bound": float(share[at].max()),
                })  # fmt: skip
    table = pd.DataFrame(rows)
    report = {
        "requests": {
            model: len(pd.read_parquet(out / model / "default" / "all.parquet")) for model in models
        },
        "settings": {name: {"env": env, "chunk": chunk} for name, (env, chunk) in SETTINGS.items()},
        "rows": rows,
        "max_share_of_bound": float(table["max_share_of_bound"].max()),
        "max_delta_per_token": float(table["max_delta_per_token"].max()),
    }
    (out / "report.json").write_text(json.dumps(report, indent=1))
    wide = table.groupby(["model", "task", "setting"])["max_abs_delta"].max().unstack("setting")
    share = table.groupby(["model", "setting"])["max_share_of_bound"].max().unstack("setting")
    with pd.option_context("display.width", 200, "display.float_format", "{:.1e}".format):
        print(wide)
        print("\nmax |delta| / bound, per model and setting:")
        print(share)
    print(f"\nmax |delta| per token {report['max_delta_per_token']:.2e}; "
          f"max share of the bound {report['max_share_of_bound']:.3f}")  # fmt: skip
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "error_model")
    parser.add_argument("--models", default="SmolLM2-135M,Gemma-3-270M")
    parser.add_argument("--settings", default=",".join(SETTINGS))
    parser.add_argument("--compare-only", action="store_true", help="compare what --out holds")
    parser.add_argument("--_one", nargs=2, metavar=("MODEL", "SETTING"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    models = args.models.split(",")
    if args._one:
        model, setting = args._one
        run_setting(args.out / model / setting, model, args.limit, SETTINGS[setting][1])
        return
    if not args.compare_only:
        for model in models:
            for setting in args.settings.split(","):
                if (args.out / model / setting / "all.parquet").exists():
                    continue
                env = {**os.environ, **SETTINGS[setting][0]}
                command = [sys.executable, __file__, "--limit", str(args.limit), "--out", str(args.out),
                           "--_one", model, setting]  # fmt: skip
                print(f"{model} {setting} ...", flush=True)
                subprocess.run(command, env=env, check=True)
    compare(args.out, models)


if __name__ == "__main__":
    main()
