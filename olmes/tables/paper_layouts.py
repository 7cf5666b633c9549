"""The paper's Tables 6, 7, 9, 10, 11 and 12 in the paper's own layouts (v2 numbering), from score summaries.

Which task goes in which table, and in what column order, is data of the paper's layout and is
written once here (``TABLE6_TASKS`` ... ``NORMALIZATION_TABLE_TASKS``); the paper's data files
(``paper_data/``, read by :mod:`olmes.tables.reported`) hold the same cells for its models, and
the paper check (:mod:`olmes.tables.paper_check`) uses these layouts to name each cell's table.

- Table 6 (ARC-C ... MMLU) and Table 7 (OBQA ... WinoG): per task MCF then CF (the recommended
  normalization); Table 7 ends with the averages over all ten tasks: MCF, CF, all (the mean of
  those two) and max (the mean of max(CF, MCF), the OLMES average).
- Table 9: per task of Tables 10-12 the CF accuracy under the OLMES normalization and its gap to
  the best normalization.
- Tables 10-12: three tasks each under none, char, tok, pmi (the paper's order) and the best one,
  with two rows over the models: average scores and win percentage (as Table 3 counts wins).

The normalization-win rule (every normalization tied with the best wins) is defined here once and
used by Table 3 too.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from olmes.core.methods import CF, MCF, NORMALIZATIONS, cf_method
from olmes.core.records import ScoreSummary
from olmes.core.tasks import TASKS
from olmes.tables.model_grid import Averages, Column, ModelScores, ReportedRows, model_table
from olmes.tables.render import MISSING, Cell, Table, percent_cell, text_cell
from olmes.tables.reported_scores import REPORTED_GROUP, ReportedScores
from olmes.tables.results import (
    ScoreSet,
    best_of_two_score,
    method_accuracy,
    recommended_method,
)

# -- the paper's layout (data) ---------------------------------------------------------------------

TABLE6_TASKS = ("arc_challenge", "arc_easy", "boolq", "csqa", "hellaswag", "mmlu")
TABLE7_TASKS = ("openbookqa", "piqa", "socialiqa", "winogrande")
NORMALIZATION_TABLE_TASKS = {
    10: ("arc_challenge", "arc_easy", "boolq"),
    11: ("csqa", "hellaswag", "mmlu"),
    12: ("openbookqa", "piqa", "socialiqa"),
}
"""Tables 10-12: three tasks each (the paper leaves WinoGrande out: normalization changes nothing there)."""
TABLE9_TASKS = tuple(task for tasks in NORMALIZATION_TABLE_TASKS.values() for task in tasks)
TABLE8_TASK = "mmlu"
PAPER_NORM_ORDER = ("none", "char", "token", "pmi")
"""The order the paper prints the normalizations in (its data files use the registry's order)."""
PAPER_NORM_LABEL = {"none": "none", "char": "char", "token": "tok", "pmi": "pmi"}
TABLE7_AVERAGES = ("MCF", "CF", "all", "max")


def cf_mcf_table_number(task: str) -> int:
    """The paper table (6 or 7) that holds a task's CF and MCF accuracy."""
    return 6 if task in TABLE6_TASKS else 7


def normalization_table_number(task: str) -> int | None:
    """The paper table (10, 11 or 12) that holds a task's accuracy under every normalization."""
    return next((number for number, tasks in NORMALIZATION_TABLE_TASKS.items() if task in tasks), None)


# -- which normalization wins (Tables 3 and 10-12) -------------------------------------------------

TIE_TOLERANCE = 1e-12
"""Accuracies closer than this are equal (only float rounding separates equal counts)."""


def normalization_wins(accuracies: dict[str, float]) -> list[str]:
    """Every normalization whose accuracy equals the best: each tied winner gets a win."""
    best = max(accuracies.values())
    return [norm for norm, accuracy in accuracies.items() if accuracy >= best - TIE_TOLERANCE]


def cf_summaries(scores: ModelScores, task: str) -> list[ScoreSummary]:
    """The task's summaries that have CF scores, one per model (partial runs included): the models
    Table 3 and the summary rows of Tables 10-12 count over."""
    found = (scores.get(info.name, task) for info in scores.models)
    return [s for s in found if s is not None and any(method != MCF for method in s["methods"])]


def compared_norms(summaries: list[ScoreSummary]) -> list[str]:
    """The normalizations every model has for a task (pmi only where all runs have pmi rows)."""
    return [
        norm
        for norm in NORMALIZATIONS
        if all(cf_method(norm).key in summary["methods"] for summary in summaries)
    ]


def task_wins(summaries: list[ScoreSummary], compared: list[str], recommended: str) -> dict:
    """Wins and win rate of each compared normalization over ``summaries``, and the diff oracle (mean
    of best minus recommended accuracy); none where fewer than two normalizations are compared (the
    paper prints no accuracy per normalization for WinoGrande: one is no comparison)."""
    if len(compared) < 2:
        compared = []
    wins = dict.fromkeys(compared, 0)
    gaps = []
    for summary in summaries if compared else ():
        accuracies = {norm: summary["methods"][cf_method(norm).key]["accuracy"] for norm in compared}
        for norm in normalization_wins(accuracies):
            wins[norm] += 1
        if recommended in accuracies:
            gaps.append(max(accuracies.values()) - accuracies[recommended])
    count = len(summaries)
    return {
        "models": [summary["model"] for summary in summaries],
        "wins": wins,
        "win_rate": {norm: wins[norm] / count for norm in compared} if count else {},
        "diff_oracle": float(np.mean(gaps)) if gaps else None,
    }


def norm_accuracies(summary: ScoreSummary) -> dict[str, float]:
    """The CF accuracy under each normalization the summary has, by normalization."""
    return {
        norm: summary["methods"][cf_method(norm).key]["accuracy"]
        for norm in NORMALIZATIONS
        if cf_method(norm).key in summary["methods"]
    }


def _best_label(norms: list[str]) -> str:
    return "/".join(PAPER_NORM_LABEL[norm] for norm in PAPER_NORM_ORDER if norm in norms) or MISSING


# -- one table in a paper layout -------------------------------------------------------------------


def _accuracy(method_of: Callable[[str], str]) -> Callable[[ScoreSummary], float | None]:
    return lambda summary: method_accuracy(summary, method_of(summary["task"]))


def _norm_accuracy(norm: str) -> Callable[[ScoreSummary], float | None]:
    return lambda summary: method_accuracy(summary, cf_method(norm).key)


def _gap_to_best(summary: ScoreSummary) -> float | None:
    accuracies = norm_accuracies(summary)
    recommended = accuracies.get(TASKS[summary["task"]].recommended_norm)
    return None if recommended is None else max(accuracies.values()) - recommended


def _best_norms(summary: ScoreSummary) -> list[str] | None:
    accuracies = norm_accuracies(summary)
    return normalization_wins(accuracies) if accuracies else None


def layout_table(
    scores: ScoreSet,
    key: str,
    title: str,
    caption: str,
    columns: list[Column],
    averages: Averages | None = None,
    summary_rows: list[tuple[str, list[Cell], dict]] = (),
    reported: ReportedRows | None = None,
) -> Table:
    """Rows = models (complete group first, then partial runs, then ``reported`` ones), columns =
    ``columns`` in the given order under their task's name, then the ``averages`` (called only for
    models complete on every task), in each record under ``averages``
    (:func:`~olmes.tables.model_grid.model_table`). ``summary_rows`` (label, cells, record) close the
    table as a group of their own."""
    return model_table(
        scores, key, title, caption + (REPORTED_NOTE if reported else ""), columns, averages,
        summary_rows=summary_rows, header_groups=True, reported=reported,
    )  # fmt: skip


REPORTED_NOTE = (
    " The last group holds the paper's own models: the accuracies it prints (one decimal), not evaluated "
    "here, so without standard errors; what the table derives from them (a best normalization, a diff, "
    "an average, a win rate) follows the same rules as for the evaluated models, from the printed cells."
)


def reported_rows(
    reported: ReportedScores | None, averages: Averages | None = None, summary_rows=()
) -> ReportedRows | None:
    """The paper's models as a layout's last group (None without them), with the averages of the
    evaluated models' columns computed from their printed cells."""
    if reported is None:
        return None
    label = f"Over the paper's {len(reported.models)} models, from its printed cells"
    return ReportedRows(reported, averages or {}, REPORTED_GROUP, label, summary_rows)


# -- the tables --------------------------------------------------------------------------------------


def _cf_mcf_columns(tasks: tuple[str, ...]) -> list[Column]:
    columns = []
    for task in tasks:
        columns.append(Column(task, MCF, "MCF", _accuracy(lambda _: MCF)))
        columns.append(Column(task, CF, "CF", _accuracy(recommended_method)))
    return columns


CF_MCF_CAPTION = (
    "MCF and CF accuracy (%) per model and task, as in the paper's layout: CF under the task's "
    "recommended normalization; MMLU is the macro-average over subjects."
)


def table6(scores: ScoreSet, reported: ReportedScores | None = None) -> Table:
    return layout_table(
        scores, "table6_cf_mcf", "MCF and CF accuracy (paper Table 6)", CF_MCF_CAPTION,
        _cf_mcf_columns(TABLE6_TASKS), reported=reported_rows(reported),
    )  # fmt: skip


def table7_averages(scores: ModelScores) -> Averages:
    """Table 7's averages over all tasks: MCF, CF, all (their mean) and max (mean of max(CF, MCF))."""

    def mean(model: str, value: Callable[[ScoreSummary], float | None]) -> float | None:
        values = [value(scores.get(model, task)) for task in TASKS]
        return None if any(v is None for v in values) else float(np.mean(values))

    def mcf(model: str) -> float | None:
        return mean(model, lambda s: method_accuracy(s, MCF))

    def cf(model: str) -> float | None:
        return mean(model, lambda s: method_accuracy(s, recommended_method(s["task"])))

    def both(model: str) -> float | None:
        pair = (mcf(model), cf(model))
        return None if None in pair else sum(pair) / 2

    return dict(zip(TABLE7_AVERAGES, (mcf, cf, both, lambda m: mean(m, best_of_two_score)), strict=True))


def table7(scores: ScoreSet, reported: ReportedScores | None = None) -> Table:
    return layout_table(
        scores, "table7_cf_mcf", "MCF and CF accuracy, averages (paper Table 7)",
        CF_MCF_CAPTION + f" Average over the {len(TASKS)} tasks: MCF, CF, all = the mean of those two, "
        "max = the mean of max(CF, MCF), the OLMES average (Table 4).",
        _cf_mcf_columns(TABLE7_TASKS), table7_averages(scores),
        reported=reported_rows(reported, reported and table7_averages(reported)),
    )  # fmt: skip


def table9(scores: ScoreSet, reported: ReportedScores | None = None) -> Table:
    columns = []
    for task in TABLE9_TASKS:
        columns.append(Column(task, "olmes", "OLMES", _accuracy(recommended_method)))
        columns.append(Column(task, "diff", "diff", _gap_to_best))
    return layout_table(
        scores, "table9_olmes_normalization", "OLMES normalization vs the best (paper Table 9)",
        "CF accuracy (%) under the task's OLMES normalization and diff = the best normalization's "
        "accuracy minus it, in points (over the normalizations the run has).",
        columns, reported=reported_rows(reported),
    )  # fmt: skip


def normalization_table_key(number: int) -> str:
    return f"table{number}_normalizations"


def normalization_table(scores: ScoreSet, number: int, reported: ReportedScores | None = None) -> Table:
    """Table 10, 11 or 12: its three tasks under each normalization, the best, and the rows over models."""
    tasks = NORMALIZATION_TABLE_TASKS[number]
    columns = []
    for task in tasks:
        columns += [
            Column(task, norm, PAPER_NORM_LABEL[norm], _norm_accuracy(norm)) for norm in PAPER_NORM_ORDER
        ]
        columns.append(Column(task, "best", "best", _best_norms, lambda norms: _best_label(norms or [])))
    return layout_table(
        scores, normalization_table_key(number),
        f"CF accuracy under each normalization (paper Table {number})",
        "CF accuracy (%) under each normalization (none, char, tok = token, pmi, the paper's order) and "
        "the best one (ties: all of them). Last rows, over the models with CF scores on the task (partial "
        "runs included, as in Table 3): average scores, the mean accuracy per normalization over the models, "
        "and win percentage, the share of models where the normalization is the best; only normalizations "
        f"every model has compete ({MISSING} otherwise).",
        columns, summary_rows=_over_models_rows(scores, tasks),
        reported=reported_rows(reported, summary_rows=reported and _over_models_rows(reported, tasks)),
    )  # fmt: skip


def _over_models_rows(scores: ModelScores, tasks: tuple[str, ...]) -> list[tuple[str, list[Cell], dict]]:
    """The "average scores" and "win percentage" rows of Tables 10-12."""
    average_cells, win_cells = [text_cell("average scores")], [text_cell("win percentage")]
    average_record, win_record = {"tasks": {}}, {"tasks": {}}
    for task in tasks:
        summaries = cf_summaries(scores, task)
        compared = compared_norms(summaries) if summaries else []
        rates = task_wins(summaries, compared, TASKS[task].recommended_norm)["win_rate"]
        means = {norm: float(np.mean([norm_accuracies(s)[norm] for s in summaries])) for norm in compared}
        leaders = normalization_wins(rates) if rates else []
        average_cells += [percent_cell(means.get(norm)) for norm in PAPER_NORM_ORDER] + [text_cell(MISSING)]
        win_cells += [percent_cell(rates.get(norm)) for norm in PAPER_NORM_ORDER] + [
            text_cell(_best_label(leaders))
        ]
        average_record["tasks"][task] = means
        win_record["tasks"][task] = {**rates, "best": leaders}
    return [("average_scores", average_cells, average_record), ("win_percentage", win_cells, win_record)]


CF_MCF_TABLE_KEYS = ("table6_cf_mcf", "table7_cf_mcf")
NORMALIZATION_LAYOUT_KEYS = (
    "table9_olmes_normalization", *map(normalization_table_key, NORMALIZATION_TABLE_TASKS)
)  # fmt: skip


def cf_mcf_tables(scores: ScoreSet, reported: ReportedScores | None = None) -> list[Table]:
    """Tables 6 and 7 (keys :data:`CF_MCF_TABLE_KEYS`), with the paper's models where ``reported``."""
    return [table6(scores, reported), table7(scores, reported)]


def normalization_layout_tables(scores: ScoreSet, reported: ReportedScores | None = None) -> list[Table]:
    """Tables 9, 10, 11 and 12 (keys :data:`NORMALIZATION_LAYOUT_KEYS`), with the paper's models where
    ``reported``."""
    return [
        table9(scores, reported),
        *(normalization_table(scores, number, reported) for number in NORMALIZATION_TABLE_TASKS),
    ]
