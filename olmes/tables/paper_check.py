"""The paper check: an evaluated model that regenerates a paper model (``ModelInfo.paper_model``),
compared with the paper's published numbers cell by cell.

For each mapped model, every cell the paper has for its paper model (:mod:`olmes.tables.paper_cells`;
``paper_data/``, read through :mod:`olmes.tables.reported`): Table 4 (or 13) OLMES score per task
and average, Tables 6-7 CF and MCF per task and Table 7's four averages, Tables 10-12 every
normalization per task, Table 8 MMLU macro and micro, and Table 5's prompt variants where the
variants were run here. Table 9's value is the recommended column of Tables 10-12 and its diff a
difference of two cells, so neither is a cell of its own.

The rule: a cell agrees when |ours - paper| <= 2 x (standard error of ours) + 0.05 points, the
0.05 being the paper's rounding to one decimal. The standard error is the summary's (binomial,
sqrt(p (1 - p) / (n - 1)), MMLU's macro from its subjects), recomputed from p and n where the
summary has none; an average's is the standard error of the mean, the tasks' errors combined as
independent (sqrt(sum of squares) / count). A cell we have no value for (task not run, average of
an incomplete run, variant not run) is "not evaluated", counted apart.

The dagger check (did MCF or CF decide the OLMES score, as the paper's † says) is reported apart:
a different choice whose score still agrees with the paper's is "differs within tolerance" (the two
formulations are close) and is not a disagreement.
"""

from __future__ import annotations

from dataclasses import dataclass

from olmes.tables.paper_cells import Measure, Ours, PaperCell, paper_cells
from olmes.tables.render import MISSING, PARTIAL_MARK, Cell, Table, text_cell
from olmes.tables.reported import PAPER_SOURCE, PaperValue, paper_value
from olmes.tables.results import ScoreSet, task_name

STDERR_FACTOR = 2.0
ROUNDING_POINTS = 0.05
"""Half the last printed digit of the paper's percentages."""

PAPER_CHECK_KEYS = ("paper_check_summary", "paper_check", "paper_check_daggers")
ALL_TASKS = "all tasks"
DISAGREE, AGREE, NOT_EVALUATED = "no", "yes", "not evaluated"
SAME, WITHIN, DIFFERS = "same", "differs within tolerance", "differs"

RULE = (
    f"A cell agrees when |ours - paper| <= {STDERR_FACTOR:g} x the standard error of ours + "
    f"{ROUNDING_POINTS} points (the paper rounds to one decimal); an average's standard error is that of "
    "the mean (the tasks' errors combined as independent)."
)


# -- the check ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Checked:
    """One cell compared: ours (or None), the paper's, and the verdict."""

    model: str
    display_name: str
    paper_model: str
    cell: PaperCell
    paper: PaperValue
    ours: Measure | None
    choice: dict | None  # our best-of-two record behind the cell, for the dagger check

    @property
    def tolerance(self) -> float | None:
        return None if self.ours is None else STDERR_FACTOR * 100 * self.ours.stderr + ROUNDING_POINTS

    @property
    def difference(self) -> float | None:
        return None if self.ours is None else 100 * self.ours.value - self.paper.value

    @property
    def verdict(self) -> str:
        if self.ours is None:
            return NOT_EVALUATED
        return AGREE if abs(self.difference) <= self.tolerance + 1e-9 else DISAGREE


def check_model(scores: ScoreSet, model: str, table5: Table) -> list[Checked]:
    info = next(info for info in scores.models if info.name == model)
    ours = Ours(scores, model, table5)
    return [
        Checked(
            model, info.display_name, info.paper_model, cell, paper_value(cell.printed), cell.ours(ours),
            None if cell.choice is None else cell.choice(ours),
        )
        for cell in paper_cells(info.paper_model)
        if cell.table != 5 or cell.task in ours.variants  # Table 5 only where the variants were run here
    ]  # fmt: skip


