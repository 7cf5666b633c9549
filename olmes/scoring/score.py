"""Log-probs -> per-instance predictions, accuracies and the OLMES score (docs/standard.md section 3).

The scoring methods and their normalizations are declared in :mod:`olmes.core.methods`; :func:`normalize`
here is the one place their formulas are computed.

The inputs are the engine's log-prob Parquet files (one per model x task x request set). Every check
that could otherwise turn into a silently wrong score (a missing choice, a missing unconditional row,
a NaN log-prob, CF and MCF files that disagree about the instances) raises :class:`OlmesError` naming
the file and the instance.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from olmes.core.atomic import atomic_path
from olmes.core.errors import OlmesError
from olmes.core.methods import (
    CF,
    MCF,
    METHODS,
    PMI,
    Method,
    cf_method,
    get_method,
    methods_for,
    missing_pmi,
)
from olmes.core.records import (
    LOGPROB_SCORED,
    PREDICTION_COLUMNS,
    SCORES_FORMAT,
    BestOfTwo,
    BitsPerByte,
    InputFile,
    MethodStats,
    ScoreSummary,
    SubjectStats,
    read_run_record,
    write_score_summary,
)
from olmes.core.resources import file_sha256
from olmes.core.tasks import Task, get_task

NEAR_TIE_NATS = 1e-4
"""Top-two score gap at or below which a decision counts as a near tie (batch size or hardware can
flip it). Measured in the units of the score that decides: nats for none/pmi/MCF, nats per token or
per character for token/char."""


# -- reading log-prob files -------------------------------------------------------------------------


@dataclass
class ChoiceTable:
    """One request set's log-probs laid out instance x choice, rows sorted by ``instance_index``.

    Arrays of shape (instances, max choices) are padded with NaN past an instance's last choice.
    ``uncond_sum`` holds the unconditional ("Answer:") sums, or is None when the file has none.
    """

    path: Path
    task: str
    request_set: str
    instance_index: np.ndarray
    native_id: np.ndarray
    subject: np.ndarray | None
    label: np.ndarray
    num_choices: np.ndarray
    sum_logprob: np.ndarray
    num_tokens: np.ndarray
    num_chars: np.ndarray
    uncond_sum: np.ndarray | None
    num_bytes: np.ndarray | None = None  # UTF-8 bytes of each continuation (files before it: None)

    def describe(self, row: int) -> str:
        """How error messages name an instance: its index and native id."""
        return f"instance {int(self.instance_index[row])} (native_id {self.native_id[row]})"


def read_logprobs(path: str | Path, request_set: str) -> ChoiceTable:
    """Read and validate one engine log-prob file of the given request set (CF or MCF)."""
    path = Path(path)
    frame, task = _read_frame(path, request_set)
    if frame["unconditional"].astype(bool).any():
        raise OlmesError(
            f"{path}: {request_set} file has unconditional rows; they belong in the task's pmi request "
            "file (olmes requests --request-set pmi)"
        )
    return _layout(frame, path, task, request_set)


def read_pmi(path: str | Path, cf: ChoiceTable) -> ChoiceTable:
    """Add a pmi log-prob file (every choice after the bare context "Answer:") to its CF table."""
    path = Path(path)
    frame, task = _read_frame(path, PMI)
    if not frame["unconditional"].astype(bool).all():
        raise OlmesError(f"{path}: a pmi file holds only unconditional rows")
    if task != cf.task:
        raise OlmesError(f"{cf.path} is task {cf.task!r} but {path} is task {task!r}")
    cf.uncond_sum = _unconditional(frame, cf, path)
    return cf


def _read_frame(path: Path, request_set: str) -> tuple[pd.DataFrame, str]:
    """A log-prob file's rows, checked: engine columns, one task, the expected request set, sane values.
    (The files' ``formulation`` column holds the request set.)"""
    try:
        frame = pd.read_parquet(path)
    except (OSError, ValueError) as error:
        raise OlmesError(f"{path}: cannot read log-prob Parquet ({error}); re-run the engine") from error
    missing = [column for column in LOGPROB_SCORED if column not in frame.columns]
    if missing:
        raise OlmesError(f"{path}: missing column(s) {', '.join(missing)}; is this an engine log-prob file?")
    if frame.empty:
        raise OlmesError(f"{path}: no rows; re-run the engine for this model and task")
    task = _single_value(frame, "task", path)
    found = _single_value(frame, "formulation", path)
    if found != request_set:
        raise OlmesError(f"{path}: holds request set {found!r} but was given as {request_set!r}")
    _check_values(frame, path)
    return frame, task


def _single_value(frame: pd.DataFrame, column: str, path: Path) -> str:
    values = frame[column].unique()
    if len(values) != 1:
        raise OlmesError(f"{path}: column {column!r} must hold one value, found {sorted(map(str, values))}")
    return str(values[0])


def _row_name(frame: pd.DataFrame, position: int) -> str:
    row = frame.iloc[position]
    kind = " (unconditional)" if bool(row["unconditional"]) else ""
    return (
        f"instance {int(row['instance_index'])} (native_id {row['native_id']}), "
        f"choice {int(row['choice'])}{kind}"
    )


LOGPROB_TOLERANCE = 1e-6
"""How far above 0 a ``sum_logprob`` may be (float rounding); a log-probability is never above 0."""


def _check_values(frame: pd.DataFrame, path: Path) -> None:
    """Reject log-probs that are not log-probabilities (NaN, infinite, above :data:`LOGPROB_TOLERANCE`),
    empty continuations and duplicated rows, naming the first one."""
    check_logprob_values(frame, path)
    for column in ("num_tokens", "num_chars"):
        bad = np.flatnonzero(frame[column].to_numpy() < 1)
        if bad.size:
            raise OlmesError(
                f"{path}: {_row_name(frame, bad[0])} has {column} < 1; a continuation is never empty"
            )
    duplicated = np.flatnonzero(frame.duplicated(["instance_index", "choice", "unconditional"]).to_numpy())
    if duplicated.size:
        raise OlmesError(f"{path}: {_row_name(frame, duplicated[0])} appears more than once")


def check_logprob_values(frame: pd.DataFrame, path: Path) -> None:
    """Every ``sum_logprob`` a log-probability: a finite number at most :data:`LOGPROB_TOLERANCE`.

    Why not let a NaN through as a choice that never wins: where every choice of an instance is NaN
    the first one wins, and a file of NaN scores 1/k on every CF method; such a number is not
    supported by the data. The engine computes in float32 at least and writes none from a sound
    model: a NaN, an infinity or a positive sum means a model that overflowed or a file from elsewhere."""
    try:
        values = frame["sum_logprob"].to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError) as error:
        raise OlmesError(
            f"{path}: column 'sum_logprob' does not hold numbers ({error}); re-run the engine"
        ) from error
    bad = np.flatnonzero(~np.isfinite(values) | (values > LOGPROB_TOLERANCE))
    if bad.size:
        value = values[bad[0]]
        what = "positive (a log-probability is at most 0)" if np.isfinite(value) else "not a finite number"
        raise OlmesError(
            f"{path}: {_row_name(frame, bad[0])} has sum_logprob {value} ({bad.size} of {len(values)} rows "
            f"bad), {what}; re-run olmes logprobs for this file (with --dtype float32 if the model "
            "overflowed in half precision)"
        )


