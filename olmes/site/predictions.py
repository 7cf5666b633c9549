"""The instance browser's data: each task's instances, and each model's picks read from its predictions.

A model's predictions are read anew for each of its data files (a few columns, with pyarrow: 500
models' would not fit in memory), checked against the SHA-256 its score summary records, and their
gold answers against the task's instance file, so that the browser never marks the wrong choice.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from olmes.core.errors import OlmesError
from olmes.core.resources import file_sha256
from olmes.site.pages import SiteData
from olmes.tables.results import checked_predictions_path


def _browser_instance(row) -> dict:
    """An instance file's row as the browser holds it (short keys: MMLU has 14,042 of them)."""
    item = {"i": int(row["instance_index"]), "id": str(row["native_id"]), "q": row["question"]}
    item.update(c=row["choices"], g=row["gold"])
    if row.get("subject"):
        item["s"] = row["subject"]
    return item


def _placeholder_instance(row) -> dict:
    """An instance known only from predictions (no instance file given): its id, choice count and gold."""
    item = {
        "i": int(row.instance_index),
        "id": str(row.native_id),
        "q": "(no instance file given for this task: text unavailable)",
        "c": [f"choice {k + 1}" for k in range(int(row.num_choices))],
        "g": int(row.label),
    }
    if not pd.isna(row.subject) and row.subject:
        item["s"] = str(row.subject)
    return item


def _index_ranges(indices: np.ndarray) -> list[list[int]]:
    """Sorted, distinct instance indices as [start, stop) ranges: a full run is one range."""
    if not len(indices):
        return []
    breaks = np.flatnonzero(np.diff(indices) != 1) + 1
    return [[int(run[0]), int(run[-1]) + 1] for run in np.split(indices, breaks)]


class BrowserData:
    """What the instance browser of each task page loads: the task's instances, and per model its
    picks; the instance files' hashes and gold answers are read once per task."""

    def __init__(self, data: SiteData):
        self.data = data
        self.instance_hashes: dict[str, str] = {}  # SHA-256 of each task's instance file
        self.instance_golds: dict[str, np.ndarray] = {}  # each task's gold by instance index

    def instances(self, task: str) -> list[dict]:
        """The task's instances as the browser shows them (question, choices, gold, subject), in
        instance order: from its instance file; without one, placeholders made from the predictions
        of the model scored on the most instances (partial runs score a prefix of them)."""
        given = self.data.instances.get(task)
        if given is not None:
            return [_browser_instance(row) for _, row in sorted(given.rows.items())]
        scored = self.data.scored(task)
        if not scored:
            return []
        widest, _ = max(scored, key=lambda pair: pair[1]["n_instances"])
        columns = ["instance_index", "native_id", "num_choices", "label", "subject"]
        frame = self._predictions(widest.name, task, columns).to_pandas().drop_duplicates("instance_index")
        return [_placeholder_instance(row) for row in frame.itertuples()]

    def model_source(self, name: str, task: str) -> dict[str, str | None]:
        """What one model's browser data on a task is made from (less the olmes version and data
        format, which the site build adds): its predictions (by the SHA-256 its score summary records)
        and the task's instance file (by its SHA-256, None without one), whose gold answers the
        predictions are checked against."""
        given = self.data.instances.get(task)
        if given is not None and task not in self.instance_hashes:
            self.instance_hashes[task] = file_sha256(given.path)
        scores = self.data.scores
        predictions = scores.get(name, task).get("predictions") or {}
        if not predictions.get("sha256"):
            raise OlmesError(f"{scores.paths[name, task]} names no predictions file; re-run olmes score")
        return {
            "model": name,
            "task": task,
            "predictions_sha256": predictions["sha256"],
            "instances_sha256": self.instance_hashes.get(task),
        }

    def model_data(self, name: str, task: str) -> dict:
        """One model's picks on a task: the instances it was scored on (``ranges`` of instance
        indices, [start, stop)), per method its prediction on each of them in that order (-1 where the
        method has none) and the instance indices that were near ties."""
        table = self._predictions(name, task, ["instance_index", "method", "label", "prediction", "near_tie"])
        index = table["instance_index"].to_numpy()
        self._check_gold(name, task, index, table["label"].to_numpy())
        scored = np.zeros(int(index.max(initial=-1)) + 1, dtype=bool)
        scored[index] = True
        position = np.cumsum(scored) - 1  # of each instance index among those scored
        prediction = table["prediction"].to_numpy()
        near_tie = table["near_tie"].to_numpy(zero_copy_only=False)
        methods = pc.dictionary_encode(table["method"]).combine_chunks()
        codes = methods.indices.to_numpy(zero_copy_only=False)
        predictions, near_ties = {}, {}
        for code, method in enumerate(methods.dictionary.to_pylist()):
            rows = codes == code
            values = np.full(int(scored.sum()), -1, dtype=np.int64)
            values[position[index[rows]]] = prediction[rows]
            predictions[method] = values.tolist()
            near_ties[method] = np.sort(index[rows & near_tie]).tolist()
        ranges = _index_ranges(np.flatnonzero(scored))
        return {"ranges": ranges, "predictions": predictions, "near_ties": near_ties}

    def _predictions(self, name: str, task: str, columns: list[str]) -> pa.Table:
        """A few columns of a model's predictions on a task, checked against the hash its summary
        records."""
        key = (name, task)
        scores = self.data.scores
        path = checked_predictions_path(scores.summaries[key], scores.paths[key])
        return pq.read_table(path, columns=columns)

    def _gold(self, task: str) -> np.ndarray:
        """The instance file's gold answer by instance index (-1: not in the file), made once."""
        if task not in self.instance_golds:
            rows = self.data.instances[task].rows
            gold = np.full(max(rows, default=-1) + 1, -1, dtype=np.int64)
            gold[list(rows)] = [row["gold"] for row in rows.values()]
            self.instance_golds[task] = gold
        return self.instance_golds[task]

    def _check_gold(self, name: str, task: str, index: np.ndarray, label: np.ndarray) -> None:
        """The scored run's gold answers (``label`` of each row, by instance ``index``) must be the
        instance file's: else the browser would mark the wrong choices."""
        given = self.data.instances.get(task)
        if given is None:
            return
        gold = self._gold(task)
        expected = np.where(index < len(gold), gold[np.minimum(index, len(gold) - 1)], -1)
        wrong = np.flatnonzero((expected >= 0) & (expected != label))
        if len(wrong):
            first, found = int(index[wrong[0]]), int(label[wrong[0]])
            raise OlmesError(
                f"{given.path}: instance {first} has gold {given.rows[first]['gold']} but {name}'s scored "
                f"run has {found}; give the instances the run was made from"
            )
