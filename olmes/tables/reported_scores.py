"""The OLMES paper's 15 models of Tables 4-12 as the tables of accuracies read them: per model and task
the accuracies the paper prints, in the shape of the part of a score summary those tables read.

What is printed, per model and task: CF under the task's recommended normalization and MCF (Tables
6-7), and CF under every normalization (Tables 9-12, every task but WinoGrande, where the paper says
normalization changes nothing). Nothing else: the paper gives no standard errors, counts or
predictions, so a reported summary has none and never stands for an OLMES run. Every number the
tables derive from these (a best normalization, a win rate, a gap to the best, an average) is
computed by the same rules as for an evaluated model, from the printed one-decimal cells; where that
differs from what the paper prints, :mod:`olmes.tables.table3_check` says where and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from olmes.core.errors import OlmesError
from olmes.core.methods import MCF, NORMALIZATIONS, cf_method
from olmes.core.tasks import TASKS
from olmes.tables.reported import PAPER_SOURCE, paper_table, paper_value
from olmes.tables.results import ModelInfo

REPORTED_GROUP = f"Reported in the {PAPER_SOURCE}: its printed accuracies, not evaluated here"
"""The label of the reported models' rows in a table that also has evaluated ones."""


@dataclass(frozen=True)
class ReportedScores:
    """The paper's models whose accuracies it prints per task, in its order (by overall performance,
    weakest first), each model x task an accuracies-only summary: ``model``, ``task``, ``partial`` (never),
    ``methods`` (method key -> ``{"accuracy": fraction}``) and ``best_of_two`` (``{"score"}``: the
    larger of CF and MCF, the OLMES score)."""

    models: list[ModelInfo]
    summaries: dict[tuple[str, str], dict]
    averages: dict[str, float]  # each model's OLMES average as the paper prints it (Table 4), a fraction

    def get(self, model: str, task: str) -> dict | None:
        return self.summaries.get((model, task))

    def model_is_partial(self, model: str) -> bool:
        return False

    def complete_on_all_tasks(self, model: str) -> bool:
        return all((model, task) in self.summaries for task in TASKS)

    def average(self, model: str) -> float:
        """The model's OLMES average as the paper prints it (Table 4), as a fraction."""
        return self.averages[model]


@cache
def reported_scores() -> ReportedScores:
    """The 15 models of the paper's Tables 6-7 (and 9-12), from its data files."""
    summaries: dict[tuple[str, str], dict] = {}
    for row in paper_table("table6_7_cf_mcf"):
        recommended = cf_method(TASKS[row["task"]].recommended_norm).key
        methods = {recommended: _accuracy(row["cf"]), MCF: _accuracy(row["mcf"])}
        best = {"score": max(accuracy["accuracy"] for accuracy in methods.values())}
        summaries[(row["model"], row["task"])] = {
            "model": row["model"], "task": row["task"], "partial": False,
            "methods": methods, "best_of_two": best,
        }  # fmt: skip
    for row in paper_table("table9_12_normalizations"):
        methods = summaries[(row["model"], row["task"])]["methods"]
        printed = {cf_method(norm).key: _accuracy(row[norm]) for norm in NORMALIZATIONS}
        _check_agrees(row, methods, printed)
        methods.update(printed)
    names = list(dict.fromkeys(model for model, _ in summaries))
    printed = {row["model"]: paper_value(row["average"]).value / 100 for row in paper_table("table4_olmes")}
    averages = {name: printed[name] for name in names}
    return ReportedScores([ModelInfo(name, name) for name in names], summaries, averages)


def _accuracy(text: str) -> dict[str, float]:
    """A printed percentage (one decimal) as a method's accuracy, a fraction without float noise."""
    return {"accuracy": round(paper_value(text).value / 100, 3)}


def _check_agrees(row: dict[str, str], methods: dict, printed: dict) -> None:
    """Tables 9-12's cell of the recommended normalization is Tables 6-7's CF (the paper data's checks
    say so); a copy that disagrees is a broken install, never two numbers for one cell."""
    key = cf_method(TASKS[row["task"]].recommended_norm).key
    if printed[key] != methods[key]:
        raise OlmesError(
            f"paper data: {row['model']} on {row['task']}: Tables 9-12 print {printed[key]} and Tables 6-7 "
            f"{methods[key]} for the same CF accuracy; reinstall olmes"
        )
