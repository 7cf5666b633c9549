"""``olmes tasks``: list the OLMES tasks and their facts (dataset, split, instances, normalization)."""

from __future__ import annotations

import argparse
import json

from olmes.core.tasks import TASKS

NAME = "tasks"
HELP = "list the OLMES tasks with their dataset, split, instances, recommended normalization and pmi rows"
TABLE_COLUMNS = ("task", "dataset", "split", "instances", "cf_normalization", "pmi_rows")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    rows = [
        {
            "task": task.key,
            "name": task.display_name,
            "short_name": task.short_name,
            "dataset": task.dataset,
            "split": task.split,
            "split_size": task.split_size,
            "instances": task.standard_count,
            "subjects": len(task.subjects),
            "cf_normalization": task.recommended_norm,
            "pmi_rows": task.has_pmi,
        }
        for task in TASKS.values()
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    table = [dict(zip(TABLE_COLUMNS, TABLE_COLUMNS, strict=True)), *rows]
    widths = [max(len(str(row[column])) for row in table) for column in TABLE_COLUMNS]
    for row in table:
        print("  ".join(str(row[c]).ljust(w) for c, w in zip(TABLE_COLUMNS, widths, strict=True)).rstrip())
    return 0
