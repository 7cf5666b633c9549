"""Per task: its noise, signal and signal-to-noise ratio, beside its minimum detectable difference
(``task_signal_noise``): which tasks can tell two checkpoints, or two models, apart.

**Signal and noise** are those of Heineman et al. 2025, "Signal and Noise: A Framework for Reducing
Uncertainty in Language Model Evaluation" (arXiv 2508.13144), as its code computes them
(allenai/signal-and-noise, ``snr/metrics.py``: ``signal_to_noise_ratio``):

- *noise*: the relative standard deviation of one training run's scores over its final n checkpoints,
  σ / m̄ (σ the population standard deviation, ``np.std``; m̄ their mean). The paper takes a run's last
  30 checkpoints (``snr/snr_simple.py``: ``compute_snr_large_scale``). Here: the last
  :data:`NOISE_CHECKPOINTS` checkpoints of each series that scored the task (all of them when it has
  fewer, at least :data:`MIN_NOISE_CHECKPOINTS`), the series' noises averaged;
- *signal*: the relative dispersion of a population of models' scores, max_{j,k} |m_j − m_k| / m̄ (the
  range over the mean). Here the population is the final models: every model that is not a checkpoint
  of a series, and each series' last checkpoint that scored the task (at least
  :data:`MIN_SIGNAL_MODELS`);
- *SNR* = signal / noise.

A series is the models that declare one ``series`` and their ``training_tokens``, ordered by their
training tokens (:func:`olmes.tables.training.training_series`).

**The minimum detectable difference** (MDE) of two models' accuracies compared on the same n
instances, two-sided α = :data:`ALPHA` at power :data:`POWER`, is (z_{1−α/2} + z_{power}) × √(v / n)
= :data:`MDE_Z` × √(v / n) (normal approximation; instances independent) where v is the variance of
one instance's difference:

- *unpaired*, v = 2 p (1 − p): two independent accuracies at the population's mean accuracy p;
- *paired*, v = d: the per-instance difference is −1, 0 or 1, and under equal accuracies its variance is
  the discordance rate d, the share of instances exactly one of the two gets right. d is observed: the
  mean over the population's pairs adjacent in ranking (those ``paired_bootstrap`` compares) on the
  instances both scored, with the method that decided each score. Only for the OLMES score: the
  tables keep per-instance correctness of the deciding method alone (:mod:`olmes.tables.digest`).

n is the standard's count (:attr:`olmes.core.tasks.Task.standard_count`) and the count scored (the
fewest of the row's models). A task macro-averaged over subjects (MMLU) counts its *effective* n,
S² / Σ_s 1/n_s over its S subjects of n_s instances: the variance of a mean of S subject accuracies
that share one p (or d) is v / that n; the standard's subject sizes are read from a complete run.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import TypedDict

import numpy as np

from olmes.core.methods import CF, MCF
from olmes.core.records import ScoreSummary
from olmes.core.tasks import TASKS
from olmes.scoring.statistics import is_macro_averaged
from olmes.tables.bootstrap import shared_correctness
from olmes.tables.render import MISSING, Cell, Table, percent_cell, text_cell
from olmes.tables.results import ScoreSet, best_of_two_score, method_accuracy, task_name
from olmes.tables.training import OLMES_SCORE, training_series

SIGNAL_NOISE_KEY = "task_signal_noise"
NOISE_CHECKPOINTS = 30  # the paper's n: a run's final 30 checkpoints
MIN_NOISE_CHECKPOINTS = 3
MIN_SIGNAL_MODELS = 2
ALPHA = 0.05
POWER = 0.80
MDE_Z = NormalDist().inv_cdf(1 - ALPHA / 2) + NormalDist().inv_cdf(POWER)
"""z_{1−α/2} + z_{power} = 1.960 + 0.842 = 2.80."""
MEASURES = {
    OLMES_SCORE: "OLMES score (best of CF and MCF)",
    CF: "CF (recommended normalization)",
    MCF: "MCF",
}
"""The scores the table is computed for, by key, in the table's order (a group each)."""


