"""What the robustness runs cost next to the standard, from the run records of a workflow results
folder (`snakemake evaluate` with config key `robustness`; run it with an empty log-prob cache,
OLMES_CACHE_DIR pointing elsewhere, so that every request is computed once).

Per model x task it prints the tokens forwarded and the engine time of:
- the standard's cf + mcf request sets and each prompt variant's, and their ratio; pmi apart: its
  requests are shared (var2's pmi requests are the standard's, var3's are var1's), so whichever
  job runs first computes them and the other takes them from the log-prob cache;
- the other answer orders (mcf_rot) against plain MCF.

    python benchmarks/robustness_cost.py results [--json out.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

COMPARED = ("cf", "mcf")  # the request sets whose requests differ between the standard and a variant


def _cost(folder: Path, model: str, task: str, sets: tuple[str, ...]) -> dict | None:
    """Tokens forwarded and engine seconds of one model x task's request sets in ``folder``."""
    records = []
    for request_set in sets:
        path = folder / "logprobs" / model / f"{task}.{request_set}.parquet.run.json"
        if path.is_file():
            records.append(json.loads(path.read_text(encoding="utf-8")))
    if not records:
        return None
    return {
        "tokens": sum(record["tokens_forwarded"] for record in records),
        "engine_s": round(sum(record["engine_time_s"] for record in records), 2),
        "requests": sum(record["num_requests"] for record in records),
        "from_cache": sum(record["requests_from_cache"] for record in records),
    }


def _ratio(cost: dict, base: dict) -> dict:
    if cost["from_cache"] or base["from_cache"]:
        raise SystemExit("a compared request set came from the log-prob cache; run with an empty cache")
    return {
        **cost,
        "tokens_x": round(cost["tokens"] / base["tokens"], 2),
        "time_x": round(cost["engine_s"] / base["engine_s"], 2),
    }


def measure(results: Path) -> list[dict]:
    rows = []
    variants = sorted(p.name for p in (results / "variants").glob("*") if p.is_dir())
    for summary in sorted((results / "scores").glob("*/*.scores.json")):
        model, task = summary.parent.name, summary.name.removesuffix(".scores.json")
        standard = _cost(results, model, task, COMPARED)
        row = {"model": model, "task": task, "standard": standard, "pmi": {}}
        for name, folder in [("standard", results)] + [(v, results / "variants" / v) for v in variants]:
            pmi = _cost(folder, model, task, ("pmi",))
            if pmi is not None:
                row["pmi"][name] = pmi
        for variant in variants:
            cost = _cost(results / "variants" / variant, model, task, COMPARED)
            if cost is not None:
                row[variant] = _ratio(cost, standard)
        plain, rotations = _cost(results, model, task, ("mcf",)), _cost(results, model, task, ("mcf_rot",))
        if rotations is not None:
            row["mcf"], row["mcf_rot"] = plain, _ratio(rotations, plain)
        if len(row) > 4:
            rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    rows = measure(args.results)
    for row in rows:
        parts = [f"{row['model']:14} {row['task']:11} standard cf+mcf {row['standard']['tokens']:>6} tok"]
        for key in [k for k in row if k.startswith("var")]:
            parts.append(f"{key} {row[key]['tokens_x']:.2f}x tok {row[key]['time_x']:.2f}x time")
        if "mcf_rot" in row:
            rotations = row["mcf_rot"]
            parts.append(f"orders {rotations['tokens_x']:.2f}x tok {rotations['time_x']:.2f}x time of MCF")
        parts.append("pmi tok " + " ".join(f"{name} {cost['tokens']}" for name, cost in row["pmi"].items()))
        print(" | ".join(parts))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
