"""The paired bootstrap between ranking-adjacent models, and its table (``paired_bootstrap``).

Per task the models are ranked by best-of-two score; each adjacent pair is compared on the instances
both scored (keyed by ``instance_index`` and ``native_id``) with the correctness of the method that
decided each model's score. MMLU is resampled within subjects and compared by its macro average.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from olmes.scoring.statistics import is_macro_averaged
from olmes.tables.digest import PredictionDigest
from olmes.tables.render import MISSING, PARTIAL_MARK, Cell, Table, percent, percent_cell, text_cell
from olmes.tables.results import ScoreSet, best_of_two_score, task_name

BOOTSTRAP_SEED = 1234
BOOTSTRAP_RESAMPLES = 1000


def paired_bootstrap(
    a: np.ndarray,
    b: np.ndarray,
    strata: np.ndarray | None = None,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float, float]:
    """Accuracy difference a - b over shared instances and its percentile 95% bootstrap interval.

    Instances are resampled in pairs (the same draw for both models). With ``strata`` (MMLU subjects)
    each stratum is resampled on its own and the difference is the macro-average over strata.
    """  # fmt: skip
    return paired_bootstraps([(a, b)], strata, resamples, seed)[0]


def paired_bootstraps(
    pairs: list[tuple[np.ndarray, np.ndarray]],
    strata: np.ndarray | None = None,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> list[tuple[float, float, float]]:
    """:func:`paired_bootstrap` of many pairs scored on the same instances (and strata) at once: every
    pair gets the same draws, so one matrix product resamples them all (a task's 499 adjacent pairs of
    500 models); each result is bit for bit the one of the pair alone."""
    differences = np.stack([a.astype(np.float64) - b.astype(np.float64) for a, b in pairs], axis=1)
    lows, highs = np.percentile(resampled_means(differences, strata, resamples, seed), [2.5, 97.5], axis=0)
    groups = strata_members(len(differences), strata)
    estimates = [float(np.mean([column[members].mean() for members in groups])) for column in differences.T]
    return [(estimates[k], float(lows[k]), float(highs[k])) for k in range(len(pairs))]


def resampled_means(values: np.ndarray, strata: np.ndarray | None, resamples: int, seed: int) -> np.ndarray:
    """Per resample (row) and column of ``values`` (instances x columns, small integers such as 0/1
    correctness or -1/0/1 differences, exact in float32), the mean over the resampled instances; with
    ``strata`` each stratum is resampled on its own and the strata's means are macro-averaged. Every
    column gets the same draws (:func:`_draw_counts`): one matrix product per stratum for all of them."""
    groups = strata_members(len(values), strata)
    totals = np.zeros((resamples, values.shape[1]))
    for members, counts in zip(groups, _draw_counts(tuple(map(len, groups)), resamples, seed), strict=True):
        totals += (counts @ values[members].astype(np.float32)).astype(np.float64) / len(members)
    return totals / len(groups)


def strata_members(size: int, strata: np.ndarray | None) -> list[np.ndarray]:
    """The positions of each stratum's instances, ascending, strata in sorted order (one group without)."""
    if strata is None:
        return [np.arange(size)]
    _, inverse, counts = np.unique(np.asarray(strata), return_inverse=True, return_counts=True)
    order = np.argsort(inverse, kind="stable")
    return np.split(order, np.cumsum(counts)[:-1])


@functools.lru_cache(maxsize=4)
def _draw_counts(sizes: tuple[int, ...], resamples: int, seed: int) -> tuple[np.ndarray, ...]:
    """Per stratum, how often each instance is drawn in each resample (resamples x size).

    The draws depend only on the strata's sizes and the seed, so every pair of models compared on the
    same instances shares them: drawn once per task, not once per pair (500 models: 499 pairs). The
    mean of a resample is its counts times the differences over the size; the differences are -1, 0
    or 1, so the sums are integers far below 2**24, exact in float32 (half the memory traffic of
    float64), and the mean equals that of the drawn values bit for bit."""
    rng = np.random.default_rng(seed)
    found = []
    for size in sizes:
        draws = rng.integers(0, size, size=(resamples, size))
        flat = (draws + (np.arange(resamples) * size)[:, None]).ravel()
        counts = np.bincount(flat, minlength=resamples * size).reshape(resamples, size)
        found.append(counts.astype(np.float32))
    return tuple(found)


