"""The tables of model x task scores (docs/standard.md section 5): the paper's Tables 4 and 8, accuracy
per formulation and per normalization, near ties and bits per byte.

Rules that hold in every table: an average over tasks is given only when the model has every task
and none is partial; a partial result (a limit, or fewer instances than the standard) carries ᵖ, its
model sits in a separate "partial runs" group, and it is never shown as an OLMES score.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from olmes.core.methods import CF, MCF, MCF_METHOD, NORMALIZATIONS, cf_method
from olmes.core.records import ScoreSummary
from olmes.core.tasks import TASKS
from olmes.scoring.predictions import NEAR_TIE_NATS
from olmes.tables.model_grid import CellFn, TaskCell, model_table
from olmes.tables.render import DAGGER, MISSING, PARTIAL_MARK, Cell, Table, percent, percent_cell, text_cell
from olmes.tables.results import (
    PARTIAL_GROUP,
    PARTIAL_NOTE,
    ScoreSet,
    best_of_two_score,
    best_of_two_stderr,
    method_accuracy,
    recommended_method,
    task_name,
)

# -- tables with one row per model and one column per task -----------------------------------------


def model_task_table(
    scores: ScoreSet,
    key: str,
    title: str,
    caption: str,
    cell: CellFn,
    averages: dict[str, Callable[[str], float | None]],
    average_cell: Callable[[float | None], Cell] = percent_cell,
) -> Table:
    """Rows = models (complete group first, then partial runs), columns = tasks + average columns
    (:func:`~olmes.tables.model_grid.model_table`, one :class:`~olmes.tables.model_grid.TaskCell` per
    task; the averages by label at the top of each record).

    ``averages`` maps a column label to a function of the model; it is only called for models that
    have every task of the registry complete (otherwise the column shows "—").
    """
    columns = [TaskCell(task, cell) for task in scores.tasks]
    return model_table(scores, key, title, caption, columns, averages, average_cell=average_cell)


def _mean_over_tasks(scores: ScoreSet, model: str, value: Callable[[dict], float | None]) -> float | None:
    values = [value(scores.get(model, task)) for task in TASKS]
    return None if any(v is None for v in values) else float(np.mean(values))


def olmes_average(scores: ScoreSet, model: str) -> float | None:
    """A model's OLMES average: the mean over the standard's tasks of the best-of-two score; None unless
    it has every task complete."""
    if not scores.complete_on_all_tasks(model):
        return None
    return _mean_over_tasks(scores, model, best_of_two_score)


def table4(scores: ScoreSet) -> Table:
    def cell(summary: ScoreSummary) -> tuple[float | None, str, dict]:
        best = summary.get("best_of_two")
        if best is None:
            return None, MISSING, {"olmes_score": None}
        fields = {
            "olmes_score": None if summary["partial"] else best["score"],
            "best_of_two": best["score"], "formulation": best["formulation"], "dagger": best["dagger"],
        }  # fmt: skip
        return best["score"], percent(best["score"]) + (DAGGER if best["dagger"] else ""), fields

    table = model_task_table(
        scores, "table4_olmes", "OLMES scores (paper Table 4)",
        f"OLMES score = max(CF accuracy under the task's recommended normalization, MCF accuracy), in %; "
        f"{DAGGER} marks a score from MCF (MCF must be strictly better). MMLU is the macro-average over "
        "subjects. Partial rows show the best of CF and MCF on the instances scored, which is not an "
        "OLMES score.",
        cell, {"Average": lambda model: olmes_average(scores, model)},
    )  # fmt: skip
    for record in table.records:
        record["average_stderr"] = _average_stderr(scores, record["model"])
    return table


def _average_stderr(scores: ScoreSet, model: str) -> float | None:
    """Standard error of a model's Average, the tasks' errors (of the deciding method) combined as
    independent: sqrt(sum of squares) / tasks. None where there is no Average or a task has no error."""
    if not scores.complete_on_all_tasks(model):
        return None
    errors = [best_of_two_stderr(scores.get(model, task)) for task in TASKS]
    if any(error is None for error in errors):
        return None
    return math.sqrt(sum(error**2 for error in errors)) / len(errors)


def _accuracy_cell(method_of: Callable[[str], str]) -> CellFn:
    def cell(summary: ScoreSummary) -> tuple[float | None, str, dict]:
        method = method_of(summary["task"])
        stats = summary["methods"].get(method)
        if stats is None:
            return None, MISSING, {"method": method}
        fields = {"method": method, "stderr": stats["stderr"], "n": stats["n"]}
        return stats["accuracy"], percent(stats["accuracy"]), fields

    return cell


def _cf_or_mcf_table(
    scores: ScoreSet, key: str, title: str, method_of: Callable[[str], str], what: str
) -> Table:
    def average(model: str) -> float | None:
        return _mean_over_tasks(scores, model, lambda s: method_accuracy(s, method_of(s["task"])))

    return model_task_table(
        scores, key, title,
        f"{what} accuracy (%) per model and task; MMLU is the macro-average. "
        f"Average = mean over the {len(TASKS)} tasks; Max average = mean over the tasks of max(CF, MCF), the "
        "OLMES average.",
        _accuracy_cell(method_of),
        {"Average": average, "Max average": lambda model: olmes_average(scores, model)},
    )  # fmt: skip


def cf_accuracy_table(scores: ScoreSet) -> Table:
    """CF accuracy of every task in one table (the paper's layout is Tables 6-7, paper_layouts.py)."""
    return _cf_or_mcf_table(
        scores, "cf_accuracy", "CF accuracy", recommended_method,
        "CF (cloze formulation, the task's recommended normalization)",
    )  # fmt: skip


def mcf_accuracy_table(scores: ScoreSet) -> Table:
    """MCF accuracy of every task in one table (the paper's layout is Tables 6-7, paper_layouts.py)."""
    return _cf_or_mcf_table(
        scores,
        "mcf_accuracy",
        "MCF accuracy",
        lambda task: MCF,
        "MCF (multiple-choice formulation)",
    )


NORMALIZATION_TABLES = tuple((f"normalization_{norm}", norm) for norm in NORMALIZATIONS)
"""(key, normalization) of the per-normalization views: every task under one CF normalization per
table (the paper's layout, three tasks x every normalization, is Tables 10-12 in paper_layouts.py)."""


def normalization_tables(scores: ScoreSet) -> list[Table]:
    tables = []
    for key, norm in NORMALIZATION_TABLES:
        cf = cf_method(norm)
        method = cf.key

        def average(model: str, method: str = method) -> float | None:
            return _mean_over_tasks(scores, model, lambda s, m=method: method_accuracy(s, m))

        tables.append(
            model_task_table(
                scores,
                key,
                f"CF accuracy, normalization {norm}",
                f"CF accuracy (%) with normalization '{norm}' ({cf.formula}). "
                f"{MISSING} where the run has no such scores (pmi needs unconditional requests).",
                _accuracy_cell(lambda task, m=method: m),
                {"Average": average},
            )  # fmt: skip
        )
    return tables


def near_ties_table(scores: ScoreSet) -> Table:
    def cell(summary: ScoreSummary) -> tuple[float | None, str, dict]:
        counts = {method: stats["near_ties"] for method, stats in summary["methods"].items()}
        cf, mcf = counts.get(recommended_method(summary["task"])), counts.get(MCF)
        text = f"{MISSING if cf is None else cf} / {MISSING if mcf is None else mcf}"
        return None, text, {"near_ties": counts, "n": summary["n_instances"]}

    return model_task_table(
        scores, "near_ties", "Near ties",
        f"Instances whose top two choice scores are within {NEAR_TIE_NATS:g} (nats for none, pmi and MCF; "
        "per token or per character for token and char): decisions that batch size or hardware can flip. "
        "Shown as CF (recommended normalization) / MCF counts.",
        cell, {},
    )  # fmt: skip


def bpb_cell(value: float | None) -> Cell:
    return Cell(value, MISSING if value is None else f"{value:.3f}")


def bpb_table(scores: ScoreSet) -> Table:
    """Bits per byte of the gold CF continuation: a continuous measure where accuracy is near chance."""

    def cell(summary: ScoreSummary) -> tuple[float | None, str, dict]:
        bpb = summary.get("bpb")
        if bpb is None:
            return None, MISSING, {}
        return bpb["bpb"], f"{bpb['bpb']:.3f}", {"stderr": bpb["stderr"], "n": bpb["n"]}

    def average(model: str) -> float | None:
        return _mean_over_tasks(scores, model, lambda s: (s.get("bpb") or {}).get("bpb"))

    return model_task_table(
        scores, "bpb", "Bits per byte (gold CF continuation)",
        "Bits per byte of the gold answer's CF continuation: -sum log-prob / (ln 2 x its UTF-8 bytes, "
        "leading space included), averaged over instances; lower is better. From the CF log-probs, no "
        f"new model run. {MISSING} where the log-prob file predates the num_bytes column.",
        cell, {"Average": average}, average_cell=bpb_cell,
    )  # fmt: skip


# -- Table 8: MMLU macro vs micro -------------------------------------------------------------------


SUBJECT_TASKS = tuple(task for task in TASKS if TASKS[task].subjects)
"""The tasks averaged over subjects (the standard has one: MMLU); each gets a Table 8."""


def table8_key(task: str) -> str:
    return f"table8_{task}"


def table8(scores: ScoreSet) -> list[Table]:
    """One macro-vs-micro table per task averaged over subjects."""
    return [_macro_micro_table(scores, task) for task in SUBJECT_TASKS]


def _macro_micro_table(scores: ScoreSet, task: str) -> Table:
    cf = recommended_method(task)
    header = ["Model", "MCF macro", "MCF micro", "CF macro", "CF micro", "Subjects", "Instances"]
    complete_rows, partial_rows, records = [], [], []
    for info in scores.models:
        summary = scores.get(info.name, task)
        if summary is None:
            continue
        record = {"model": info.name, "display_name": info.display_name, "partial": summary["partial"]}
        row = [text_cell(info.display_name + (" (partial)" if summary["partial"] else ""))]
        mark = PARTIAL_MARK if summary["partial"] else ""
        subjects = 0
        for method, label in ((MCF_METHOD.key, MCF), (cf, CF)):  # the paper's column order
            stats = summary["methods"].get(method)
            macro = None if stats is None else stats["accuracy"]
            micro = None if stats is None else stats["micro_accuracy"]
            subjects = max(subjects, 0 if stats is None else len(stats["subjects"]))
            row += [percent_cell(value, mark) for value in (macro, micro)]
            record[label] = {"method": method, "macro": macro, "micro": micro}
        row += [Cell(subjects, str(subjects)), Cell(summary["n_instances"], str(summary["n_instances"]))]
        record.update(subjects=subjects, n=summary["n_instances"])
        (partial_rows if summary["partial"] else complete_rows).append(row)
        records.append(record)
    groups = ([(None, complete_rows)] if complete_rows else []) + (
        [(PARTIAL_GROUP, partial_rows)] if partial_rows else []
    )
    name = task_name(task)
    caption = (
        f"{name} accuracy (%): macro = mean of the per-subject accuracies (the OLMES score), micro = "
        f"accuracy over all instances. CF uses normalization '{TASKS[task].recommended_norm}'. {PARTIAL_NOTE}"
    )
    return Table(
        table8_key(task), f"{name} macro vs micro average (paper Table 8)", caption, header, groups, records
    )
