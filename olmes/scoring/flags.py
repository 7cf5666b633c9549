"""Flags: signs that a model x task result went wrong, shown beside its number instead of hiding it.

A small model near chance, a run whose every answer is the same letter, scores that a rounding
error would flip, or a non-finite log-prob each mean the number should not be read as it stands.
:func:`task_flags` computes them from a score summary and its predictions; ``olmes score`` prints
them as warnings, ``olmes tables`` writes them to ``flags.json`` and the site marks the leaderboard
cell and lists them on the model page. One definition, here, of each threshold.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from olmes.core.methods import get_method, letter
from olmes.core.records import ScoreSummary, TaskFlag
from olmes.scoring.predictions import NEAR_TIE_NATS

BELOW_CHANCE_SE = 2.0  # a task score more than this many standard errors below chance
ONE_ANSWER_SHARE = 0.9  # one letter (MCF) or choice position (CF) predicted for more of the instances
NEAR_TIE_SHARE = 0.05  # more of a method's decisions within NEAR_TIE_NATS of a tie


def task_flags(summary: ScoreSummary, predictions: pd.DataFrame) -> list[TaskFlag]:
    """Every flag of one model x task: dicts with ``code``, ``method`` (or None) and ``message``."""
    flags = []
    below = _below_chance(summary, predictions)
    if below is not None:
        flags.append(below)
    methods = predictions["method"].to_numpy(dtype=object)
    columns = {name: predictions[name].to_numpy() for name in ("prediction", "label", "near_tie", "nonfinite")
               if name in predictions}  # fmt: skip
    for method in pd.unique(methods):
        rows = methods == method
        flags += _method_flags(str(method), {name: values[rows] for name, values in columns.items()})
    return flags


def chance_accuracy(predictions: pd.DataFrame) -> float:
    """The accuracy of guessing uniformly: the mean over instances of 1 / number of choices."""
    methods = predictions["method"].to_numpy(dtype=object)
    first = methods == methods[0]
    return float(np.mean(1.0 / predictions["num_choices"].to_numpy(dtype=float)[first]))


def _below_chance(summary: ScoreSummary, predictions: pd.DataFrame) -> TaskFlag | None:
    """The task's score (OLMES where there is one, else each method's) far below guessing."""
    chance = chance_accuracy(predictions)
    result = summary.get("best_of_two")
    candidates = [result["method"]] if result else list(summary["methods"])
    for method in candidates:
        stats = summary["methods"][method]
        stderr, gap = stats.get("stderr"), chance - stats["accuracy"]
        if stderr is not None and gap > BELOW_CHANCE_SE * stderr:
            below = f"{gap / stderr:.1f} standard errors" if stderr > 0 else "all of its instances wrong,"
            return {
                "code": "below_chance",
                "method": method,
                "message": f"{get_method(method).label} accuracy {100 * stats['accuracy']:.1f}% is {below} "
                f"below chance ({100 * chance:.1f}%)",
            }
    return None


def _method_flags(method: str, rows: dict[str, np.ndarray]) -> list[dict]:
    """The flags of one method's rows (columns as arrays: prediction, label, near_tie, nonfinite)."""
    flags, label = [], get_method(method).label
    n = len(rows["prediction"])
    counts = np.bincount(rows["prediction"])
    choice = int(np.argmax(counts))
    share = counts[choice] / n
    if n > 1 and share > ONE_ANSWER_SHARE:
        answer = f"letter {letter(choice)}" if get_method(method).is_mcf else f"choice {choice + 1}"
        flags.append(
            {
                "code": "one_answer",
                "method": method,
                "message": f"{label} answers {answer} for {100 * share:.0f}% of the "
                f"{n} instances (gold has it for {100 * float(np.mean(rows['label'] == choice)):.0f}%)",
            }
        )
    ties = int(rows["near_tie"].sum())
    if ties > NEAR_TIE_SHARE * n:
        flags.append(
            {
                "code": "near_ties",
                "method": method,
                "message": f"{label}: {ties} of {n} decisions ({100 * ties / n:.0f}%) "
                f"are near ties (top two within {NEAR_TIE_NATS} nats)",
            }
        )
    if "nonfinite" in rows and rows["nonfinite"].any():
        count = int(rows["nonfinite"].sum())
        flags.append(
            {
                "code": "nan",
                "method": method,
                "message": f"{label}: {count} instance(s) have a NaN or infinite score "
                "(such a choice never wins); re-run the engine for them",
            }
        )
    return flags
