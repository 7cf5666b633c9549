"""The charts of a training series' page (altair, Vega-Lite), drawn from the tables' training files.

Both charts draw a series' checkpoints against training tokens on a log axis, each measure a line with
its 95% interval as a band (the tables' ``training_series``; a point per checkpoint, with its numbers in
a tooltip, up to :data:`POINTS_UP_TO` checkpoints), the task's chance accuracy as a dashed rule, and
where MCF overtakes CF for good (``training_transitions``): a rule at its tokens over its 95% interval
as a shaded span or, where MCF is not yet ahead for good, "not yet" in the plot's corner (its tooltip
gives the last checkpoint's MCF - CF gap, which the page's table shows too). :func:`series_spec` draws
every measure, a row per task (accuracies in percent, bits per byte beside them); :func:`figure1_spec`
the paper's Figure 1: CF (the task's recommended normalization) and MCF only, the tasks side by side.
The rows are formatted from the tables' records; nothing is computed here. Each chart draws every task
(the picker names them all).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import altair as alt

from olmes.core.methods import MCF
from olmes.site.charts import (
    CF_COLOR,
    FORMULATION_LABELS,
    MCF_COLOR,
    NAME_LIMIT,
    PickableChart,
    no_data,
    pickable,
)
from olmes.tables.render import percent
from olmes.tables.training import BITS_PER_BYTE, MEASURE_LABELS, NOT_YET, tokens_text, transition_span

ACCURACY, BITS = "Accuracy (%)", "Bits per byte"
"""The two panels of a task's row: every accuracy in percent, and bits per byte."""
MEASURE_COLORS = {
    "cf_none": "#9ecae1", "cf_token": "#6baed6", "cf_char": "#2b7bba", "cf_pmi": "#08306b", MCF: MCF_COLOR,
    "olmes": "#2f2f2f", BITS_PER_BYTE: "#6a51a3",
}  # fmt: skip
"""Each measure's colour: CF's normalizations in blues, MCF as on every chart, the OLMES score dark."""
TOKENS_LABEL = "replace(format(datum.value, '~s'), 'G', 'B')"
"""Tokens on the axis as the tables write them: 1B, 10B, 1T (SI's G is a billion)."""
WIDTH, HEIGHT = 260, 150
POINTS_UP_TO = 60
"""A chart of a series of at most this many checkpoints marks each checkpoint with a point (its tooltip
gives the numbers); beyond, the points would merge into the line and cost about 400 bytes of the page's
SVG each (3 tasks x 9 measures x 200 checkpoints: 2 MB), so the lines and bands are drawn alone (the
numbers are in the export, training_series)."""
Label = Callable[[dict], "str | None"]


def _row(**fields) -> dict:
    """A row of a chart: ``task``, ``panel`` and ``kind`` (``value``: a measure at a checkpoint;
    ``chance``; ``transition``; ``not yet``) and the fields of its kind (``method``, ``scoring``,
    ``tokens``, ``at``, ``value``, ``low``, ``high``, ``span_low``, ``span_high``, ``checkpoint``,
    ``model``, ``partial``, ``note``); a field without a value is left out (hundreds of checkpoints make
    thousands of rows, all in the page)."""
    return {name: value for name, value in fields.items() if value is not None}


def value_rows(records: list[dict], label: Label) -> list[dict]:
    """A row per record of ``training_series`` that ``label`` names (None: not drawn): accuracies in
    percent on the accuracy panel, bits per byte on its own."""
    rows = []
    for record in records:
        method = label(record)
        if method is None:
            continue
        bits = record["method"] == BITS_PER_BYTE
        scale, digits = (1, 4) if bits else (100, 2)
        low, high = (
            None if record[end] is None else round(scale * record[end], digits)
            for end in ("ci_low", "ci_high")
        )
        rows.append(
            _row(
                task=record["task_name"],
                panel=BITS if bits else ACCURACY,
                kind="value",
                method=method,
                scoring=record["method_label"],
                tokens=record["training_tokens"],
                at=tokens_text(record["training_tokens"]),
                value=round(scale * record["value"], digits),
                low=low,
                high=high,
                checkpoint=record["checkpoint"] or record["display_name"],
                model=record["display_name"],
                partial=record["partial"],
            )  # fmt: skip
        )
    return rows


