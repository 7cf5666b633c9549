"""Ranks with 95% intervals and the tie groups of the leaderboard: which rank differences are real.

The leaderboard ranks the models that have an average (complete on every task; partial runs are never
ranked) by that average. How sure is each rank? Evaluated models are bootstrapped over instances
(:func:`evaluated_draws`); the paper's reported rows, which have no per-instance predictions, get a
binomial approximation (:func:`reported_draws`); both give draws of every ranked row's average, drawn
jointly, and :func:`rank_intervals` reads the ranks, intervals and tie groups off them.

- **Draw** (evaluated): per task, each set of instances is resampled once per draw, the same draw for
  every model that scored those instances (paired: matched by ``instance_index`` and ``native_id``,
  as the paired bootstrap does), MMLU within subjects and macro-averaged; each model's task accuracy is
  the mean of its digest's per-instance ``correct`` (the method that decided its OLMES score) over the
  drawn instances, and its average the mean over the tasks. Tasks are drawn independently of each
  other (a seed per task and instance set, derived from the tables' seed). Models that scored
  another set of instances on a task (another limit, another dataset revision) cannot be paired
  there: each set is resampled on its own, independently, so a comparison across sets is unpaired
  (wider, never falsely narrow).
- **Rank interval**: in each draw every row is ranked by its drawn average; a row tied in a draw
  holds every rank of the tie (best: 1 + the rows strictly above; worst: the rows at or above).
  ``rank_low`` is the 2.5th percentile of its best ranks (rounded to the better rank), ``rank_high``
  the 97.5th percentile of its worst (rounded to the worse), so the interval is never narrower than
  the draws say.
- **Tie group**: two neighbours in rank order are *separated* when the 95% percentile interval of
  the difference of their drawn averages (the same draws for both: paired where they share
  instances) excludes 0; a tie group is a maximal run of unseparated neighbours, numbered from 1 at
  the top. This is the paired bootstrap's per-task "statistically tied" applied to the average; it
  compares neighbours only, so a group can chain (A tied with B, B with C) and hold two rows that are
  separable from each other: a group says "no boundary between these ranks can be shown", never "all
  of these are equal".
- **Reported rows** (:func:`reported_draws`): the paper prints accuracies, not predictions, so a
  reported average gets a binomial standard error (normal approximation per task, p(1-p)/n with n
  the standard's instance count of the task, ``TaskSpec.standard_count``; combined over the tasks as
  independent; MMLU treated as one binomial of its 14,042 questions though the paper's score is a
  macro average over subjects, which understates its error a little) and its draws are independent
  normals around the printed average. That ignores that the paper's models answered the same
  instances (their differences would be tighter if paired) and the printing's rounding to one
  decimal: an approximation, stated as ``interval: "binomial (reported)"``, never as good as the
  paired one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from olmes.core.records import LeaderboardRow
from olmes.core.records.tables import IntervalKind
from olmes.core.tasks import TASKS
from olmes.scoring.statistics import is_macro_averaged
from olmes.tables.bootstrap import resampled_means
from olmes.tables.results import ScoreSet

PAIRED: IntervalKind = "paired bootstrap"
BINOMIAL: IntervalKind = "binomial (reported)"
Z95 = NormalDist().inv_cdf(0.975)


@dataclass(frozen=True)
class RankInterval:
    """A ranked row's interval fields (:class:`~olmes.core.records.LeaderboardRow`'s)."""

    average_low: float
    average_high: float
    rank_low: int
    rank_high: int
    tie_group: int
    interval: IntervalKind


def rank_intervals(
    scores: ScoreSet, rows: list[LeaderboardRow], resamples: int, seed: int
) -> list[RankInterval]:
    """The interval of each of ``rows`` (the ranked rows in rank order: evaluated, and reported where
    the leaderboard has them) from ``resamples`` joint draws seeded by ``seed``. A reported row's
    average interval is the normal one, printed average ± 1.96 binomial standard errors."""
    if not rows:
        return []
    reported = [k for k, row in enumerate(rows) if row.get("kind") == "reported"]
    evaluated = [k for k, row in enumerate(rows) if row.get("kind") != "reported"]
    averages, stderrs = reported_averages([rows[k] for k in reported])
    draws = np.empty((resamples, len(rows)))
    draws[:, evaluated] = evaluated_draws(scores, [rows[k]["model"] for k in evaluated], resamples, seed)
    draws[:, reported] = reported_draws(averages, stderrs, resamples, seed)
    lows, highs = np.percentile(draws, [2.5, 97.5], axis=0)
    lows[reported], highs[reported] = averages - Z95 * stderrs, averages + Z95 * stderrs
    best, worst = rank_bounds(draws)
    groups = tie_groups(draws)
    return [
        RankInterval(
            float(lows[k]), float(highs[k]), int(best[k]), int(worst[k]), groups[k],
            BINOMIAL if rows[k].get("kind") == "reported" else PAIRED,
        )
        for k in range(len(rows))
    ]  # fmt: skip


def rank_bounds(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's rank interval from its draws (resamples x rows): the 2.5th percentile of its best
    rank in a draw (1 + the rows strictly above it), taken at the better rank, and the 97.5th of its
    worst (the rows at or above it, itself included), taken at the worse."""
    ascending = np.sort(draws, axis=1)
    count = draws.shape[1]
    best = np.empty(draws.shape, dtype=np.int64)
    worst = np.empty(draws.shape, dtype=np.int64)
    for row, (values, order) in enumerate(zip(draws, ascending, strict=True)):
        best[row] = count - np.searchsorted(order, values, "right") + 1
        worst[row] = count - np.searchsorted(order, values, "left")
    return (
        np.percentile(best, 2.5, axis=0, method="lower"),
        np.percentile(worst, 97.5, axis=0, method="higher"),
    )


