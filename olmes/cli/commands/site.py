"""``olmes site``: score summaries, the tables of ``olmes tables`` and requests -> the static leaderboard
site. It formats the tables it is given and computes none: ``--tables`` is required."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from olmes import store
from olmes.cli.argtypes import add_scores_argument, store_score_paths
from olmes.core.errors import OlmesError
from olmes.core.outputs import CommandFiles, named
from olmes.site.build import build_site

NAME = "site"
HELP = "build the static leaderboard site (HTML, works from disk and on GitHub Pages)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_scores_argument(parser)
    parser.add_argument(
        "--tables",
        type=Path,
        metavar="DIR",
        help="required: the folder olmes tables wrote from the same --scores or --store (the site formats "
        "these tables and computes none)",
    )
    parser.add_argument(
        "--requests",
        nargs="*",
        default=[],
        help="request and instance JSONL files of olmes requests, or directories holding them",
    )
    parser.add_argument(
        "--models", type=Path, help="models file (YAML/JSON): display names, order, checkpoint series"
    )
    parser.add_argument(
        "--reproduction", nargs="+", default=[], help="reports of olmes reproduce to show (Reproduction page)"
    )
    parser.add_argument(
        "--generative",
        nargs="+",
        metavar="PATH",
        help="where the OLMES v0.2 generative summaries of the tables' --generative are now (files or "
        "directories; by default the paths the tables' index.json records): the generative task pages' "
        "instance browser reads their *.instances.parquet",
    )
    parser.add_argument("--title", default="OLMES leaderboard", help="site title shown in every page header")
    parser.add_argument(
        "--out", required=True, type=Path, help="output folder, replaced as a whole (e.g. site)"
    )


def files(args: argparse.Namespace) -> CommandFiles:
    """Every input stays outside --out, which is replaced as a whole."""
    return CommandFiles(
        reads=[
            *named("--scores", args.scores), *named("--store", args.store), *named("--tables", args.tables),
            *named("--requests", args.requests), *named("--models", args.models),
            *named("--reproduction", args.reproduction), *named("--generative", args.generative),
        ],
        rewritten=named("--out", args.out),
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    scores, requests, models = args.scores, args.requests, args.models
    if args.store is not None:
        scores = store_score_paths(args.store)
        requests = [*store.task_paths(args.store), *requests]
        models = models or store.model_infos(args.store)
    if args.tables is None:
        source = f"--store {args.store}" if args.store is not None else "--scores ..."
        raise OlmesError(
            f"olmes site needs the tables it shows: run `olmes tables {source} --out DIR` first, "
            "then pass --tables DIR"
        )
    built = build_site(
        scores, args.out, args.tables, requests, models, args.title, args.reproduction, args.generative
    )
    pages = sum(1 for path in built.files if path.suffix == ".html")
    reused = f" ({len(built.reused)} model data files reused from the previous site)" if built.reused else ""
    print(f"{pages} pages, {len(built.files)} files{reused} -> {args.out}/index.html", file=sys.stderr)
    return 0
