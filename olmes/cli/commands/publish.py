"""``olmes publish``: finished results (a workflow results folder or another store) -> the results store."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from olmes.core.outputs import CommandFiles, named
from olmes.requests.data import SOURCES
from olmes.store.blobs import LAYOUTS
from olmes.store.publish import publish

NAME = "publish"
HELP = "move finished results into the results store the leaderboard is built from (checked)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("models", nargs="*", help="model names to publish (default: every model found)")
    parser.add_argument(
        "--from",
        dest="origin",
        required=True,
        type=Path,
        help="a workflow results folder (e.g. results) or another results store to merge",
    )
    parser.add_argument(
        "--store", type=Path, default=Path("leaderboard"), help="the results store (default: leaderboard)"
    )
    parser.add_argument("--tasks", nargs="+", help="publish only these tasks (default: every task scored)")
    parser.add_argument(
        "--partial", action="store_true", help="accept partial results (a limit), labelled partial"
    )
    parser.add_argument("--replace", action="store_true", help="replace a model x task already in the store")
    parser.add_argument(
        "--robustness-only",
        action="store_true",
        help="publish only the robustness results (prompt variants, answer orders) of a model in the store",
    )
    parser.add_argument(
        "--source",
        choices=SOURCES,
        default="bundle",
        help="the data the canonical requests are made from, to check the results' requests against",
    )
    parser.add_argument(
        "--logprobs",
        choices=LAYOUTS,
        default="external",
        help="where the log-prob Parquet files go: the store's blobs/ folder, kept out of git and fetched "
        "with olmes fetch-logprobs (external, the default), or the model folder (in-store)",
    )


def files(args: argparse.Namespace) -> CommandFiles:
    """The results (or store) published from are only read: the store may be neither them nor in them."""
    return CommandFiles(reads=named("--from", args.origin), rewritten=named("--store", args.store))


def run(args: argparse.Namespace) -> int:
    lines = publish(
        args.origin,
        args.store,
        args.models or None,
        tasks=args.tasks,
        allow_partial=args.partial,
        replace=args.replace,
        data_source=args.source,
        robustness_only=args.robustness_only,
        logprobs=args.logprobs,
    )
    for line in lines:
        print(line, file=sys.stderr)
    return 0
