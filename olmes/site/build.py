"""Build the static leaderboard site: one call, ``build_site(...)``, writes every page under ``out``.

The site is plain files with relative links: it works opened from disk (``file://``) and served by
GitHub Pages, and loads nothing from another host (the vega files are shipped in ``static/``, the
instance data is a ``<script>`` file per task, since browsers refuse ``fetch`` on ``file://``).
All templates autoescape; dataset text reaches the page only through escaped HTML or, in the
instance browser, through ``textContent``.

The site is built in a temporary folder beside ``out`` and swapped in at the end, so a failed
build leaves the previous site untouched and a finished one has no stale pages.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import re
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
from markupsafe import Markup, escape

from olmes import __version__
from olmes.atomic import write_text_atomic
from olmes.errors import OlmesError
from olmes.scoring import MCF, NEAR_TIE_NATS, NORMALIZATION_FORMULAS, NORMALIZATIONS, cf_method
from olmes.site import charts
from olmes.site.inputs import TableSet, TaskInstances, TaskRequests, load_requests, load_site_scores
from olmes.tables import DAGGER, MISSING, PARTIAL_MARK, Scores
from olmes.tasks import TASKS

MARKER = ".olmes-site"
STATIC_FILES = (
    "style.css",
    "site.js",
    "browser.js",
    "vega.min.js",
    "vega-lite.min.js",
    "vega-embed.min.js",
    "VEGA-LICENSES.txt",
)

METHOD_LABELS = {
    "cf_none": "CF none",
    "cf_token": "CF token",
    "cf_char": "CF char",
    "cf_pmi": "CF pmi",
    MCF: "MCF",
}

# -- small helpers ---------------------------------------------------------------------------------


def slugify(name: str, taken: set[str]) -> str:
    """A file-name-safe, unique slug for a model name."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "model"
    slug, number = base, 2
    while slug.lower() in taken:
        slug, number = f"{base}-{number}", number + 1
    taken.add(slug.lower())
    return slug


def pct(value: float | None, digits: int = 1) -> str:
    return MISSING if value is None else f"{100 * value:.{digits}f}"


def marks(text: str) -> Markup:
    """Escape a table cell, then style its dagger and partial marks."""
    html = str(escape(text))
    html = html.replace(DAGGER, f'<span class="dagger" title="score from MCF">{DAGGER}</span>')
    return Markup(
        html.replace(PARTIAL_MARK, f'<span class="pmark" title="partial result">{PARTIAL_MARK}</span>')
    )


def json_script(data) -> Markup:
    """JSON safe inside ``<script type="application/json">``: no ``<``, ``>`` or ``&`` survive."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for char, code in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, code)
    return Markup(text)


def sort_value(text: str) -> str:
    """The number a sortable cell sorts by (empty when the cell has none)."""
    match = re.match(r"\s*(-?\d+(?:\.\d+)?)", str(text))
    return match.group(1) if match else ""


def flatten(record, prefix: str = "") -> list[tuple[str, str]]:
    """A nested run record as (dotted key, text) pairs, in the record's own order."""
    if isinstance(record, dict):
        items = []
        for key, value in record.items():
            items += flatten(value, f"{prefix}.{key}" if prefix else str(key))
        return items
    if isinstance(record, list) and any(isinstance(value, dict | list) for value in record):
        items = []
        for position, value in enumerate(record):
            items += flatten(value, f"{prefix}[{position}]")
        return items
    if isinstance(record, list):
        return [(prefix, ", ".join(map(str, record)))]
    return [(prefix, "" if record is None else str(record))]


RUN_FIELDS = (
    ("Model", ("model_spec", "model", "spec")),
    ("Revision", ("revision", "model_revision", "identity", "commit")),
    ("dtype", ("dtype",)),
    ("Device", ("device",)),
    ("Wall time", ("wall_time_s", "wall_seconds", "wall_time", "elapsed_s", "seconds")),
)


def run_summary(record: dict | None) -> dict[str, str]:
    """The headline fields of an engine run record, found by name wherever they sit in it."""
    if not record:
        return {}
    flat = flatten(record)
    found = {}
    for label, names in RUN_FIELDS:
        for key, value in flat:
            if key.split(".")[-1] in names and value:
                if label == "Wall time":
                    with contextlib.suppress(ValueError):
                        value = f"{float(value):.1f} s"
                found[label] = value
                break
    return found


# -- the site's data -------------------------------------------------------------------------------


@dataclass
class SiteModel:
    name: str
    display_name: str
    slug: str
    partial: bool
    complete: bool
    average: float | None
    average_se: float | None
    rank: int | None = None


