"""The OLMES paper's published numbers (v2), shipped as data in ``olmes/tables/paper_data/``.

The paper's results are *reported*, not computed here: no predictions, no standard errors. The
tables and the site show them beside the evaluated models, labeled, and the paper check compares an
evaluated model that regenerates a paper model cell by cell. ``paper_data/README.md`` says where the
numbers were read and how they were checked. Values are kept as the paper prints them (strings with
one decimal, a trailing dagger where MCF won); :func:`paper_value` turns one into a number.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from olmes.core.errors import OlmesError

PAPER_DATA = Path(__file__).with_name("paper_data")
PAPER_SOURCE = "OLMES paper (Gu et al., arXiv:2406.08446v2)"
PAPER_URL = "https://arxiv.org/abs/2406.08446v2"
DAGGER = "\u2020"


@cache
def paper_table(name: str) -> tuple[dict[str, str], ...]:
    """The rows of ``paper_data/<name>.csv`` as dicts of strings, in the file's order."""
    path = PAPER_DATA / f"{name}.csv"
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            return tuple(csv.DictReader(handle))
    except OSError as error:
        raise OlmesError(f"{path}: cannot read the paper's data ({error}); reinstall olmes") from error


@dataclass(frozen=True)
class PaperValue:
    """One printed cell: its value in percent and whether the paper marked it with a dagger."""

    value: float
    dagger: bool


def paper_value(text: str) -> PaperValue:
    """``"56.8†"`` -> PaperValue(56.8, True)."""
    dagger = text.endswith(DAGGER)
    try:
        return PaperValue(float(text.removesuffix(DAGGER)), dagger)
    except ValueError as error:
        raise OlmesError(f"paper data: {text!r} is not a number") from error


PAPER_MODELS: tuple[str, ...] = tuple(row["model"] for row in paper_table("models"))