def shared_correctness(
    scores: ScoreSet, task: str, higher: str, lower: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Both models' correctness (the method that decided each score) on the instances both scored,
    keyed by ``instance_index`` and ``native_id`` in the higher model's order, and their subjects
    (codes that sort as the names do, or names)."""
    a, b = scores.digest(higher, task), scores.digest(lower, task)
    if np.array_equal(a.instance_index, b.instance_index) and a.native_ids == b.native_ids:
        return a.correct, b.correct, a.subject_codes  # the common case: both scored the same instances
    first, second = _keyed(a), _keyed(b)
    shared = first.index.intersection(second.index)
    subject = first.loc[shared, "subject"].to_numpy() if a.subject_codes is not None else None
    return first.loc[shared, "correct"].to_numpy(), second.loc[shared, "correct"].to_numpy(), subject


def _keyed(digest: PredictionDigest) -> pd.DataFrame:
    frame = pd.DataFrame(
        {"instance_index": digest.instance_index, "native_id": digest.native_id(), "correct": digest.correct}
    )
    if digest.subject_codes is not None:
        frame["subject"] = digest.subject()
    return frame.set_index(["instance_index", "native_id"])


def bootstrap_table(
    scores: ScoreSet, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> Table:
    header = ["Task", "Higher", "Lower", "Δ (points)", "95% CI", "Shared", "Statistically tied"]
    rows, records = [], []
    names = {info.name: info.display_name for info in scores.models}
    for task in scores.tasks:
        scored = [
            info.name for info in scores.models if best_of_two_score(scores.get(info.name, task)) is not None
        ]
        ranked = sorted(scored, key=lambda model: -best_of_two_score(scores.get(model, task)))
        for record in _compare_adjacent(scores, task, ranked, resamples, seed):
            records.append(record)
            rows.append(_comparison_row(record, names))
    caption = (
        f"For each task, models ranked by best-of-two score and each adjacent pair compared on the "
        f"instances both scored: difference of the deciding method's accuracy (macro over subjects for "
        f"MMLU) with a paired percentile bootstrap 95% interval ({resamples} resamples, seed {seed}; "
        f"MMLU resampled within subjects). Statistically tied = the interval contains 0. "
        f"{PARTIAL_MARK} marks a partial run."
    )
    align = "lllrlrl"
    return Table("paired_bootstrap", "Paired bootstrap between adjacent models", caption, header,
                 [(None, rows)], records, align)  # fmt: skip


def _compare_adjacent(
    scores: ScoreSet, task: str, ranked: list[str], resamples: int, seed: int
) -> list[dict]:
    """The record of each adjacent pair of ``ranked``; pairs compared on the same instances and strata
    are bootstrapped together (:func:`paired_bootstraps`)."""
    records, batches = [], {}
    for higher, lower in zip(ranked, ranked[1:], strict=False):
        a, b, subject = shared_correctness(scores, task, higher, lower)
        records.append(_record(scores, task, higher, lower, len(a), resamples, seed))
        if len(a):
            strata = subject if is_macro_averaged(task) else None
            key = (len(a), None if strata is None else np.asarray(strata).tobytes())
            batches.setdefault(key, (strata, []))[1].append((len(records) - 1, a, b))
    for strata, members in batches.values():
        results = paired_bootstraps([(a, b) for _, a, b in members], strata, resamples, seed)
        for (position, _, _), (estimate, low, high) in zip(members, results, strict=True):
            tied = bool(low <= 0 <= high)
            records[position].update(difference=estimate, ci_low=low, ci_high=high, tied=tied)
    return records


def _record(
    scores: ScoreSet, task: str, higher: str, lower: str, shared: int, resamples: int, seed: int
) -> dict:
    return {
        "task": task,
        "higher": higher,
        "lower": lower,
        "n_shared": shared,
        "higher_partial": scores.get(higher, task)["partial"],
        "lower_partial": scores.get(lower, task)["partial"],
        "difference": None,
        "ci_low": None,
        "ci_high": None,
        "tied": None,
        "resamples": resamples,
        "seed": seed,
    }


def _comparison_row(record: dict, names: dict[str, str]) -> list[Cell]:
    def name(model: str, partial: bool) -> Cell:
        return text_cell(names[model] + (PARTIAL_MARK if partial else ""))

    interval = (
        MISSING
        if record["ci_low"] is None
        else f"[{percent(record['ci_low'])}, {percent(record['ci_high'])}]"
    )
    tied = MISSING if record["tied"] is None else ("yes" if record["tied"] else "no")
    return [
        text_cell(task_name(record["task"])), name(record["higher"], record["higher_partial"]),
        name(record["lower"], record["lower_partial"]),
        percent_cell(record["difference"]), text_cell(interval),
        Cell(record["n_shared"], str(record["n_shared"])), text_cell(tied),
    ]  # fmt: skip