class SignalNoiseTerms(TypedDict):
    """The settings the definitions use, for a page's prose."""

    checkpoints: int
    min_checkpoints: int
    min_models: int
    alpha: float
    power: float
    z: float


def signal_noise_terms() -> SignalNoiseTerms:
    return {
        "checkpoints": NOISE_CHECKPOINTS,
        "min_checkpoints": MIN_NOISE_CHECKPOINTS,
        "min_models": MIN_SIGNAL_MODELS,
        "alpha": ALPHA,
        "power": POWER,
        "z": MDE_Z,
    }


# -- the definitions ---------------------------------------------------------------------------------


def relative_std(values: Sequence[float]) -> float | None:
    """σ / m̄ (population standard deviation): the paper's noise of a run's final checkpoints."""
    mean = float(np.mean(values))
    return float(np.std(values)) / mean if mean else None


def relative_dispersion(values: Sequence[float]) -> float | None:
    """max_{j,k} |m_j − m_k| / m̄, the range over the mean: the paper's signal of a population."""
    mean = float(np.mean(values))
    return (max(values) - min(values)) / mean if mean else None


def minimum_detectable_difference(variance: float, n: float) -> float:
    """MDE_Z × √(v / n): the smallest true difference of two means of n instances, each difference of
    variance v, that a two-sided test at ALPHA finds with probability POWER."""
    return MDE_Z * math.sqrt(variance / n)


def unpaired_variance(p: float) -> float:
    """2 p (1 − p): the variance of the difference of two independent instances at accuracy p."""
    return 2 * p * (1 - p)


def effective_count(counts: Sequence[int]) -> float:
    """S² / Σ_s 1/n_s: the n whose mean has the variance of a macro average over S subjects of n_s."""
    return len(counts) ** 2 / sum(1 / count for count in counts)


# -- what a summary gives -----------------------------------------------------------------------------


def measure_score(summary: ScoreSummary | None, measure: str) -> float | None:
    """A summary's score under a measure of :data:`MEASURES` (None where it was not scored)."""
    if measure == OLMES_SCORE:
        return best_of_two_score(summary)
    return method_accuracy(summary, _measure_method(summary, measure))


def _measure_method(summary: ScoreSummary | None, measure: str) -> str | None:
    """The scoring method behind a measure's score: the deciding one for the OLMES score."""
    if summary is None:
        return None
    if measure == OLMES_SCORE:
        return (summary.get("best_of_two") or {}).get("method")
    return TASKS[summary["task"]].recommended_method.key if measure == CF else MCF


def scored_count(summary: ScoreSummary, measure: str) -> float:
    """The instances behind a summary's score: their number, or MMLU's effective count."""
    stats = summary["methods"][_measure_method(summary, measure)]
    if is_macro_averaged(summary["task"]):
        return effective_count([subject["n"] for subject in stats["subjects"].values()])
    return stats["n"]


def standard_count(scores: ScoreSet, task: str, measure: str) -> float | None:
    """The standard's n; for MMLU the effective count of a complete run's subjects (None without one)."""
    if not is_macro_averaged(task):
        return TASKS[task].standard_count
    complete = (
        summary
        for (_, scored_task), summary in sorted(scores.summaries.items())
        if scored_task == task and not summary["partial"] and measure_score(summary, measure) is not None
    )
    first = next(complete, None)
    return None if first is None else scored_count(first, measure)


# -- one task under one measure -------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskScores:
    """One task's scores under one measure: every model's that has one, by name (in the models'
    order), and each series' checkpoints that have one, by training tokens."""

    task: str
    measure: str
    scored: dict[str, float]
    series: dict[str, list[str]]

    @property
    def population(self) -> list[str]:
        """The final models the signal is measured over: those outside every series, then each
        series' last checkpoint."""
        in_series = {name for members in self.series.values() for name in members}
        finals = [name for name in self.scored if name not in in_series]
        return finals + [members[-1] for members in self.series.values() if members]


