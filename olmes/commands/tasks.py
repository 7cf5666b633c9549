"""``olmes tasks``: list the OLMES tasks and their facts (dataset, split, normalization)."""

from __future__ import annotations

import argparse
import json

from olmes.tasks import TASKS

NAME = "tasks"
HELP = "list the OLMES tasks with their dataset, split, recommended normalization and pmi rows"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    rows = [
        {
            "task": task.key,
            "name": task.display_name,
            "dataset": task.hf_path + (f" ({task.hf_name})" if task.hf_name else ""),
            "split": task.split,
            "cf_normalization": task.recommended_norm,
            "pmi_rows": task.has_pmi,
        }
        for task in TASKS.values()
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    header = ("task", "dataset", "split", "cf_normalization", "pmi_rows")
    widths = [
        max(len(str(row[h])) for row in rows + [dict(zip(header, header, strict=True))]) for h in header
    ]
    for row in [dict(zip(header, header, strict=True))] + rows:
        print("  ".join(str(row[h]).ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
    return 0
