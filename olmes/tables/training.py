"""Training series: every measure over a model's checkpoints, where MCF overtakes CF, and the series' data.

A *series* is the models that declare one ``series`` and their ``training_tokens``
(:class:`~olmes.tables.results.ModelInfo`: the models file or a store's ``model.json``), in the order of
their training tokens. Three tables (:data:`TRAINING_KEYS`, always written, without rows when no model
declares a series):

- ``training_series``, the series' data to plot elsewhere: a row per series x checkpoint x task x
  measure (CF under each normalization the run scored, MCF, the OLMES score, bits per byte) with its
  95% interval;
- ``training_transitions``, per series x task: the training tokens from which MCF overtakes CF *for
  good*, with a 95% interval, or "not yet" with the last checkpoint's MCF - CF gap and its interval;
- ``training_atlas``: tasks x series, each cell the transition (or "not yet"), tasks by when they cross.

**For good.** MCF overtakes CF for good at the first checkpoint from which MCF accuracy exceeds CF
accuracy (under the task's recommended normalization) at that checkpoint and at every later one. Near
chance both formulations sit within noise of each other, so MCF can lead at one checkpoint and fall
back (a blip); the OLMES paper's Figure 1 is about the point after which MCF stays ahead. Asking that
the lead hold through the last checkpoint evaluated makes the transition the start of the lead that is
still there; its price is that a lead that began at the last checkpoint counts too (its interval and
the share of draws without a transition say how sure it is) and a later checkpoint may move it. A tie
is no lead, as in the best-of-two (MCF must be strictly better).

**Its interval.** A series' checkpoints must have scored the same instances (matched by
``instance_index`` and ``native_id``; refused otherwise), so the bootstrap is paired across checkpoints
and formulations: each draw resamples the instances once (MMLU within subjects, macro-averaged: the
very draws of :mod:`olmes.tables.bootstrap`, same seed and resamples), applies it to every checkpoint
and both formulations, and finds that draw's transition checkpoint. The interval is the 2.5th and
97.5th percentiles of the draws' transition tokens, a draw without a transition counting as beyond the
last checkpoint (an end beyond it is reported as open, ``None``). Tokens are checkpoints' tokens, not
interpolated: between two checkpoints the data say nothing of where the curves cross.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from olmes.core.errors import OlmesError
from olmes.core.methods import MCF, METHODS
from olmes.scoring.predictions import read_predictions_file
from olmes.scoring.statistics import is_macro_averaged
from olmes.tables.bootstrap import resampled_means, strata_members
from olmes.tables.render import MISSING, Cell, Table, percent, percent_cell, text_cell
from olmes.tables.results import (
    ModelInfo,
    ScoreSet,
    checked_predictions_path,
    recommended_method,
    task_name,
)

TRAINING_SERIES, TRAINING_TRANSITIONS, TRAINING_ATLAS = (
    "training_series",
    "training_transitions",
    "training_atlas",
)
TRAINING_KEYS = (TRAINING_SERIES, TRAINING_TRANSITIONS, TRAINING_ATLAS)
OLMES_SCORE = "olmes"
BITS_PER_BYTE = "bpb"
MEASURE_LABELS = {
    **{key: method.label for key, method in METHODS.items()},
    OLMES_SCORE: "OLMES (best of two)",
    BITS_PER_BYTE: "Bits per byte",
}
"""Every measure of ``training_series`` by its key, in the export's order: the scoring methods, the
OLMES score (max of CF under the recommended normalization and MCF) and bits per byte."""
Z95 = 1.959963984540054
"""The normal quantile of a 95% interval: bits per byte's is its mean's, mean ± Z95 standard errors (the
summary keeps the mean and its standard error, not each instance's bits)."""
PREDICTION_FIELDS = ["method", "instance_index", "native_id", "subject", "correct"]


def tokens_text(tokens: float | None) -> str:
    """Training tokens as a table shows them: 400B, 1.2T, 50M."""
    if tokens is None:
        return MISSING
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if tokens >= scale:
            return f"{tokens / scale:.3g}{unit}"
    return f"{tokens:.3g}"


# -- a series on a task: its checkpoints' per-instance correctness -----------------------------------


@dataclass(frozen=True)
class Series:
    """A checkpoint series: its name and its models, by training tokens (ties: the models' order)."""

    name: str
    checkpoints: tuple[ModelInfo, ...]


def training_series(scores: ScoreSet) -> list[Series]:
    """The series the models declare (those with a series and training tokens), by name."""
    members: dict[str, list[ModelInfo]] = {}
    for info in scores.models:
        if info.series is not None and info.training_tokens is not None:
            members.setdefault(info.series, []).append(info)
    return [
        Series(name, tuple(sorted(members[name], key=lambda info: info.training_tokens)))
        for name in sorted(members)
    ]


@dataclass(frozen=True)
class SeriesTask:
    """A series on one task: the checkpoints that scored it and, per method, which of them scored it
    (positions into ``checkpoints``) and their correctness (those checkpoints x instances, the
    instances in one order for all), with each instance's subject (tasks made of subjects; else None)."""

    series: str
    task: str
    checkpoints: tuple[ModelInfo, ...]
    correct: dict[str, tuple[np.ndarray, np.ndarray]]
    subjects: np.ndarray | None


def series_task(scores: ScoreSet, series: Series, task: str) -> SeriesTask | None:
    """``series`` on ``task`` from its checkpoints' predictions files; None when none scored it. A
    checkpoint that scored other instances than the first is refused (the bootstrap pairs them)."""
    members = tuple(info for info in series.checkpoints if scores.get(info.name, task) is not None)
    if not members:
        return None
    reference: tuple[np.ndarray, np.ndarray] | None = None
    subjects = None
    found: dict[str, tuple[list[int], list[np.ndarray]]] = {}
    for position, info in enumerate(members):
        for method, rows in _method_rows(scores, info.name, task):
            keys = (rows["instance_index"].to_numpy(np.int64), rows["native_id"].astype(str).to_numpy())
            if reference is None:
                reference, subjects = keys, rows["subject"].astype(str).to_numpy()
            elif not (np.array_equal(keys[0], reference[0]) and np.array_equal(keys[1], reference[1])):
                raise OlmesError(
                    f"series {series.name!r} on {task}: checkpoint {info.name!r} scored other instances than "
                    f"{members[0].name!r} (by instance_index and native_id); score every checkpoint of a "
                    "series on the same instances"
                )
            positions, rows_of = found.setdefault(method, ([], []))
            positions.append(position)
            rows_of.append(rows["correct"].to_numpy(bool))
    correct = {
        method: (np.array(found[method][0]), np.stack(found[method][1]))
        for method in METHODS
        if method in found
    }
    return SeriesTask(series.name, task, members, correct, subjects if is_macro_averaged(task) else None)


def _method_rows(scores: ScoreSet, model: str, task: str) -> list[tuple[str, pd.DataFrame]]:
    """Each method's predictions of a model x task, ordered by (instance_index, native_id); the file is
    checked against the hash its summary recorded."""
    path = checked_predictions_path(scores.summaries[(model, task)], scores.paths[(model, task)])
    frame = read_predictions_file(path, columns=PREDICTION_FIELDS)
    return [(str(method), _in_order(rows)) for method, rows in frame.groupby("method", sort=False)]


def _in_order(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` by (instance_index, native_id); as they are when their indices already rise (the order
    olmes score writes, checked without a sort: a quarter of the time of reading hundreds of files)."""
    if np.all(np.diff(rows["instance_index"].to_numpy()) > 0):
        return rows
    return rows.sort_values(["instance_index", "native_id"], kind="stable")


# -- the paired bootstrap over instances, shared by every checkpoint and measure ------------------------


@dataclass(frozen=True)
class Resampled:
    """Columns of per-instance values (instances x columns) and their means: the estimate (macro over
    strata) and each bootstrap draw's (draws x columns)."""

    estimate: np.ndarray
    draws: np.ndarray


def resample(columns: np.ndarray, subjects: np.ndarray | None, resamples: int, seed: int) -> Resampled:
    """The means of ``columns`` (float32 of -1, 0 and 1: exact) and of each draw of the paired
    bootstrap (:func:`olmes.tables.bootstrap.resampled_means`): every column resampled with the same
    instances (within subjects, then macro-averaged, where given)."""
    groups = strata_members(len(columns), subjects)
    estimate = np.mean([columns[members].mean(axis=0, dtype=np.float64) for members in groups], axis=0)
    return Resampled(estimate, resampled_means(columns, subjects, resamples, seed))


def interval(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The percentile 95% interval of each column of ``draws``."""
    low, high = np.percentile(draws, [2.5, 97.5], axis=0)
    return low, high


# -- a series on a task, measured ----------------------------------------------------------------------


@dataclass(frozen=True)
class Curve:
    """One measure of a series on a task: at each checkpoint that has it (positions into the series
    task's checkpoints), its value and 95% interval."""

    measure: str
    positions: np.ndarray
    value: np.ndarray
    low: np.ndarray
    high: np.ndarray


@dataclass(frozen=True)
class Transition:
    """Where MCF overtakes CF for good on one series x task (module docstring), over the checkpoints
    that scored both: ``at`` the transition checkpoint's position among them (None: not yet),
    ``low_tokens``/``high_tokens`` its 95% interval (None: beyond the last checkpoint), the share of
    draws without a transition, and the last checkpoint's MCF - CF gap with its interval."""

    series: str
    task: str
    cf_method: str
    checkpoints: tuple[ModelInfo, ...]
    at: int | None
    low_tokens: float | None
    high_tokens: float | None
    no_transition_share: float
    last_gap: float
    last_gap_low: float
    last_gap_high: float
    n: int

    @property
    def tokens(self) -> float | None:
        return None if self.at is None else self.checkpoints[self.at].training_tokens


@dataclass(frozen=True)
class Measured:
    """A series on a task: its accuracy curves (each method scored, the OLMES score) and its transition."""

    data: SeriesTask
    curves: list[Curve]
    transition: Transition | None  # None: no checkpoint scored both CF (recommended) and MCF


GAP = "gap"
"""The block of per-instance MCF - CF differences (each -1, 0 or 1) resampled with the accuracies."""


def first_for_good(lead: np.ndarray) -> np.ndarray:
    """Per row of ``lead`` (MCF ahead: draws x checkpoints, or one row), the first checkpoint from which
    MCF leads at it and at every later one; -1 where MCF does not lead at the last."""
    holds = np.flip(np.logical_and.accumulate(np.flip(lead, axis=-1), axis=-1), axis=-1)
    return np.where(holds[..., -1], holds.argmax(axis=-1), -1)


def measure(data: SeriesTask, resamples: int, seed: int) -> Measured:
    """Every method's curve, the OLMES score's and the transition, from one resampling of the instances
    that every checkpoint, method and the MCF - CF gap share."""
    cf_key = recommended_method(data.task)
    blocks = dict(data.correct)
    shared = _shared(data, cf_key)
    if shared is not None:
        blocks[GAP] = (shared, _rows_at(data, MCF, shared) - _rows_at(data, cf_key, shared))
    columns = np.concatenate([matrix.T.astype(np.float32) for _, matrix in blocks.values()], axis=1)
    resampled = resample(columns, data.subjects, resamples, seed)
    ends = np.cumsum([0] + [len(positions) for positions, _ in blocks.values()])
    split = {
        key: (resampled.estimate[start:end], resampled.draws[:, start:end])
        for key, start, end in zip(blocks, ends[:-1], ends[1:], strict=True)
    }
    curves = [_curve(key, data.correct[key][0], *split[key]) for key in data.correct]
    if shared is None:
        return Measured(data, curves, None)
    (cf, cf_draws), (mcf, mcf_draws) = (_columns_at(data, split, key, shared) for key in (cf_key, MCF))
    curves.append(_curve(OLMES_SCORE, shared, np.maximum(cf, mcf), np.maximum(cf_draws, mcf_draws)))
    return Measured(data, curves, _transition(data, cf_key, shared, *split[GAP]))


def _shared(data: SeriesTask, cf_key: str) -> np.ndarray | None:
    """The positions of the checkpoints that scored both CF (``cf_key``) and MCF; None if none did."""
    if cf_key not in data.correct or MCF not in data.correct:
        return None
    positions = np.intersect1d(data.correct[cf_key][0], data.correct[MCF][0])
    return positions if positions.size else None


def _rows_at(data: SeriesTask, method: str, positions: np.ndarray) -> np.ndarray:
    """``method``'s correctness at the checkpoints ``positions`` (each of which scored it), as numbers."""
    at, matrix = data.correct[method]
    return matrix[np.searchsorted(at, positions)].astype(np.float32)


def _columns_at(
    data: SeriesTask, split: dict, method: str, positions: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``method``'s estimates and draws at the checkpoints ``positions``."""
    estimate, draws = split[method]
    columns = np.searchsorted(data.correct[method][0], positions)
    return estimate[columns], draws[:, columns]


def _curve(key: str, positions: np.ndarray, estimate: np.ndarray, draws: np.ndarray) -> Curve:
    low, high = interval(draws)
    return Curve(key, positions, estimate, low, high)


def _transition(
    data: SeriesTask, cf_key: str, positions: np.ndarray, gap: np.ndarray, gap_draws: np.ndarray
) -> Transition:
    """The transition of the checkpoints ``positions`` from the MCF - CF gap's estimate and draws."""
    checkpoints = tuple(data.checkpoints[position] for position in positions)
    tokens = np.array([info.training_tokens for info in checkpoints])
    at = int(first_for_good(gap > 0))
    drawn = first_for_good(gap_draws > 0)
    reached = np.where(drawn >= 0, tokens[drawn], np.inf)  # no transition: beyond the last checkpoint
    low, high = np.percentile(reached, [2.5, 97.5], method="inverted_cdf")
    gap_low, gap_high = np.percentile(gap_draws[:, -1], [2.5, 97.5])
    return Transition(
        series=data.series, task=data.task, cf_method=cf_key, checkpoints=checkpoints,
        at=None if at < 0 else at, low_tokens=_finite(low), high_tokens=_finite(high),
        no_transition_share=float(np.mean(drawn < 0)), last_gap=float(gap[-1]),
        last_gap_low=float(gap_low), last_gap_high=float(gap_high), n=data.correct[cf_key][1].shape[1],
    )  # fmt: skip


def _finite(tokens: float) -> float | None:
    return float(tokens) if np.isfinite(tokens) else None


# -- the tables ----------------------------------------------------------------------------------------


def training_tables(scores: ScoreSet, resamples: int, seed: int) -> list[Table]:
    """``training_series``, ``training_transitions`` and ``training_atlas`` (:data:`TRAINING_KEYS`)."""
    every = training_series(scores)
    measured = [
        measure(data, resamples, seed)
        for series in every
        for task in scores.tasks
        if (data := series_task(scores, series, task)) is not None
    ]
    transitions = [
        transition_record(found.transition, resamples, seed) for found in measured if found.transition
    ]
    return [
        series_table(scores, measured, resamples, seed),
        transitions_table(transitions, resamples, seed),
        atlas_table(transitions, [series.name for series in every], scores.tasks),
    ]


SERIES_HEADER = [
    "Series", "Task", "Method", "Checkpoint", "Model", "Display name", "Training tokens", "Value",
    "95% low", "95% high", "n", "Partial",
]  # fmt: skip


def series_table(scores: ScoreSet, measured: list[Measured], resamples: int, seed: int) -> Table:
    """The export: a row per series x task x measure x checkpoint (by training tokens)."""
    records = [record for found in measured for record in _export_records(scores, found)]
    rows = [_export_row(record) for record in records]
    caption = (
        "Every training series' data, to plot elsewhere: per series, task, measure and checkpoint (by "
        "training tokens), CF under each normalization the run scored, MCF, the OLMES score (best of two: "
        "the higher of CF under the task's recommended normalization and MCF) and bits per byte of the gold "
        "CF continuation. Value at full precision (accuracies as fractions, bits per byte in bits) with its "
        f"95% interval: accuracies, a percentile bootstrap over instances ({resamples} resamples, seed "
        f"{seed}; MMLU resampled within subjects and macro-averaged; the same draws at every checkpoint); "
        f"bits per byte, its mean's normal interval (mean ± {Z95:.2f} standard errors). n: instances. "
        "Partial: a partial run."
    )
    return Table(TRAINING_SERIES, "Training series: every measure per checkpoint", caption, SERIES_HEADER,
                 [(None, rows)], records, "llllllrrrrrl", text_columns=6)  # fmt: skip


def _export_records(scores: ScoreSet, found: Measured) -> list[dict]:
    """The export's records of one series x task, measure by measure (:data:`MEASURE_LABELS`' order)."""
    data, curves = found.data, {curve.measure: curve for curve in found.curves}
    records = []
    for key in MEASURE_LABELS:
        if key == BITS_PER_BYTE:
            records += [_bpb_record(scores, data, info) for info in data.checkpoints]
        elif key in curves:
            curve = curves[key]
            for k, position in enumerate(curve.positions):
                info = data.checkpoints[position]
                summary = scores.get(info.name, data.task)
                values = (curve.value[k], curve.low[k], curve.high[k])
                records.append(
                    _record(data, info, key, *map(float, values), summary["n_instances"], summary["partial"])
                )
    return [record for record in records if record is not None]


def _bpb_record(scores: ScoreSet, data: SeriesTask, info: ModelInfo) -> dict | None:
    summary = scores.get(info.name, data.task)
    bpb = summary.get("bpb")
    if bpb is None:
        return None
    value, stderr = bpb["bpb"], bpb["stderr"]
    low, high = (None, None) if stderr is None else (value - Z95 * stderr, value + Z95 * stderr)
    return _record(data, info, BITS_PER_BYTE, value, low, high, bpb["n"], summary["partial"])


def _record(
    data: SeriesTask, info: ModelInfo, key: str, value: float, low: float | None, high: float | None,
    n: int, partial: bool,
) -> dict:  # fmt: skip
    return {
        "series": data.series, "task": data.task, "task_name": task_name(data.task), "method": key,
        "method_label": MEASURE_LABELS[key], "recommended": key == recommended_method(data.task),
        "checkpoint": info.checkpoint, "model": info.name, "display_name": info.display_name,
        "training_tokens": info.training_tokens, "value": value, "ci_low": low, "ci_high": high, "n": n,
        "partial": partial,
    }  # fmt: skip


def _number(value: float | None) -> Cell:
    """A number of the export at full precision (the shortest text that reads back the same float)."""
    return Cell(value, MISSING if value is None else repr(float(value)))


def _export_row(record: dict) -> list[Cell]:
    texts = [record["series"], record["task_name"], record["method_label"], record["checkpoint"] or MISSING,
             record["model"], record["display_name"]]  # fmt: skip
    numbers = [_number(record[name]) for name in ("training_tokens", "value", "ci_low", "ci_high")]
    return [*map(text_cell, texts), *numbers, Cell(record["n"], str(record["n"])),
            text_cell("yes" if record["partial"] else "no")]  # fmt: skip


TRANSITIONS_HEADER = [
    "Series", "Task", "CF scoring", "MCF overtakes CF at", "Checkpoint", "95% interval",
    "Not crossed (% draws)", "Last gap (points)", "Last gap 95% CI", "Checkpoints", "n",
]  # fmt: skip


def transitions_table(records: list[dict], resamples: int, seed: int) -> Table:
    """Per series x task (:func:`transition_record`): where MCF overtakes CF for good, or "not yet"."""
    caption = (
        "Per series and task, the training tokens from which MCF overtakes CF for good: the first "
        "checkpoint at which MCF accuracy exceeds CF accuracy (the task's recommended normalization) and "
        "stays above it at every later checkpoint, so that a lead near chance that falls back (a blip) is "
        'no transition; "not yet" where MCF does not lead at the last checkpoint. 95% interval: a paired '
        f"bootstrap over instances ({resamples} resamples, seed {seed}; MMLU within subjects): each draw "
        "resamples the instances once for every checkpoint and both formulations and finds its own "
        "transition; the 2.5th and 97.5th percentiles of its tokens (checkpoints' tokens), a draw without "
        "one counting as beyond the last checkpoint (> last); Not crossed: the share of draws without one. "
        "Last gap: MCF minus CF accuracy at the last checkpoint with its 95% interval from the same draws."
    )
    rows = [_transition_row(record) for record in records]
    return Table(TRAINING_TRANSITIONS, "Where MCF overtakes CF over training", caption, TRANSITIONS_HEADER,
                 [(None, rows)], records, "lllrlrrrlrr", text_columns=3)  # fmt: skip


def transition_record(found: Transition, resamples: int, seed: int) -> dict:
    """A transition as the tables' records hold it."""
    at = None if found.at is None else found.checkpoints[found.at]
    previous = None if not found.at else found.checkpoints[found.at - 1]
    return {
        "series": found.series, "task": found.task, "task_name": task_name(found.task),
        "cf_method": found.cf_method, "crossed": at is not None,
        "transition_tokens": found.tokens, "transition_model": at and at.name,
        "transition_checkpoint": at and (at.checkpoint or at.display_name),
        "previous_tokens": previous and previous.training_tokens,
        "ci_low_tokens": found.low_tokens, "ci_high_tokens": found.high_tokens,
        "no_transition_share": found.no_transition_share,
        "last_gap": found.last_gap, "last_gap_ci_low": found.last_gap_low,
        "last_gap_ci_high": found.last_gap_high,
        "first_tokens": found.checkpoints[0].training_tokens,
        "last_tokens": found.checkpoints[-1].training_tokens, "checkpoints": len(found.checkpoints),
        "n": found.n, "resamples": resamples, "seed": seed,
    }  # fmt: skip


NOT_YET = "not yet"


def transition_span(record: dict) -> str:
    """A transition's 95% interval as a table shows it: [300B, 500B], an open end as > the last tokens."""
    ends = [
        tokens_text(record[name]) if record[name] is not None else f"> {tokens_text(record['last_tokens'])}"
        for name in ("ci_low_tokens", "ci_high_tokens")
    ]
    return f"[{ends[0]}, {ends[1]}]"


def _transition_row(record: dict) -> list[Cell]:
    crossed = record["crossed"]
    gap_span = f"[{percent(record['last_gap_ci_low'])}, {percent(record['last_gap_ci_high'])}]"
    return [
        text_cell(record["series"]), text_cell(record["task_name"]),
        text_cell(METHODS[record["cf_method"]].label),
        Cell(record["transition_tokens"], tokens_text(record["transition_tokens"]) if crossed else NOT_YET),
        text_cell(record["transition_checkpoint"] or MISSING),
        text_cell(transition_span(record) if crossed else MISSING),
        percent_cell(record["no_transition_share"]), percent_cell(record["last_gap"]), text_cell(gap_span),
        Cell(record["checkpoints"], str(record["checkpoints"])), Cell(record["n"], str(record["n"])),
    ]  # fmt: skip


def atlas_table(transitions: list[dict], series: list[str], tasks: list[str]) -> Table:
    """Tasks x series from the transitions' records: each cell the transition tokens with its interval,
    or "not yet"; tasks by the fewest tokens at which any series crosses, those no series has crossed
    last (then in the tasks' order)."""
    found = {(record["series"], record["task"]): record for record in transitions}
    present = [task for task in tasks if any((name, task) in found for name in series)]
    crossings = {
        task: [found[name, task]["transition_tokens"] for name in series if (name, task) in found]
        for task in present
    }
    earliest = {
        task: min((tokens for tokens in crossings[task] if tokens is not None), default=None)
        for task in present
    }
    ordered = sorted(present, key=lambda task: (earliest[task] is None, earliest[task] or 0.0))
    records = [
        {"task": task, "task_name": task_name(task),
         "series": {name: _atlas_entry(found.get((name, task))) for name in series}}
        for task in ordered
    ]  # fmt: skip
    rows = [
        [text_cell(task_name(task)), *(_atlas_cell(found.get((name, task))) for name in series)]
        for task in ordered
    ]
    caption = (
        "Per task (rows) and training series (columns): the training tokens from which MCF overtakes CF for "
        'good, with its 95% interval (training_transitions), or "not yet"; — where the series did not '
        "score the task. Tasks by when they cross: the fewest tokens at which any series crosses first, "
        "tasks no series has crossed last."
    )
    title = "Atlas: when MCF overtakes CF, per task and series"
    return Table(TRAINING_ATLAS, title, caption, ["Task", *series], [(None, rows)], records)


def _atlas_entry(record: dict | None) -> dict | None:
    if record is None:
        return None
    return {
        name: record[name] for name in ("crossed", "transition_tokens", "ci_low_tokens", "ci_high_tokens")
    }


def _atlas_cell(record: dict | None) -> Cell:
    if record is None:
        return text_cell(MISSING)
    if not record["crossed"]:
        return text_cell(NOT_YET)
    return Cell(
        record["transition_tokens"], f"{tokens_text(record['transition_tokens'])} {transition_span(record)}"
    )