def task_scores(scores: ScoreSet, task: str, measure: str, series: dict[str, list[str]]) -> TaskScores:
    scored = {
        info.name: value
        for info in scores.models
        if (value := measure_score(scores.get(info.name, task), measure)) is not None
    }
    on_task = {name: [model for model in members if model in scored] for name, members in series.items()}
    return TaskScores(task, measure, scored, on_task)


def noise_part(given: TaskScores) -> dict:
    """Each series' relative standard deviation over its last checkpoints, and their mean (None with the
    reason where no series has enough checkpoints on the task)."""
    used = {
        name: members[-NOISE_CHECKPOINTS:]
        for name, members in given.series.items()
        if len(members) >= MIN_NOISE_CHECKPOINTS
    }
    per_series = [
        {"series": name, "checkpoints": last, "noise": relative_std([given.scored[m] for m in last])}
        for name, last in used.items()
    ]
    noises = [entry["noise"] for entry in per_series if entry["noise"] is not None]
    reason = None
    if not given.series:
        reason = "no checkpoint series"
    elif not used:
        reason = f"no series with {MIN_NOISE_CHECKPOINTS} checkpoints on this task"
    elif not noises:
        reason = "the checkpoints' mean score is 0"
    return {
        "noise": float(np.mean(noises)) if noises else None,
        "noise_series": per_series,
        "noise_reason": reason,
    }


def signal_part(given: TaskScores) -> dict:
    """The final models, their mean score and their relative dispersion (None with too few models)."""
    values = [given.scored[name] for name in given.population]
    return {
        "models": given.population,
        "mean": float(np.mean(values)) if values else None,
        "signal": relative_dispersion(values) if len(values) >= MIN_SIGNAL_MODELS else None,
    }


def adjacent_discordance(scores: ScoreSet, given: TaskScores) -> float | None:
    """The mean discordance rate of the population's pairs adjacent in ranking by score, each on the
    instances both scored with the methods that decided their scores."""
    ranked = sorted(given.population, key=lambda name: -given.scored[name])
    rates = []
    for higher, lower in zip(ranked, ranked[1:], strict=False):
        first, second, _ = shared_correctness(scores, given.task, higher, lower)
        if len(first):
            rates.append(float(np.mean(first != second)))
    return float(np.mean(rates)) if rates else None


def fewest_scored(scores: ScoreSet, given: TaskScores) -> float | None:
    """The smallest n behind the row's scores: of the final models and every series' checkpoints."""
    models = set(given.population).union(*given.series.values())
    return min((scored_count(scores.get(name, given.task), given.measure) for name in models), default=None)


def mde_part(scores: ScoreSet, given: TaskScores, mean: float | None) -> dict:
    """The minimum detectable differences, unpaired and paired, at the standard's n and the n scored."""
    counts = {
        "standard": standard_count(scores, given.task, given.measure),
        "scored": fewest_scored(scores, given),
    }
    variances = {
        "unpaired": None if mean is None else unpaired_variance(mean),
        "paired": adjacent_discordance(scores, given) if given.measure == OLMES_SCORE else None,
    }
    found = {
        "n_standard": counts["standard"],
        "n_scored": counts["scored"],
        "discordance": variances["paired"],
    }
    for (where, n), (kind, variance) in itertools.product(counts.items(), variances.items()):
        usable = n is not None and variance is not None
        found[f"mde_{kind}_{where}"] = minimum_detectable_difference(variance, n) if usable else None
    return found


def task_record(scores: ScoreSet, task: str, measure: str, series: dict[str, list[str]]) -> dict:
    """Everything the table shows of one task under one measure, at full precision."""
    given = task_scores(scores, task, measure, series)
    signal, noise = signal_part(given), noise_part(given)
    snr = None
    if signal["signal"] is not None and noise["noise"]:
        snr = signal["signal"] / noise["noise"]
    return {
        "task": task,
        "measure": measure,
        **signal,
        **noise,
        "snr": snr,
        **mde_part(scores, given, signal["mean"]),
    }


