"""Score summaries -> the paper's tables (docs/standard.md section 5): their definitions and
``build_tables``, which writes them with the figure data and the paired bootstrap under one folder.

Every table is written three ways (:mod:`olmes.tables.render`): ``<key>.csv`` (the table as displayed:
percentages with one decimal, † where MCF won, ᵖ on partial cells), ``<key>.json`` (the displayed
rows plus structured records and the cells' values at full precision) and ``<key>.tex`` (a booktabs
``table``). Figure data (:mod:`olmes.tables.figures`) is written as CSV and JSON only. ``index.json``
lists every file and the inputs.

Rules that hold in every table: an average over tasks is given only when the model has every task
and none is partial; a partial result (a limit, or fewer instances than the standard) carries ᵖ, its
model sits in a separate "partial runs" group, and it is never shown as an OLMES score.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from olmes import __version__
from olmes.core.atomic import write_json_atomic
from olmes.core.methods import CF, MCF, MCF_METHOD, NORMALIZATIONS, cf_method
from olmes.core.records import (
    LeaderboardRow,
    LeaderboardTask,
    RobustnessInput,
    ScoreSummary,
    TablesIndex,
    TaskFlag,
)
from olmes.core.resources import file_sha256
from olmes.core.tasks import TASKS
from olmes.scoring.predictions import NEAR_TIE_NATS
from olmes.tables.bootstrap import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, bootstrap_table
from olmes.tables.figures import write_figures
from olmes.tables.paper_check import PAPER_CHECK_KEYS, paper_check_tables
from olmes.tables.paper_layouts import (
    CF_MCF_TABLE_KEYS,
    NORMALIZATION_LAYOUT_KEYS,
    cf_mcf_tables,
    cf_summaries,
    compared_norms,
    normalization_layout_tables,
    task_wins,
)
from olmes.tables.render import (
    DAGGER,
    MISSING,
    PARTIAL_MARK,
    Cell,
    Table,
    percent,
    percent_cell,
    text_cell,
    write_table,
)
from olmes.tables.reported import (
    EVALUATED_SOURCE,
    PAPER_SOURCE,
    reported_input,
    reported_leaderboard_rows,
)
from olmes.tables.results import (
    PARTIAL_GROUP,
    PARTIAL_NOTE,
    ScoreSet,
    best_of_two_score,
    best_of_two_stderr,
    method_accuracy,
    recommended_method,
    task_name,
    task_short_name,
)
from olmes.tables.robustness import rotations_table, table5

# -- tables with one row per model and one column per task -----------------------------------------


CellFn = Callable[[dict], tuple[float | None, str, dict]]
"""summary -> (value, display text, record fields) for one model x task cell."""


def model_task_table(
    scores: ScoreSet,
    key: str,
    title: str,
    caption: str,
    cell: CellFn,
    averages: dict[str, Callable[[str], float | None]],
    average_cell: Callable[[float | None], Cell] = percent_cell,
) -> Table:
    """Rows = models (complete group first, then partial runs), columns = tasks + average columns.

    ``averages`` maps a column label to a function of the model; it is only called for models that
    have every task of the registry complete (otherwise the column shows "—").
    """
    header = ["Model"] + [task_name(task) for task in scores.tasks] + list(averages)
    complete_rows, partial_rows, records = [], [], []
    for info in scores.models:
        summaries = {task: scores.get(info.name, task) for task in scores.tasks}
        if all(s is None for s in summaries.values()):
            continue
        partial = scores.model_is_partial(info.name)
        row = [text_cell(info.display_name + (" (partial)" if partial else ""))]
        record = {"model": info.name, "display_name": info.display_name, "partial": partial, "tasks": {}}
        for task, summary in summaries.items():
            value, text, fields = cell(summary) if summary is not None else (None, MISSING, {})
            marked = summary is not None and summary["partial"] and text != MISSING
            row.append(Cell(value, text + (PARTIAL_MARK if marked else "")))
            if summary is not None:
                record["tasks"][task] = {"value": value, "partial": summary["partial"], **fields}
        complete = scores.complete_on_all_tasks(info.name)
        for label, average in averages.items():
            value = average(info.name) if complete else None
            row.append(average_cell(value))
            record[label] = value
        (partial_rows if partial else complete_rows).append(row)
        records.append(record)
    groups = [(None, complete_rows)] if complete_rows else []
    if partial_rows:
        groups.append((PARTIAL_GROUP, partial_rows))
    short = ["Model"] + [task_short_name(task) for task in scores.tasks] + list(averages)
    return Table(key, title, caption + " " + PARTIAL_NOTE, header, groups, records, latex_header=short)


def _mean_over_tasks(scores: ScoreSet, model: str, value: Callable[[dict], float | None]) -> float | None:
    values = [value(scores.get(model, task)) for task in TASKS]
    return None if any(v is None for v in values) else float(np.mean(values))


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
        cell, {"Average": lambda model: _mean_over_tasks(scores, model, best_of_two_score)},
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
        {"Average": average, "Max average": lambda model: _mean_over_tasks(scores, model, best_of_two_score)},
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


# -- Table 3: which normalization wins ------------------------------------------------------------


def table3(scores: ScoreSet) -> Table:
    wins_rows = {norm: [text_cell(norm)] for norm in NORMALIZATIONS}
    extra_rows = {label: [text_cell(label)] for label in ("OLMES choice", "Diff oracle", "Models")}
    records = []
    for task in scores.tasks:
        summaries = cf_summaries(scores, task)
        compared = compared_norms(summaries)
        recommended = TASKS[task].recommended_norm
        record = task_wins(summaries, compared, recommended)
        record.update(task=task, recommended_norm=recommended, compared_norms=compared)
        records.append(record)
        for norm in NORMALIZATIONS:
            wins_rows[norm].append(percent_cell(record["win_rate"].get(norm)))
        extra_rows["OLMES choice"].append(text_cell(recommended))
        extra_rows["Diff oracle"].append(percent_cell(record["diff_oracle"]))
        partial = sum(s["partial"] for s in summaries)
        models = f"{len(summaries)}" + (f" ({partial}{PARTIAL_MARK})" if partial else "")
        extra_rows["Models"].append(Cell(len(summaries), models))
    caption = (
        "Win % of each CF normalization over the models evaluated on the task. Ties: every normalization "
        "whose accuracy equals the best counts as a winner, so a column can add up to more than 100%. "
        "Only normalizations present for every model compete (pmi needs unconditional requests; "
        f"{MISSING} otherwise). Diff oracle = mean over models of (best normalization's accuracy - "
        "recommended normalization's accuracy), in points. Models counts partial runs with "
        f"{PARTIAL_MARK}; their accuracies are over the instances they scored."
    )
    header = ["Normalization"] + [task_name(task) for task in scores.tasks]
    short = ["Normalization"] + [task_short_name(task) for task in scores.tasks]
    groups = [(None, list(wins_rows.values())), (None, list(extra_rows.values()))]
    return Table(
        "table3_normalizations",
        "CF normalizations compared (paper Table 3)",
        caption,
        header,
        groups,
        records,
        latex_header=short,
    )


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


# -- the leaderboard: the rows the site shows -------------------------------------------------------


def leaderboard_table(
    scores: ScoreSet, table4: Table, bootstrap: Table, flags: list[dict], reported: bool = False
) -> Table:
    """The leaderboard as data (:class:`~olmes.core.records.LeaderboardRow` records, in rank order): per
    model its rank and Table 4's average with its standard error, per task the OLMES score and what
    is shown beside it (standard error, formulation, CF and MCF accuracies, n, the models it is
    statistically tied with in ``bootstrap``, chance, the ``flags`` of its two formulations).

    Order: complete models (no partial result) first, by average, highest first; those without an
    average after them, by the mean of the scores they have; then by display name. Partial runs come
    last and are never ranked; a rank is the position among the models that have an average.

    With ``reported``, the paper's Table 13 models join as reported rows (``kind`` and ``source`` on
    every row): one ranking over both kinds, by average as above (a reported average is the printed
    one, to one decimal); a reported row has no standard error and is tied with nothing.
    """
    averages = {record["model"]: record for record in table4.records}
    ties = _bootstrap_ties(bootstrap.records)
    by_cell: dict[tuple[str, str], list[TaskFlag]] = {}
    for flag in flags:
        by_cell.setdefault((flag["model"], flag["task"]), []).append(
            {"code": flag["code"], "method": flag["method"], "message": flag["message"]}
        )
    rows: list[LeaderboardRow] = []
    for info in scores.models:
        if all(scores.get(info.name, task) is None for task in scores.tasks):
            continue
        average = averages.get(info.name, {})
        tasks = {
            task: _leaderboard_task(
                scores, info.name, task, ties.get((info.name, task), []), by_cell.get((info.name, task), [])
            )
            for task in scores.tasks
        }
        rows.append({
            "rank": None, "model": info.name, "display_name": info.display_name,
            "partial": scores.model_is_partial(info.name), "average": average.get("Average"),
            "average_stderr": average.get("average_stderr"), "tasks": tasks,
        })  # fmt: skip
    if reported:
        for row in rows:
            row.update(kind="evaluated", source=EVALUATED_SOURCE)
        rows += reported_leaderboard_rows(scores.tasks)
    rows.sort(key=_rank_key)
    for position, row in enumerate(row for row in rows if row["average"] is not None):
        row["rank"] = position + 1
    return _leaderboard_display(scores, rows, reported)


def _bootstrap_ties(records: list[dict]) -> dict[tuple[str, str], list[str]]:
    """(model, task) -> the models the paired bootstrap found statistically tied with it there."""
    ties: dict[tuple[str, str], list[str]] = {}
    for record in records:
        if record.get("tied"):
            ties.setdefault((record["higher"], record["task"]), []).append(record["lower"])
            ties.setdefault((record["lower"], record["task"]), []).append(record["higher"])
    return ties


def _leaderboard_task(
    scores: ScoreSet, model: str, task: str, tied: list[str], flags: list[TaskFlag]
) -> LeaderboardTask | None:
    summary = scores.get(model, task)
    if summary is None:
        return None
    best = summary.get("best_of_two")
    formulations = (best["cf_method"], MCF) if best else ()  # the two formulations of the score
    return {
        "score": best["score"] if best else None,
        "stderr": best_of_two_stderr(summary),
        "formulation": best["formulation"] if best else None,
        "dagger": bool(best and best["dagger"]),
        "partial": summary["partial"],
        "cf_accuracy": best["cf_accuracy"] if best else None,
        "mcf_accuracy": best["mcf_accuracy"] if best else None,
        "n": summary["n_instances"],
        "statistically_tied_with": tied,
        "method": best["method"] if best else None,
        "chance": scores.digest(model, task).chance,
        "flags": [flag for flag in flags if flag["method"] in formulations],
    }


def _rank_key(row: LeaderboardRow) -> tuple:
    available = [cell["score"] for cell in row["tasks"].values() if cell and cell["score"] is not None]
    mean_available = float(np.mean(available)) if available else -1.0
    average = row["average"]
    return (row["partial"], average is None, -(average or 0.0), -mean_available, row["display_name"])


def _leaderboard_display(scores: ScoreSet, rows: list[LeaderboardRow], reported: bool) -> Table:
    kind_columns = ["Kind", "Source"] if reported else []
    header = ["Model", *kind_columns, "Rank", "Average", "s.e."] + [task_name(task) for task in scores.tasks]
    short = ["Model", *kind_columns, "Rank", "Average", "s.e."] + [task_short_name(t) for t in scores.tasks]
    groups: dict[bool, list[list[Cell]]] = {False: [], True: []}
    for row in rows:
        cells = [
            text_cell(row["display_name"] + (" (partial)" if row["partial"] else "")),
            *([text_cell(row["kind"]), text_cell(row["source"])] if reported else []),
            Cell(None, MISSING) if row["rank"] is None else Cell(row["rank"], str(row["rank"])),
            percent_cell(row["average"]),
            percent_cell(row["average_stderr"]),
        ]
        for task in scores.tasks:
            cell = row["tasks"][task]
            if cell is None or cell["score"] is None:
                cells.append(Cell(None, MISSING))
                continue
            marks = (DAGGER if cell["dagger"] else "") + (PARTIAL_MARK if cell["partial"] else "")
            cells.append(Cell(cell["score"], percent(cell["score"]) + marks))
        groups[row["partial"]].append(cells)
    caption = (
        f"The leaderboard the site shows, as data: OLMES score (%) per model and task, {DAGGER} where MCF "
        "won; Average and its standard error (s.e.) from Table 4. Rank among the models with an "
        "average, highest first; models without one follow by the mean of the scores they have. The "
        "JSON records add per task the standard error, formulation, CF and MCF accuracies, n, the models "
        "statistically tied with (paired bootstrap), the accuracy of guessing and the flags of the "
        "score's two formulations."
    ) + (REPORTED_NOTE if reported else "")
    labelled = [(None, groups[False])] if groups[False] else []
    labelled += [(PARTIAL_GROUP, groups[True])] if groups[True] else []
    return Table(
        "leaderboard", "Leaderboard", caption + " " + PARTIAL_NOTE, header, labelled, rows,
        latex_header=short, text_columns=1 + len(kind_columns),
    )  # fmt: skip


REPORTED_NOTE = (
    f" Rows of kind 'reported' are copied from the {PAPER_SOURCE}, Table 13, not computed here: no "
    f"standard error, never statistically tied with anything, {DAGGER} as the paper prints it; they are "
    "ranked together with the evaluated rows by average (the paper's, to one decimal)."
)


# -- everything -------------------------------------------------------------------------------------


@dataclass
class TableInputs:
    """What the table builders read: the scores, the bootstrap's settings, the tables built so far
    (a builder may use those of the builders before it) and the flags, computed once."""

    scores: ScoreSet
    resamples: int = BOOTSTRAP_RESAMPLES
    seed: int = BOOTSTRAP_SEED
    reported: bool = False  # the leaderboard adds the paper's reported rows
    built: dict[str, Table] = field(default_factory=dict)
    _flags: list[dict] | None = None

    def flags(self) -> list[dict]:
        if self._flags is None:
            self._flags = flag_rows(self.scores)
        return self._flags


@dataclass(frozen=True)
class TableBuilder:
    """One entry of :data:`TABLE_BUILDERS`: the keys of the tables it builds, in order, and how."""

    keys: tuple[str, ...]
    build: Callable[[TableInputs], list[Table]]


TABLE_BUILDERS = (
    TableBuilder(("table3_normalizations",), lambda given: [table3(given.scores)]),
    TableBuilder(("table4_olmes",), lambda given: [table4(given.scores)]),
    TableBuilder(CF_MCF_TABLE_KEYS, lambda given: cf_mcf_tables(given.scores)),
    TableBuilder(tuple(map(table8_key, SUBJECT_TASKS)), lambda given: table8(given.scores)),
    TableBuilder(NORMALIZATION_LAYOUT_KEYS, lambda given: normalization_layout_tables(given.scores)),
    TableBuilder(("cf_accuracy",), lambda given: [cf_accuracy_table(given.scores)]),
    TableBuilder(("mcf_accuracy",), lambda given: [mcf_accuracy_table(given.scores)]),
    TableBuilder(
        tuple(key for key, _ in NORMALIZATION_TABLES), lambda given: normalization_tables(given.scores)
    ),
    TableBuilder(("near_ties",), lambda given: [near_ties_table(given.scores)]),
    TableBuilder(("bpb",), lambda given: [bpb_table(given.scores)]),
    TableBuilder(
        ("paired_bootstrap",), lambda given: [bootstrap_table(given.scores, given.resamples, given.seed)]
    ),
    TableBuilder(("table5_variants",), lambda given: [table5(given.scores)]),
    TableBuilder(("rotations",), lambda given: [rotations_table(given.scores)]),
    TableBuilder(
        PAPER_CHECK_KEYS,
        lambda given: paper_check_tables(given.scores, given.built["table5_variants"]),
    ),
    TableBuilder(
        ("leaderboard",),
        lambda given: [
            leaderboard_table(
                given.scores,
                given.built["table4_olmes"],
                given.built["paired_bootstrap"],
                given.flags(),
                given.reported,
            )
        ],
    ),
)
"""Every table of the tables folder, in the order they are built and written: adding a table means
adding its builder here (``olmes site`` reads the tables by these keys)."""

TABLE_KEYS = tuple(key for builder in TABLE_BUILDERS for key in builder.keys)


def all_tables(
    scores: ScoreSet, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> list[Table]:
    return _build_all(TableInputs(scores, resamples, seed))


def _build_all(given: TableInputs) -> list[Table]:
    for builder in TABLE_BUILDERS:
        tables = builder.build(given)
        keys = tuple(table.key for table in tables)
        if keys != builder.keys:
            raise RuntimeError(f"the table builder of {builder.keys} built {keys}")
        given.built.update((table.key, table) for table in tables)
    return list(given.built.values())


def build_tables(
    scores: ScoreSet,
    out: str | Path,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    reported: bool = False,
) -> list[Path]:
    """Write every table, the figure data and ``index.json`` under ``out``; return the paths written.
    ``reported`` adds the paper's reported rows to the leaderboard (:func:`leaderboard_table`)."""
    out = Path(out)
    given = TableInputs(scores, resamples, seed, reported)
    written = []
    for table in _build_all(given):
        written += write_table(table, out)
    written += write_figures(scores, out)
    written.append(write_flags(given.flags(), out))
    index = out / "index.json"
    document = _index(scores, written, resamples, seed)
    if reported:
        document["reported"] = reported_input()
    write_json_atomic(index, document)
    return [*written, index]


