"""``olmes verify``: a results store at rest, checked (olmes.store.verify); exit status 1 on any problem."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from olmes.core.atomic import write_text_atomic
from olmes.core.outputs import CommandFiles, named
from olmes.requests.data import SOURCES
from olmes.store.pr_summary import summary_markdown
from olmes.store.revision import changes
from olmes.store.verify import verify_store

NAME = "verify"
HELP = "check a results store at rest: hashes, requests, fingerprints, every score recomputed, labels"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "store",
        nargs="?",
        type=Path,
        default=Path("leaderboard"),
        help="the results store (default: leaderboard)",
    )
    parser.add_argument(
        "--base",
        metavar="REV",
        help="a git revision of the store's repository: check only the models whose files differ from it, "
        "and print what changed (models added, replaced, removed)",
    )
    parser.add_argument(
        "--summary",
        type=Path,
        metavar="FILE",
        help="also write a Markdown report to FILE (e.g. $GITHUB_STEP_SUMMARY): the verdict and, with "
        "--base, each added or replaced model's scores, flags and partial labels",
    )
    parser.add_argument(
        "--no-logprobs",
        action="store_true",
        help="check results whose external log-prob files are not here without them (a note each), "
        "instead of reporting them as a problem",
    )
    parser.add_argument(
        "--source",
        choices=SOURCES,
        default="bundle",
        help="the data the canonical requests are made from, to check the store's requests against",
    )


def files(args: argparse.Namespace) -> CommandFiles:
    return CommandFiles(
        reads=named("store", args.store),
        writes=named("--summary", args.summary),
        read_only=named("store", args.store),
    )


def run(args: argparse.Namespace) -> int:
    diff = changes(args.store, args.base) if args.base else None
    models = None if diff is None else [*diff.added, *diff.replaced]
    found = verify_store(args.store, models, logprobs=not args.no_logprobs, data_source=args.source)
    for line in diff.lines() if diff else []:
        print(line, file=sys.stderr)
    for problem in found.problems:
        print(problem.line(), file=sys.stderr)
    for note in found.notes:
        print(f"olmes: verify: note: {note}", file=sys.stderr)
    print(found.summary_line(args.store), file=sys.stderr)
    if args.summary is not None:
        write_text_atomic(args.summary, summary_markdown(args.store, found, diff))
    return 1 if found.problems else 0