class SiteData:
    """Everything the templates need, computed once from scores, tables and requests."""

    def __init__(
        self,
        scores: Scores,
        tables: TableSet,
        requests: dict[tuple[str, str], TaskRequests],
        instances: dict[str, TaskInstances],
    ):
        self.scores, self.tables, self.requests, self.instances = scores, tables, requests, instances
        self.task_specs = TASKS
        self.tasks = list(scores.tasks)
        taken: set[str] = set()
        self.models = [
            self._model(info.name, info.display_name, slugify(info.name, taken)) for info in scores.models
        ]
        self.models = [model for model in self.models if self._has_any(model.name)]
        self.by_name = {model.name: model for model in self.models}
        self.ties = self._ties()
        self._rank()

    def _has_any(self, name: str) -> bool:
        return any(self.scores.get(name, task) is not None for task in self.tasks)

    def _model(self, name: str, display: str, slug: str) -> SiteModel:
        complete = self.scores.complete_on_all_tasks(name)
        average = average_se = None
        if complete:
            bests = [self.scores.get(name, task)["best_of_two"] for task in self.task_specs]
            average = float(np.mean([best["score"] for best in bests]))
            errors = [self._stderr(name, task) for task in self.task_specs]
            if all(error is not None for error in errors):
                average_se = math.sqrt(sum(error**2 for error in errors)) / len(errors)
        return SiteModel(
            name, display, slug, self.scores.model_is_partial(name), complete, average, average_se
        )

    def _stderr(self, model: str, task: str) -> float | None:
        summary = self.scores.get(model, task)
        best = summary and summary.get("best_of_two")
        if not best:
            return None
        return summary["methods"][best["method"]].get("stderr")

    def _ties(self) -> dict[tuple[str, str], list[str]]:
        ties: dict[tuple[str, str], list[str]] = {}
        table = self.tables.get("paired_bootstrap") or {}
        for record in table.get("records", []):
            if record.get("tied"):
                ties.setdefault((record["higher"], record["task"]), []).append(record["lower"])
                ties.setdefault((record["lower"], record["task"]), []).append(record["higher"])
        return ties

    def _rank(self) -> None:
        def mean_available(model: SiteModel) -> float:
            values = [
                best["score"]
                for task in self.tasks
                if (summary := self.scores.get(model.name, task)) and (best := summary.get("best_of_two"))
            ]
            return float(np.mean(values)) if values else -1.0

        self.models.sort(
            key=lambda m: (
                m.partial,
                m.average is None,
                -(m.average or 0.0),
                -mean_available(m),
                m.display_name,
            )
        )
        for position, model in enumerate(m for m in self.models if m.average is not None):
            model.rank = position + 1

    # -- leaderboard -------------------------------------------------------------------------------

    def cell(self, model: SiteModel, task: str) -> dict:
        summary = self.scores.get(model.name, task)
        best = summary.get("best_of_two") if summary else None
        if best is None:
            return {
                "missing": True,
                "task": task,
                "reason": "not scored" if summary is None else "CF or MCF missing",
            }
        tied = [
            self.by_name[name].display_name
            for name in self.ties.get((model.name, task), [])
            if name in self.by_name
        ]
        method = best["method"]
        return {
            "missing": False,
            "task": task,
            "score": best["score"],
            "text": pct(best["score"]),
            "se": self._stderr(model.name, task),
            "dagger": best["dagger"],
            "partial": summary["partial"],
            "method": METHOD_LABELS.get(method, method),
            "tied": tied,
            "n": summary["n_instances"],
            "cf": best["cf_accuracy"],
            "mcf": best["mcf_accuracy"],
        }

    def leaderboard_rows(self) -> list[dict]:
        return [
            {
                "model": model,
                "cells": [self.cell(model, task) for task in self.tasks],
                "reasons": self.partial_reasons(model.name),
            }
            for model in self.models
        ]

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
        records = []
        for model in self.models:
            record = {
                "rank": model.rank,
                "model": model.name,
                "display_name": model.display_name,
                "partial": model.partial,
                "average": model.average,
                "average_stderr": model.average_se,
                "tasks": {},
            }
            for task in self.tasks:
                cell = self.cell(model, task)
                if cell["missing"]:
                    record["tasks"][task] = None
                    continue
                record["tasks"][task] = {
                    "score": cell["score"],
                    "stderr": cell["se"],
                    "formulation": "mcf" if cell["dagger"] else "cf",
                    "dagger": cell["dagger"],
                    "partial": cell["partial"],
                    "cf_accuracy": cell["cf"],
                    "mcf_accuracy": cell["mcf"],
                    "n": cell["n"],
                    "statistically_tied_with": [
                        self.by_name[n].name
                        for n in self.ties.get((model.name, task), [])
                        if n in self.by_name
                    ],
                }
            records.append(record)
        return records

    def leaderboard_csv(self) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        header = ["rank", "model", "display_name", "partial", "average", "average_stderr"]
        for task in self.tasks:
            header += [task, f"{task}_stderr", f"{task}_formulation", f"{task}_partial"]
        writer.writerow(header)

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
            writer.writerow(row)
        return buffer.getvalue()

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
            "norm_formula": NORMALIZATION_FORMULAS[spec.recommended_norm],
            "why": spec.why_norm,
            "has_pmi": spec.has_pmi,
        }

    def task_methods(self, task: str) -> list[str]:
        found = set()
        for model in self.models:
            summary = self.scores.get(model.name, task)
            if summary:
                found |= set(summary["methods"])
        return [method for method in (*(cf_method(n) for n in NORMALIZATIONS), MCF) if method in found]

    def task_score_rows(self, task: str) -> list[dict]:
        rows = []
        recommended = cf_method(self.task_specs[task].recommended_norm)
        for model in self.models:
            summary = self.scores.get(model.name, task)
            if summary is None:
                continue
            methods = []
            for method in self.task_methods(task):
                stats = summary["methods"].get(method)
                methods.append(
                    {
                        "method": method,
                        "text": pct(stats["accuracy"]) if stats else MISSING,
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
        """The exact requests of the task's first instance, split into shots, query, continuations."""
        blocks = []
        for formulation, title in (
            ("cf", "Cloze formulation (CF)"),
            ("mcf", "Multiple-choice formulation (MCF)"),
        ):
            requests = self.requests.get((task, formulation))
            if requests is None:
                continue
            rows = requests.example
            conditional = [row for row in rows if not row.get("unconditional")]
            unconditional = [row for row in rows if row.get("unconditional")]
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

    def browser_data(self, task: str) -> dict:
        """The instance browser's data: instances (question, choices, gold) and every prediction."""
        given = self.instances.get(task)
        rows = given.rows if given is not None else {}
        frames = {}
        for model in self.models:
            if self.scores.get(model.name, task) is not None:
                frames[model.name] = self.scores.predictions(model.name, task)
        known = {}
        for frame in frames.values():
            for row in frame.drop_duplicates("instance_index").itertuples(index=False):
                known.setdefault(int(row.instance_index), row)
        order = sorted(set(rows) | set(known))
        position = {index: pos for pos, index in enumerate(order)}
        instances = []
        for index in order:
            row, scored = rows.get(index), known.get(index)
            if row is not None:
                if scored is not None and int(scored.label) != row["gold"]:
                    raise OlmesError(
                        f"{given.path}: instance {index} has gold {row['gold']} but the scored run has "
                        f"{int(scored.label)}; give the instances the run was made from"
                    )
                item = {"i": index, "id": str(row["native_id"]), "q": row["question"], "c": row["choices"]}
                item.update(g=row["gold"], s=row.get("subject"))
            else:
                item = {
                    "i": index,
                    "id": str(scored.native_id),
                    "q": "(no instance file given for this task: text unavailable)",
                    "c": [f"choice {k + 1}" for k in range(int(scored.num_choices))],
                    "g": int(scored.label),
                    "s": None if pd.isna(scored.subject) else str(scored.subject),
                }
            if not item["s"]:
                del item["s"]
            instances.append(item)
        methods = self.task_methods(task)
        predictions, ties = {}, {}
        for name, frame in frames.items():
            predictions[name], ties[name] = {}, {}
            for method, rows in frame.groupby("method", sort=False):
                values = [-1] * len(order)
                tied = []
                for row in rows.itertuples(index=False):
                    where = position[int(row.instance_index)]
                    values[where] = int(row.prediction)
                    if bool(row.near_tie):
                        tied.append(where)
                predictions[name][str(method)] = values
                ties[name][str(method)] = tied
        return {
            "task": task,
            "recommended": cf_method(self.task_specs[task].recommended_norm),
            "methods": methods,
            "method_labels": {method: METHOD_LABELS.get(method, method) for method in methods},
            "models": [
                {"name": m.name, "display_name": m.display_name} for m in self.models if m.name in frames
            ],
            "instances": instances,
            "predictions": predictions,
            "near_ties": ties,
            "near_tie_nats": NEAR_TIE_NATS,
            "decisive": {
                name: (self.scores.get(name, task).get("best_of_two") or {}).get("method") for name in frames
            },
        }

    def chance(self) -> dict[str, float]:
        """Accuracy of guessing per task (percent), from the scored instances' numbers of choices."""
        out = {}
        for task in self.tasks:
            for model in self.models:
                if self.scores.get(model.name, task) is not None:
                    frame = self.scores.predictions(model.name, task)
                    first = frame.drop_duplicates("instance_index")
                    out[self.task_specs[task].display_name] = round(
                        100 * float(np.mean(1.0 / first["num_choices"])), 2
                    )
                    break
        return out

    # -- models ------------------------------------------------------------------------------------

    def model_rows(self, model: SiteModel) -> list[dict]:
        rows = []
        for task in self.tasks:
            summary = self.scores.get(model.name, task)
            if summary is None:
                continue
            recommended = cf_method(self.task_specs[task].recommended_norm)
            best = summary.get("best_of_two")
            methods = []
            for method in (*(cf_method(n) for n in NORMALIZATIONS), MCF):
                stats = summary["methods"].get(method)
                methods.append(
                    {
                        "method": method,
                        "text": pct(stats["accuracy"]) if stats else MISSING,
                        "se": stats.get("stderr") if stats else None,
                        "near_ties": stats.get("near_ties") if stats else None,
                        "recommended": method == recommended,
                        "decisive": bool(best) and best["method"] == method,
                    }
                )
            runs = []
            for formulation, record in (summary.get("inputs") or {}).items():
                run = record.get("run")
                runs.append(
                    {
                        "formulation": formulation,
                        "path": record.get("path"),
                        "sha256": record.get("sha256"),
                        "summary": run_summary(run),
                        "flat": flatten(run) if run else [],
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
                }
            )
        return rows

    def comparisons(self, model: SiteModel) -> list[dict]:
        table = self.tables.get("paired_bootstrap") or {}
        rows = []
        for record in table.get("records", []):
            if model.name not in (record["higher"], record["lower"]):
                continue
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

    # -- MMLU --------------------------------------------------------------------------------------

    def mmlu_subjects(self) -> tuple[list[dict], list[dict], list[dict]]:
        """Per-subject accuracies: the table's columns, its rows, and rows for the chart."""
        recommended = cf_method(self.task_specs["mmlu"].recommended_norm)
        columns, by_subject, chart_rows = [], {}, []
        for model in self.models:
            summary = self.scores.get(model.name, "mmlu")
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
                    "values": [pct(entry["values"].get(k)) for k in range(len(columns))],
                }
            )
        return columns, rows, chart_rows


