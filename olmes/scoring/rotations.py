"""Every answer order for MCF: how much a model's MCF accuracy depends on where the gold letter sits.

Inputs are a task's standard MCF log-probs (rotation 0) and its ``mcf_rot`` log-probs (rotations
1..k-1, ``olmes requests --request-set mcf_rot``). For instance i, rotation r shows original choice
(r + j) mod k at letter position j. Per model x task the report (format ``olmes.rotations/1``,
docs/file-formats.md) holds:

- accuracy under each rotation, their mean and spread (max - min);
- consistent accuracy: right under every rotation of the instance;
- letter bias: the share of each letter among predictions and among gold letters, over all rotations;
- permutation-averaged accuracy: per original choice, its letter's log-prob averaged over the
  rotations, then the argmax.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from olmes.core.errors import OlmesError
from olmes.core.methods import MCF, ROTATIONS, letter
from olmes.core.records import ROTATIONS_FORMAT, RotationsReport
from olmes.scoring.logprob_files import check_logprob_values
from olmes.scoring.predictions import decide
from olmes.scoring.score import input_record


def _read(path: Path, request_set: str) -> pd.DataFrame:
    try:
        frame = pd.read_parquet(path)
    except (OSError, ValueError) as error:
        raise OlmesError(f"{path}: cannot read log-prob Parquet ({error})") from error
    if frame.empty or set(frame["formulation"]) != {request_set}:
        raise OlmesError(f"{path}: not a {request_set} log-prob file")
    if request_set == MCF:
        frame = frame.assign(rotation=0)
    elif "rotation" not in frame.columns:
        raise OlmesError(f"{path}: no rotation column; make it with olmes requests --request-set mcf_rot")
    check_logprob_values(frame, path)
    return frame


def rotation_table(mcf_path: Path, rotations_path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """(log-probs [instance, rotation, position], gold original choice, choices per instance, task);
    positions past an instance's k are NaN."""
    frame = pd.concat([_read(Path(mcf_path), MCF), _read(Path(rotations_path), ROTATIONS)])
    tasks = set(frame["task"])
    if len(tasks) != 1:
        raise OlmesError(f"{mcf_path} and {rotations_path} hold different tasks: {sorted(tasks)}")
    instances = np.sort(frame["instance_index"].unique())
    k_max = int(frame["choice"].max()) + 1
    position = {index: row for row, index in enumerate(instances)}
    logprobs = np.full((len(instances), k_max, k_max), np.nan)
    rows = frame["instance_index"].map(position).to_numpy()
    logprobs[rows, frame["rotation"].to_numpy(), frame["choice"].to_numpy()] = frame["sum_logprob"].to_numpy()
    standard = frame[frame["rotation"] == 0].drop_duplicates("instance_index").set_index("instance_index")
    gold = standard.loc[instances, "label"].to_numpy(np.int64)
    choices = frame.groupby("instance_index")["choice"].max().loc[instances].to_numpy(np.int64) + 1
    for row, k in enumerate(choices):
        if np.isnan(logprobs[row, :k, :k]).any():
            raise OlmesError(
                f"{rotations_path}: instance {instances[row]} lacks some rotation of its {k} choices"
            )
    return logprobs, gold, choices, tasks.pop()


def analyze(model: str, mcf_path: Path, rotations_path: Path) -> RotationsReport:
    logprobs, gold, choices, task = rotation_table(mcf_path, rotations_path)
    n, k_max = len(gold), logprobs.shape[1]
    correct = np.zeros((n, k_max), dtype=bool)
    predicted_letters, gold_letters = np.zeros(k_max, np.int64), np.zeros(k_max, np.int64)
    averaged = np.zeros((n, k_max))
    for rotation in range(k_max):
        active = choices > rotation  # an instance with fewer choices has fewer rotations
        predictions = np.zeros(n, np.int64)
        predictions[active] = decide(logprobs[active, rotation, :])[0]
        gold_position = (gold - rotation) % choices  # where the gold choice is shown
        correct[:, rotation] = np.where(active, predictions == gold_position, True)
        np.add.at(predicted_letters, predictions[active], 1)
        np.add.at(gold_letters, gold_position[active], 1)
        for original in range(k_max):
            shown_at = (original - rotation) % choices
            values = logprobs[np.arange(n), rotation, shown_at]
            averaged[:, original] += np.where(active & (original < choices), values, 0.0)
    averaged = np.where(np.arange(k_max)[None, :] < choices[:, None], averaged / choices[:, None], np.nan)
    permutation_predictions, _ = decide(averaged)
    per_rotation = [float(correct[choices > r, r].mean()) for r in range(k_max) if (choices > r).any()]
    decisions = int(predicted_letters.sum())
    return {
        "format": ROTATIONS_FORMAT.tag,
        "model": model,
        "task": task,
        "instances": n,
        "rotations": int(choices.max()),
        "accuracy_by_rotation": per_rotation,
        "mean_accuracy": float(np.mean(per_rotation)),
        "spread": float(max(per_rotation) - min(per_rotation)),
        "standard_accuracy": per_rotation[0],
        "consistent_accuracy": float(correct.all(axis=1).mean()),
        "permutation_averaged_accuracy": float((permutation_predictions == gold).mean()),
        "letters": {
            letter(position): {
                "predicted": float(predicted_letters[position] / decisions),
                "gold": float(gold_letters[position] / decisions),
            }
            for position in range(k_max)
        },
        "inputs": {MCF: input_record(Path(mcf_path)), ROTATIONS: input_record(Path(rotations_path))},
    }


ROTATIONS_KIND = "rotations"
"""The kind of a robustness result that is a rotations report (the others are prompt variants):
its key in the tables' inputs and its folder in the store (``robustness/rotations/``)."""

ROTATIONS_SUFFIX = ".rotations.json"
"""How a rotations report's file name ends (``<task>.rotations.json``): folders given to
``olmes tables`` are searched for it."""


def read_rotation_report(path: Path) -> RotationsReport:
    return ROTATIONS_FORMAT.read(path)
