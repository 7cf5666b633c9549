"""Compare the outputs of two workflow runs (e.g. before and after a restructure) file by file.

    python scripts/compare_runs.py BEFORE/results AFTER/results

Log-probs are compared by request content (CF rows, pmi rows, MCF rows, whichever file holds them),
predictions as frames, score summaries key by key (``inputs`` and ``predictions`` name files and
hashes, so they are listed apart), tables byte by byte (CSV, LaTeX) and as JSON (the index's list of
input summaries and their hashes apart). Prints one line per
kind and every difference; exits 1 if anything but the listed provenance keys differs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

PROVENANCE_KEYS = ("inputs", "predictions")  # file names and hashes, not results
INDEX_PROVENANCE = "inputs"  # tables/index.json: the SHA-256 of each summary the tables were built from
LOGPROB_KEY = ["task", "instance_index", "choice", "unconditional"]
LOGPROB_VALUES = ["sum_logprob", "num_tokens", "num_chars", "is_greedy", "label", "native_id"]


def logprob_rows(folder: Path) -> pd.DataFrame:
    """Every log-prob row of every model x task, whichever request file it came from."""
    frames = []
    for path in sorted(folder.glob("logprobs/*/*.parquet")):
        frame = pd.read_parquet(path)
        frame["model"] = path.parent.name
        frames.append(frame[["model", *LOGPROB_KEY, *LOGPROB_VALUES]])
    return pd.concat(frames).sort_values(["model", *LOGPROB_KEY]).reset_index(drop=True)


def compare_logprobs(before: Path, after: Path) -> list[str]:
    a, b = logprob_rows(before), logprob_rows(after)
    if len(a) != len(b):
        return [f"log-prob rows: {len(a)} before, {len(b)} after"]
    try:
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    except AssertionError as error:
        return [f"log-probs differ: {str(error).splitlines()[0]}"]
    return []


def compare_predictions(before: Path, after: Path) -> list[str]:
    problems = []
    for path in sorted(before.glob("scores/*/*.predictions.parquet")):
        other = after / path.relative_to(before)
        try:
            pd.testing.assert_frame_equal(pd.read_parquet(path), pd.read_parquet(other), check_exact=True)
        except (AssertionError, FileNotFoundError) as error:
            problems.append(f"{path.relative_to(before)}: {str(error).splitlines()[0]}")
    return problems


def compare_summaries(before: Path, after: Path) -> tuple[list[str], set[str]]:
    problems, provenance = [], set()
    for path in sorted(before.glob("scores/*/*.scores.json")):
        a = json.loads(path.read_text())
        b = json.loads((after / path.relative_to(before)).read_text())
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                if key in PROVENANCE_KEYS:
                    provenance.add(key)
                else:
                    problems.append(f"{path.relative_to(before)}: {key} differs")
    return problems, provenance


def compare_tables(before: Path, after: Path) -> tuple[list[str], set[str]]:
    problems, added = [], set()
    for path in sorted((before / "tables").iterdir()):
        other = after / "tables" / path.name
        if not other.exists():
            problems.append(f"tables/{path.name}: missing after")
        elif path.suffix != ".json":
            if path.read_bytes() != other.read_bytes():
                problems.append(f"tables/{path.name}: bytes differ")
        else:
            a, b = json.loads(path.read_text()), json.loads(other.read_text())
            if path.name == "index.json":
                a.pop(INDEX_PROVENANCE), b.pop(INDEX_PROVENANCE)
            added |= _added_keys(a, b, path.name, problems)
    return problems, added


def _added_keys(a, b, where: str, problems: list[str]) -> set[str]:
    """Names of keys present only after, at any depth; every other difference is a problem."""
    if isinstance(a, dict) and isinstance(b, dict):
        added = set(b) - set(a)
        problems += [f"{where}: key {key} missing after" for key in set(a) - set(b)]
        for key in set(a) & set(b):
            added |= _added_keys(a[key], b[key], where, problems)
        return added
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        added = set()
        for x, y in zip(a, b, strict=True):
            added |= _added_keys(x, y, where, problems)
        return added
    if a != b:
        problems.append(f"{where}: values differ")
    return set()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args()
    problems = compare_logprobs(args.before, args.after)
    print(f"log-probs: {len(logprob_rows(args.before))} rows, {'identical' if not problems else 'DIFFER'}")
    found = compare_predictions(args.before, args.after)
    count = len(list(args.before.glob("scores/*/*.predictions.parquet")))
    print(f"predictions: {count} files, {'identical' if not found else 'DIFFER'}")
    problems += found
    found, provenance = compare_summaries(args.before, args.after)
    count = len(list(args.before.glob("scores/*/*.scores.json")))
    detail = f" (provenance keys that differ: {', '.join(sorted(provenance))})" if provenance else ""
    print(f"score summaries: {count} files, {'identical' if not found else 'DIFFER'}{detail}")
    problems += found
    found, added = compare_tables(args.before, args.after)
    count = len(list((args.before / "tables").iterdir()))
    detail = f" (keys added: {', '.join(sorted(added))})" if added else ""
    print(f"tables: {count} files, {'identical' if not found else 'DIFFER'}{detail}")
    problems += found
    for problem in problems:
        print(f"  {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