def marker_rows(transitions: list[dict], chance: dict[str, float]) -> list[dict]:
    """Per task of ``training_transitions``' records (one series): its chance accuracy (percent, from
    ``chance`` by task name) and its transition, or its "not yet" note."""
    rows = []
    for record in transitions:
        task = record["task_name"]
        if task in chance:
            rows.append(_row(task=task, panel=ACCURACY, kind="chance", value=chance[task]))
        gap = f"last gap {percent(record['last_gap'])} [{percent(record['last_gap_ci_low'])}, "
        gap += f"{percent(record['last_gap_ci_high'])}] points"
        if record["crossed"]:
            rows.append(
                _row(
                    task=task,
                    panel=ACCURACY,
                    kind="transition",
                    tokens=record["transition_tokens"],
                    at=tokens_text(record["transition_tokens"]),
                    span_low=record["ci_low_tokens"] or record["last_tokens"],
                    span_high=record["ci_high_tokens"] or record["last_tokens"],
                    checkpoint=record["transition_checkpoint"],
                    note=f"MCF overtakes CF for good at {tokens_text(record['transition_tokens'])}, 95% "
                    f"{transition_span(record)}",
                )  # fmt: skip
            )
        else:
            rows.append(_row(task=task, panel=ACCURACY, kind=NOT_YET, note=f"{NOT_YET}: {gap}"))
    return rows


def _is(kind: str) -> str:
    return f"datum.kind === '{kind}'"


def decades(data: list[dict]) -> list[float] | None:
    """The powers of ten within the rows' training tokens, the log axis' ticks; None (vega's ticks)
    where fewer than two are."""
    tokens = [row["tokens"] for row in data if row["kind"] == "value"]
    low, high = math.floor(math.log10(min(tokens))), math.ceil(math.log10(max(tokens)))
    found = [10.0**power for power in range(low, high + 1) if min(tokens) <= 10.0**power <= max(tokens)]
    return found if len(found) > 1 else None


def few_checkpoints(data: list[dict]) -> bool:
    """Whether the rows' series has at most :data:`POINTS_UP_TO` checkpoints (its points are drawn)."""
    return len({row["tokens"] for row in data if row["kind"] == "value"}) <= POINTS_UP_TO


def _color(title: str, labels: list[str], colors: list[str]) -> alt.Color:
    legend = alt.Legend(labelLimit=NAME_LIMIT, symbolOpacity=1)  # not the bands' faded colour
    return alt.Color("method:N", title=title, legend=legend, scale=alt.Scale(domain=labels, range=colors))


