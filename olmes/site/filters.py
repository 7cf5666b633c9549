"""The templates' filters: how a number, a table cell or a chart spec is written into a page.

Every filter returns text that is safe where the templates put it: ``marks`` escapes before it adds
markup, ``json_script`` escapes what would end a ``<script>`` element. Sortable cells carry their
number in ``data-sort`` (``sort_key``), taken from the value behind the cell, never from its text.
``pct`` is :func:`olmes.tables.render.percent`, so a page shows a fraction exactly as the tables do.
"""

from __future__ import annotations

import json

from markupsafe import Markup, escape

from olmes.tables.render import DAGGER, PARTIAL_MARK, Cell, percent


def sort_key(value: float | None) -> str:
    """What a sortable cell sorts by: its number (an int as is, a float to 6 decimals), or empty."""
    if value is None:
        return ""
    return str(value) if isinstance(value, int) else f"{value:.6f}"


def marks(text: str) -> Markup:
    """Escape a table cell, then style its dagger and partial marks."""
    html = str(escape(text))
    html = html.replace(DAGGER, f'<span class="dagger" title="score from MCF">{DAGGER}</span>')
    return Markup(
        html.replace(PARTIAL_MARK, f'<span class="pmark" title="partial result">{PARTIAL_MARK}</span>')
    )


def json_script(data) -> Markup:
    """JSON safe inside ``<script type="application/json">``: no ``<``, ``>`` or ``&`` survive."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for char, code in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, code)
    return Markup(text)


def cell_groups(table: dict) -> list[tuple[str | None, list[list[Cell]], bool]]:
    """A table of ``olmes tables`` (its JSON) as (label, rows of cells, reported): each shown text with
    the value behind it (``values`` is parallel to the rows of all groups, in order), and whether the
    group holds a paper's reported numbers."""
    values = iter(table["values"])
    groups = []
    for group in table["groups"]:
        rows = [[Cell(*pair) for pair in zip(next(values), row, strict=True)] for row in group["rows"]]
        groups.append((group["label"], rows, group["reported"]))
    return groups


def lookup(key: str, mapping: dict):
    """``mapping[key]``: a name looked up in a mapping of the page's view (``names|map("lookup", ...)``)."""
    return mapping[key]


FILTERS = {
    "pct": percent,
    "sort_key": sort_key,
    "marks": marks,
    "json_script": json_script,
    "cell_groups": cell_groups,
    "lookup": lookup,
}
