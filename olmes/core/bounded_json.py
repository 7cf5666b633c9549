"""JSON parsed with a bound on its nesting: a text nested deeper than any olmes file is refused in one line.

Why: ``json.loads`` descends once per level of nesting, so a file of 100,000 ``[`` ends in a
RecursionError raised deep inside the decoder (a traceback, not a message), and a text nested a few
hundred levels parses but can break whatever walks or writes it again. No file olmes reads nests
deeper than 7 levels (score summaries, run records, tables, site manifests, request and instance
lines, oe-eval's metrics, requests and predictions files: ``tests/test_hardening.py`` measures the
committed ones), so :data:`MAX_DEPTH` leaves a wide margin.

The depth is checked without a second parse: a text with no more than :data:`MAX_DEPTH` brackets
(``str.count``, in C) cannot nest deeper, which is every JSON line of a request, instance or
predictions file; a longer document's brackets outside its strings are counted once it has parsed
(the text is then valid JSON, so the scan is linear). A text deeper than the interpreter's recursion
limit never parses: its RecursionError is the same refusal.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

from olmes.core.errors import OlmesError

MAX_DEPTH = 64
"""The deepest nesting of arrays and objects a JSON text olmes reads may have."""

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)  # one JSON string, escapes and all
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def parse_json(text: str, where: str) -> Any:
    """``json.loads(text)``, refused in one line naming ``where`` (a file, ``file:line``) when the text
    nests deeper than :data:`MAX_DEPTH`. A ValueError (not JSON at all) is left to the caller, which
    says what its file should be."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise _too_deep(where) from None
    if text.count("[") + text.count("{") > MAX_DEPTH and nesting_depth(text) > MAX_DEPTH:
        raise _too_deep(where)
    return value


def nesting_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in a valid JSON ``text`` (brackets inside strings
    do not count)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(_STEP[bracket] for bracket in brackets), default=0)


def _too_deep(where: str) -> OlmesError:
    return OlmesError(f"{where}: nested deeper than {MAX_DEPTH} levels; not an olmes file")
