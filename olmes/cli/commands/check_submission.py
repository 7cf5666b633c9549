"""``olmes check-submission``: the paths a pull request changes, accepted or refused in one line, before
anything of it is fetched or run (olmes.store.submission; scripts/submission_check.sh runs it)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from olmes.core.outputs import CommandFiles
from olmes.store.submission import check_submission

NAME = "check-submission"
HELP = "check that a pull request changes only what a submission may: files of its model folders"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("base", help="the base branch's revision (the code that verifies)")
    parser.add_argument("pr", help="the pull request's revision")
    parser.add_argument(
        "--repo", type=Path, default=Path("."), help="a clone holding both revisions (default: here)"
    )
    parser.add_argument("--store", default="leaderboard", help="the store's folder in the repository")


def files(args: argparse.Namespace) -> CommandFiles:
    return CommandFiles()


def run(args: argparse.Namespace) -> int:
    accepted = check_submission(args.repo, args.base, args.pr, args.store)
    for line in accepted.lines():
        print(f"olmes: check-submission: {line}", file=sys.stderr)
    return 0
