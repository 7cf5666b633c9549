"""``olmes upgrade``: a results store's documents rewritten in this olmes's formats (olmes.store.upgrade)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

NAME = "upgrade"
HELP = "rewrite a results store's documents in this olmes's formats (every reader already reads older ones)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("store", type=Path, help="the results store (a folder with store.json)")


def run(args: argparse.Namespace) -> int:
    from olmes.store.upgrade import upgrade_store

    print(f"olmes upgrade: {args.store}: {upgrade_store(args.store).summary()}", file=sys.stderr)
    return 0
