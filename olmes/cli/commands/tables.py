"""``olmes tables``: score summaries -> the paper's tables, figure data and statistics."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from olmes import __version__, store
from olmes.cli.argtypes import add_scores_argument, positive_int, store_score_paths
from olmes.core.atomic import write_text_atomic
from olmes.core.outputs import CommandFiles, check_own_folder, named
from olmes.tables.bootstrap import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
from olmes.tables.build import build_tables
from olmes.tables.generative import load_generative
from olmes.tables.results import load_scores, read_models_file

NAME = "tables"
HELP = "build the paper's tables (CSV, JSON, LaTeX) and figure data from score summaries"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_scores_argument(parser)
    parser.add_argument("--out", required=True, type=Path, help="output directory (e.g. results/tables)")
    parser.add_argument(
        "--models", type=Path, help="models file (YAML/JSON): display names, order, checkpoint series"
    )
    parser.add_argument("--seed", type=int, default=BOOTSTRAP_SEED, help="bootstrap seed")
    parser.add_argument(
        "--resamples", type=positive_int, default=BOOTSTRAP_RESAMPLES, help="bootstrap resamples"
    )
    parser.add_argument(
        "--reported",
        action="store_true",
        help="add the OLMES paper's models as reported rows: its 40 of Table 13 to the leaderboard, its 15 "
        "of Tables 4-12 to Figure 2 and Tables 3, 6, 7 and 9-12",
    )
    parser.add_argument(
        "--generative",
        nargs="+",
        metavar="PATH",
        help="the OLMES v0.2 generative tasks' summaries of olmes score-generative (*.generative.json, "
        "each with its *.instances.parquet beside it), or directories to search for them: adds the table "
        "generative_scores (without it, every file is as before; with --store, the store's generative "
        "results are read without it)",
    )


TABLES_MARKER = ".olmes-tables"
"""Marks a folder written by olmes tables (besides index.json, which the workflow removes before a rerun)."""


def files(args: argparse.Namespace) -> CommandFiles:
    return CommandFiles(
        reads=[
            *named("--scores", args.scores),
            *named("--store", args.store),
            *named("--models", args.models),
            *named("--generative", args.generative),
        ],
        folders=named("--out", args.out),
    )


def run(args: argparse.Namespace) -> int:
    # the same rule as olmes site --out: never write into a folder of other files (same names are replaced)
    check_own_folder(args.out, (TABLES_MARKER, "index.json"), "an olmes tables folder")
    if args.store is not None:
        listed = read_models_file(args.models) if args.models else store.model_infos(args.store)
        scores = load_scores(store_score_paths(args.store), listed)
    else:
        listed = read_models_file(args.models) if args.models else []
        scores = load_scores(args.scores, listed)
    given = args.generative
    if given is None and args.store is not None:  # a store's generative results come with it
        given = store.generative_paths(args.store) or None
    generative = None if given is None else load_generative(given, listed)
    write_text_atomic(args.out / TABLES_MARKER, f"written by olmes {__version__}\n")
    written = build_tables(scores, args.out, args.resamples, args.seed, args.reported, generative)
    models, tasks = len(scores.models), len(scores.tasks)
    print(f"{len(written)} files for {models} model(s) x {tasks} task(s) -> {args.out}", file=sys.stderr)
    return 0
