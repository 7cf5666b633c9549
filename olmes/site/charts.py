"""The site's charts as altair (Vega-Lite) specs; the pages render them with the shipped vega files.

A chart of many models draws at first only the leaderboard's strongest :data:`TOP_MODELS` (by average
OLMES score); a reader adds any other with the page's picker. Each chart function returns a
:class:`PickableChart`: the spec, its data inlined (``data.values``, the drawn models' rows only, so
a page needs no request to draw it), and the rows of every other model, which the site writes to
``charts/<id>.js`` and a page loads only when its reader picks a model. The specs are made without
their data and the rows set afterwards: altair validates every value it is given, which takes
seconds for thousands of rows. Accuracies are plotted in percent.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import altair as alt

from olmes.core.methods import CF, MCF, MCF_METHOD, METHODS, Formulation, Method

TOP_MODELS = 12
"""How many models (by the leaderboard's order) a chart draws before its reader picks more."""
FULL_RUN = "full standard"
PARTIAL_RUN = "partial (fewer instances)"
REPORTED_RUN = "reported by the OLMES paper"
REPORTED_SUFFIX = " (reported)"
"""What a chart adds to a reported model's name: its numbers are the paper's, and an evaluated model
may bear the same name."""
FORMULATION_LABELS: dict[Formulation, str] = {CF: "CF", MCF: "MCF"}
"""How the charts and the tables of the pages name the two formulations."""
CF_COLOR = "#1f6f8b"
MCF_COLOR = "#d1495b"
NAME_LIMIT = 0
"""The label limit (pixels) of every axis and legend that shows model names: none. A cut name could
drop the qualifiers that say what was evaluated (``base Q4_K_M GGUF``) and name the original model."""
FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif'

CONFIG = {
    "font": FONT,
    "axis": {"labelFontSize": 11, "titleFontSize": 12, "gridColor": "#e6e8eb", "domainColor": "#9aa1a9"},
    "header": {"labelFontSize": 13, "labelFontWeight": "bold", "titleFontSize": 0},
    "legend": {"labelFontSize": 12, "titleFontSize": 12, "orient": "top"},
    "view": {"stroke": "#d5d9de"},
}


@dataclass(frozen=True)
class PickableChart:
    """A chart's spec, drawing the rows of its ``shown`` keys, and the rows of every other key.

    ``key`` is the row field a reader picks by (a model's display name; a series for a training chart);
    ``others`` maps each other key, in the leaderboard's order, to its rows as lists of the
    ``fields`` values (the key left out: it is the map's key); ``reported``: how many of the shown
    keys are a paper's reported models, always drawn; ``svg``, the spec drawn, is set by the site
    build (:func:`olmes.site.svg.static_svg`), which knows the chart's id."""

    spec: dict
    key: str
    shown: list[str]
    fields: list[str]
    others: dict[str, list[list]]
    reported: int = 0
    svg: str = ""

    @property
    def total(self) -> int:
        return len(self.shown) + len(self.others)

    @property
    def evaluated_shown(self) -> int:
        return len(self.shown) - self.reported

    def data_script(self, chart_id: str) -> str:
        """``charts/<chart_id>.js``: the other keys' rows, for the page's picker (a script, not a fetch:
        browsers refuse ``fetch`` on ``file://``)."""
        data = {"key": self.key, "fields": self.fields, "rows": self.others}
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        target = "(window.OLMES_CHART_DATA = window.OLMES_CHART_DATA || {})"
        return f"{target}[{json.dumps(chart_id)}] = {text};\n"


def pickable(
    values: list[dict],
    key: str,
    ranking: list[str],
    draw: Callable[[], alt.TopLevelMixin],
    top: int | None,
    reported: int = 0,
) -> PickableChart | None:
    """Split ``values`` (the chart's rows) into the first ``top`` (default :data:`TOP_MODELS`) keys by
    ``ranking`` (keys not in it follow, by name) and the others; ``draw`` makes the chart without data.
    ``reported``: how many of the first keys are reported models (:class:`PickableChart`)."""
    if not values:
        return None
    top = TOP_MODELS if top is None else top
    present = {row[key] for row in values}
    keys = [name for name in dict.fromkeys(ranking) if name in present] + sorted(present - set(ranking))
    shown = keys[:top]
    fields = [name for name in values[0] if name != key]
    others: dict[str, list[list]] = {name: [] for name in keys[top:]}
    for row in values:
        if row[key] in others:
            others[row[key]].append([row[name] for name in fields])
    spec = draw().configure(**CONFIG).to_dict()
    chosen = set(shown)
    spec["data"] = {"values": [row for row in values if row[key] in chosen]}
    return PickableChart(spec, key, shown, fields, others, reported)


def no_data() -> alt.Data:
    """The chart's data, set by :func:`pickable` once the spec is made."""
    return alt.Data(values=[])


def _formulation_scale() -> alt.Scale:
    return alt.Scale(domain=list(FORMULATION_LABELS.values()), range=[CF_COLOR, MCF_COLOR])


def _long_rows(rows: list[dict]) -> list[dict]:
    """One row per model x task x formulation, accuracies in percent."""
    out = []
    for row in rows:
        for formulation, label in FORMULATION_LABELS.items():
            accuracy = row.get(f"{formulation}_accuracy")
            if accuracy is None:
                continue
            stderr = row.get(f"{formulation}_stderr")
            method = METHODS[row["cf_method"]] if formulation == CF else MCF_METHOD
            reported = row.get("kind") == "reported"
            out.append(
                {
                    "task": row["task_name"],
                    "model": row["display_name"] + (REPORTED_SUFFIX if reported else ""),
                    "formulation": label,
                    "method": _scoring(method),
                    "accuracy": round(100 * accuracy, 2),
                    "low": None if stderr is None else round(100 * (accuracy - stderr), 2),
                    "high": None if stderr is None else round(100 * (accuracy + stderr), 2),
                    "partial": bool(row.get("partial")),
                    "reported": reported,
                }
            )
    return out


def _scoring(method: Method) -> str:
    """A method as a chart's tooltip names its scoring: CF by its normalization, MCF as itself."""
    return method.normalization or method.key


def figure2_spec(
    rows: list[dict], task_order: list[str], chance: dict, ranking: list[str], top: int | None = None
) -> PickableChart | None:
    """Figure 2: CF (recommended normalization) vs MCF per task, models left to right by strength.

    ``rows`` (the figure's data) come weakest first, the x order (each row's ``strength`` is its
    model's place there); ``ranking`` lists the evaluated models' display names strongest first: the
    first ``top`` of them are drawn, with every reported model (the paper's, as it prints them: named
    with :data:`REPORTED_SUFFIX`, drawn as squares, no error bars). ``chance`` maps task display names
    to the accuracy of guessing (percent), drawn as a dashed rule. Partial runs (their accuracies are
    over fewer instances) are drawn too, as hollow triangles, faded, and named so in the tooltip.
    """
    data = _long_rows(rows)
    order = list(dict.fromkeys(row["model"] for row in data))
    strength = {name: position for position, name in enumerate(order)}
    reported = list(dict.fromkeys(row["model"] for row in data if row["reported"]))
    for row in data:
        row["run"] = REPORTED_RUN if row["reported"] else PARTIAL_RUN if row["partial"] else FULL_RUN
        row["chance"] = chance.get(row["task"])
        row["strength"] = strength[row["model"]]
    tasks = [name for name in task_order if any(row["task"] == name for row in data)]
    runs = [run for run in (FULL_RUN, PARTIAL_RUN, REPORTED_RUN) if any(row["run"] == run for row in data)]

    def draw():
        sort = alt.EncodingSortField("strength", op="min")
        x = alt.X("model:N", sort=sort, title=None, axis=alt.Axis(labelAngle=-90, labelLimit=NAME_LIMIT))
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
            alt.Chart()
            .mark_rule(strokeWidth=1.5, opacity=0.5)
            .encode(x=x, y="low:Q", y2="high:Q", color=color)
        )
        lines = (
            alt.Chart()
            .mark_line(strokeWidth=2, opacity=0.85)
            .encode(x=x, y=y, color=color, detail="formulation:N")
        )
        shapes = {FULL_RUN: "circle", PARTIAL_RUN: "triangle-up", REPORTED_RUN: "square"}
        shape = alt.Shape(
            "run:N",
            scale=alt.Scale(domain=runs, range=[shapes[r] for r in runs]),
            title="Run",
            legend=alt.Legend(labelLimit=NAME_LIMIT),
        )
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
        layered = alt.layer(chance_rule, bars, lines, points, data=no_data()).properties(
            width=190, height=150
        )
        return layered.facet(
            facet=alt.Facet("task:N", sort=tasks, title=None), columns=min(5, max(1, len(tasks)))
        ).resolve_scale(y="independent")

    drawn = TOP_MODELS if top is None else top
    return pickable(data, "model", reported + ranking, draw, len(reported) + drawn, reported=len(reported))


