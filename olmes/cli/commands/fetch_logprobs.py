"""``olmes fetch-logprobs``: a store's external log-prob files, fetched from file hosts and hash-checked."""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

from olmes.store import check_store
from olmes.store.fetch import fetch_logprobs

NAME = "fetch-logprobs"
HELP = "fetch the store's log-prob files kept outside git (blobs/) from file hosts, checked by SHA-256"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store", type=Path, default=Path("leaderboard"), help="the results store (default: leaderboard)"
    )
    parser.add_argument(
        "--host",
        action="append",
        default=[],
        help="a URL prefix (http://, https://, file://) or folder holding <sha256>.parquet files; tried "
        "before the store's logprob_hosts (store.json); repeatable",
    )
    parser.add_argument(
        "--model", action="append", dest="models", help="fetch only this model's files (repeatable)"
    )


def run(args: argparse.Namespace) -> int:
    store = check_store(args.store)
    say = functools.partial(print, file=sys.stderr)
    counts = fetch_logprobs(store, args.host, args.models, say)
    say(counts.line(store))
    return 1 if counts.missing else 0
