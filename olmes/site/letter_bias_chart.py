"""The Robustness page's MCF letter-bias chart: per model and task, where the model's MCF answers fall
(A, B, C...) beside where the gold answers are, over every answer order."""

from __future__ import annotations

import altair as alt

from olmes.site.charts import MCF_COLOR, PickableChart, no_data, pickable


def letter_bias_spec(rows: list[dict], ranking: list[str], top: int | None = None) -> PickableChart | None:
    """MCF letter bias: per model (rows, in the ``ranking``'s order: display names, strongest first)
    and task (columns), the share of predictions at each letter beside the share of gold answers
    there, over every answer order (the ``letter_bias`` figure data). An unbiased model's bars
    match; a model that always says C has one tall bar."""
    place = {name: position for position, name in enumerate(ranking)}
    data = [
        {
            "model": row["display_name"],
            "task": row["task_name"],
            "letter": row["letter"],
            "series": series,
            "share": round(100 * row[key], 2),
            "place": place.get(row["display_name"], len(place)),
        }  # fmt: skip
        for row in rows
        for series, key in (("predicted", "predicted"), ("gold", "gold"))
    ]

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
            .properties(width=150, height=110)
            .facet(
                row=alt.Row("model:N", title=None, sort=alt.EncodingSortField("place", op="min")),
                column=alt.Column("task:N", title=None),
            )
        )

    return pickable(data, "model", ranking, draw, top)
