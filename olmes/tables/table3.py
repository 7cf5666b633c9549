"""The paper's Table 3, which CF normalization wins per task, and its check against the paper's print.

Table 3 counts, per task, the share of models on which each normalization is the best (every
normalization tied with the best wins: :func:`~olmes.tables.paper_layouts.normalization_wins`), and
the diff oracle, the mean gap between the best normalization and the recommended one. Over the
evaluated models always; with the paper's models (``olmes tables --reported``) also over its 15, from
the accuracies its Tables 9-12 print, over all of them together, and the paper's Table 3 as printed.

The check (``table3_check``) sets the paper's printed Table 3 beside the same table recomputed from
the paper's own printed Tables 9-12, cell by cell, and says why each cell that differs does: the
paper counted one winner per model (its Tables 10-12 ``best`` column, decided on unrounded
accuracies), where the printed one-decimal accuracies of some models tie.
"""

from __future__ import annotations

from dataclasses import dataclass

from olmes.core.methods import NORMALIZATIONS
from olmes.core.records import ScoreSummary
from olmes.core.tasks import TASKS
from olmes.tables.model_grid import ModelScores
from olmes.tables.paper_layouts import (
    PAPER_NORM_LABEL,
    cf_summaries,
    compared_norms,
    normalization_wins,
    task_wins,
)
from olmes.tables.render import MISSING, PARTIAL_MARK, Cell, Table, percent, percent_cell, text_cell
from olmes.tables.reported import PAPER_SOURCE, paper_table, paper_value
from olmes.tables.reported_scores import ReportedScores
from olmes.tables.results import ScoreSet, task_name, task_short_name

TABLE3_KEY = "table3_normalizations"
CHECK_KEY = "table3_check"
PRINTED_TABLE3 = "table3_normalization_winrates"
"""The paper data file of Table 3 as printed."""
ROUNDING_POINTS = 0.15
"""How far a diff oracle recomputed from one-decimal accuracies may be from the printed one: each
model's gap is off by at most 0.1 point (two roundings of 0.05), their mean too, and the printed value
by 0.05 more."""


@dataclass(frozen=True)
class Population:
    """The models one block of Table 3 counts over."""

    label: str | None  # the block's group label (None: the table's first block)
    over: str  # its records' ``over``: evaluated, reported, all
    sources: tuple[ModelScores, ...]

    def summaries(self, task: str) -> list[ScoreSummary]:
        return [summary for source in self.sources for summary in cf_summaries(source, task)]


def table3(scores: ScoreSet, reported: ReportedScores | None = None) -> Table:
    """Table 3 over the evaluated models, and with ``reported`` over the paper's models, over both, and
    as the paper prints it (all of the registry's tasks then, since the paper covers them all)."""
    tasks = list(TASKS) if reported is not None else scores.tasks
    populations = [Population(None, "evaluated", (scores,))]
    if reported is not None:
        populations = [Population(f"Over the {len(scores.models)} evaluated models", "evaluated", (scores,))]
        paper = f"the paper's {len(reported.models)} models"
        populations += [
            Population(f"Over {paper}, from the accuracies its Tables 9-12 print", "reported", (reported,)),
            Population(f"Over the evaluated models and {paper} together", "all", (scores, reported)),
        ]
    groups, records = [], []
    for population in populations:
        rows, block = _block(population, tasks)
        if block:
            groups.append((population.label, rows))
            records += block
    if reported is not None:
        label = f"The paper's Table 3 as printed ({PAPER_SOURCE})"
        groups.append((label, _printed_rows(tasks)))
    header = ["Normalization"] + [task_name(task) for task in tasks]
    short = ["Normalization"] + [task_short_name(task) for task in tasks]
    return Table(
        TABLE3_KEY, "CF normalizations compared (paper Table 3)", _caption(reported), header, groups, records,
        latex_header=short, reported_labels=tuple(label for label, _ in groups[1:]),
    )  # fmt: skip


