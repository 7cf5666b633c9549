"""``olmes requests``: write a task's OLMES requests (CF or MCF) as JSON lines."""

from __future__ import annotations

import argparse
import sys

from olmes.argtypes import positive_int
from olmes.data import SOURCES
from olmes.requests import build_requests, write_jsonl
from olmes.tasks import FORMULATIONS

NAME = "requests"
HELP = "write the standard's requests of one task and formulation as JSONL"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task", help="task key (see `olmes tasks`)")
    parser.add_argument("--formulation", required=True, choices=FORMULATIONS)
    parser.add_argument("--limit", type=positive_int, help="keep the first N standardized instances")
    parser.add_argument("--source", choices=SOURCES, default="bundle", help="where data comes from")
    parser.add_argument(
        "--pmi-everywhere",
        action="store_true",
        help="add unconditional (pmi) rows to CF even for tasks whose reference has none",
    )
    parser.add_argument("--output", required=True, help="JSONL file to write")


def run(args: argparse.Namespace) -> int:
    rows = build_requests(args.task, args.formulation, args.limit, args.source, args.pmi_everywhere)
    write_jsonl(rows, args.output)
    instances = len({row["instance_index"] for row in rows})
    print(
        f"{args.task} {args.formulation}: {len(rows)} requests for {instances} instances -> {args.output}",
        file=sys.stderr,
    )
    return 0