def _layout(cond: pd.DataFrame, path: Path, task: str, request_set: str) -> ChoiceTable:
    """Check each instance has choices 0..k-1 and one gold label < k, then pivot to matrices."""
    if cond.empty:
        raise OlmesError(f"{path}: no conditional rows; re-run the engine for this file")
    groups = cond.groupby("instance_index", sort=True)
    shape = groups.agg(
        first=("choice", "min"), last=("choice", "max"), count=("choice", "size"),
        labels=("label", "nunique"), label=("label", "first"), native_id=("native_id", "first"),
    )  # fmt: skip
    gaps = (shape["first"] != 0) | (shape["last"] != shape["count"] - 1)
    if gaps.any():
        instance = gaps.idxmax()
        present = sorted(cond.loc[cond["instance_index"] == instance, "choice"].tolist())
        absent = sorted(set(range(max(present) + 1)) - set(present))
        raise OlmesError(
            f"{_instance_name(path, shape, instance)} has choices {present}: choice(s) {absent} missing; "
            "re-run the engine for this file"
        )
    mixed = shape["labels"] != 1
    if mixed.any():
        raise OlmesError(f"{_instance_name(path, shape, mixed.idxmax())} has rows with different gold labels")
    out_of_range = (shape["label"] < 0) | (shape["label"] >= shape["count"])
    if out_of_range.any():
        instance = out_of_range.idxmax()
        raise OlmesError(
            f"{_instance_name(path, shape, instance)} has gold label {shape.at[instance, 'label']} "
            f"but {shape.at[instance, 'count']} choice(s); a choice may be missing"
        )
    subject = None
    if "subject" in cond.columns and cond["subject"].notna().any():
        subject = groups["subject"].first().astype(str).to_numpy()

    def matrix(column: str) -> np.ndarray:
        return cond.pivot(index="instance_index", columns="choice", values=column).to_numpy(np.float64)

    return ChoiceTable(
        path=path, task=task, request_set=request_set,
        instance_index=shape.index.to_numpy(), native_id=shape["native_id"].astype(str).to_numpy(),
        subject=subject, label=shape["label"].to_numpy(np.int64), num_choices=shape["count"].to_numpy(),
        sum_logprob=matrix("sum_logprob"), num_tokens=matrix("num_tokens"), num_chars=matrix("num_chars"),
        uncond_sum=None, num_bytes=matrix("num_bytes") if "num_bytes" in cond.columns else None,
    )  # fmt: skip


