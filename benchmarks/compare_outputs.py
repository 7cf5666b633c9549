"""Compare two output folders of benchmarks/same_outputs.sh (old code and new code) file by file.

    python benchmarks/compare_outputs.py OLD_OUT NEW_OUT [--old-tree T] [--new-tree T] [--json REPORT]
                                         [--show N] [--ignore GLOB ...]

Every file of both folders is one of:
- identical: the same bytes;
- identical after masking: a text file (gzip files are read decompressed) that is the same once each
  side's own paths are replaced by placeholders: its output folder (and `<OUT>.cache`, the harness's
  olmes cache) by `<OUT>`, its tree (read from `<OUT>/which.txt`'s `TREE=` line, or --old-tree /
  --new-tree) by `<TREE>`;
- parquet-metadata-only: Parquet files whose tables (schema without metadata, every value) are
  equal and whose schema metadata differs (the keys that differ are listed);
- differing: for JSON and JSON-lines files the key paths whose values differ (list indices and line
  numbers shown as `[]`), marked `volatile only` when every one ends in a timing or memory field
  (`wall_time_s`, `engine_time_s`, `load_time_s`, `peak_rss_bytes`, ...); for Parquet the columns
  whose values differ (rows and largest |delta|); for other text the first lines of a diff;
- only in OLD / only in NEW.

Exit status 0 when nothing differs but volatile fields, otherwise 1.
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import gzip
import json
import os
import re
import sys
from pathlib import Path

VOLATILE = {
    "wall_time_s",
    "engine_time_s",
    "load_time_s",
    "peak_rss_bytes",
    "seconds",
    "elapsed_s",
    "time_s",
    "duration_s",
    "tokens_per_s",
    "requests_per_s",
    "date",  # a reproduction report's date (the clock's, not SOURCE_DATE_EPOCH)
}
# Lines of logs and timing files that carry the clock: compared without their numbers.
TIMING_LINE = re.compile(
    r"(\d+(\.\d+)?\s*(s|ms|sec|seconds|it/s|s/it|tok/s|tokens/s|requests/s)\b)|(\d+(\.\d+)?(it|tok)/s)|"
    r"(\d{4}-\d{2}-\d{2}[ T]\d{2}:?\d{2}(:?\d{2}(\.\d+)?)?)|(\b\d+:\d{2}(:\d{2})?)|(\bin \d+(\.\d+)? ?s\b)",
)


def tree_of(out: Path) -> str | None:
    which = out / "which.txt"
    if which.is_file():
        for line in which.read_text(errors="replace").splitlines():
            if line.startswith("TREE="):
                return line[len("TREE=") :].strip()
    return None


class Side:
    def __init__(self, out: Path, tree: str | None):
        self.out = out
        # absolute paths only: a relative name would also mask unrelated text
        outs = {str(out.absolute()), str(out.resolve())}
        trees = [t for t in {tree, os.path.realpath(tree) if tree else None} if t and os.path.isabs(t)]
        # the longest first, so that a path inside another is masked as itself
        pairs = [(p + ".cache", "<OUT>.cache") for p in outs] + [(p, "<OUT>") for p in outs]
        pairs += [(t, "<TREE>") for t in trees]
        self.replacements = sorted(set(pairs), key=lambda pair: -len(pair[0]))

    def mask(self, text: str) -> str:
        for path, placeholder in self.replacements:
            text = text.replace(path, placeholder)
        return text


def files_of(root: Path, ignore: list[str]) -> dict[str, Path]:
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if any(fnmatch.fnmatch(rel, pattern) for pattern in ignore):
                continue
            found[rel] = path
    return found


def read_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    if path.suffix == ".gz":
        try:
            return gzip.decompress(data)
        except OSError:
            return data
    return data


def as_text(data: bytes) -> str | None:
    if b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def json_diff(a, b, path: str, out: list[str]) -> None:
    if type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        out.append(path or "<root>")
        return
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b), key=str):
            sub = f"{path}.{key}" if path else str(key)
            if key not in a:
                out.append(f"{sub} (only in NEW)")
            elif key not in b:
                out.append(f"{sub} (only in OLD)")
            else:
                json_diff(a[key], b[key], sub, out)
    elif isinstance(a, list):
        if len(a) != len(b):
            out.append(f"{path}[] (length {len(a)} vs {len(b)})")
        for x, y in zip(a, b, strict=False):
            json_diff(x, y, f"{path}[]", out)
    elif a != b:
        out.append(path or "<root>")


def leaf(key_path: str) -> str:
    key_path = key_path.split(" (")[0]
    return re.split(r"[.\[\]]+", key_path.rstrip("[]"))[-1]


def compare_json(text_a: str, text_b: str, lines: bool) -> list[str] | None:
    try:
        if lines:
            rows_a = [json.loads(line) for line in text_a.splitlines() if line.strip()]
            rows_b = [json.loads(line) for line in text_b.splitlines() if line.strip()]
        else:
            rows_a, rows_b = [json.loads(text_a)], [json.loads(text_b)]
    except ValueError:
        return None
    keys: list[str] = []
    if len(rows_a) != len(rows_b):
        keys.append(f"<lines> ({len(rows_a)} vs {len(rows_b)})")
    for a, b in zip(rows_a, rows_b, strict=False):
        json_diff(a, b, "[]" if lines else "", keys)
    if not keys and text_a != text_b:
        keys.append("<formatting only: same values, other bytes>")
    return list(dict.fromkeys(keys))


def compare_parquet(a: Path, b: Path) -> tuple[str, list[str]]:
    import pyarrow.parquet as pq

    try:
        ta, tb = pq.read_table(a), pq.read_table(b)
    except Exception as error:  # noqa: BLE001 - any unreadable file is reported as such
        return "differing", [f"unreadable: {error}"]
    notes = []
    if not ta.schema.equals(tb.schema, check_metadata=False):
        notes.append(
            f"schema: {ta.schema.names} / {ta.schema.types} vs {tb.schema.names} / {tb.schema.types}"
        )
        return "differing", notes
    if ta.num_rows != tb.num_rows:
        return "differing", [f"rows {ta.num_rows} vs {tb.num_rows}"]
    for name in ta.column_names:
        ca, cb = ta.column(name), tb.column(name)
        if ca.equals(cb):
            continue
        la, lb = ca.to_pylist(), cb.to_pylist()
        diff_rows = [
            i for i, (x, y) in enumerate(zip(la, lb, strict=True)) if x != y and not (x != x and y != y)
        ]
        if not diff_rows:
            continue
        deltas = [
            abs(la[i] - lb[i])
            for i in diff_rows
            if isinstance(la[i], (int, float)) and isinstance(lb[i], (int, float))
        ]
        extra = f", max |delta| {max(deltas):.3g}" if deltas else ""
        notes.append(f"column {name}: {len(diff_rows)} of {ta.num_rows} rows differ{extra}")
    meta_a = ta.schema.metadata or {}
    meta_b = tb.schema.metadata or {}
    if notes:
        return "differing", notes
    if meta_a != meta_b:
        keys = sorted(
            k.decode(errors="replace") for k in set(meta_a) | set(meta_b) if meta_a.get(k) != meta_b.get(k)
        )
        return "parquet-metadata-only", [f"schema metadata keys differ: {keys}"]
    return "identical-values", ["same tables, other bytes (encoding or row groups)"]


def compare_file(rel: str, a: Path, b: Path, old: Side, new: Side, show: int) -> tuple[str, list[str]]:
    raw_a, raw_b = a.read_bytes(), b.read_bytes()
    if raw_a == raw_b:
        return "identical", []
    if rel.endswith(".parquet"):
        return compare_parquet(a, b)
    data_a, data_b = read_bytes(a), read_bytes(b)
    text_a, text_b = as_text(data_a), as_text(data_b)
    if text_a is None or text_b is None:
        return "differing", [f"binary, {len(raw_a)} vs {len(raw_b)} bytes"]
    text_a, text_b = old.mask(text_a), new.mask(text_b)
    if text_a == text_b:
        return "identical after masking", []
    name = rel[:-3] if rel.endswith(".gz") else rel
    if name.endswith(".json") or name.endswith(".jsonl"):
        keys = compare_json(text_a, text_b, lines=name.endswith(".jsonl"))
        if keys is not None:
            volatile = bool(keys) and all(leaf(k) in VOLATILE for k in keys)
            return ("differing (volatile only)" if volatile else "differing"), keys

    # other text (logs, HTML, CSV): does it differ only in timings?
    def strip(text: str) -> str:
        # a progress bar's updates (carriage returns) count as its last state; numbers of time masked
        lines = [line.rstrip("\r").split("\r")[-1] for line in text.split("\n")]
        return TIMING_LINE.sub("<T>", "\n".join(lines))

    lines_a, lines_b = text_a.splitlines(), text_b.splitlines()
    diff = [
        line
        for line in difflib.unified_diff(lines_a, lines_b, "OLD", "NEW", n=0, lineterm="")
        if not line.startswith(("---", "+++"))
    ]
    kind = "differing (timings only)" if strip(text_a) == strip(text_b) else "differing"
    return kind, diff[:show] + ([f"... {len(diff) - show} more diff lines"] if len(diff) > show else [])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--old-tree", help="the old tree's path (default: OLD/which.txt's TREE=)")
    parser.add_argument("--new-tree", help="the new tree's path (default: NEW/which.txt's TREE=)")
    parser.add_argument("--ignore", nargs="*", default=[], help="globs of relative paths to leave out")
    parser.add_argument("--show", type=int, default=12, help="diff lines shown per differing text file")
    parser.add_argument("--json", type=Path, help="also write the full report as JSON")
    args = parser.parse_args(argv)

    old = Side(args.old, args.old_tree or tree_of(args.old))
    new = Side(args.new, args.new_tree or tree_of(args.new))
    files_a, files_b = files_of(args.old, args.ignore), files_of(args.new, args.ignore)
    report: dict[str, dict] = {}
    for rel in sorted(set(files_a) | set(files_b)):
        if rel not in files_b:
            report[rel] = {"kind": "only in OLD", "details": []}
        elif rel not in files_a:
            report[rel] = {"kind": "only in NEW", "details": []}
        else:
            kind, details = compare_file(rel, files_a[rel], files_b[rel], old, new, args.show)
            report[rel] = {"kind": kind, "details": details}

    counts: dict[str, int] = {}
    for entry in report.values():
        counts[entry["kind"]] = counts.get(entry["kind"], 0) + 1
    print(f"OLD {args.old} ({len(files_a)} files), NEW {args.new} ({len(files_b)} files)")
    print(f"masked: OLD {old.replacements}")
    print(f"        NEW {new.replacements}")
    for kind in sorted(counts):
        print(f"  {kind}: {counts[kind]}")
    for rel, entry in report.items():
        if entry["kind"] in ("identical", "identical after masking"):
            continue
        print(f"\n{entry['kind']}: {rel}")
        for line in entry["details"]:
            print(f"    {line}")
    if args.json:
        args.json.write_text(json.dumps({"counts": counts, "files": report}, indent=1) + "\n")
    fine = {"identical", "identical after masking", "differing (volatile only)", "differing (timings only)"}
    return 0 if set(counts) <= fine else 1


if __name__ == "__main__":
    sys.exit(main())
