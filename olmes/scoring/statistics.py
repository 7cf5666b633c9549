"""Predictions -> statistics: accuracies and their standard errors (macro over subjects for MMLU),
bits per byte, the OLMES best-of-two and why a result is partial (docs/standard.md section 3)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from olmes.core.methods import CF, MCF
from olmes.core.records import BestOfTwo, BitsPerByte, MethodStats, SubjectStats
from olmes.core.tasks import Task, get_task
from olmes.scoring.logprob_files import ChoiceTable


def standard_error(accuracy: float, n: int) -> float | None:
    """sqrt(p (1 - p) / (n - 1)) (docs/standard.md section 3); undefined (None) for a single instance."""
    return math.sqrt(accuracy * (1 - accuracy) / (n - 1)) if n > 1 else None


def accuracy_stats(correct: np.ndarray) -> SubjectStats:
    n = int(correct.size)
    hits = int(np.sum(correct))
    accuracy = hits / n
    return {"accuracy": accuracy, "stderr": standard_error(accuracy, n), "n": n, "correct": hits}


def macro_stats(correct: np.ndarray, subjects: np.ndarray) -> MethodStats:
    """MMLU: accuracy per subject, their mean (macro, the score) and the accuracy over all (micro).

    The macro stderr treats subjects as independent: sqrt(sum of squared subject stderrs) / subjects.
    """
    per_subject = {
        str(subject): accuracy_stats(correct[subjects == subject]) for subject in sorted(set(subjects))
    }
    macro = float(np.mean([stats["accuracy"] for stats in per_subject.values()]))
    variances = [(stats["stderr"] or 0.0) ** 2 for stats in per_subject.values()]
    micro = accuracy_stats(correct)
    return {
        "accuracy": macro,
        "stderr": math.sqrt(sum(variances)) / len(per_subject),
        "n": micro["n"],
        "correct": micro["correct"],
        "micro_accuracy": micro["accuracy"],
        "micro_stderr": micro["stderr"],
        "subjects": per_subject,
    }


def is_macro_averaged(task: str) -> bool:
    """Tasks made of subjects (MMLU) are scored by the macro-average over their subjects."""
    return bool(get_task(task).subjects)


def method_stats(predictions: pd.DataFrame, task: str) -> dict[str, MethodStats]:
    """Accuracy, stderr, n and near-tie count of every method in a predictions frame."""
    stats = {}
    for method, rows in predictions.groupby("method", sort=False):
        correct = rows["correct"].to_numpy(bool)
        if is_macro_averaged(task):
            result = macro_stats(correct, rows["subject"].astype(str).to_numpy())
        else:
            result = accuracy_stats(correct)
        result["near_ties"] = int(rows["near_tie"].sum())
        stats[str(method)] = result
    return stats


def bits_per_byte(cf: ChoiceTable) -> BitsPerByte | None:
    """Bits per byte of the gold continuation: -sum_logprob(gold) / (ln 2 x its UTF-8 bytes, leading
    space included) per instance, and their mean over instances (MMLU too: a mean over questions).
    None when the log-prob file predates the ``num_bytes`` column."""
    if cf.num_bytes is None:
        return None
    rows = np.arange(len(cf.label))
    gold_sum, gold_bytes = cf.sum_logprob[rows, cf.label], cf.num_bytes[rows, cf.label]
    per_instance = -gold_sum / (math.log(2) * gold_bytes)
    finite = per_instance[np.isfinite(per_instance)]
    if finite.size == 0:
        return None
    return {
        "bpb": float(np.mean(finite)),
        "stderr": float(np.std(finite, ddof=1) / math.sqrt(finite.size)) if finite.size > 1 else None,
        "n": int(finite.size),
    }


def best_of_two(cf_accuracy: float, mcf_accuracy: float) -> tuple[float, str]:
    """max(CF, MCF) and the winning formulation; MCF must be strictly better to win (and get the †)."""
    return (mcf_accuracy, MCF) if mcf_accuracy > cf_accuracy else (cf_accuracy, CF)


def olmes_result(methods: dict[str, MethodStats], task: Task) -> BestOfTwo | None:
    """The best-of-two record of a task, or None when CF (recommended) or MCF was not scored."""
    cf_key = task.recommended_method.key
    if cf_key not in methods or MCF not in methods:
        return None
    cf_accuracy, mcf_accuracy = methods[cf_key]["accuracy"], methods[MCF]["accuracy"]
    score, formulation = best_of_two(cf_accuracy, mcf_accuracy)
    return {
        "score": score,
        "formulation": formulation,
        "dagger": formulation == MCF,
        "method": MCF if formulation == MCF else cf_key,
        "cf_method": cf_key,
        "cf_accuracy": cf_accuracy,
        "mcf_accuracy": mcf_accuracy,
    }


def partial_reasons(task: str, n_instances: int, limit: int | None, has_cf: bool, has_mcf: bool) -> list[str]:
    """Why a model x task result is not a full OLMES run; empty when it is one."""
    reasons = []
    full = get_task(task).standard_count
    if limit is not None and limit < full:
        reasons.append(f"run with limit {limit}")
    if n_instances != full:
        reasons.append(f"{n_instances} instances scored, the standard has {full}")
    if not has_cf:
        reasons.append("no CF log-probs")
    if not has_mcf:
        reasons.append("no MCF log-probs")
    return reasons
