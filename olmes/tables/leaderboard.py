"""The leaderboard as data: the rows the site shows, ranked, with Table 4's averages, the paired
bootstrap's ties and the flags of each score (``olmes tables``' ``leaderboard``)."""

from __future__ import annotations

import typing
from dataclasses import asdict

import numpy as np

from olmes.core.methods import MCF
from olmes.core.records import LeaderboardRow, LeaderboardTask, TaskFlag
from olmes.core.records.tables import INTERVAL_FIELDS
from olmes.tables.bootstrap import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
from olmes.tables.rank_intervals import RankInterval, rank_intervals
from olmes.tables.render import DAGGER, MISSING, PARTIAL_MARK, Cell, Table, percent, percent_cell, text_cell
from olmes.tables.reported import EVALUATED_SOURCE, PAPER_SOURCE, reported_leaderboard_rows
from olmes.tables.results import (
    PARTIAL_GROUP,
    PARTIAL_NOTE,
    ScoreSet,
    best_of_two_stderr,
    task_name,
    task_short_name,
)


def leaderboard_table(
    scores: ScoreSet,
    table4: Table,
    bootstrap: Table,
    flags: list[dict],
    reported: bool = False,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> Table:
    """The leaderboard as data (:class:`~olmes.core.records.LeaderboardRow` records, in rank order): per
    model its rank and Table 4's average with its standard error, the 95% intervals of both and its
    tie group (:mod:`olmes.tables.rank_intervals`, ``resamples`` draws seeded by ``seed``), per task
    the OLMES score and what is shown beside it (standard error, formulation, CF and MCF accuracies,
    n, the models it is statistically tied with in ``bootstrap``, chance, the ``flags`` of its two
    formulations).

    Order: complete models (no partial result) first, by average, highest first; those without an
    average after them, by the mean of the scores they have; then by display name. Partial runs come
    last and are never ranked; a rank is the position among the models that have an average.

    With ``reported``, the paper's Table 13 models join as reported rows (``kind`` and ``source`` on
    every row): one ranking over both kinds, by average as above (a reported average is the printed
    one, to one decimal); a reported row has no standard error, is tied with nothing on a task and
    has binomial intervals (:mod:`olmes.tables.rank_intervals`).
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
            "partial": scores.model_is_partial(info.name),
            "average": average.get("averages", {}).get("Average"),
            "average_stderr": average.get("average_stderr"), "tasks": tasks,
        })  # fmt: skip
    if reported:
        for row in rows:
            row.update(kind="evaluated", source=EVALUATED_SOURCE)
        rows += reported_leaderboard_rows(scores.tasks)
    rows.sort(key=_rank_key)
    ranked = [row for row in rows if row["average"] is not None]
    for position, row in enumerate(ranked):
        row["rank"] = position + 1
    intervals = iter(rank_intervals(scores, ranked, resamples, seed))  # in the order of rows
    rows = [_with_interval(row, None if row["rank"] is None else next(intervals)) for row in rows]
    return _leaderboard_display(scores, rows, reported)


RECORD_FIELDS = tuple(typing.get_type_hints(LeaderboardRow))


def _with_interval(row: LeaderboardRow, interval: RankInterval | None) -> LeaderboardRow:
    """``row`` with its interval fields (None without a rank), every field in the record's order."""
    fields = {**row, **(asdict(interval) if interval else dict.fromkeys(INTERVAL_FIELDS))}
    return {key: fields[key] for key in RECORD_FIELDS if key in fields}


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
    ranking = ["Rank", RANK_CI, TIE_GROUP, "Average", "s.e."]
    header = ["Model", *kind_columns, *ranking] + [task_name(task) for task in scores.tasks]
    short = ["Model", *kind_columns, *ranking] + [task_short_name(task) for task in scores.tasks]
    groups: dict[bool, list[list[Cell]]] = {False: [], True: []}
    for row in rows:
        cells = [
            text_cell(row["display_name"] + (" (partial)" if row["partial"] else "")),
            *([text_cell(row["kind"]), text_cell(row["source"])] if reported else []),
            *_rank_cells(row),
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
        "average, highest first; models without one follow by the mean of the scores they have. "
        + RANKS_NOTE
        + " The JSON records add the average's 95% interval and per task the standard error, "
        "formulation, CF and MCF accuracies, n, the models statistically tied with (paired bootstrap), "
        "the accuracy of guessing and the flags of the score's two formulations."
    ) + (REPORTED_NOTE if reported else "")
    labelled = [(None, groups[False])] if groups[False] else []
    labelled += [(PARTIAL_GROUP, groups[True])] if groups[True] else []
    return Table(
        "leaderboard", "Leaderboard", caption + " " + PARTIAL_NOTE, header, labelled, rows,
        latex_header=short, text_columns=1 + len(kind_columns),
    )  # fmt: skip


def _rank_cells(row: LeaderboardRow) -> list[Cell]:
    """The rank, its 95% interval and the tie group; missing without a rank."""
    if row["rank"] is None:
        return [Cell(None, MISSING)] * 3
    interval = f"[{row['rank_low']}, {row['rank_high']}]"
    return [
        Cell(row["rank"], str(row["rank"])),
        Cell(row["rank_low"], interval),
        Cell(row["tie_group"], str(row["tie_group"])),
    ]


RANK_CI = "Rank 95% CI"
TIE_GROUP = "Tie group"
RANKS_NOTE = (
    f"{RANK_CI}: the 2.5th and 97.5th percentiles of the model's rank over a bootstrap of the "
    "instances (each task's instances resampled, the same draw for every model that scored them, "
    "models that scored other instances independently, MMLU within subjects; the average and the "
    "ranks recomputed per draw; a model tied in a draw holds each rank of the tie). "
    f"{TIE_GROUP}: adjacent models are separated when the bootstrap's 95% interval of the difference "
    "of their averages excludes 0; a group is a run of adjacent models with no separation between them "
    "(numbered from 1 at the top): their order is not shown to be real."
)
REPORTED_NOTE = (
    f" Rows of kind 'reported' are copied from the {PAPER_SOURCE}, Table 13, not computed here: no "
    f"standard error, never statistically tied with anything on a task, {DAGGER} as the paper prints "
    "it; they are ranked together with the evaluated rows by average (the paper's, to one decimal). "
    "Their intervals are binomial, not bootstrapped (no predictions): a normal approximation per task "
    "from the printed accuracy and the standard's instance count, combined over tasks as independent, "
    "their averages drawn as independent normals beside the evaluated models' draws; an approximation, "
    "not as good as the paired bootstrap."
)
