"""Argument types shared by the ``olmes`` subcommands."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """An instance count or limit: a whole number above zero."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of instances, got {value}")
    return value