# -- rendering -------------------------------------------------------------------------------------


def environment():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("olmes.site", "templates"),
        autoescape=True,  # every template: dataset text is untrusted
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(marks=marks, json_script=json_script, pct=pct, sort_value=sort_value)
    env.globals.update(
        version=__version__,
        DAGGER=DAGGER,
        PARTIAL_MARK=PARTIAL_MARK,
        MISSING=MISSING,
        METHOD_LABELS=METHOD_LABELS,
        NORMALIZATION_FORMULAS=NORMALIZATION_FORMULAS,
        NEAR_TIE_NATS=NEAR_TIE_NATS,
        TASKS=TASKS,
        tasks_by_norm=_tasks_by_norm(),
    )
    return env


def _tasks_by_norm() -> dict[str, list[str]]:
    """Display names of the registry's tasks per recommended normalization (the methods page)."""
    groups: dict[str, list[str]] = {}
    for task in TASKS.values():
        groups.setdefault(task.recommended_norm, []).append(task.display_name)
    return groups


def build_site(
    scores_paths: Iterable[str | Path],
    out: str | Path,
    tables_dir: str | Path | None = None,
    request_paths: Iterable[str | Path] = (),
    models_file: str | Path | None = None,
    title: str = "OLMES leaderboard",
) -> list[Path]:
    """Build the whole site into ``out`` (replaced as a whole); return the files written."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MARKER).exists())):
        raise OlmesError(
            f"{out} exists and is not an olmes site (no {MARKER}); choose an empty or new folder"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.building-"))
    try:
        written = _build_into(
            staging, list(scores_paths), tables_dir, list(request_paths), models_file, title
        )
        _swap(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return [out / path.relative_to(staging) for path in written]


def _swap(staging: Path, out: Path) -> None:
    old = None
    if out.exists():
        old = out.parent / f".{out.name}.old-{staging.name.rsplit('-', 1)[-1]}"
        out.rename(old)
    staging.rename(out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _build_into(root: Path, scores_paths, tables_dir, request_paths, models_file, title) -> list[Path]:
    downloads = root / "downloads"
    tables_out = downloads / "tables"
    scores, tables = load_site_scores(
        scores_paths, models_file, Path(tables_dir) if tables_dir else None, tables_out
    )
    if tables_dir is not None:
        _copy_tables(Path(tables_dir), tables_out)
    requests, instances = load_requests(request_paths)
    data = SiteData(scores, tables, requests, instances)
    env = environment()
    written: list[Path] = []

    def write(relative: str, text: str) -> None:
        path = root / relative
        write_text_atomic(path, text)
        written.append(path)

    has_checkpoints = bool(tables.figures.get("figure1_checkpoints"))
    nav = [
        ("index.html", "Leaderboard"),
        ("normalization.html", "Normalization"),
        ("cf-vs-mcf.html", "CF vs MCF"),
    ]
    if "mmlu" in data.tasks:
        nav.append(("mmlu.html", "MMLU"))
    if has_checkpoints:
        nav.append(("checkpoints.html", "Checkpoints"))
    nav.append(("methods.html", "Methods"))
    common = {
        "site_title": title,
        "nav": nav,
        "tasks": data.tasks,
        "models": data.models,
        "data": data,
        "task_facts": {task: data.task_facts(task) for task in data.tasks},
        "tables": tables,
        "has_checkpoints": has_checkpoints,
    }

    def page(relative: str, template: str, **context) -> None:
        depth = relative.count("/")
        context = {**common, "root": "../" * depth, "current": relative, **context}
        write(relative, env.get_template(template).render(**context))

    task_names = [data.task_specs[task].display_name for task in data.tasks]
    weakest_first = [m.display_name for m in reversed(data.models) if not m.partial] + [
        m.display_name for m in reversed(data.models) if m.partial
    ]
    page("index.html", "leaderboard.html", rows=data.leaderboard_rows())
    page("normalization.html", "normalization.html")
    figure2 = charts.figure2_spec(
        tables.figures.get("figure2_cf_vs_mcf", []), weakest_first, task_names, data.chance()
    )
    page("cf-vs-mcf.html", "cf_mcf.html", figure2=figure2)
    if "mmlu" in data.tasks:
        columns, subject_rows, chart_rows = data.mmlu_subjects()
        page(
            "mmlu.html",
            "mmlu.html",
            columns=columns,
            subject_rows=subject_rows,
            subjects_chart=charts.subjects_spec(chart_rows),
        )
    if has_checkpoints:
        page(
            "checkpoints.html",
            "checkpoints.html",
            figure1=charts.figure1_spec(tables.figures["figure1_checkpoints"], task_names),
        )
    page("methods.html", "methods.html", bootstrap=tables.index.get("bootstrap", {}))
    for model in data.models:
        page(
            f"models/{model.slug}.html",
            "model.html",
            model=model,
            rows=data.model_rows(model),
            comparisons=data.comparisons(model),
            reasons=data.partial_reasons(model.name),
        )
    for task in data.tasks:
        browser = data.browser_data(task)
        write(
            f"tasks/{task}.data.js",
            "window.OLMES_TASK_DATA = "
            + json.dumps(browser, ensure_ascii=False, separators=(",", ":"))
            + ";\n",
        )
        page(
            f"tasks/{task}.html",
            "task.html",
            task=task,
            facts=data.task_facts(task),
            score_rows=data.task_score_rows(task),
            methods=data.task_methods(task),
            prompts=data.prompt_blocks(task),
            n_instances=len(browser["instances"]),
        )
    write("downloads/leaderboard.csv", data.leaderboard_csv())
    write(
        "downloads/leaderboard.json",
        json.dumps(
            {
                "olmes_version": __version__,
                "tasks": data.tasks,
                "note": "scores are fractions; formulation mcf = dagger; partial results are no OLMES scores",
                "models": data.leaderboard_records(),
            },
            indent=2,
            ensure_ascii=False,
        )
        + "\n",
    )
    static = resources.files("olmes.site").joinpath("static")
    for name in STATIC_FILES:
        target = root / "static" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(static.joinpath(name).read_bytes())
        written.append(target)
    write(".nojekyll", "")
    write(MARKER, f"built by olmes {__version__}\n")
    written += sorted(p for p in tables_out.rglob("*") if p.is_file())
    return written


def _copy_tables(source: Path, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.iterdir()):
        if path.is_file() and path.suffix in (".csv", ".json", ".tex"):
            shutil.copyfile(path, target / path.name)