# -- the table ------------------------------------------------------------------------------------------

HEADER = [
    "Task", "Models", "Mean", "Signal", "Noise", "Noise from", "SNR",
    "n (standard)", "MDE unpaired", "MDE paired", "n (scored)", "MDE unpaired, scored", "MDE paired, scored",
]  # fmt: skip


def _number(value: float | None, form: str) -> Cell:
    return Cell(value, MISSING if value is None else format(value, form))


def _count(value: float | None, task: str) -> Cell:
    """An instance count; MMLU's is effective (a fraction, shown rounded)."""
    if value is None:
        return text_cell(MISSING)
    return Cell(value, f"{value:.0f}" + (" eff." if is_macro_averaged(task) else ""))


def _points(value: float | None) -> Cell:
    """A difference of accuracies in points (one decimal)."""
    return Cell(value, MISSING if value is None else f"{100 * value:.1f}")


def _noise_from(record: dict) -> Cell:
    """How many checkpoints of which series the noise is over, or why there is none."""
    if record["noise_reason"]:
        return text_cell(record["noise_reason"])
    used = record["noise_series"]
    text = "; ".join(f"last {len(entry['checkpoints'])} of {entry['series']}" for entry in used)
    return Cell(sum(len(entry["checkpoints"]) for entry in used), text)


def _row(record: dict) -> list[Cell]:
    task = record["task"]
    return [
        text_cell(task_name(task)), Cell(len(record["models"]), str(len(record["models"]))),
        percent_cell(record["mean"]), _number(record["signal"], ".3g"), _number(record["noise"], ".3g"),
        _noise_from(record), _number(record["snr"], ".1f"),
        _count(record["n_standard"], task), _points(record["mde_unpaired_standard"]),
        _points(record["mde_paired_standard"]),
        _count(record["n_scored"], task), _points(record["mde_unpaired_scored"]),
        _points(record["mde_paired_scored"]),
    ]  # fmt: skip


CAPTION = (  # plain text: LaTeX prints it as it is (render.latex_escape maps a few signs, not σ or √)
    "Per task: signal, noise and SNR as Heineman et al. 2025 (Signal and Noise, arXiv 2508.13144) define "
    "them, and the minimum detectable difference (MDE) of two models compared on the same instances. "
    "Noise: standard deviation / mean of a training series' scores over its last {checkpoints} checkpoints "
    "(all where it has fewer, at least {min_checkpoints}; averaged over series; Noise from says which), — "
    "without a series. Signal: (max - min) / mean of the final models' scores (Models: every model that is "
    "not a checkpoint, and each series' last checkpoint; at least {min_models}). SNR = signal / noise: high "
    "SNR, the task separates models more than a training run's last steps move it. MDE (points): the "
    "smallest true difference a two-sided test at alpha = {alpha:g} finds with {power:.0%} power, "
    "{z:.2f} x sqrt(v / n): unpaired v = 2p(1 - p) at the models' mean accuracy p; paired v = the observed "
    "share of instances exactly one of two ranking-adjacent models gets right (the OLMES score only). A "
    "difference between two checkpoints below the MDE is not detectable on this task. n: the standard's "
    "count and the fewest scored by the row's models; MMLU's is effective, S^2 / (sum of 1/n_s) over its "
    "subjects (macro average)."
)


def signal_noise_table(scores: ScoreSet) -> Table:
    series = {found.name: [info.name for info in found.checkpoints] for found in training_series(scores)}
    groups, records = [], []
    for measure, label in MEASURES.items():
        found = [task_record(scores, task, measure, series) for task in scores.tasks]
        records += found
        groups.append((label, [_row(record) for record in found]))
    return Table(
        SIGNAL_NOISE_KEY,
        "Signal, noise and minimum detectable difference per task",
        CAPTION.format(**signal_noise_terms()),
        HEADER,
        groups,
        records,
    )