def _where(checked: Checked) -> list[Cell]:
    cell = checked.cell
    return [
        text_cell(checked.display_name),
        text_cell(checked.paper_model),
        Cell(cell.table, f"Table {cell.table}"),
        text_cell(ALL_TASKS if cell.task is None else task_name(cell.task)),
        text_cell(cell.cell),
    ]


def _points(value: float | None, signed: bool = False) -> Cell:
    return Cell(value, MISSING if value is None else f"{value:{'+' if signed else ''}.2f}")


def _cells_table(checked: list[Checked]) -> Table:
    groups = {DISAGREE: [], AGREE: [], NOT_EVALUATED: []}
    records = []
    for item in checked:
        ours = item.ours
        shown_ours = _points(None if ours is None else 100 * ours.value)
        if ours is not None and ours.partial:
            shown_ours = Cell(shown_ours.value, shown_ours.display + PARTIAL_MARK)
        row = _where(item) + [text_cell(item.verdict), shown_ours, Cell(item.paper.value, item.cell.printed)]
        row += [_points(item.difference, signed=True), _points(item.tolerance)]
        groups[item.verdict].append(row)
        records.append(_record(item))
    order = {DISAGREE: 0, AGREE: 1, NOT_EVALUATED: 2}
    records.sort(key=lambda record: order[record["verdict"]])  # stable: the paper's order within
    labels = {DISAGREE: "Disagree", AGREE: "Agree", NOT_EVALUATED: "Not evaluated here"}
    header = ["Model", "Paper model", "Table", "Task", "Cell", "Agrees", "Ours", "Paper", "Diff", "Tolerance"]
    caption = (
        f"Every cell the {PAPER_SOURCE} prints for the paper model an evaluated model regenerates "
        "(models file: paper_model), disagreements first; values in %, Diff = ours - paper in points. "
        f"{RULE} "
        "Not evaluated: a task, variant or average (it needs every task, none partial) not run here. "
        f"{PARTIAL_MARK} marks ours from a partial run."
    )
    if not checked:
        caption += " No evaluated model names a paper_model: nothing to check."
    return Table(
        "paper_check", "Paper check: every cell", caption, header,
        [(labels[verdict], rows) for verdict, rows in groups.items() if rows], records, text_columns=6,
    )  # fmt: skip


def _record(item: Checked) -> dict:
    ours = item.ours
    return {
        "model": item.model, "display_name": item.display_name, "paper_model": item.paper_model,
        "table": item.cell.table, "task": item.cell.task, "cell": item.cell.cell,
        "paper_printed": item.cell.printed, "paper_pct": item.paper.value,
        "ours_pct": None if ours is None else 100 * ours.value,
        "stderr_pct": None if ours is None else 100 * ours.stderr,
        "partial": None if ours is None else ours.partial,
        "diff_pct": item.difference, "tolerance_pct": item.tolerance, "verdict": item.verdict,
    }  # fmt: skip


def _dagger_verdict(item: Checked, ours_dagger: bool) -> str:
    if ours_dagger == item.paper.dagger:
        return SAME
    return WITHIN if item.verdict == AGREE else DIFFERS


def _formulation(dagger: bool) -> str:
    return "MCF" if dagger else "CF"


def _dagger_rows(checked: list[Checked]) -> list[tuple[list[Cell], dict]]:
    rows = []
    for item in checked:
        choice = item.choice
        if choice is None:
            continue
        verdict = _dagger_verdict(item, choice["dagger"])
        row = _where(item) + [
            text_cell(verdict),
            text_cell(_formulation(choice["dagger"])),
            text_cell(_formulation(item.paper.dagger)),
        ]
        row += [_points(100 * choice["cf_accuracy"]), _points(100 * choice["mcf_accuracy"])]
        record = {
            "model": item.model, "paper_model": item.paper_model, "table": item.cell.table,
            "task": item.cell.task, "cell": item.cell.cell, "ours_mcf": choice["dagger"],
            "paper_mcf": item.paper.dagger, "cf_accuracy": choice["cf_accuracy"],
            "mcf_accuracy": choice["mcf_accuracy"], "verdict": verdict,
        }  # fmt: skip
        rows.append((row, record))
    return rows


