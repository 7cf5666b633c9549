"""What each page of the site shows, computed once: :class:`SiteData` and its per-page methods.

The numbers come from the score summaries (per task and method) and from the tables of
``olmes tables`` (averages and their standard errors, the paired bootstrap, the figure data);
nothing the tables computed is computed again here. The leaderboard (its order and ranks, every
cell's score, ties, chance and flags) is the ``leaderboard`` table's rows, shown as they are and
under their own field names. The templates format; these methods gather.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from olmes import __version__
from olmes.core.errors import OlmesError
from olmes.core.methods import MCF, METHODS
from olmes.core.records import LeaderboardRow, LeaderboardTask, RowKind
from olmes.core.resources import file_sha256
from olmes.requests.tasks import TASKS
from olmes.site.inputs import TableSet, TaskInstances, TaskRequests
from olmes.tables.results import ScoreSet, checked_predictions_path


def slugify(name: str, taken: set[str]) -> str:
    """A file-name-safe, unique slug for a model name."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "model"
    slug, number = base, 2
    while slug.lower() in taken:
        slug, number = f"{base}-{number}", number + 1
    taken.add(slug.lower())
    return slug


# -- the engine's run record (olmes/logprobs/runner.py, run_record and score_file) -----------------

RUN_HEADLINE = (
    (
        "Computed by",
        "imported",
        lambda imported: (
            f"{imported['implementation']}"
            + (f" at commit {imported['commit']}" if imported.get("commit") else "")
            + ", imported (olmes import)"
        ),
    ),
    ("Revision", "model_revision", str),
    ("dtype", "dtype", str),
    ("Device", "device", str),
    ("Scoring path", "scoring_path", str),
    ("Wall time", "wall_time_s", lambda seconds: f"{seconds:.1f} s"),
    ("Tokens forwarded", "tokens_forwarded", lambda tokens: f"{tokens:,} tokens forwarded"),
    ("Peak memory", "peak_rss_bytes", lambda size: f"{size / 2**30:.2f} GiB peak memory"),
)
"""(label, run record key, format) of what a leaderboard reader wants to know about a run."""


ENGINE_ONLY = frozenset({"scoring_path", "tokens_forwarded", "peak_rss_bytes"})
"""What only olmes's engine measures: an imported run's record has nothing true to show there."""


def run_summary(record: dict | None) -> dict[str, str]:
    """The headline fields of a run record (those it has), formatted, by label."""
    record = record or {}
    skipped = ENGINE_ONLY if "imported" in record else frozenset()
    return {
        label: show(record[key])
        for label, key, show in RUN_HEADLINE
        if record.get(key) is not None and key not in skipped
    }


def run_record_rows(record: dict | None) -> list[tuple[str, str]]:
    """Every key of a run record as (key, text), in its order; ``versions`` gives one row a package."""
    rows = []
    for key, value in (record or {}).items():
        items = (
            [(f"{key}.{name}", item) for name, item in value.items()]
            if isinstance(value, dict)
            else [(key, value)]
        )
        rows += [(name, "" if item is None else str(item)) for name, item in items]
    return rows


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


# -- the site's data -------------------------------------------------------------------------------


@dataclass
class SiteModel:
    """A model as the pages show it: its row of the tables' ``leaderboard`` (rank, and Table 4's
    average and that average's standard error) and the slug of its page."""

    name: str
    display_name: str
    slug: str
    partial: bool
    average: float | None
    average_stderr: float | None
    rank: int | None = None
    kind: RowKind = "evaluated"  # "reported": a row the tables copied from the OLMES paper

    @property
    def page(self) -> str:
        """The model's page, relative to the site's root: reported models have pages of their own."""
        return f"{'reported' if self.kind == 'reported' else 'models'}/{self.slug}.html"


def reported_site_models(rows: list[LeaderboardRow]) -> list[SiteModel]:
    """The leaderboard's reported rows (``olmes tables --reported``) as models, in its order; their
    slugs are unique among themselves (their pages are a folder of their own)."""
    taken: set[str] = set()
    return [
        SiteModel(
            name=row["model"],
            display_name=row["display_name"],
            slug=slugify(row["model"], taken),
            partial=row["partial"],
            average=row["average"],
            average_stderr=row["average_stderr"],
            rank=row["rank"],
            kind="reported",
        )
        for row in rows
        if row.get("kind") == "reported"
    ]


DOWNLOAD_FIELDS = (
    "score", "stderr", "formulation", "dagger", "partial", "cf_accuracy", "mcf_accuracy", "n",
    "statistically_tied_with",
)  # fmt: skip
"""The fields of a leaderboard cell that ``leaderboard.csv`` and ``leaderboard.json`` carry."""


