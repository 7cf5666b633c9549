"""``olmes export oe-eval``: a model's results in the run-folder layout of AI2's OLMES implementation."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from olmes.core.outputs import CommandFiles, named
from olmes.requests.data import SOURCES
from olmes.store.oe_eval import FORMATS, format_help

NAME = "export"
HELP = "write a model's results in the layout of AI2's OLMES implementation (oe-eval)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("format", choices=FORMATS, help=format_help("whose layout"))
    parser.add_argument("--model", required=True, help="the model (its name in the store or results folder)")
    parser.add_argument(
        "--from", dest="origin", type=Path, default=Path("leaderboard"),
        help="a results store or a workflow results folder (default: leaderboard)",
    )  # fmt: skip
    parser.add_argument(
        "--tasks", nargs="+",
        help="export only these tasks, OLMES v0.2 generative ones (drop, gsm8k, ...) included "
        "(default: every task scored)",
    )  # fmt: skip
    parser.add_argument("--output", type=Path, required=True, help="the folder to write (replaced whole)")
    parser.add_argument(
        "--source", choices=SOURCES, default="bundle", help="the data the canonical requests are made from"
    )


def files(args: argparse.Namespace) -> CommandFiles:
    return CommandFiles(reads=named("--from", args.origin), rewritten=named("--output", args.output))


def run(args: argparse.Namespace) -> int:
    from olmes.store.oe_eval.exporter import export_model

    for line in export_model(args.origin, args.model, args.output, args.tasks, args.source):
        print(line, file=sys.stderr)
    return 0