def _daggers_table(rows: list[tuple[list[Cell], dict]]) -> Table:
    groups = {DIFFERS: [], WITHIN: [], SAME: []}
    rows = sorted(rows, key=lambda item: list(groups).index(item[1]["verdict"]))  # stable
    for row, record in rows:
        groups[record["verdict"]].append(row)
    header = ["Model", "Paper model", "Table", "Task", "Cell", "Choice", "Ours", "Paper", "Our CF", "Our MCF"]
    caption = (
        "Which formulation decided each OLMES score (the paper's †: MCF), ours beside the paper's; "
        "a different choice whose score still agrees with the paper's (the cell's tolerance) differs "
        "within tolerance and is not a disagreement. Our CF (recommended normalization) and MCF in %."
    )
    labelled = [(verdict.capitalize(), group) for verdict, group in groups.items() if group]
    records = [record for _, record in rows]
    return Table(
        "paper_check_daggers",
        "Paper check: MCF or CF (†)",
        caption,
        header,
        labelled,
        records,
        text_columns=8,
    )


def _summary_table(models: list[tuple[str, str, str]], checked: list[Checked], daggers: list[dict]) -> Table:
    header = ["Model", "Paper model", "Result", "Cells", "Agree", "Disagree", "Not evaluated"]
    header += ["† same", "† within tolerance", "† differs"]
    rows, records = [], []
    for model, display_name, paper_model in models:
        mine = [item for item in checked if item.model == model]
        counts = {
            verdict: sum(item.verdict == verdict for item in mine)
            for verdict in (AGREE, DISAGREE, NOT_EVALUATED)
        }
        marks = {
            v: sum(d["verdict"] == v for d in daggers if d["model"] == model) for v in (SAME, WITHIN, DIFFERS)
        }
        compared = counts[AGREE] + counts[DISAGREE]
        line = f"{counts[AGREE]} of {compared} cells agree"
        if counts[NOT_EVALUATED]:
            line += f" ({counts[NOT_EVALUATED]} not evaluated)"
        numbers = [compared, counts[AGREE], counts[DISAGREE], counts[NOT_EVALUATED], *marks.values()]
        rows.append(
            [text_cell(display_name), text_cell(paper_model), text_cell(line)]
            + [Cell(n, str(n)) for n in numbers]
        )
        records.append({
            "model": model, "display_name": display_name, "paper_model": paper_model, "summary": line,
            "compared": compared, "agree": counts[AGREE], "disagree": counts[DISAGREE],
            "not_evaluated": counts[NOT_EVALUATED], "daggers": marks,
        })  # fmt: skip
    caption = f"Per evaluated model with a paper_model: how many of the paper's cells it reproduces. {RULE}"
    return Table(
        "paper_check_summary", "Paper check", caption, header, [(None, rows)] if rows else [], records,
        text_columns=3,
    )  # fmt: skip


def paper_check_tables(scores: ScoreSet, table5: Table) -> list[Table]:
    """The tables of :data:`PAPER_CHECK_KEYS`: per mapped model a summary line, every cell, the daggers.
    ``table5`` is the built Table 5 (its records hold the prompt variants' scores)."""
    mapped = [(info.name, info.display_name, info.paper_model) for info in scores.models if info.paper_model]
    mapped = [entry for entry in mapped if any(model == entry[0] for model, _ in scores.summaries)]
    checked = [item for model, _, _ in mapped for item in check_model(scores, model, table5)]
    daggers = _dagger_rows(checked)
    return [
        _summary_table(mapped, checked, [record for _, record in daggers]),
        _cells_table(checked),
        _daggers_table(daggers),
    ]