def _download_cell(cell: LeaderboardTask | None) -> dict | None:
    """A leaderboard cell in the downloads: its :data:`DOWNLOAD_FIELDS`, or null without a score."""
    if cell is None or cell["score"] is None:
        return None
    return {name: cell[name] for name in DOWNLOAD_FIELDS}


class SiteData:
    """Everything the templates need, computed once from scores, tables and requests."""

    def __init__(
        self,
        scores: ScoreSet,
        tables: TableSet,
        requests: dict[tuple[str, str], TaskRequests],
        instances: dict[str, TaskInstances],
    ):
        self.scores, self.tables, self.requests, self.instances = scores, tables, requests, instances
        self.task_specs = TASKS
        self.tasks = list(scores.tasks)
        self.leaderboard: list[LeaderboardRow] = tables.get("leaderboard")["records"]  # in rank order
        self.rows = [row for row in self.leaderboard if row.get("kind", "evaluated") == "evaluated"]
        self.reported_models = reported_site_models(self.leaderboard)
        taken: set[str] = set()
        slugs = {info.name: slugify(info.name, taken) for info in scores.models}
        self.models = [
            SiteModel(
                row["model"],
                row["display_name"],
                slugs.get(row["model"]) or slugify(row["model"], taken),
                row["partial"],
                row["average"],
                row["average_stderr"],
                row["rank"],
            )
            for row in self.rows
        ]
        self.by_name = {model.name: model for model in self.models}
        self.cells = {row["model"]: row["tasks"] for row in self.rows}
        self.instance_hashes: dict[str, str] = {}  # SHA-256 of each task's instance file, once
        self.instance_golds: dict[str, np.ndarray] = {}  # each task's gold by instance index, once

    # -- leaderboard -------------------------------------------------------------------------------

    def cell(self, model: SiteModel, task: str) -> LeaderboardTask | None:
        """The model's leaderboard cell on a task, as the tables wrote it; None where not scored."""
        return self.cells[model.name].get(task)

    def flags(self, model: str, task: str | None = None) -> list[dict]:
        """The flags of a model (on one task, or on all), from the tables' flags.json."""
        return [
            flag for flag in self._by_model["flags"].get(model, []) if task is None or flag["task"] == task
        ]

    @functools.cached_property
    def _by_model(self) -> dict[str, dict[str, list[dict]]]:
        """Records of the tables by model name, made once, so that a model page is no scan of every
        model's records: ``flags`` (flags.json), ``bpb`` (the bpb table) and ``paired_bootstrap``
        (each comparison under both its models)."""
        sources = {
            "flags": (self.tables.flags, ("model",)),
            "bpb": ((self.tables.get("bpb") or {}).get("records", []), ("model",)),
            "paired_bootstrap": (
                (self.tables.get("paired_bootstrap") or {}).get("records", []),
                ("higher", "lower"),
            ),
        }
        indexes: dict[str, dict[str, list[dict]]] = {}
        for what, (records, fields) in sources.items():
            index = indexes[what] = {}
            for record in records:
                for field in fields:
                    index.setdefault(record[field], []).append(record)
        return indexes

    def leaderboard_rows(self) -> list[dict]:
        """Every row of the leaderboard table in its order, evaluated and reported alike."""
        evaluated, reported = iter(self.models), iter(self.reported_models)
        rows = []
        for row in self.leaderboard:
            model = next(reported if row.get("kind") == "reported" else evaluated)
            reasons = [] if model.kind == "reported" else self.partial_reasons(model.name)
            rows.append({"model": model, "cells": row["tasks"], "reasons": reasons})
        return rows

    def partial_reasons(self, name: str) -> list[str]:
        reasons = []
        for task in self.tasks:
            summary = self.scores.get(name, task)
            if summary and summary["partial"]:
                reasons.append(
                    f"{self.task_specs[task].display_name}: {'; '.join(summary['partial_reasons'])}"
                )
        return reasons

    def leaderboard_records(self) -> list[dict]:
        """The leaderboard rows as the downloads hold them: a task without a score is null; ``kind`` and
        ``source`` where the tables have reported rows."""
        fields = ("rank", "model", "display_name", "partial", "average", "average_stderr", "kind", "source")
        return [
            {
                **{name: row[name] for name in fields if name in row},
                "tasks": {task: _download_cell(row["tasks"].get(task)) for task in self.tasks},
            }
            for row in self.leaderboard
        ]

    def leaderboard_csv(self) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        header = ["rank", "model", "display_name", "partial", "average", "average_stderr"]
        for task in self.tasks:
            header += [task, f"{task}_stderr", f"{task}_formulation", f"{task}_partial"]
        kinds = [name for name in ("kind", "source") if any(name in row for row in self.leaderboard)]
        writer.writerow(header + kinds)

        def number(value):
            return "" if value is None else f"{100 * value:.2f}"

        for record in self.leaderboard_records():
            row = [
                record["rank"] or "",
                record["model"],
                record["display_name"],
                record["partial"],
                number(record["average"]),
                number(record["average_stderr"]),
            ]
            for task in self.tasks:
                cell = record["tasks"][task]
                if cell is None:
                    row += ["", "", "", ""]
                else:
                    row += [
                        number(cell["score"]),
                        number(cell["stderr"]),
                        cell["formulation"],
                        cell["partial"],
                    ]
            writer.writerow(row + [record[name] for name in kinds])
        return buffer.getvalue()

    def leaderboard_json(self) -> str:
        document = {
            "olmes_version": __version__,
            "tasks": self.tasks,
            "note": "scores are fractions; formulation mcf = dagger; partial results are no OLMES scores",
            "models": self.leaderboard_records(),
        }
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"

    # -- tasks -------------------------------------------------------------------------------------

    def task_facts(self, task: str) -> dict:
        spec = self.task_specs[task]
        return {
            "key": task,
            "name": spec.display_name,
            "short": spec.short_name,
            "dataset": spec.dataset,
            "split": spec.split,
            "instances": spec.instances_note,
            "norm": spec.recommended_norm,
            "norm_formula": spec.recommended_method.formula,
            "why": spec.why_norm,
            "has_pmi": spec.has_pmi,
        }

    def task_methods(self, task: str) -> list[str]:
        found = set()
        for model in self.models:
            summary = self.scores.get(model.name, task)
            if summary:
                found |= set(summary["methods"])
        return [method for method in METHODS if method in found]

    def task_score_rows(self, task: str) -> list[dict]:
        rows = []
        recommended = self.task_specs[task].recommended_method.key
        task_methods = self.task_methods(task)  # once: it looks at every model
        for model in self.models:
            summary = self.scores.get(model.name, task)
            if summary is None:
                continue
            methods = []
            for method in task_methods:
                stats = summary["methods"].get(method)
                methods.append(
                    {
                        "method": method,
                        "accuracy": stats["accuracy"] if stats else None,
                        "se": stats.get("stderr") if stats else None,
                        "recommended": method == recommended,
                        "near_ties": stats.get("near_ties") if stats else None,
                    }
                )
            rows.append(
                {"model": model, "summary": summary, "methods": methods, "cell": self.cell(model, task)}
            )
        return rows

    def prompt_blocks(self, task: str) -> list[dict]:
        """The exact requests of the task's first instance, split into shots, query, continuations;
        the CF block also shows the pmi baseline's requests (the task's pmi request file)."""
        blocks = []
        for formulation, title in (
            ("cf", "Cloze formulation (CF)"),
            ("mcf", "Multiple-choice formulation (MCF)"),
        ):
            requests = self.requests.get((task, formulation))
            if requests is None:
                continue
            conditional = requests.example
            baseline = self.requests.get((task, "pmi")) if formulation == "cf" else None
            unconditional = baseline.example if baseline is not None else []
            subject = conditional[0].get("subject") if conditional else None
            prefix = requests.prefix(subject)
            contexts: list[dict] = []
            for row in conditional:
                if not contexts or contexts[-1]["context"] != row["context"]:
                    context = row["context"]
                    shots = prefix if context.startswith(prefix) else ""
                    contexts.append(
                        {
                            "context": context,
                            "shots": shots,
                            "query": context[len(shots) :],
                            "continuations": [],
                        }
                    )
                contexts[-1]["continuations"].append(
                    {
                        "text": row["continuation"],
                        "gold": row["choice"] == row["label"],
                        "choice": row["choice"],
                    }
                )
            block = {
                "formulation": formulation,
                "title": title,
                "contexts": contexts,
                "subject": subject,
                "native_id": conditional[0].get("native_id") if conditional else None,
                "instance_index": conditional[0]["instance_index"] if conditional else None,
                "unconditional": [
                    {
                        "context": row["context"],
                        "text": row["continuation"],
                        "gold": row["choice"] == row["label"],
                    }
                    for row in unconditional
                ],
                "path": requests.path.name,
            }
            blocks.append(block)
        return blocks

    # -- the instance browser of a task page (its data files are written by build.py) ---------------

    def browser_instances(self, task: str) -> list[dict]:
        """The task's instances as the browser shows them (question, choices, gold, subject), in
        instance order: from its instance file; without one, placeholders made from the predictions
        of the model scored on the most instances (partial runs score a prefix of them)."""
        given = self.instances.get(task)
        if given is not None:
            return [_browser_instance(row) for _, row in sorted(given.rows.items())]
        scored = [model.name for model in self.models if self.scores.get(model.name, task) is not None]
        if not scored:
            return []
        widest = max(scored, key=lambda name: self.scores.get(name, task)["n_instances"])
        columns = ["instance_index", "native_id", "num_choices", "label", "subject"]
        frame = self._predictions(widest, task, columns).to_pandas().drop_duplicates("instance_index")
        return [_placeholder_instance(row) for row in frame.itertuples()]

    def browser_models(self, task: str) -> list[dict]:
        """The models scored on the task, best first by its OLMES score (partial runs after the
        others, then those without a score): what the browser's model picker lists."""
        rows = []
        for model in self.models:
            summary = self.scores.get(model.name, task)
            if summary is None:
                continue
            cell = self.cell(model, task) or {}
            rows.append(
                {
                    "name": model.name,
                    "display_name": model.display_name,
                    "slug": model.slug,
                    "score": cell.get("score"),
                    "partial": summary["partial"],
                    "decisive": (summary.get("best_of_two") or {}).get("method"),
                }
            )
        return sorted(rows, key=lambda row: (row["partial"], row["score"] is None, -(row["score"] or 0)))

    def browser_model_source(self, name: str, task: str) -> dict:
        """What one model's browser data on a task is made from: its predictions (by the SHA-256 its
        score summary records) and the task's instance file (by its SHA-256, None without one), whose
        gold answers the predictions are checked against."""
        given = self.instances.get(task)
        if given is not None and task not in self.instance_hashes:
            self.instance_hashes[task] = file_sha256(given.path)
        predictions = self.scores.get(name, task).get("predictions") or {}
        if not predictions.get("sha256"):
            raise OlmesError(f"{self.scores.paths[name, task]} names no predictions file; re-run olmes score")
        return {
            "model": name,
            "task": task,
            "predictions_sha256": predictions["sha256"],
            "instances_sha256": self.instance_hashes.get(task),
        }

    def browser_model_data(self, name: str, task: str) -> dict:
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
        """A few columns of a model's predictions on a task, read anew (not kept: 500 models' would
        not fit in memory; read with pyarrow: thousands of files), checked against the hash its summary
        records."""
        key = (name, task)
        path = checked_predictions_path(self.scores.summaries[key], self.scores.paths[key])
        return pq.read_table(path, columns=columns)

    def _check_gold(self, name: str, task: str, index: np.ndarray, label: np.ndarray) -> None:
        """The scored run's gold answers (``label`` of each row, by instance ``index``) must be the
        instance file's: else the browser would mark the wrong choices."""
        given = self.instances.get(task)
        if given is None:
            return
        if task not in self.instance_golds:
            gold = np.full(max(given.rows, default=-1) + 1, -1, dtype=np.int64)  # -1: not in the file
            gold[list(given.rows)] = [row["gold"] for row in given.rows.values()]
            self.instance_golds[task] = gold
        gold = self.instance_golds[task]
        expected = np.where(index < len(gold), gold[np.minimum(index, len(gold) - 1)], -1)
        wrong = np.flatnonzero((expected >= 0) & (expected != label))
        if len(wrong):
            first, found = int(index[wrong[0]]), int(label[wrong[0]])
            raise OlmesError(
                f"{given.path}: instance {first} has gold {given.rows[first]['gold']} but {name}'s scored "
                f"run has {found}; give the instances the run was made from"
            )

    def chance(self) -> dict[str, float]:
        """Accuracy of guessing per task (percent), by task display name: the leaderboard cell's
        ``chance`` of the first model (in rank order) scored on the task."""
        out = {}
        for task in self.tasks:
            cell = next((cells[task] for cells in self.cells.values() if cells.get(task)), None)
            if cell is not None:
                out[self.task_specs[task].display_name] = round(100 * cell["chance"], 2)
        return out

    # -- models ------------------------------------------------------------------------------------

    def model_rows(self, model: SiteModel) -> list[dict]:
        rows = []
        for task in self.tasks:
            summary = self.scores.get(model.name, task)
            if summary is None:
                continue
            recommended = self.task_specs[task].recommended_method.key
            best = summary.get("best_of_two")
            methods = []
            for method in METHODS:
                stats = summary["methods"].get(method)
                methods.append(
                    {
                        "method": method,
                        "accuracy": stats["accuracy"] if stats else None,
                        "se": stats.get("stderr") if stats else None,
                        "near_ties": stats.get("near_ties") if stats else None,
                        "recommended": method == recommended,
                        "decisive": bool(best) and best["method"] == method,
                    }
                )
            runs = []
            for request_set, record in (summary.get("inputs") or {}).items():
                run = record.get("run")
                runs.append(
                    {
                        "request_set": request_set,
                        "path": record.get("path"),
                        "sha256": record.get("sha256"),
                        "summary": run_summary(run),
                        "record": run_record_rows(run),
                    }
                )
            rows.append(
                {
                    "task": task,
                    "name": self.task_specs[task].display_name,
                    "summary": summary,
                    "methods": methods,
                    "cell": self.cell(model, task),
                    "runs": runs,
                    "mcf_near_ties": summary["methods"].get(MCF, {}).get("near_ties"),
                    "bpb": self.bpb(model.name, task),
                }
            )
        return rows

    def bpb(self, model: str, task: str) -> float | None:
        """Bits per byte of the gold CF continuation, as the tables' ``bpb`` table holds it."""
        for record in self._by_model["bpb"].get(model, []):
            return (record["tasks"].get(task) or {}).get("value")
        return None

    def comparisons(self, model: SiteModel) -> list[dict]:
        rows = []
        for record in self._by_model["paired_bootstrap"].get(model.name, []):
            other = record["lower"] if record["higher"] == model.name else record["higher"]
            rows.append(
                {
                    "task": self.task_specs[record["task"]].display_name,
                    "above": record["higher"] == model.name,
                    "other": self.by_name.get(other),
                    "other_name": other,
                    "difference": record["difference"],
                    "low": record["ci_low"],
                    "high": record["ci_high"],
                    "tied": record["tied"],
                    "n": record["n_shared"],
                }
            )
        return rows

    # -- tasks made of subjects (MMLU) ---------------------------------------------------------------

    def subject_tasks(self) -> list[str]:
        """The scored tasks that are averaged over subjects: each gets a page of its subjects."""
        return [task for task in self.tasks if self.task_specs[task].subjects]

    def subjects(self, task: str) -> tuple[list[dict], list[dict], list[dict]]:
        """Per-subject accuracies of a task: the table's columns, its rows, and rows for the chart."""
        recommended = self.task_specs[task].recommended_method.key
        columns, by_subject, chart_rows = [], {}, []
        for model in self.models:
            summary = self.scores.get(model.name, task)
            if summary is None:
                continue
            for method, label in ((recommended, "CF"), (MCF, "MCF")):
                stats = summary["methods"].get(method)
                if not stats or "subjects" not in stats:
                    continue
                columns.append({"model": model, "label": label, "partial": summary["partial"]})
                for subject, values in stats["subjects"].items():
                    entry = by_subject.setdefault(
                        subject, {"subject": subject, "n": values["n"], "values": {}}
                    )
                    entry["values"][len(columns) - 1] = values["accuracy"]
                    chart_rows.append(
                        {
                            "subject": subject.replace("_", " "),
                            "model": model.display_name,
                            "formulation": label,
                            "accuracy": values["accuracy"],
                        }
                    )
        rows = []
        for subject in sorted(by_subject):
            entry = by_subject[subject]
            rows.append(
                {
                    "subject": subject.replace("_", " "),
                    "n": entry["n"],
                    "accuracies": [entry["values"].get(k) for k in range(len(columns))],
                }
            )
        return columns, rows, chart_rows


def subject_table(columns: list[dict], rows: list[dict], shown: list[str]) -> tuple[list[dict], list[dict]]:
    """The per-subject table's columns and rows for the models ``shown`` (display names) only: the
    chart's first models; the page adds a picked model's columns, the CSV download holds them all."""
    keep = [k for k, column in enumerate(columns) if column["model"].display_name in shown]
    return [columns[k] for k in keep], [
        {**row, "accuracies": [row["accuracies"][k] for k in keep]} for row in rows
    ]


def subjects_csv(columns: list[dict], rows: list[dict]) -> str:
    """Every model's per-subject accuracies (fractions), one line per subject x model x formulation."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["subject", "n", "model", "display_name", "formulation", "accuracy", "partial"])
    for row in rows:
        for column, accuracy in zip(columns, row["accuracies"], strict=True):
            if accuracy is not None:
                model = column["model"]
                writer.writerow(
                    [row["subject"], row["n"], model.name, model.display_name, column["label"], accuracy,
                     column["partial"]]
                )  # fmt: skip
    return buffer.getvalue()
