"""The site's charts as altair (Vega-Lite) specs; the pages render them with the shipped vega files.

Every function returns a plain dict (``chart.to_dict()``) with its data inlined, so a page needs no
request to draw it. Accuracies are plotted in percent.
"""

from __future__ import annotations

import altair as alt

FULL_RUN = "full standard"
PARTIAL_RUN = "partial (fewer instances)"
CF_COLOR = "#1f6f8b"
MCF_COLOR = "#d1495b"
FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif'

CONFIG = {
    "font": FONT,
    "axis": {"labelFontSize": 11, "titleFontSize": 12, "gridColor": "#e6e8eb", "domainColor": "#9aa1a9"},
    "header": {"labelFontSize": 13, "labelFontWeight": "bold", "titleFontSize": 0},
    "legend": {"labelFontSize": 12, "titleFontSize": 12, "orient": "top"},
    "view": {"stroke": "#d5d9de"},
}


def _formulation_scale() -> alt.Scale:
    return alt.Scale(domain=["CF", "MCF"], range=[CF_COLOR, MCF_COLOR])


def _long_rows(rows: list[dict]) -> list[dict]:
    """One row per model x task x formulation, accuracies in percent."""
    out = []
    for row in rows:
        for label, prefix in (("CF", "cf"), ("MCF", "mcf")):
            accuracy = row.get(f"{prefix}_accuracy")
            if accuracy is None:
                continue
            stderr = row.get(f"{prefix}_stderr") or 0.0
            out.append(
                {
                    "task": row["task_name"],
                    "model": row["display_name"],
                    "formulation": label,
                    "method": row["cf_method"].removeprefix("cf_") if prefix == "cf" else "mcf",
                    "accuracy": round(100 * accuracy, 2),
                    "low": round(100 * (accuracy - stderr), 2),
                    "high": round(100 * (accuracy + stderr), 2),
                    "partial": bool(row.get("partial")),
                    "training_tokens": row.get("training_tokens"),
                    "series": row.get("series") or "",
                    "checkpoint": row.get("checkpoint") or "",
                }
            )
    return out


def figure2_spec(
    rows: list[dict], model_order: list[str], task_order: list[str], chance: dict
) -> dict | None:
    """Figure 2: CF (recommended normalization) vs MCF per task, models left to right by strength.

    ``model_order`` lists display names weakest first; ``chance`` maps task display names to the
    accuracy of guessing (percent), drawn as a dashed rule. Partial runs (their accuracies are over
    fewer instances) are drawn too, as hollow triangles, faded, and named so in the tooltip.
    """
    data = _long_rows(rows)
    for row in data:
        row["run"] = PARTIAL_RUN if row["partial"] else FULL_RUN
    if not data:
        return None
    present = {row["model"] for row in data}
    order = [name for name in model_order if name in present]
    order += sorted(present - set(order))
    tasks = [name for name in task_order if any(row["task"] == name for row in data)]
    for row in data:
        row["chance"] = chance.get(row["task"])
    x = alt.X("model:N", sort=order, title=None, axis=alt.Axis(labelAngle=-40, labelLimit=110))
    tooltip = [
        alt.Tooltip("model:N", title="Model"),
        alt.Tooltip("formulation:N", title="Formulation"),
        alt.Tooltip("method:N", title="Scoring"),
        alt.Tooltip("run:N", title="Run"),
        alt.Tooltip("accuracy:Q", title="Accuracy (%)", format=".1f"),
        alt.Tooltip("low:Q", title="− 1 s.e.", format=".1f"),
        alt.Tooltip("high:Q", title="+ 1 s.e.", format=".1f"),
    ]
    color = alt.Color("formulation:N", scale=_formulation_scale(), title="Formulation")
    y = alt.Y("accuracy:Q", title="Accuracy (%)", scale=alt.Scale(zero=False, nice=True))
    chance_rule = alt.Chart().mark_rule(strokeDash=[4, 3], color="#8a929c").encode(y="mean(chance):Q")
    bars = (
        alt.Chart().mark_rule(strokeWidth=1.5, opacity=0.5).encode(x=x, y="low:Q", y2="high:Q", color=color)
    )
    lines = (
        alt.Chart()
        .mark_line(strokeWidth=2, opacity=0.85)
        .encode(x=x, y=y, color=color, detail="formulation:N")
    )
    runs = [run for run in (FULL_RUN, PARTIAL_RUN) if any(row["run"] == run for row in data)]
    shapes = {FULL_RUN: "circle", PARTIAL_RUN: "triangle-up"}
    shape = alt.Shape("run:N", scale=alt.Scale(domain=runs, range=[shapes[r] for r in runs]), title="Run")
    points = (
        alt.Chart()
        .mark_point(size=60, strokeWidth=1.5)
        .encode(
            x=x,
            y=y,
            color=color,
            shape=shape,
            fill=alt.condition(alt.datum.partial, alt.value("transparent"), color),
            opacity=alt.condition(alt.datum.partial, alt.value(0.6), alt.value(1.0)),
            tooltip=tooltip,
        )
    )
    layered = alt.layer(chance_rule, bars, lines, points, data=alt.Data(values=data)).properties(
        width=190, height=150
    )
    chart = layered.facet(
        facet=alt.Facet("task:N", sort=tasks, title=None), columns=min(5, max(1, len(tasks)))
    ).resolve_scale(y="independent")
    return _finish(chart)


