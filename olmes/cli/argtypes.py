"""Argument types shared by the ``olmes`` subcommands."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from olmes.core.errors import OlmesError


def positive_int(text: str) -> int:
    """An instance count or limit: a whole number above zero."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of instances, got {value}")
    return value


MODEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
"""A model's name: a folder of the results and the store (the config schema's ``models`` keys alike)."""


def model_name(text: str) -> str:
    """A model name that is one plain folder name (no ``/``, no leading dot)."""
    if not MODEL_NAME.match(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a model name: letters, digits and . _ + - only, starting with a letter or digit"
        )
    return text


def add_scores_argument(parser: argparse.ArgumentParser) -> None:
    """``--scores`` (the summaries of ``olmes score``, files or folders to search) or ``--store``."""
    given = parser.add_mutually_exclusive_group(required=True)
    given.add_argument(
        "--scores",
        nargs="+",
        help="*.scores.json files written by olmes score, or directories to search for them",
    )
    given.add_argument(
        "--store",
        type=Path,
        help="a results store (olmes publish): its models' summaries, names and, for the site, its tasks",
    )


def store_score_paths(store: Path) -> list[Path]:
    """What ``--store`` gives the tables and the site: its models' score folders; one line (about the
    store, not ``--scores``) when it has none."""
    from olmes.store import score_paths

    paths = score_paths(store)
    if not paths:
        raise OlmesError(
            f"results store {store} has no published results yet; publish some first "
            f"(olmes publish --from results --store {store})"
        )
    return paths
