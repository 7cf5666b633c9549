"""The paper's cells for a paper model, each with how our number for it is read (:class:`Ours`): Table
4 (or 13) OLMES score per task and average, Tables 6-7 CF and MCF per task and Table 7's four
averages, Tables 10-12 every normalization per task, Table 8 MMLU macro and micro, and Table 5's
prompt variants; our numbers carry their standard errors (:class:`Measure`), an average's that of
the mean. The paper check (:mod:`olmes.tables.paper_check`) compares them."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from olmes.core.methods import CF, MCF, cf_method
from olmes.core.tasks import TASKS
from olmes.scoring.statistics import standard_error
from olmes.tables.paper_layouts import (
    PAPER_NORM_LABEL,
    PAPER_NORM_ORDER,
    TABLE7_AVERAGES,
    TABLE8_TASK,
    cf_mcf_table_number,
    normalization_table_number,
)
from olmes.tables.render import Table
from olmes.tables.reported import paper_table
from olmes.tables.results import ScoreSet, recommended_method
from olmes.tables.robustness import VARIANT_ORDER


@dataclass(frozen=True)
class Measure:
    """One of our numbers: a fraction, its standard error, whether it comes from a partial run."""

    value: float
    stderr: float
    partial: bool


Getter = Callable[["Ours"], "Measure | None"]


@dataclass(frozen=True)
class PaperCell:
    """One cell the paper prints for a paper model, and how to read ours for it."""

    table: int
    task: str | None  # None: an average over tasks
    cell: str  # what the cell holds, as the paper's column says it
    printed: str  # as the paper prints it (one decimal, † where MCF won)
    ours: Getter
    choice: Callable[[Ours], dict | None] | None = None  # the best-of-two record, for the dagger check


class Ours:
    """An evaluated model's numbers, read the way the paper's cells are defined."""

    def __init__(self, scores: ScoreSet, model: str, table5: Table):
        self.scores, self.model = scores, model
        self.variants = {r["task"]: r for r in table5.records if r["model"] == model}

    def method(self, task: str, method: str, micro: bool = False) -> Measure | None:
        summary = self.scores.get(self.model, task)
        stats = None if summary is None else summary["methods"].get(method)
        if stats is None or (micro and "micro_accuracy" not in stats):
            return None
        value = stats["micro_accuracy"] if micro else stats["accuracy"]
        stderr = stats.get("micro_stderr" if micro else "stderr")
        return Measure(value, _stderr(stderr, value, stats["n"]), summary["partial"])

    def olmes(self, task: str) -> Measure | None:
        best = self.best_of_two(task)
        return None if best is None else self.method(task, best["method"])

    def best_of_two(self, task: str) -> dict | None:
        summary = self.scores.get(self.model, task)
        return None if summary is None else summary.get("best_of_two")

    def complete_mean(self, getters: list[Getter]) -> Measure | None:
        """The mean of ``getters``, only for a model complete on every task (as the tables' averages)."""
        return (
            mean(getter(self) for getter in getters)
            if self.scores.complete_on_all_tasks(self.model)
            else None
        )

    def variant(self, task: str, name: str) -> Measure | None:
        record = self.variants.get(task)
        best = None if record is None else record["scores"].get(name)
        if best is None:
            return None
        n = record["n"]
        return Measure(best["score"], _stderr(best.get("stderr"), best["score"], n), record["partial"])

    def variant_choice(self, task: str, name: str) -> dict | None:
        record = self.variants.get(task)
        return None if record is None else record["scores"].get(name)


def _stderr(recorded: float | None, value: float, n: int) -> float:
    if recorded is not None:
        return recorded
    computed = standard_error(value, n)
    return 0.0 if computed is None else computed


def mean(measures) -> Measure | None:
    """Mean of measures with the standard error of the mean (errors independent); None if any is None."""
    measures = list(measures)
    if not measures or any(m is None for m in measures):
        return None
    count = len(measures)
    stderr = math.sqrt(sum(m.stderr**2 for m in measures)) / count
    return Measure(sum(m.value for m in measures) / count, stderr, any(m.partial for m in measures))


# -- the paper's cells for one paper model ------------------------------------------------------------


def _rows(name: str, paper_model: str) -> list[dict[str, str]]:
    return [row for row in paper_table(name) if row["model"] == paper_model]


def paper_cells(paper_model: str) -> list[PaperCell]:
    """Every cell the paper prints for ``paper_model``, in the paper's table order."""
    cells = _olmes_cells(paper_model) + _cf_mcf_cells(paper_model)
    return (
        cells + _table8_cells(paper_model) + _normalization_cells(paper_model) + _variant_cells(paper_model)
    )


def _olmes_cells(paper_model: str) -> list[PaperCell]:
    """Tables 4 and 13 (Table 13's rows of the Table 4 models are Table 4's)."""
    cells = []
    for row in _rows("table13_olmes_more_models", paper_model):
        table = 4 if row["in_table4"] == "yes" else 13
        for task in TASKS:
            cells.append(
                PaperCell(
                    table,
                    task,
                    "OLMES",
                    row[task],
                    lambda o, t=task: o.olmes(t),
                    lambda o, t=task: o.best_of_two(t),
                )
            )
        getters = [lambda o, t=task: o.olmes(t) for task in TASKS]
        cells.append(
            PaperCell(table, None, "average", row["average"], lambda o, g=getters: o.complete_mean(g))
        )
    return cells


def _cf_mcf_cells(paper_model: str) -> list[PaperCell]:
    """Tables 6-7 per task (MCF then CF, the paper's order) and Table 7's averages."""
    cells = []
    for row in _rows("table6_7_cf_mcf", paper_model):
        task, table = row["task"], cf_mcf_table_number(row["task"])
        cells.append(PaperCell(table, task, "MCF", row[MCF], lambda o, t=task: o.method(t, MCF)))
        cells.append(
            PaperCell(table, task, "CF", row[CF], lambda o, t=task: o.method(t, recommended_method(t)))
        )
    mcf = [lambda o, t=task: o.method(t, MCF) for task in TASKS]
    cf = [lambda o, t=task: o.method(t, recommended_method(t)) for task in TASKS]
    best = [lambda o, t=task: o.olmes(t) for task in TASKS]
    averages = dict(zip(TABLE7_AVERAGES, (mcf, cf, mcf + cf, best), strict=True))
    for row in _rows("table7_averages", paper_model):
        columns = ("mcf_avg", "cf_avg", "all", "max")
        for (label, getters), column in zip(averages.items(), columns, strict=True):
            cells.append(
                PaperCell(7, None, f"average {label}", row[column], lambda o, g=getters: o.complete_mean(g))
            )
    return cells


def _table8_cells(paper_model: str) -> list[PaperCell]:
    cells = []
    for row in _rows("table8_mmlu_macro_micro", paper_model):
        for formulation, method in (("MCF", MCF), ("CF", recommended_method(TABLE8_TASK))):
            for kind in ("macro", "micro"):
                cells.append(
                    PaperCell(
                        8, TABLE8_TASK, f"{formulation} {kind}", row[f"{formulation.lower()}_{kind}"],
                        lambda o, m=method, micro=kind == "micro": o.method(TABLE8_TASK, m, micro),
                    )
                )  # fmt: skip
    return cells


def _normalization_cells(paper_model: str) -> list[PaperCell]:
    cells = []
    for row in _rows("table9_12_normalizations", paper_model):
        task = row["task"]
        for norm in PAPER_NORM_ORDER:
            method = cf_method(norm).key
            cells.append(
                PaperCell(
                    normalization_table_number(task), task, PAPER_NORM_LABEL[norm], row[norm],
                    lambda o, t=task, m=method: o.method(t, m),
                )
            )  # fmt: skip
    return cells


def _variant_cells(paper_model: str) -> list[PaperCell]:
    """Table 5: orig, each variant and their average (the average only where every variant was run)."""
    cells = []
    for row in _rows("table5_variants", paper_model):
        task = row["task"]
        for name in ("orig", *VARIANT_ORDER):
            cells.append(
                PaperCell(
                    5, task, name, row[name], lambda o, t=task, v=name: o.variant(t, v),
                    lambda o, t=task, v=name: o.variant_choice(t, v),
                )
            )  # fmt: skip
        getters = [lambda o, t=task, v=name: o.variant(t, v) for name in ("orig", *VARIANT_ORDER)]
        cells.append(PaperCell(5, task, "avg", row["avg"], lambda o, g=getters: mean(g_(o) for g_ in g)))
    return cells