def _instance_name(path: Path, shape: pd.DataFrame, instance) -> str:
    return f"{path}: instance {instance} (native_id {shape.at[instance, 'native_id']})"


def _unconditional(uncond: pd.DataFrame, table: ChoiceTable, path: Path) -> np.ndarray:
    """The unconditional sums as a matrix aligned with the conditional ones; every cell must exist."""
    pivot = uncond.pivot(index="instance_index", columns="choice", values="sum_logprob")
    stray = pivot.index.difference(table.instance_index)
    if len(stray):
        raise OlmesError(
            f"{path}: instance {stray[0]} has unconditional rows but no conditional ones in {table.path}"
        )
    width = max(table.sum_logprob.shape[1], int(pivot.columns.max()) + 1)
    aligned = pivot.reindex(index=table.instance_index, columns=range(width)).to_numpy(np.float64)
    rows = uncond.assign(present=1.0).pivot(index="instance_index", columns="choice", values="present")
    present = ~np.isnan(rows.reindex(index=table.instance_index, columns=range(width)).to_numpy(np.float64))
    expected = np.arange(width)[None, :] < table.num_choices[:, None]  # a real NaN log-prob is not a gap
    for mask, problem in (
        (expected & ~present, "has no unconditional (pmi) row for choice {choice}; "
         "re-generate the pmi requests and re-run the engine"),
        (~expected & present, "has an unconditional row for choice {choice} but no conditional"),
    ):  # fmt: skip
        bad = np.argwhere(mask)
        if bad.size:
            row, choice = bad[0]
            raise OlmesError(f"{path}: {table.describe(row)} " + problem.format(choice=choice))
    return aligned[:, : table.sum_logprob.shape[1]]


# -- the normalizations and the decisions -----------------------------------------------------------


