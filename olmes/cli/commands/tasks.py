"""``olmes tasks``: list the OLMES tasks and their facts (dataset, split, instances, normalization), then
the OLMES v0.2 generative tasks (dataset, split, instances, shots, metric)."""

from __future__ import annotations

import argparse
import json

from olmes.core.generative import GENERATIVE_TASKS, GENERATIVE_VERSION
from olmes.core.tasks import TASKS

NAME = "tasks"
HELP = "list the OLMES tasks with their dataset, split, instances, recommended normalization and pmi rows"
TABLE_COLUMNS = ("task", "dataset", "split", "instances", "cf_normalization", "pmi_rows")
GENERATIVE_COLUMNS = ("task", "dataset", "split", "instances", "shots", "metric")
GENERATIVE_HEADING = GENERATIVE_VERSION + " generative"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--generative",
        action="store_true",
        help=f"with --json: the {GENERATIVE_HEADING} tasks instead of the ten multiple-choice ones",
    )


def run(args: argparse.Namespace) -> int:
    if args.json:
        print(json.dumps(generative_rows() if args.generative else task_rows(), indent=2))
        return 0
    print_task_tables()
    return 0


def task_rows() -> list[dict]:
    return [
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


def generative_rows() -> list[dict]:
    return [
        {
            "task": task.key,
            "name": task.display_name,
            "short_name": task.short_name,
            "version": GENERATIVE_VERSION,
            "dataset": task.dataset,
            "split": task.split,
            "split_size": task.split_size,
            "instances": task.standard_count,
            "shots": task.num_shots,
            "metric": task.primary_metric,
        }
        for task in GENERATIVE_TASKS.values()
    ]


def print_task_tables() -> None:
    """The ten tasks' table, then the generative tasks' under their heading (also ``olmes requests``)."""
    _print_table(task_rows(), TABLE_COLUMNS)
    print()
    print(GENERATIVE_HEADING)
    _print_table(generative_rows(), GENERATIVE_COLUMNS)


def _print_table(rows: list[dict], columns: tuple[str, ...]) -> None:
    table = [dict(zip(columns, columns, strict=True)), *rows]
    widths = [max(len(str(row[column])) for row in table) for column in columns]
    for row in table:
        print("  ".join(str(row[c]).ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip())