def figure1_spec(rows: list[dict], task_order: list[str]) -> dict | None:
    """Figure 1: CF vs MCF accuracy over the training tokens of each declared checkpoint series."""
    data = [row for row in _long_rows(rows) if row["training_tokens"]]
    if not data:
        return None
    tasks = [name for name in task_order if any(row["task"] == name for row in data)]
    series = sorted({row["series"] for row in data})
    tooltip = [
        alt.Tooltip("series:N", title="Series"),
        alt.Tooltip("checkpoint:N", title="Checkpoint"),
        alt.Tooltip("model:N", title="Model"),
        alt.Tooltip("training_tokens:Q", title="Tokens", format=".3s"),
        alt.Tooltip("formulation:N", title="Formulation"),
        alt.Tooltip("accuracy:Q", title="Accuracy (%)", format=".1f"),
    ]
    base = alt.Chart().encode(
        x=alt.X("training_tokens:Q", title="Training tokens", axis=alt.Axis(format="~s")),
        y=alt.Y("accuracy:Q", title="Accuracy (%)", scale=alt.Scale(zero=False)),
        color=alt.Color("formulation:N", scale=_formulation_scale(), title="Formulation"),
        strokeDash=alt.StrokeDash(
            "series:N", title="Series", legend=None if len(series) < 2 else alt.Legend()
        ),
    )
    lines = base.mark_line(strokeWidth=2).encode(detail="series:N")
    points = base.mark_point(filled=True, size=45).encode(tooltip=tooltip)
    chart = (
        alt.layer(lines, points, data=alt.Data(values=data))
        .properties(width=190, height=150)
        .facet(facet=alt.Facet("task:N", sort=tasks, title=None), columns=min(5, max(1, len(tasks))))
        .resolve_scale(y="independent")
    )
    return _finish(chart)


def subjects_spec(rows: list[dict]) -> dict | None:
    """MMLU per-subject accuracy: one dot per model and subject, CF and MCF side by side.

    ``rows``: {subject, model, formulation ("CF"/"MCF"), accuracy (fraction)}.
    """
    if not rows:
        return None
    data = [{**row, "accuracy": round(100 * row["accuracy"], 2)} for row in rows]
    chart = (
        alt.Chart(alt.Data(values=data))
        .mark_point(filled=True, size=40, opacity=0.85)
        .encode(
            y=alt.Y("subject:N", title=None, sort="ascending", axis=alt.Axis(labelLimit=220)),
            x=alt.X("accuracy:Q", title="Accuracy (%)", scale=alt.Scale(domain=[0, 100])),
            color=alt.Color("model:N", title="Model"),
            tooltip=[
                alt.Tooltip("subject:N", title="Subject"),
                alt.Tooltip("model:N", title="Model"),
                alt.Tooltip("accuracy:Q", title="Accuracy (%)", format=".1f"),
            ],
        )
        .properties(width=260, height=alt.Step(14))
        .facet(column=alt.Column("formulation:N", title=None, sort=["CF", "MCF"]))
    )
    return _finish(chart)


def letter_bias_spec(rows: list[dict]) -> dict | None:
    """MCF letter bias: per model (rows) and task (columns), the share of predictions at each letter
    beside the share of gold answers there, over every answer order (the ``letter_bias`` figure data).
    An unbiased model's bars match; a model that always says C has one tall bar."""
    data = [
        {
            "model": row["display_name"],
            "task": row["task_name"],
            "letter": row["letter"],
            "series": series,
            "share": round(100 * row[key], 2),
        }  # fmt: skip
        for row in rows
        for series, key in (("predicted", "predicted"), ("gold", "gold"))
    ]
    if not data:
        return None
    chart = (
        alt.Chart(alt.Data(values=data))
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
        .facet(row=alt.Row("model:N", title=None), column=alt.Column("task:N", title=None))
    )
    return _finish(chart)


def _finish(chart) -> dict:
    return chart.configure(**CONFIG).to_dict()
