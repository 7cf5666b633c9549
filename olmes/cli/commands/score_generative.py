"""``olmes score-generative``: one model x generative task's generations -> per-instance metrics and a
summary (:mod:`olmes.scoring.generative_score`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from olmes.cli.argtypes import positive_int
from olmes.core.generative import GENERATIVE_TASKS
from olmes.core.outputs import CommandFiles, named

NAME = "score-generative"
HELP = (
    "score one model on one OLMES v0.2 generative task from its generations (F1/exact match, bits per byte)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task", help=f"generative task key: {', '.join(GENERATIVE_TASKS)}")
    parser.add_argument("--model-name", required=True, help="the model's label in scores and tables")
    parser.add_argument("--requests", required=True, type=Path, help="the task's generation request file")
    parser.add_argument("--generations", required=True, type=Path, help="its generations (olmes generate)")
    parser.add_argument(
        "--summary",
        required=True,
        type=Path,
        help="summary JSON to write (<task>.generative.json; <task>.instances.parquet goes beside it)",
    )
    parser.add_argument(
        "--limit", type=positive_int, help="the instance limit the run used (marks the result partial)"
    )


def files(args: argparse.Namespace) -> CommandFiles:
    from olmes.scoring.generative_score import INSTANCES_SUFFIX

    instances = args.summary.with_name(f"{args.task}{INSTANCES_SUFFIX}")
    return CommandFiles(
        reads=[*named("--requests", args.requests), *named("--generations", args.generations)],
        writes=[*named("--summary", args.summary), *named("the per-instance file", instances)],
    )


def run(args: argparse.Namespace) -> int:
    from olmes.scoring.generative_score import score_generative

    summary = score_generative(
        args.task, args.model_name, args.requests, args.generations, args.summary, limit=args.limit
    )
    primary = summary["metrics"][summary["primary_metric"]]
    partial = " (partial: " + "; ".join(summary["partial_reasons"]) + ")" if summary["partial"] else ""
    print(
        f"olmes: {args.model_name} on {summary['display_name']} ({summary['version']}): "
        f"{summary['primary_metric']} {100 * primary['value']:.1f} over {summary['n_instances']} instances, "
        f"{summary['bits_per_byte']['value']:.3f} bits per byte{partial} -> {args.summary}",
        file=sys.stderr,
    )
    return 0