def _layers(color: alt.Color, ticks: list[float] | None, points: bool) -> list[alt.Chart]:
    """Bands, lines and points of the measures; chance; the transition's span and rule; the note."""
    x = alt.X(
        "tokens:Q",
        title="Training tokens",
        scale=alt.Scale(type="log", nice=False),
        axis=alt.Axis(labelExpr=TOKENS_LABEL, values=alt.Undefined if ticks is None else ticks),
    )
    y = alt.Y("value:Q", title=None, scale=alt.Scale(zero=False, nice=True))
    tooltip = [
        alt.Tooltip("model:N", title="Checkpoint"),
        alt.Tooltip("at:N", title="Training tokens"),
        alt.Tooltip("scoring:N", title="Measure"),
        alt.Tooltip("value:Q", title="Value", format=".2f"),
        alt.Tooltip("low:Q", title="95% low", format=".2f"),
        alt.Tooltip("high:Q", title="95% high", format=".2f"),
    ]
    values = alt.Chart().transform_filter(_is("value"))
    measure = [alt.Tooltip("scoring:N", title="Measure")]
    transition = alt.Chart().transform_filter(_is("transition"))
    note = [alt.Tooltip("note:N", title="Transition")]
    band = values.transform_filter("isValid(datum.low)").mark_area(opacity=0.18)
    chance = alt.Chart().transform_filter(_is("chance")).mark_rule(strokeDash=[4, 3], color="#8a929c")
    span = transition.mark_rect(opacity=0.12, color="#444").encode(
        x="span_low:Q", x2="span_high:Q", tooltip=note
    )
    rule = transition.mark_rule(strokeWidth=2, color="#222", strokeDash=[6, 2]).encode(
        x="tokens:Q", tooltip=note
    )
    not_yet = alt.Chart().transform_filter(_is(NOT_YET))
    not_yet = not_yet.mark_text(align="left", baseline="top", fontSize=11, fontWeight="bold", color="#444")
    return [
        band.encode(x=x, y="low:Q", y2="high:Q", color=color),
        chance.encode(y="value:Q"),
        span,
        values.mark_line(strokeWidth=1.8).encode(x=x, y=y, color=color, detail="method:N", tooltip=measure),
        *(
            [values.mark_point(filled=True, size=16).encode(x=x, y=y, color=color, tooltip=tooltip)]
            if points
            else []
        ),
        rule.properties(name="transition"),
        not_yet.encode(x=alt.value(5), y=alt.value(5), text=alt.value(NOT_YET), tooltip=note).properties(
            name="not_yet"
        ),
    ]


def series_spec(
    records: list[dict], transitions: list[dict], chance: dict[str, float], tasks: list[str]
) -> PickableChart | None:
    """Every measure of one series over training: a row per task (``tasks``: display names in order),
    its accuracies (each CF normalization, MCF, the OLMES score) beside its bits per byte."""
    data = value_rows(records, lambda record: record["method_label"])
    if not data:
        return None
    color = _color("Measure", list(MEASURE_LABELS.values()), list(MEASURE_COLORS.values()))
    shown = [name for name in tasks if any(row["task"] == name for row in data)]

    def draw():
        header = alt.Header(labelAngle=0, labelAlign="left", labelLimit=NAME_LIMIT)
        return (
            alt.layer(*_layers(color, decades(data), few_checkpoints(data)), data=no_data())
            .properties(width=WIDTH, height=HEIGHT)
            .facet(row=alt.Row("task:N", sort=shown, title=None, header=header),
                   column=alt.Column("panel:N", sort=[ACCURACY, BITS], title=None))
            .resolve_scale(y="independent")
        )  # fmt: skip

    return _chart(data, transitions, chance, shown, draw)


def figure1_spec(
    records: list[dict], transitions: list[dict], chance: dict[str, float], tasks: list[str]
) -> PickableChart | None:
    """The paper's Figure 1 for one series: CF (the task's recommended normalization) and MCF accuracy
    over training, a panel per task, with the transition."""
    cf, mcf = FORMULATION_LABELS["cf"], FORMULATION_LABELS[MCF]
    data = value_rows(
        records, lambda record: cf if record["recommended"] else mcf if record["method"] == MCF else None
    )
    if not data:
        return None
    color = _color("Formulation", [cf, mcf], [CF_COLOR, MCF_COLOR])
    shown = [name for name in tasks if any(row["task"] == name for row in data)]

    def draw():
        return (
            alt.layer(*_layers(color, decades(data), few_checkpoints(data)), data=no_data())
            .properties(width=WIDTH - 40, height=HEIGHT)
            .facet(facet=alt.Facet("task:N", sort=shown, title=None), columns=min(4, max(1, len(shown))))
            .resolve_scale(y="independent")
        )

    return _chart(data, transitions, chance, shown, draw)


def _chart(
    data: list[dict], transitions: list[dict], chance: dict[str, float], shown: list[str], draw
) -> PickableChart:
    """The chart of ``data`` and the markers of its tasks, every task drawn."""
    markers = [row for row in marker_rows(transitions, chance) if row["task"] in shown]
    return pickable(data + markers, "task", shown, draw, top=len(shown))