def tie_groups(draws: np.ndarray) -> list[int]:
    """Each row's tie group (rows in rank order, draws resamples x rows): a new group starts below a
    row whose difference to the next has a 95% percentile interval that excludes 0."""
    low, high = np.percentile(draws[:, :-1] - draws[:, 1:], [2.5, 97.5], axis=0)
    separated = (low > 0) | (high < 0)
    return [1 + int(count) for count in np.concatenate([[0], np.cumsum(separated)])]


def evaluated_draws(scores: ScoreSet, models: list[str], resamples: int, seed: int) -> np.ndarray:
    """Each model's average over the tables' tasks per draw (resamples x models): the paired
    bootstrap over every task's instances described above."""
    total = np.zeros((resamples, len(models)))
    for number, task in enumerate(scores.tasks):
        total += task_draws(scores, task, models, resamples, seed, number)
    return total / max(len(scores.tasks), 1)


def task_draws(
    scores: ScoreSet, task: str, models: list[str], resamples: int, seed: int, number: int
) -> np.ndarray:
    """Each model's accuracy on ``task`` per draw (resamples x models); ``number`` is the task's
    place in the tables' tasks, which with the instance set's place seeds its draws."""
    found = np.empty((resamples, len(models)))
    for place, (positions, correct, strata) in enumerate(instance_sets(scores, task, models)):
        strata = strata if is_macro_averaged(task) else None
        found[:, positions] = resampled_means(correct, strata, resamples, _seed(seed, 1, number, place))
    return found


def instance_sets(
    scores: ScoreSet, task: str, models: list[str]
) -> list[tuple[list[int], np.ndarray, np.ndarray | None]]:
    """The models grouped by the instances they scored on ``task``, in order of first appearance: per
    set, the positions of its models in ``models``, their correctness (instances x models, float32, the
    instances in one order for all: by ``instance_index``, then ``native_id``) and the instances'
    subject codes (None without subjects)."""
    by_file_order: dict[tuple[bytes, bytes], list[int]] = {}
    for position, model in enumerate(models):
        digest = scores.digest(model, task)
        by_file_order.setdefault((digest.instance_index.tobytes(), digest.native_ids), []).append(position)
    sets: dict[tuple[bytes, bytes], tuple[list[int], list[np.ndarray], np.ndarray | None]] = {}
    for positions in by_file_order.values():
        first = scores.digest(models[positions[0]], task)
        ids = first.native_id().astype(str)
        order = np.lexsort((ids, first.instance_index))
        key = (first.instance_index[order].tobytes(), json.dumps(ids[order].tolist()).encode())
        codes = None if first.subject_codes is None else first.subject_codes[order]
        members, columns, _ = sets.setdefault(key, ([], [], codes))
        members += positions
        columns += [scores.digest(models[p], task).correct[order] for p in positions]
    return [
        (members, np.stack(columns, axis=1).astype(np.float32), codes)
        for members, columns, codes in sets.values()
    ]


def _seed(seed: int, *stream: int) -> int:
    """The seed of one stream of draws (a task's instance set: 1, task, set; the reported rows: 2),
    derived from the tables' ``seed`` so that the streams are independent of each other."""
    return int(np.random.SeedSequence([seed, *stream]).generate_state(1)[0])


def reported_averages(rows: list[LeaderboardRow]) -> tuple[np.ndarray, np.ndarray]:
    """Each reported row's printed average and its binomial standard error: per task p(1-p)/n with p
    the printed score and n the standard's instance count, combined over its tasks as independent."""
    averages, stderrs = [], []
    for row in rows:
        cells = [
            (task, cell["score"]) for task, cell in row["tasks"].items() if cell and cell["score"] is not None
        ]
        variances = [p * (1 - p) / TASKS[task].standard_count for task, p in cells]
        averages.append(row["average"])
        stderrs.append(np.sqrt(np.sum(variances)) / len(variances))
    return np.array(averages, dtype=float), np.array(stderrs, dtype=float)


def reported_draws(averages: np.ndarray, stderrs: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """The reported rows' averages per draw (resamples x rows): independent normals."""
    rng = np.random.default_rng(_seed(seed, 2))
    return averages + stderrs * rng.standard_normal((resamples, len(averages)))