def flag_rows(scores: ScoreSet) -> list[dict]:
    """Every flag of every model x task (olmes/scoring/flags.py), each with its ``model`` and ``task``."""
    return [
        {"model": model, "task": task, **flag}
        for (model, task), summary in sorted(scores.summaries.items())
        for flag in scores.digest(model, task).flags
    ]


def write_flags(rows: list[dict], out: Path) -> Path:
    """``flags.json``: the flags of :func:`flag_rows`, for the site to show."""
    path = out / "flags.json"
    write_json_atomic(path, {"flags": rows})
    return path


def _index(scores: ScoreSet, written: list[Path], resamples: int, seed: int) -> TablesIndex:
    return {
        "olmes_version": __version__,
        "files": [path.name for path in written],
        "models": [vars(info) for info in scores.models],
        "tasks": scores.tasks,
        "bootstrap": {"resamples": resamples, "seed": seed},
        "inputs": [
            {
                "model": model,
                "task": task,
                "path": str(path),
                "sha256": file_sha256(path),
                "partial": scores.summaries[(model, task)]["partial"],
            }
            for (model, task), path in sorted(scores.paths.items())
        ],  # fmt: skip
        "robustness_inputs": robustness_inputs(scores),
    }


def robustness_inputs(scores: ScoreSet) -> list[RobustnessInput]:
    """The prompt-variant summaries and rotations reports the tables were built from, by SHA-256."""
    return [
        {"result": list(key), "path": str(path), "sha256": file_sha256(path)}
        for key, path in sorted(scores.robustness_paths.items())
    ]