def subjects_spec(rows: list[dict], ranking: list[str], top: int | None = None) -> PickableChart | None:
    """Per-subject accuracy (MMLU): one dot per model and subject, CF and MCF side by side.

    ``rows``: {subject, model, formulation ("CF"/"MCF"), accuracy (fraction)}; ``ranking``: display
    names, strongest first.
    """
    data = [{**row, "accuracy": round(100 * row["accuracy"], 2)} for row in rows]

    def draw():
        return (
            alt.Chart(no_data())
            .mark_point(filled=True, size=40, opacity=0.85)
            .encode(
                y=alt.Y("subject:N", title=None, sort="ascending", axis=alt.Axis(labelLimit=220)),
                x=alt.X("accuracy:Q", title="Accuracy (%)", scale=alt.Scale(domain=[0, 100])),
                color=alt.Color(
                    "model:N",
                    title="Model",
                    scale=alt.Scale(scheme="category20"),
                    legend=alt.Legend(labelLimit=NAME_LIMIT, columns=2),  # whole names: not in one row
                ),
                tooltip=[
                    alt.Tooltip("subject:N", title="Subject"),
                    alt.Tooltip("model:N", title="Model"),
                    alt.Tooltip("accuracy:Q", title="Accuracy (%)", format=".1f"),
                ],
            )
            .properties(width=260, height=alt.Step(14))
            .facet(column=alt.Column("formulation:N", title=None, sort=list(FORMULATION_LABELS.values())))
        )

    return pickable(data, "model", ranking, draw, top)
