"""Reading the engine's log-prob files: one request set's rows checked and laid out instance x choice.

Every check that could otherwise turn into a silently wrong score (a missing choice, a missing
unconditional row, a NaN log-prob, CF and MCF files of different tasks or prompt variants) raises
:class:`OlmesError` naming the file and the instance.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from olmes.core.errors import OlmesError
from olmes.core.methods import CF, MCF, PMI
from olmes.core.records import LOGPROB_FORMAT, LOGPROB_SCORED
from olmes.core.tasks import get_task


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
    LOGPROB_FORMAT.check(pq.read_schema(path).metadata, str(path))
    missing = [column for column in LOGPROB_SCORED if column not in frame.columns]
    if missing:
        raise OlmesError(f"{path}: missing column(s) {', '.join(missing)}; is this an engine log-prob file?")
    if frame.empty:
        raise OlmesError(f"{path}: no rows; re-run the engine for this model and task")
    task = single_value(frame, "task", path)
    found = single_value(frame, "formulation", path)
    if found != request_set:
        raise OlmesError(f"{path}: holds request set {found!r} but was given as {request_set!r}")
    _check_values(frame, path)
    return frame, task


def single_value(frame: pd.DataFrame, column: str, path: Path) -> str:
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