def _block(population: Population, tasks: list[str]) -> tuple[list[list[Cell]], list[dict]]:
    """A population's rows (win % per normalization, OLMES choice, diff oracle, models) and records;
    no records when it has no model with CF scores."""
    wins_rows = {norm: [text_cell(norm)] for norm in NORMALIZATIONS}
    extra_rows = {label: [text_cell(label)] for label in ("OLMES choice", "Diff oracle", "Models")}
    records = []
    for task in tasks:
        summaries = population.summaries(task)
        compared = compared_norms(summaries)
        recommended = TASKS[task].recommended_norm
        record = task_wins(summaries, compared, recommended)
        record.update(task=task, over=population.over, recommended_norm=recommended, compared_norms=compared)
        if summaries:
            records.append(record)
        for norm in NORMALIZATIONS:
            wins_rows[norm].append(percent_cell(record["win_rate"].get(norm)))
        extra_rows["OLMES choice"].append(text_cell(recommended))
        extra_rows["Diff oracle"].append(percent_cell(record["diff_oracle"]))
        partial = sum(s["partial"] for s in summaries)
        models = f"{len(summaries)}" + (f" ({partial}{PARTIAL_MARK})" if partial else "")
        extra_rows["Models"].append(Cell(len(summaries), models))
    return [*wins_rows.values(), *extra_rows.values()], records


def _printed_rows(tasks: list[str]) -> list[list[Cell]]:
    """The paper's Table 3 as printed, in the table's rows (win % per normalization, OLMES choice, diff
    oracle; the paper gives no model count)."""
    printed = _printed_table3()
    fields = [*NORMALIZATIONS, "olmes_choice", "diff_oracle"]
    labels = [*NORMALIZATIONS, "OLMES choice", "Diff oracle"]
    return [
        [text_cell(label)] + [_printed_cell(printed, task, field) for task in tasks]
        for field, label in zip(fields, labels, strict=True)
    ]


def _printed_table3() -> dict[str, dict[str, str]]:
    """The paper's Table 3 by task (the paper's ten; a task added to the registry has no column)."""
    return {row["task"]: row for row in paper_table(PRINTED_TABLE3)}


def _printed_cell(printed: dict[str, dict[str, str]], task: str, field: str) -> Cell:
    if task not in printed:
        return text_cell(MISSING)
    text = printed[task][field]
    return text_cell(text) if field == "olmes_choice" else Cell(paper_value(text).value / 100, text)


def _caption(reported: ReportedScores | None) -> str:
    caption = (
        "Win % of each CF normalization over the models evaluated on the task. Ties: every normalization "
        "whose accuracy equals the best counts as a winner, so a column can add up to more than 100%. "
        "Only normalizations present for every model compete (pmi needs unconditional requests; "
        f"{MISSING} otherwise, and where fewer than two do). Diff oracle = mean over models of (best "
        "normalization's accuracy - recommended normalization's accuracy), in points. Models counts partial "
        f"runs with {PARTIAL_MARK}; their accuracies are over the instances they scored."
    )
    if reported is None:
        return caption
    return caption + (
        f" The blocks after the first count over the {len(reported.models)} models of the paper's Tables "
        "9-12 by the same rule, from their printed one-decimal accuracies (WinoGrande: the paper prints no "
        "accuracy per normalization), then over all models together; the last block is the paper's Table 3 "
        f"as printed. Where the two differ, and why: the table {CHECK_KEY}."
    )


# -- the check: the printed Table 3 beside the same table from the printed Tables 9-12 --------------------


@dataclass(frozen=True)
class CheckedCell:
    """One cell of Table 3: what the paper prints, what its printed Tables 9-12 give, and why they differ."""

    task: str
    quantity: str  # a normalization, "diff oracle" or "OLMES choice"
    printed: str
    recomputed: str
    agrees: bool
    why: str


