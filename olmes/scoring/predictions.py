"""Log-probs -> per-instance predictions: each method's decisions, and the predictions files.

The scoring methods and their formulas are declared in :mod:`olmes.core.methods`; here each method's
choice scores are decided (argmax, top-two gap, near ties) and written or read as a predictions file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from olmes.core.atomic import atomic_path
from olmes.core.errors import OlmesError
from olmes.core.methods import CF, MCF, METHODS, PMI, Method, cf_method, get_method, methods_for
from olmes.core.records import PREDICTION_COLUMNS, PREDICTION_FORMAT
from olmes.scoring.logprob_files import ChoiceTable, read_tables

NEAR_TIE_NATS = 1e-4
"""Top-two score gap at or below which a decision counts as a near tie (batch size or hardware can
flip it). Measured in the units of the score that decides: nats for none/pmi/MCF, nats per token or
per character for token/char."""


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
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), **PREDICTION_FORMAT.metadata()})
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
        schema = pq.read_schema(path)
        PREDICTION_FORMAT.check(schema.metadata, str(path))
        present = set(schema.names)
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
    return labelled(method_predictions(scoring, table), model, table.task)


def labelled(predictions: pd.DataFrame, model: str, task: str) -> pd.DataFrame:
    predictions.insert(0, "task", task)
    predictions.insert(0, "model", model)
    return predictions
