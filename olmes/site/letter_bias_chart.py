"""The Robustness page's MCF letter-bias chart: per model and task, where the model's MCF answers fall
(A, B, C...) beside where the gold answers are, over every answer order.

Each model's row is titled by its whole display name (never cut: :data:`~olmes.site.charts.NAME_LIMIT`),
written horizontally left of the row in lines of at most :data:`NAME_WIDTH` characters, and every row
is tall enough for the longest name's lines, so titles neither run into each other nor over the
plots, however many models and however long their names. Each task column has its own letters (PIQA:
A and B), not the union of every task's.
"""

from __future__ import annotations

import re

import altair as alt

from olmes.site.charts import MCF_COLOR, NAME_LIMIT, PickableChart, no_data, pickable

NAME_WIDTH = 32
"""The most characters in one line of a row's title (about 250 pixels of the header's bold 13 px)."""
LINE_HEIGHT = 16
"""Pixels between the lines of a row's title (its font is 13 px)."""
PLOT_HEIGHT = 110
"""A task's plot's height in pixels, unless the longest title needs more."""
_BREAK_AFTER = re.compile(r"(?<=[ /-])")
"""Where a name may break: after a space, a slash (``org/model``) or a hyphen."""


def name_lines(name: str, width: int = NAME_WIDTH) -> list[str]:
    """``name`` in lines of at most ``width`` characters, broken after a space, slash or hyphen, and a
    run of other characters longer than a line anywhere (filling the line it starts on); joined, the
    lines are ``name`` again (a space stays at the end of its line)."""
    lines = [""]
    for piece in _BREAK_AFTER.split(name):
        if lines[-1] and len(lines[-1]) + len(piece) > width >= len(piece):
            lines.append("")  # on a line of its own: it fits there whole
        while len(lines[-1]) + len(piece) > width:
            cut = width - len(lines[-1])
            lines[-1] += piece[:cut]
            piece = piece[cut:]
            lines.append("")
        lines[-1] += piece
    return lines


def _row_header() -> alt.Header:
    """Row titles written horizontally left of their row, from its top down (``row_title`` holds a
    name's lines joined by newlines). For a row header, vega's title anchor "end" is the row's top,
    and "left" is the only alignment that keeps a title beside the axis rather than a title's width
    away from it."""
    return alt.Header(
        labelExpr="split(datum.value, '\\n')",
        labelAngle=0,
        labelAlign="left",
        labelAnchor="end",
        labelBaseline="top",
        labelLineHeight=LINE_HEIGHT,
        labelLimit=NAME_LIMIT,
    )


def letter_bias_spec(rows: list[dict], ranking: list[str], top: int | None = None) -> PickableChart | None:
    """MCF letter bias: per model (rows, in the ``ranking``'s order: display names, strongest first)
    and task (columns), the share of predictions at each letter beside the share of gold answers
    there, over every answer order (the ``letter_bias`` figure data). An unbiased model's bars
    match; a model that always says C has one tall bar.

    The rows' height fits the longest title of every model, picked later or not, so a pick never
    adds a title taller than its row."""
    place = {name: position for position, name in enumerate(ranking)}
    titles = {row["display_name"]: name_lines(row["display_name"]) for row in rows}
    data = [
        {
            "model": row["display_name"],
            "row_title": "\n".join(titles[row["display_name"]]),  # one per name: its lines joined are it
            "task": row["task_name"],
            "letter": row["letter"],
            "series": series,
            "share": round(100 * row[key], 2),
            "place": place.get(row["display_name"], len(place)),
        }  # fmt: skip
        for row in rows
        for series, key in (("predicted", "predicted"), ("gold", "gold"))
    ]
    height = max([PLOT_HEIGHT, *(LINE_HEIGHT * len(lines) for lines in titles.values())])

    def draw():
        return (
            alt.Chart(no_data())
            .mark_bar()
            .encode(
                x=alt.X("letter:N", title=None, axis=alt.Axis(labelAngle=0)),
                xOffset=alt.XOffset("series:N", sort=["predicted", "gold"]),
                y=alt.Y("share:Q", title="Share (%)", scale=alt.Scale(domain=[0, 100])),
                color=alt.Color(
                    "series:N",
                    title=None,
                    scale=alt.Scale(domain=["predicted", "gold"], range=[MCF_COLOR, "#9aa1a9"]),
                ),
                tooltip=[
                    alt.Tooltip("model:N", title="Model"),
                    alt.Tooltip("task:N", title="Task"),
                    alt.Tooltip("letter:N", title="Letter"),
                    alt.Tooltip("series:N", title="Share of"),
                    alt.Tooltip("share:Q", title="Share (%)", format=".1f"),
                ],
            )
            .properties(width=150, height=height)
            .facet(
                row=alt.Row(
                    "row_title:N",
                    title=None,
                    sort=alt.EncodingSortField("place", op="min"),
                    header=_row_header(),
                ),
                column=alt.Column("task:N", title=None),
            )
            .resolve_scale(x="independent", xOffset="independent")  # each task its own letters
        )

    return pickable(data, "model", ranking, draw, top)
