"""What the robustness runs cost next to the standard, from the run records of a workflow results
folder (`snakemake evaluate` with config key `robustness`; run it with an empty log-prob cache,
OLMES_CACHE_DIR pointing elsewhere, so that every request is computed).

Per model x task it prints the tokens forwarded and the engine time of:
- the standard's request sets (cf + pmi + mcf) and of each prompt variant's, and their ratio;
- the other answer orders (mcf_rot) against plain MCF.

    python benchmarks/robustness_cost.py results [--json out.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

SETS = ("cf", "pmi", "mcf")


def _cost(folder: Path, model: str, task: str, sets: tuple[str, ...]) -> dict | None:
    """Tokens forwarded and engine seconds of one model x task's request sets in ``folder``."""
    records = []
    for request_set in sets:
        path = folder / "logprobs" / model / f"{task}.{request_set}.parquet.run.json"
        if path.is_file():
            records.append(json.loads(path.read_text(encoding="utf-8")))
    if not records:
        return None
    if any(record["requests_from_cache"] for record in records):
        raise SystemExit(
            f"{folder}: {model} {task} took requests from the log-prob cache; measure without it"
        )
    return {
        "tokens": sum(record["tokens_forwarded"] for record in records),
        "engine_s": round(sum(record["engine_time_s"] for record in records), 2),
        "requests": sum(record["num_requests"] for record in records),
    }


def measure(results: Path) -> list[dict]:
    rows = []
    variants = sorted(p.name for p in (results / "variants").glob("*") if p.is_dir())
    for summary in sorted((results / "scores").glob("*/*.scores.json")):
        model, task = summary.parent.name, summary.name.removesuffix(".scores.json")
        standard = _cost(results, model, task, SETS)
        row = {"model": model, "task": task, "standard": standard}
        for variant in variants:
            cost = _cost(results / "variants" / variant, model, task, SETS)
            if cost is not None:
                row[variant] = {**cost, "tokens_x": round(cost["tokens"] / standard["tokens"], 2),
                                "time_x": round(cost["engine_s"] / standard["engine_s"], 2)}  # fmt: skip
        plain, rotations = _cost(results, model, task, ("mcf",)), _cost(results, model, task, ("mcf_rot",))
        if rotations is not None:
            row["mcf"], row["mcf_rot"] = plain, {
                **rotations, "tokens_x": round(rotations["tokens"] / plain["tokens"], 2),
                "time_x": round(rotations["engine_s"] / plain["engine_s"], 2),
            }  # fmt: skip
        if len(row) > 3:
            rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    rows = measure(args.results)
    for row in rows:
        parts = [f"{row['model']:14} {row['task']:11} standard {row['standard']['tokens']:>7} tok"]
        for key in [k for k in row if k.startswith("var")]:
            parts.append(f"{key} {row[key]['tokens_x']:.2f}x tok {row[key]['time_x']:.2f}x time")
        if "mcf_rot" in row:
            parts.append(
                f"orders {row['mcf_rot']['tokens_x']:.2f}x tok {row['mcf_rot']['time_x']:.2f}x time of MCF"
            )
        print(" | ".join(parts))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
