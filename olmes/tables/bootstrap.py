"""The paired bootstrap between ranking-adjacent models, and its table (``paired_bootstrap``).

Per task the models are ranked by best-of-two score; each adjacent pair is compared on the instances
both scored (keyed by ``instance_index`` and ``native_id``) with the correctness of the method that
decided each model's score. MMLU is resampled within subjects and compared by its macro average.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from olmes.scoring.score import is_macro_averaged
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
    rng = np.random.default_rng(seed)
    difference = a.astype(np.float64) - b.astype(np.float64)
    strata = np.zeros(len(difference), dtype=int) if strata is None else np.asarray(strata)
    groups = [np.flatnonzero(strata == stratum) for stratum in np.unique(strata)]
    totals = np.zeros(resamples)
    for members in groups:
        draws = rng.integers(0, len(members), size=(resamples, len(members)))
        totals += difference[members][draws].mean(axis=1)
    estimate = float(np.mean([difference[members].mean() for members in groups]))
    low, high = np.percentile(totals / len(groups), [2.5, 97.5])
    return estimate, float(low), float(high)


def _decisive_correctness(scores: ScoreSet, model: str, task: str) -> pd.DataFrame:
    """Per-instance correctness of the method that gave the model's best-of-two score."""
    method = scores.get(model, task)["best_of_two"]["method"]
    frame = scores.predictions(model, task)
    rows = frame[frame["method"] == method]
    return rows[["instance_index", "native_id", "subject", "correct"]].set_index(
        ["instance_index", "native_id"]
    )


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
        for higher, lower in zip(ranked, ranked[1:], strict=False):
            record = _compare(scores, task, higher, lower, resamples, seed)
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


def _compare(scores: ScoreSet, task: str, higher: str, lower: str, resamples: int, seed: int) -> dict:
    a = _decisive_correctness(scores, higher, task)
    b = _decisive_correctness(scores, lower, task)
    shared = a.index.intersection(b.index)
    record = {
        "task": task,
        "higher": higher,
        "lower": lower,
        "n_shared": len(shared),
        "higher_partial": scores.get(higher, task)["partial"],
        "lower_partial": scores.get(lower, task)["partial"],
        "difference": None,
        "ci_low": None,
        "ci_high": None,
        "tied": None,
        "resamples": resamples,
        "seed": seed,
    }
    if len(shared):
        strata = a.loc[shared, "subject"].astype(str).to_numpy() if is_macro_averaged(task) else None
        estimate, low, high = paired_bootstrap(
            a.loc[shared, "correct"].to_numpy(), b.loc[shared, "correct"].to_numpy(), strata, resamples, seed
        )
        record.update(difference=estimate, ci_low=low, ci_high=high, tied=bool(low <= 0 <= high))
    return record


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
