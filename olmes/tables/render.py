"""A table as displayed, and its three files: ``<key>.csv``, ``<key>.json`` and ``<key>.tex``.

A :class:`Table` holds rows of :class:`Cell`: the number behind a cell at full precision and the
text shown for it (percentages with one decimal, † where MCF won, ᵖ on a partial result, — where
there is no value). CSV and LaTeX write the text; the JSON writes the text (``rows``, ``groups``),
the structured ``records`` and the numbers (``values``, parallel to ``rows``), which the site sorts by.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from olmes import __version__
from olmes.core.atomic import write_text_atomic
from olmes.core.csvtext import csv_document, csv_text
from olmes.core.records import TABLE_FORMAT

DAGGER = "†"
PARTIAL_MARK = "ᵖ"
MISSING = "—"


@dataclass(frozen=True)
class Cell:
    """One table cell: its number (None for text or a missing value) and the text shown for it."""

    value: float | None
    display: str


def text_cell(text: str) -> Cell:
    return Cell(None, text)


def percent(value: float | None) -> str:
    return MISSING if value is None else f"{100 * value:.1f}"


def percent_cell(value: float | None, mark: str = "") -> Cell:
    """A fraction shown in percent with one decimal, then ``mark`` (none on a missing value)."""
    return Cell(value, percent(value) + (mark if value is not None else ""))


Rows = list[list[Cell]]


@dataclass
class Table:
    """A table as displayed (``header`` + row ``groups`` of cells) plus structured ``records`` for JSON.

    ``groups`` is a list of (label or None, rows); a labelled group is introduced by a rule and its
    label in LaTeX (CSV simply continues). ``align`` is the LaTeX column spec; ``text_columns`` the
    number of leading columns of text (names), the rest being numbers (alignment, sorting).
    ``header_groups`` (label, number of columns), covering every column, is a header row above
    ``latex_header`` in LaTeX (a task's name over its columns, as in the paper's layouts).
    ``reported_labels`` names the groups whose rows are, or are computed from, a paper's printed
    numbers (the site marks them and lets a reader hide them).
    """

    key: str
    title: str
    caption: str
    header: list[str]
    groups: list[tuple[str | None, Rows]]
    records: list[dict]
    align: str = ""
    latex_header: list[str] | None = None
    text_columns: int = 1
    header_groups: list[tuple[str, int]] | None = None
    reported_labels: tuple[str, ...] = ()

    @property
    def rows(self) -> Rows:
        return [row for _, rows in self.groups for row in rows]


def display_rows(rows: Rows) -> list[list[str]]:
    return [[cell.display for cell in row] for row in rows]


def value_rows(rows: Rows) -> list[list[float | None]]:
    return [[cell.value for cell in row] for row in rows]


def table_csv(table: Table) -> str:
    """The table as displayed; a cell with no number behind it is text (``olmes.core.csvtext``)."""
    rows = [
        [cell.display if cell.value is not None else csv_text(cell.display) for cell in row]
        for row in table.rows
    ]
    return csv_document([[csv_text(name) for name in table.header], *rows])


def table_json(table: Table) -> dict:
    return {
        "key": table.key,
        "title": table.title,
        "caption": table.caption,
        "header": table.header,
        "rows": display_rows(table.rows),
        "groups": [
            {"label": label, "rows": display_rows(rows), "reported": label in table.reported_labels}
            for label, rows in table.groups
        ],
        "records": table.records,
        "values": value_rows(table.rows),
        "text_columns": table.text_columns,
        "header_groups": table.header_groups,
    }


_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    DAGGER: r"$^{\dagger}$", PARTIAL_MARK: r"\textsuperscript{p}", MISSING: "--", "≥": r"$\geq$",
    "Δ": r"$\Delta$", "±": r"$\pm$", "<": r"\textless{}", ">": r"\textgreater{}",
}  # fmt: skip


def latex_escape(text: str) -> str:
    """Text safe in a LaTeX document (model names may hold _, &, %, ...)."""
    return str(text).translate(str.maketrans(_LATEX_SPECIALS))


def table_latex(table: Table) -> str:
    width = len(table.header)
    align = table.align or "l" * table.text_columns + "r" * (width - table.text_columns)
    lines = [
        f"% {table.title}. Written by olmes {__version__} (olmes tables); edit the inputs, not this file.",
        r"\begin{table}[ht]",
        r"\centering",
        r"\small",
        r"\setlength{\tabcolsep}{4pt}",
        rf"\caption{{{latex_escape(table.title)}. {latex_escape(table.caption)}}}",
        rf"\label{{tab:olmes-{table.key.replace('_', '-')}}}",
        rf"\begin{{tabular}}{{{align}}}",
        r"\toprule",
        *_latex_header_groups(table.header_groups or []),
        " & ".join(latex_escape(cell) for cell in table.latex_header or table.header) + r" \\",
        r"\midrule",
    ]
    for position, (label, rows) in enumerate(table.groups):
        if position > 0:
            lines.append(r"\midrule")
        if label is not None:
            lines.append(rf"\multicolumn{{{width}}}{{l}}{{\emph{{{latex_escape(label)}}}}} \\")
        lines += [" & ".join(latex_escape(cell) for cell in row) + r" \\" for row in display_rows(rows)]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def _latex_header_groups(groups: list[tuple[str, int]]) -> list[str]:
    """A header row of labels spanning their columns, each underlined by a \\cmidrule."""
    if not groups:
        return []
    cells, rules, first = [], [], 1
    for label, span in groups:
        text = latex_escape(label)
        cells.append(rf"\multicolumn{{{span}}}{{c}}{{{text}}}" if span > 1 else text)
        if label:
            rules.append(rf"\cmidrule(lr){{{first}-{first + span - 1}}}")
        first += span
    return [" & ".join(cells) + r" \\", " ".join(rules)]


def write_table(table: Table, out: Path) -> list[Path]:
    paths = [out / f"{table.key}.{ext}" for ext in ("csv", "json", "tex")]
    write_text_atomic(paths[0], table_csv(table))
    TABLE_FORMAT.write(paths[1], table_json(table))
    write_text_atomic(paths[2], table_latex(table))
    return paths