def table3_check(reported: ReportedScores) -> Table:
    """The paper's Table 3, cell by cell, beside the same cells recomputed from its printed Tables 9-12
    (:func:`table3`'s rule), with each difference explained; disagreements first."""
    printed = _printed_table3()
    cells = [cell for task in TASKS if task in printed for cell in _task_cells(reported, printed[task])]
    cells.sort(key=lambda cell: cell.agrees)
    rows = [
        [
            text_cell(task_name(cell.task)),
            text_cell(cell.quantity),
            text_cell(cell.printed),
            text_cell(cell.recomputed),
            text_cell("yes" if cell.agrees else "no"),
            text_cell(cell.why),
        ]  # fmt: skip
        for cell in cells
    ]
    differing = sum(not cell.agrees for cell in cells)
    caption = (
        f"The {PAPER_SOURCE}'s Table 3 beside the same cells recomputed by olmes's rule (every "
        "normalization tied with the best wins) from the accuracies the paper prints in Tables 9-12 for "
        f"its {len(reported.models)} models: {differing} of {len(cells)} cells differ, each explained. A win "
        f"rate differs where the printed accuracies of some models tie ({TIES}): olmes counts every tied "
        "normalization as a winner, the paper one per model (its Tables 10-12 'best' column, decided on "
        "accuracies before rounding). WinoGrande: the paper prints no accuracy per normalization (it says "
        "normalization changes nothing there), so nothing can be recomputed. Win rates in %; a diff oracle "
        f"agrees within {ROUNDING_POINTS} points (it is recomputed from one-decimal accuracies)."
    )
    return Table(
        CHECK_KEY, "The paper's Table 3 recomputed from its Tables 9-12", caption,
        ["Task", "Cell", "Paper prints", "From its Tables 9-12", "Agrees", "Why"], [(None, rows)],
        [vars(cell) for cell in cells], text_columns=6, reported_labels=(None,),
    )  # fmt: skip


def _task_cells(reported: ReportedScores, printed: dict[str, str]) -> list[CheckedCell]:
    task = printed["task"]
    summaries = cf_summaries(reported, task)
    compared = compared_norms(summaries)
    recommended = TASKS[task].recommended_norm
    ours = task_wins(summaries, compared, recommended)
    same = printed["olmes_choice"] == recommended
    why = "" if same else "the task registry recommends another normalization than the paper"
    choice = CheckedCell(task, "OLMES choice", printed["olmes_choice"], recommended, same, why)
    if not ours["win_rate"]:
        why = "no accuracy per normalization printed (Tables 10-12 leave the task out)"
        return [choice] + [
            CheckedCell(task, quantity, printed[field], MISSING, False, why)
            for quantity, field in [*((n, n) for n in NORMALIZATIONS), ("diff oracle", "diff_oracle")]
        ]
    cells = [_win_cell(task, norm, printed[norm], ours["win_rate"].get(norm)) for norm in NORMALIZATIONS]
    return [choice, *cells, _oracle_cell(task, printed["diff_oracle"], ours["diff_oracle"])]


def _win_cell(task: str, norm: str, printed: str, rate: float | None) -> CheckedCell:
    shown = percent(rate)
    if shown == printed:
        return CheckedCell(task, norm, printed, shown, True, "")
    return CheckedCell(task, norm, printed, shown, False, _tie_reason(task, norm))


def _tie_reason(task: str, norm: str) -> str:
    """Why a win rate from the printed accuracies differs from the printed one: the models whose printed
    accuracies tie, where the paper's ``best`` column names one winner."""
    ties = []
    for row in paper_table("table9_12_normalizations"):
        if row["task"] != task:
            continue
        accuracies = {n: paper_value(row[n]).value for n in NORMALIZATIONS}
        winners = normalization_wins(accuracies)
        if norm in winners and len(winners) > 1 and row["best"] != norm:
            tied = " = ".join(PAPER_NORM_LABEL[n] for n in winners)
            ties.append(f"{row['model']} {tied} = {accuracies[norm]:.1f} (the paper's best: {row['best']})")
    return f"{TIES}: {'; '.join(ties)}" if ties else "not explained by ties at one decimal"


TIES = "printed ties"
"""How a win rate's reason begins when the printed accuracies of some models tie (the caption says more)."""


def _oracle_cell(task: str, printed: str, ours: float | None) -> CheckedCell:
    recomputed = None if ours is None else 100 * ours
    agrees = recomputed is not None and abs(recomputed - paper_value(printed).value) <= ROUNDING_POINTS
    shown = MISSING if recomputed is None else f"{recomputed:.2f}"
    why = "" if agrees else f"more than {ROUNDING_POINTS} points apart: not explained by rounding"
    return CheckedCell(task, "diff oracle", printed, shown, agrees, why)