def decide(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Argmax per row (first index wins exact ties, as numpy and the reference do) and top-two gap.

    NaN marks padding past an instance's last choice and never wins.
    """
    filled = np.where(np.isnan(scores), -np.inf, scores)
    predictions = filled.argmax(axis=1)
    top_two = np.sort(filled, axis=1)[:, -2:]
    return predictions, top_two[:, 1] - top_two[:, 0]


def _is_choice(scores: np.ndarray, table: ChoiceTable) -> np.ndarray:
    return np.arange(scores.shape[1])[None, :] < table.num_choices[:, None]


def playable_scores(scores: np.ndarray, table: ChoiceTable) -> np.ndarray:
    """A method's choice scores as decisions see them: padding past an instance's last choice and a
    non-finite score never win (-inf)."""
    return np.where(_is_choice(scores, table) & np.isfinite(scores), scores, -np.inf)


def available_methods(cf: ChoiceTable | None, mcf: ChoiceTable | None) -> list[Method]:
    """The methods whose request sets' log-probs are at hand."""
    present = set()
    if cf is not None:
        present |= {CF, PMI} if cf.uncond_sum is not None else {CF}
    if mcf is not None:
        present.add(MCF)
    return methods_for(present)


def method_predictions(method: Method, table: ChoiceTable) -> pd.DataFrame:
    """Per-instance predictions of one method (the MCF table for ``mcf``, the CF table otherwise).

    Columns: method, instance_index, native_id, subject, label, num_choices, prediction, correct,
    top_gap (best minus second-best score), near_tie (top_gap <= NEAR_TIE_NATS), nonfinite (a choice
    scored NaN or infinite; it never wins).
    """
    scores = method.choice_scores(table)
    nonfinite = (_is_choice(scores, table) & ~np.isfinite(scores)).any(axis=1)
    predictions, gaps = decide(playable_scores(scores, table))
    frame = pd.DataFrame({
        "method": method.key,
        "instance_index": table.instance_index.astype(np.int64),
        "native_id": table.native_id,
        "subject": table.subject if table.subject is not None else None,
        "label": table.label,
        "num_choices": table.num_choices.astype(np.int64),
        "prediction": predictions.astype(np.int64),
        "correct": predictions == table.label,
        "top_gap": gaps,
        "near_tie": gaps <= NEAR_TIE_NATS,
        "nonfinite": nonfinite,
    })  # fmt: skip
    frame["subject"] = frame["subject"].astype("string")
    return frame


def predictions_frame(cf: ChoiceTable | None, mcf: ChoiceTable | None) -> pd.DataFrame:
    """Per-instance predictions of every available method, long format (one row per method x instance)."""
    parts = [
        method_predictions(method, mcf if method.is_mcf else cf) for method in available_methods(cf, mcf)
    ]
    return pd.concat(parts, ignore_index=True)


def gather_predictions(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """One model x task's per-method predictions in the methods' standard order (cf_none ... mcf)."""
    methods = [str(part["method"].iloc[0]) for part in parts]
    if len(set(methods)) != len(methods):
        raise OlmesError(f"predictions of one method given twice: {sorted(methods)}")
    order = list(METHODS)
    ranked = sorted(zip(methods, parts, strict=True), key=lambda pair: order.index(pair[0]))
    frame = pd.concat([part for _, part in ranked], ignore_index=True)
    frame["subject"] = frame["subject"].astype("string")
    return frame


def write_predictions(predictions: pd.DataFrame, path: str | Path) -> None:
    """Write a predictions Parquet file (atomically) in the encoding git carries for every published
    model: zstd, dictionary-encoded ids and labels, byte-stream-split floats (``top_gap``). Read back,
    it is the same frame as pandas' default encoding; the file is about 35% smaller. Its columns are
    :data:`~olmes.core.records.PREDICTION_COLUMNS`, checked before anything is written."""
    table = pa.Table.from_pandas(predictions, preserve_index=False)
    declared = pa.schema(
        [(column.name, pa.type_for_alias(column.arrow_type)) for column in PREDICTION_COLUMNS]
    )
    if not table.schema.equals(declared):
        raise OlmesError(f"{path}: predictions not in the declared columns: {table.schema} vs {declared}")
    floats = [field.name for field in table.schema if pa.types.is_floating(field.type)]
    with atomic_path(path) as temp:
        pq.write_table(
            table,
            temp,
            compression="zstd",
            compression_level=9,
            use_dictionary=[name for name in table.column_names if name not in floats],
            column_encoding=dict.fromkeys(floats, "BYTE_STREAM_SPLIT"),
        )


def read_predictions_file(path: str | Path, columns: list[str] | None = None) -> pd.DataFrame:
    """A predictions file's rows (``columns`` only, where given, less the optional ones the file was
    written without), refused in one line when it is not one or lacks a required column of
    :data:`~olmes.core.records.PREDICTION_COLUMNS`."""
    try:
        present = set(pq.read_schema(path).names)
        missing = [c.name for c in PREDICTION_COLUMNS if c.required and c.name not in present]
        if missing:
            raise OlmesError(
                f"{path}: missing column(s) {', '.join(missing)}; is this an olmes predictions file? "
                "Re-run olmes score (or olmes predict)"
            )
        absent = {c.name for c in PREDICTION_COLUMNS if not c.required and c.name not in present}
        wanted = None if columns is None else [name for name in columns if name not in absent]
        return pd.read_parquet(path, columns=wanted)
    except (OSError, ValueError) as error:
        raise OlmesError(f"{path}: cannot read predictions ({error}); re-run olmes score") from error


def check_same_instances(predictions: pd.DataFrame, cf_path: Path, mcf_path: Path) -> None:
    """CF and MCF of one model x task must cover the same instances with the same golds and choices."""
    cf = predictions[predictions["method"] == cf_method("none").key].reset_index(drop=True)
    mcf = predictions[predictions["method"] == MCF].reset_index(drop=True)
    if not np.array_equal(cf["instance_index"], mcf["instance_index"]):
        only = np.setxor1d(cf["instance_index"], mcf["instance_index"])
        example = int(only[0]) if only.size else int(cf["instance_index"].iloc[0])
        raise OlmesError(
            f"{cf_path} and {mcf_path} cover different instances (e.g. instance {example}); "
            "score CF and MCF runs made with the same limit"
        )
    for field in ("label", "num_choices"):
        differ = np.flatnonzero(cf[field].to_numpy() != mcf[field].to_numpy())
        if differ.size:
            row = cf.iloc[differ[0]]
            raise OlmesError(
                f"{cf_path} and {mcf_path} disagree on the {field} of instance {int(row['instance_index'])} "
                f"(native_id {row['native_id']}); a choice may be missing from one of them"
            )


# -- accuracies -------------------------------------------------------------------------------------


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


# -- one model x task: the summary ------------------------------------------------------------------


def write_scores(
    predictions: pd.DataFrame, summary: ScoreSummary, predictions_path: Path, summary_path: Path
) -> None:
    """Write a model x task's predictions and its summary, which records the predictions file."""
    write_predictions(predictions, predictions_path)
    summary["predictions"] = {
        "path": os.path.relpath(Path(predictions_path).resolve(), Path(summary_path).resolve().parent),
        "sha256": file_sha256(Path(predictions_path)),
    }
    write_score_summary(summary_path, summary)


def read_tables(
    cf_path: str | Path | None = None, pmi_path: str | Path | None = None, mcf_path: str | Path | None = None
) -> tuple[ChoiceTable | None, ChoiceTable | None]:
    """The CF table (with its pmi sums when a pmi file is given) and the MCF table of one model x task."""
    if cf_path is None and mcf_path is None:
        raise OlmesError("nothing to score: give a CF and/or an MCF log-prob file")
    if pmi_path is not None and cf_path is None:
        raise OlmesError(f"{pmi_path}: a pmi log-prob file is scored together with its CF file (--cf)")
    cf = read_logprobs(cf_path, CF) if cf_path is not None else None
    if pmi_path is not None:
        read_pmi(pmi_path, cf)
    mcf = read_logprobs(mcf_path, MCF) if mcf_path is not None else None
    if cf is not None and mcf is not None and cf.task != mcf.task:
        raise OlmesError(f"{cf.path} is task {cf.task!r} but {mcf.path} is task {mcf.task!r}")
    for table in (cf, mcf):
        if table is not None and get_task(table.task).subjects and table.subject is None:
            raise OlmesError(
                f"{table.path}: {table.task} is averaged over subjects but the file has no subject column"
            )
    return cf, mcf


def predict(
    model: str,
    method: str,
    cf_path: str | Path | None = None,
    pmi_path: str | Path | None = None,
    mcf_path: str | Path | None = None,
) -> pd.DataFrame:
    """One method's per-instance predictions of one model x task (the light job the workflow fans
    out per method); it reads only the files the method needs."""
    scoring = get_method(method)
    if scoring.is_mcf:
        _, table = read_tables(mcf_path=mcf_path)
    else:
        pmi = pmi_path if PMI in scoring.request_sets else None
        table, _ = read_tables(cf_path=cf_path, pmi_path=pmi)
    if table is None:
        raise OlmesError(f"method {method} needs its log-prob file (--{scoring.request_sets[0]})")
    return _labelled(method_predictions(scoring, table), model, table.task)


def _labelled(predictions: pd.DataFrame, model: str, task: str) -> pd.DataFrame:
    predictions.insert(0, "task", task)
    predictions.insert(0, "model", model)
    return predictions


def score_task(
    model: str,
    *,
    cf_path: str | Path | None = None,
    pmi_path: str | Path | None = None,
    mcf_path: str | Path | None = None,
    limit: int | None = None,
    require_pmi: bool = False,
) -> tuple[pd.DataFrame, ScoreSummary]:
    """Score one model x task under every method its log-prob files allow, in one go.

    Returns the predictions frame (see :func:`method_predictions`, plus ``model`` and ``task``
    columns) and the summary of :func:`summarize`.
    """
    cf, mcf = read_tables(cf_path, pmi_path, mcf_path)
    predictions = _labelled(predictions_frame(cf, mcf), model, (cf or mcf).task)
    inputs = {CF: cf_path, PMI: pmi_path, MCF: mcf_path}
    present = {request_set: Path(path) for request_set, path in inputs.items() if path is not None}
    return predictions, summarize(predictions, present, limit, require_pmi)


def summarize(
    predictions: pd.DataFrame, inputs: dict[str, Path], limit: int | None = None, require_pmi: bool = False
) -> ScoreSummary:
    """The summary of one model x task (docs/file-formats.md) from its predictions of every method.

    ``inputs`` maps request sets (cf, pmi, mcf) to the log-prob files the predictions came from (recorded with
    their SHA-256 and run records). pmi is required when the task's standard has pmi requests, or
    with ``require_pmi`` (runs that ask for all four normalizations on every task). The caller adds
    the predictions file's location.
    """
    model = str(predictions["model"].iloc[0])
    task = _single_value(predictions, "task", inputs.get(CF) or inputs[MCF])
    spec = get_task(task)
    found = set(predictions["method"])
    if CF in inputs and (spec.has_pmi or require_pmi) and cf_method(PMI).key not in found:
        raise missing_pmi(inputs[CF])
    if CF in inputs and MCF in inputs:
        check_same_instances(predictions, inputs[CF], inputs[MCF])
    methods = method_stats(predictions, task)
    n_instances = int((predictions["method"] == predictions["method"].iloc[0]).sum())
    reasons = partial_reasons(task, n_instances, limit, CF in inputs, MCF in inputs)
    variant = prompt_variant(inputs)
    if variant is not None:
        reasons.append(f"prompt variant {variant}, not the standard's prompts")
    summary = {
        "schema": SCORES_FORMAT,
        "model": model,
        "task": task,
        "display_name": spec.display_name,
        "recommended_norm": spec.recommended_norm,
        "n_instances": n_instances,
        "full_count": spec.standard_count,
        "limit": limit,
        "partial": bool(reasons),
        "partial_reasons": reasons,
        "methods": methods,
        "best_of_two": olmes_result(methods, spec),
        "near_tie_nats": NEAR_TIE_NATS,
        "inputs": {request_set: input_record(path) for request_set, path in inputs.items()},
    }
    if variant is not None:
        summary["variant"] = variant
    if CF in inputs:
        bpb = bits_per_byte(read_logprobs(inputs[CF], CF))
        if bpb is not None:
            summary["bpb"] = bpb
    return summary


def prompt_variant(inputs: dict[str, Path]) -> str | None:
    """The prompt variant (``olmes requests --variant``) the log-prob files were made with, None for
    the standard; files of different variants are never scored together."""
    found = {}
    for path in inputs.values():
        try:
            has_variant = "variant" in pq.read_schema(path).names
            values = (
                set(pq.read_table(path, columns=["variant"])["variant"].to_pylist())
                if has_variant
                else {None}
            )
        except (OSError, ValueError) as error:
            raise OlmesError(f"{path}: cannot read log-prob Parquet ({error}); re-run the engine") from error
        if len(values) != 1:
            raise OlmesError(
                f"{path}: mixes prompt variants {sorted(map(str, values))}; re-run olmes requests"
            )
        found[path] = values.pop()
    if len(set(found.values())) > 1:
        named = ", ".join(f"{path} ({variant or 'standard'})" for path, variant in found.items())
        raise OlmesError(f"log-prob files of different prompt variants scored together: {named}")
    return next(iter(found.values()), None)


def input_record(path: Path) -> InputFile:
    """Where an input file was, its SHA-256 and its run record (what made it)."""
    return {"path": str(path), "sha256": file_sha256(path), "run": read_run_record(path)}
