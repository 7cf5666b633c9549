"""Score summaries -> the paper's tables (docs/standard.md section 5), figure data and statistics.

Every table is written three ways under one output folder: ``<key>.csv`` (the table as displayed:
percentages with one decimal, † where MCF won, ᵖ on partial cells), ``<key>.json`` (the displayed
rows plus structured records at full precision) and ``<key>.tex`` (a booktabs ``table``).
Figure data is written as CSV and JSON only. ``index.json`` lists every file and the inputs.

Rules that hold in every table: an average over tasks is given only when the model has all 10 tasks
and none is partial; a partial result (a limit, or fewer instances than the standard) carries ᵖ, its
model sits in a separate "partial runs" group, and it is never shown as an OLMES score.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from olmes import __version__
from olmes.atomic import write_json_atomic, write_text_atomic
from olmes.errors import OlmesError
from olmes.scoring import (
    MCF,
    NORMALIZATION_FORMULAS,
    NORMALIZATIONS,
    SUMMARY_SCHEMA,
    cf_method,
    file_sha256,
    is_macro_averaged,
)
from olmes.tasks import TASKS

DAGGER = "†"
PARTIAL_MARK = "ᵖ"
MISSING = "—"
BOOTSTRAP_SEED = 1234
BOOTSTRAP_RESAMPLES = 1000
TIE_TOLERANCE = 1e-12
"""Accuracies closer than this are equal (only float rounding separates equal counts)."""

PARTIAL_GROUP = "Partial runs (a limit or missing instances; not OLMES scores)"
PARTIAL_NOTE = (
    f"{PARTIAL_MARK} marks a partial result (a limit, or fewer instances than the standard); "
    "averages need all 10 tasks, none partial."
)


# -- inputs: score summaries and the models file ---------------------------------------------------


@dataclass(frozen=True)
class ModelInfo:
    """How the tables name a model and, for Figure 1, which series and training point it is."""

    name: str
    display_name: str
    series: str | None = None
    training_tokens: float | None = None
    checkpoint: str | None = None


_MODEL_KEYS = {"name", "display_name", "series", "training_tokens", "checkpoint"}


def read_models_file(path: str | Path) -> list[ModelInfo]:
    """Read the models file (YAML or JSON): ``models:`` a list of {name, display_name, series,
    training_tokens, checkpoint}; only ``name`` (the ``--model-name`` of ``olmes score``) is required."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise OlmesError(f"{path}: cannot read models file ({error})") from error
    entries = data.get("models") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise OlmesError(f"{path}: expected a top-level 'models:' list; see docs/file-formats.md")
    models, seen = [], set()
    for position, entry in enumerate(entries):
        where = f"{path}: models[{position}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise OlmesError(f"{where} needs a 'name' (the --model-name given to olmes score)")
        unknown = set(entry) - _MODEL_KEYS
        if unknown:
            raise OlmesError(f"{where} has unknown key(s) {sorted(unknown)}; allowed: {sorted(_MODEL_KEYS)}")
        if entry["name"] in seen:
            raise OlmesError(f"{where}: model {entry['name']!r} is listed twice")
        seen.add(entry["name"])
        tokens = _training_tokens(entry.get("training_tokens"), where)
        models.append(
            ModelInfo(
                name=entry["name"],
                display_name=str(entry.get("display_name") or entry["name"]),
                series=None if entry.get("series") is None else str(entry["series"]),
                training_tokens=tokens,
                checkpoint=None if entry.get("checkpoint") is None else str(entry["checkpoint"]),
            )
        )
    return models


def _training_tokens(value, where: str) -> float | None:
    """A positive number; strings such as "2.0e12" are accepted because YAML 1.1 reads them as text."""
    if value is None:
        return None
    try:
        number = float(value) if not isinstance(value, bool) else -1.0
    except ValueError:
        number = -1.0
    if not number > 0:
        raise OlmesError(f"{where}: training_tokens must be a positive number (e.g. 2.0e12), got {value!r}")
    return number


@dataclass
class Scores:
    """Every score summary given to ``olmes tables``, indexed by (model, task)."""

    summaries: dict[tuple[str, str], dict]
    paths: dict[tuple[str, str], Path]
    models: list[ModelInfo]
    tasks: list[str]
    _predictions: dict[tuple[str, str], pd.DataFrame] = field(default_factory=dict)

    def get(self, model: str, task: str) -> dict | None:
        return self.summaries.get((model, task))

    def model_is_partial(self, model: str) -> bool:
        return any(s["partial"] for (name, _), s in self.summaries.items() if name == model)

    def complete_on_all_tasks(self, model: str) -> bool:
        """All 10 tasks of the standard scored, none partial: the condition for an average."""
        found = [self.get(model, task) for task in TASKS]
        return all(s is not None and not s["partial"] for s in found)

    def predictions(self, model: str, task: str) -> pd.DataFrame:
        """The per-instance predictions behind a summary, checked against the hash it recorded."""
        key = (model, task)
        if key not in self._predictions:
            summary, where = self.summaries[key], self.paths[key]
            record = summary.get("predictions") or {}
            path = where.parent / record.get("path", "")
            if not record.get("path") or not path.is_file():
                raise OlmesError(f"{where}: predictions file {path} not found; re-run olmes score")
            if file_sha256(path) != record.get("sha256"):
                raise OlmesError(f"{path} changed after {where} was written; re-run olmes score")
            self._predictions[key] = pd.read_parquet(path)
        return self._predictions[key]


def expand_score_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Summary files as given, and directories searched recursively for ``*.scores.json``."""
    found = []
    for path in map(Path, paths):
        if path.is_dir():
            found += sorted(path.rglob("*.scores.json"))
        elif path.suffix == ".parquet":
            raise OlmesError(
                f"{path} is a predictions file; pass the *.scores.json summaries (they point to it)"
            )
        elif path.is_file():
            found.append(path)
        else:
            raise OlmesError(f"{path}: no such score summary file or directory")
    if not found:
        raise OlmesError("no score summaries found; give *.scores.json files written by olmes score")
    return found


def load_scores(paths: Iterable[str | Path], models_file: str | Path | None = None) -> Scores:
    summaries, where = {}, {}
    for path in expand_score_paths(paths):
        summary = _read_summary(path)
        key = (summary["model"], summary["task"])
        if key in summaries:
            raise OlmesError(f"{path} and {where[key]} both score model {key[0]!r} on {key[1]}; keep one")
        summaries[key], where[key] = summary, path
    listed = read_models_file(models_file) if models_file else []
    names = {info.name for info in listed}
    extra = sorted({model for model, _ in summaries} - names)
    models = [info for info in listed if any(m == info.name for m, _ in summaries)]
    models += [ModelInfo(name=name, display_name=name) for name in extra]
    tasks = [task for task in TASKS if any(t == task for _, t in summaries)]
    return Scores(summaries=summaries, paths=where, models=models, tasks=tasks)


def _read_summary(path: Path) -> dict:
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise OlmesError(f"{path}: cannot read score summary ({error})") from error
    if not isinstance(summary, dict) or summary.get("schema") != SUMMARY_SCHEMA:
        raise OlmesError(f"{path}: not an olmes score summary (schema {SUMMARY_SCHEMA}); run olmes score")
    return summary


# -- the table model and its three renderings -------------------------------------------------------


@dataclass
class Table:
    """A table as displayed (``header`` + row ``groups``) plus structured ``records`` for JSON.

    ``groups`` is a list of (label or None, rows); a labelled group is introduced by a rule and its
    label in LaTeX (CSV simply continues). ``align`` is the LaTeX column spec.
    """

    key: str
    title: str
    caption: str
    header: list[str]
    groups: list[tuple[str | None, list[list[str]]]]
    records: list[dict]
    align: str = ""
    latex_header: list[str] | None = None

    @property
    def rows(self) -> list[list[str]]:
        return [row for _, rows in self.groups for row in rows]


def table_csv(table: Table) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(table.header)
    writer.writerows(table.rows)
    return buffer.getvalue()


def table_json(table: Table) -> dict:
    return {
        "key": table.key,
        "title": table.title,
        "caption": table.caption,
        "header": table.header,
        "rows": table.rows,
        "groups": [{"label": label, "rows": rows} for label, rows in table.groups],
        "records": table.records,
    }


_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    DAGGER: r"$^{\dagger}$", PARTIAL_MARK: r"\textsuperscript{p}", MISSING: "--", "≥": r"$\geq$",
    "Δ": r"$\Delta$", "±": r"$\pm$", "<": r"\textless{}", ">": r"\textgreater{}",
}  # fmt: skip


def latex_escape(text: str) -> str:
    """Text safe in a LaTeX document (model names may hold _, &, %, ...)."""
    return str(text).translate(str.maketrans(_LATEX_SPECIALS))


def table_latex(table: Table) -> str:
    width = len(table.header)
    align = table.align or "l" + "r" * (width - 1)
    lines = [
        f"% {table.title}. Written by olmes {__version__} (olmes tables); edit the inputs, not this file.",
        r"\begin{table}[ht]",
        r"\centering",
        r"\small",
        r"\setlength{\tabcolsep}{4pt}",
        rf"\caption{{{latex_escape(table.title)}. {latex_escape(table.caption)}}}",
        rf"\label{{tab:olmes-{table.key.replace('_', '-')}}}",
        rf"\begin{{tabular}}{{{align}}}",
        r"\toprule",
        " & ".join(latex_escape(cell) for cell in table.latex_header or table.header) + r" \\",
        r"\midrule",
    ]
    for position, (label, rows) in enumerate(table.groups):
        if position > 0:
            lines.append(r"\midrule")
        if label is not None:
            lines.append(rf"\multicolumn{{{width}}}{{l}}{{\emph{{{latex_escape(label)}}}}} \\")
        lines += [" & ".join(latex_escape(cell) for cell in row) + r" \\" for row in rows]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def write_table(table: Table, out: Path) -> list[Path]:
    paths = [out / f"{table.key}.{ext}" for ext in ("csv", "json", "tex")]
    write_text_atomic(paths[0], table_csv(table))
    write_json_atomic(paths[1], table_json(table))
    write_text_atomic(paths[2], table_latex(table))
    return paths


# -- formatting --------------------------------------------------------------------------------------


def percent(value: float | None) -> str:
    return MISSING if value is None else f"{100 * value:.1f}"


def task_name(task: str) -> str:
    return TASKS[task].display_name


def task_short_name(task: str) -> str:
    """Column label of the LaTeX tables, short as in the paper so ten tasks fit across a page."""
    return TASKS[task].short_name


def method_accuracy(summary: dict | None, method: str) -> float | None:
    if summary is None or method not in summary["methods"]:
        return None
    return summary["methods"][method]["accuracy"]


def recommended_method(task: str) -> str:
    return cf_method(TASKS[task].recommended_norm)


# -- tables with one row per model and one column per task -----------------------------------------


CellFn = Callable[[dict], tuple[float | None, str, dict]]
"""summary -> (value, display text, record fields) for one model x task cell."""


def model_task_table(
    scores: Scores,
    key: str,
    title: str,
    caption: str,
    cell: CellFn,
    averages: dict[str, Callable[[str], float | None]],
) -> Table:
    """Rows = models (complete group first, then partial runs), columns = tasks + average columns.

    ``averages`` maps a column label to a function of the model; it is only called for models that
    have all 10 tasks complete (otherwise the column shows "—").
    """
    header = ["Model"] + [task_name(task) for task in scores.tasks] + list(averages)
    complete_rows, partial_rows, records = [], [], []
    for info in scores.models:
        summaries = {task: scores.get(info.name, task) for task in scores.tasks}
        if all(s is None for s in summaries.values()):
            continue
        partial = scores.model_is_partial(info.name)
        row = [info.display_name + (" (partial)" if partial else "")]
        record = {"model": info.name, "display_name": info.display_name, "partial": partial, "tasks": {}}
        for task, summary in summaries.items():
            value, text, fields = cell(summary) if summary is not None else (None, MISSING, {})
            marked = summary is not None and summary["partial"] and text != MISSING
            row.append(text + (PARTIAL_MARK if marked else ""))
            if summary is not None:
                record["tasks"][task] = {"value": value, "partial": summary["partial"], **fields}
        complete = scores.complete_on_all_tasks(info.name)
        for label, average in averages.items():
            value = average(info.name) if complete else None
            row.append(percent(value))
            record[label] = value
        (partial_rows if partial else complete_rows).append(row)
        records.append(record)
    groups = [(None, complete_rows)] if complete_rows else []
    if partial_rows:
        groups.append((PARTIAL_GROUP, partial_rows))
    short = ["Model"] + [task_short_name(task) for task in scores.tasks] + list(averages)
    return Table(key, title, caption + " " + PARTIAL_NOTE, header, groups, records, latex_header=short)


def _mean_over_tasks(scores: Scores, model: str, value: Callable[[dict], float | None]) -> float | None:
    values = [value(scores.get(model, task)) for task in TASKS]
    return None if any(v is None for v in values) else float(np.mean(values))


def _best_of_two(summary: dict | None) -> float | None:
    return None if summary is None or summary.get("best_of_two") is None else summary["best_of_two"]["score"]


def table4(scores: Scores) -> Table:
    def cell(summary: dict) -> tuple[float | None, str, dict]:
        best = summary.get("best_of_two")
        if best is None:
            return None, MISSING, {"olmes_score": None}
        fields = {
            "olmes_score": None if summary["partial"] else best["score"],
            "best_of_two": best["score"], "formulation": best["formulation"], "dagger": best["dagger"],
        }  # fmt: skip
        return best["score"], percent(best["score"]) + (DAGGER if best["dagger"] else ""), fields

    return model_task_table(
        scores, "table4_olmes", "OLMES scores (paper Table 4)",
        f"OLMES score = max(CF accuracy under the task's recommended normalization, MCF accuracy), in %; "
        f"{DAGGER} marks a score from MCF (MCF must be strictly better). MMLU is the macro-average over "
        "subjects. Partial rows show the best of CF and MCF on the instances scored, which is not an "
        "OLMES score.",
        cell, {"Average": lambda model: _mean_over_tasks(scores, model, _best_of_two)},
    )  # fmt: skip


def _accuracy_cell(method_of: Callable[[str], str]) -> CellFn:
    def cell(summary: dict) -> tuple[float | None, str, dict]:
        method = method_of(summary["task"])
        stats = summary["methods"].get(method)
        if stats is None:
            return None, MISSING, {"method": method}
        fields = {"method": method, "stderr": stats["stderr"], "n": stats["n"]}
        return stats["accuracy"], percent(stats["accuracy"]), fields

    return cell


def _cf_or_mcf_table(
    scores: Scores, key: str, title: str, method_of: Callable[[str], str], what: str
) -> Table:
    def average(model: str) -> float | None:
        return _mean_over_tasks(scores, model, lambda s: method_accuracy(s, method_of(s["task"])))

    return model_task_table(
        scores, key, title,
        f"{what} accuracy (%) per model and task; MMLU is the macro-average. "
        "Average = mean over the 10 tasks; Max average = mean over the tasks of max(CF, MCF), the "
        "OLMES average.",
        _accuracy_cell(method_of),
        {"Average": average, "Max average": lambda model: _mean_over_tasks(scores, model, _best_of_two)},
    )  # fmt: skip


def table6(scores: Scores) -> Table:
    return _cf_or_mcf_table(
        scores, "table6_cf", "CF accuracy (paper Table 6)", recommended_method,
        "CF (cloze formulation, the task's recommended normalization)",
    )  # fmt: skip


def table7(scores: Scores) -> Table:
    return _cf_or_mcf_table(
        scores,
        "table7_mcf",
        "MCF accuracy (paper Table 7)",
        lambda task: MCF,
        "MCF (multiple-choice formulation)",
    )


def tables_9_to_12(scores: Scores) -> list[Table]:
    tables = []
    for number, norm in enumerate(NORMALIZATIONS, start=9):
        method = cf_method(norm)

        def average(model: str, method: str = method) -> float | None:
            return _mean_over_tasks(scores, model, lambda s, m=method: method_accuracy(s, m))

        tables.append(
            model_task_table(
                scores,
                f"table{number}_{norm}",
                f"CF accuracy, normalization {norm} (paper Table {number})",
                f"CF accuracy (%) with normalization '{norm}' ({NORMALIZATION_FORMULAS[norm]}). "
                f"{MISSING} where the run has no such scores (pmi needs unconditional requests).",
                _accuracy_cell(lambda task, m=method: m),
                {"Average": average},
            )  # fmt: skip
        )
    return tables


def near_ties_table(scores: Scores) -> Table:
    from olmes.scoring import NEAR_TIE_NATS

    def cell(summary: dict) -> tuple[float | None, str, dict]:
        counts = {method: stats["near_ties"] for method, stats in summary["methods"].items()}
        cf, mcf = counts.get(recommended_method(summary["task"])), counts.get(MCF)
        text = f"{MISSING if cf is None else cf} / {MISSING if mcf is None else mcf}"
        return None, text, {"near_ties": counts, "n": summary["n_instances"]}

    return model_task_table(
        scores, "near_ties", "Near ties",
        f"Instances whose top two choice scores are within {NEAR_TIE_NATS:g} (nats for none, pmi and MCF; "
        "per token or per character for token and char): decisions that batch size or hardware can flip. "
        "Shown as CF (recommended normalization) / MCF counts.",
        cell, {},
    )  # fmt: skip


# -- Table 3: which normalization wins ------------------------------------------------------------


def normalization_wins(accuracies: dict[str, float]) -> list[str]:
    """Every normalization whose accuracy equals the best: each tied winner gets a win."""
    best = max(accuracies.values())
    return [norm for norm, accuracy in accuracies.items() if accuracy >= best - TIE_TOLERANCE]


def _compared_norms(summaries: list[dict]) -> list[str]:
    """The normalizations every model has for a task (pmi only where all runs have pmi rows)."""
    return [
        norm for norm in NORMALIZATIONS if all(cf_method(norm) in summary["methods"] for summary in summaries)
    ]


def table3(scores: Scores) -> Table:
    wins_rows = {norm: [norm] for norm in NORMALIZATIONS}
    extra_rows = {"OLMES choice": ["OLMES choice"], "Diff oracle": ["Diff oracle"], "Models": ["Models"]}
    records = []
    for task in scores.tasks:
        summaries = [s for info in scores.models if (s := scores.get(info.name, task)) and _has_cf(s)]
        compared = _compared_norms(summaries)
        recommended = TASKS[task].recommended_norm
        record = _task_wins(summaries, compared, recommended)
        record.update(task=task, recommended_norm=recommended, compared_norms=compared)
        records.append(record)
        for norm in NORMALIZATIONS:
            wins_rows[norm].append(percent(record["win_rate"].get(norm)))
        extra_rows["OLMES choice"].append(recommended)
        extra_rows["Diff oracle"].append(
            MISSING if record["diff_oracle"] is None else f"{100 * record['diff_oracle']:.1f}"
        )
        partial = sum(s["partial"] for s in summaries)
        extra_rows["Models"].append(f"{len(summaries)}" + (f" ({partial}{PARTIAL_MARK})" if partial else ""))
    caption = (
        "Win % of each CF normalization over the models evaluated on the task. Ties: every normalization "
        "whose accuracy equals the best counts as a winner, so a column can add up to more than 100%. "
        "Only normalizations present for every model compete (pmi needs unconditional requests; "
        f"{MISSING} otherwise). Diff oracle = mean over models of (best normalization's accuracy - "
        "recommended normalization's accuracy), in points. Models counts partial runs with "
        f"{PARTIAL_MARK}; their accuracies are over the instances they scored."
    )
    header = ["Normalization"] + [task_name(task) for task in scores.tasks]
    short = ["Normalization"] + [task_short_name(task) for task in scores.tasks]
    groups = [(None, list(wins_rows.values())), (None, list(extra_rows.values()))]
    return Table(
        "table3_normalizations",
        "CF normalizations compared (paper Table 3)",
        caption,
        header,
        groups,
        records,
        latex_header=short,
    )


def _has_cf(summary: dict) -> bool:
    return any(method != MCF for method in summary["methods"])


def _task_wins(summaries: list[dict], compared: list[str], recommended: str) -> dict:
    wins = dict.fromkeys(compared, 0)
    gaps = []
    for summary in summaries:
        accuracies = {norm: summary["methods"][cf_method(norm)]["accuracy"] for norm in compared}
        for norm in normalization_wins(accuracies):
            wins[norm] += 1
        if recommended in accuracies:
            gaps.append(max(accuracies.values()) - accuracies[recommended])
    count = len(summaries)
    return {
        "models": [summary["model"] for summary in summaries],
        "wins": wins,
        "win_rate": {norm: wins[norm] / count for norm in compared} if count else {},
        "diff_oracle": float(np.mean(gaps)) if gaps else None,
    }


# -- Table 8: MMLU macro vs micro -------------------------------------------------------------------


def table8(scores: Scores) -> Table:
    cf = recommended_method("mmlu")
    header = ["Model", "CF macro", "CF micro", "MCF macro", "MCF micro", "Subjects", "Instances"]
    complete_rows, partial_rows, records = [], [], []
    for info in scores.models:
        summary = scores.get(info.name, "mmlu")
        if summary is None:
            continue
        record = {"model": info.name, "display_name": info.display_name, "partial": summary["partial"]}
        row = [info.display_name + (" (partial)" if summary["partial"] else "")]
        mark = PARTIAL_MARK if summary["partial"] else ""
        subjects = 0
        for method, label in ((cf, "cf"), (MCF, "mcf")):
            stats = summary["methods"].get(method)
            macro = None if stats is None else stats["accuracy"]
            micro = None if stats is None else stats["micro_accuracy"]
            subjects = max(subjects, 0 if stats is None else len(stats["subjects"]))
            row += [percent(value) + (mark if value is not None else "") for value in (macro, micro)]
            record[label] = {"method": method, "macro": macro, "micro": micro}
        row += [str(subjects), str(summary["n_instances"])]
        record.update(subjects=subjects, n=summary["n_instances"])
        (partial_rows if summary["partial"] else complete_rows).append(row)
        records.append(record)
    groups = ([(None, complete_rows)] if complete_rows else []) + (
        [(PARTIAL_GROUP, partial_rows)] if partial_rows else []
    )
    caption = (
        f"MMLU accuracy (%): macro = mean of the per-subject accuracies (the OLMES score), micro = "
        f"accuracy over all instances. CF uses normalization '{cf.removeprefix('cf_')}'. {PARTIAL_NOTE}"
    )
    return Table(
        "table8_mmlu", "MMLU macro vs micro average (paper Table 8)", caption, header, groups, records
    )


# -- paired bootstrap between ranking-adjacent models ---------------------------------------------


def paired_bootstrap(
    a: np.ndarray,
    b: np.ndarray,
    strata: np.ndarray | None = None,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float, float]:
    """Accuracy difference a - b over shared instances and its percentile 95% bootstrap interval.

    Instances are resampled in pairs (the same draw for both models). With ``strata`` (MMLU subjects)
    each stratum is resampled on its own and the difference is the macro-average over strata.
    """  # fmt: skip
    rng = np.random.default_rng(seed)
    difference = a.astype(np.float64) - b.astype(np.float64)
    strata = np.zeros(len(difference), dtype=int) if strata is None else np.asarray(strata)
    groups = [np.flatnonzero(strata == stratum) for stratum in np.unique(strata)]
    totals = np.zeros(resamples)
    for members in groups:
        draws = rng.integers(0, len(members), size=(resamples, len(members)))
        totals += difference[members][draws].mean(axis=1)
    estimate = float(np.mean([difference[members].mean() for members in groups]))
    low, high = np.percentile(totals / len(groups), [2.5, 97.5])
    return estimate, float(low), float(high)


def _decisive_correctness(scores: Scores, model: str, task: str) -> pd.DataFrame:
    """Per-instance correctness of the method that gave the model's best-of-two score."""
    method = scores.get(model, task)["best_of_two"]["method"]
    frame = scores.predictions(model, task)
    rows = frame[frame["method"] == method]
    return rows[["instance_index", "native_id", "subject", "correct"]].set_index(
        ["instance_index", "native_id"]
    )


def bootstrap_table(
    scores: Scores, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> Table:
    header = ["Task", "Higher", "Lower", "Δ (points)", "95% CI", "Shared", "Statistically tied"]
    rows, records = [], []
    names = {info.name: info.display_name for info in scores.models}
    for task in scores.tasks:
        ranked = sorted(
            (info.name for info in scores.models if _best_of_two(scores.get(info.name, task)) is not None),
            key=lambda model: -_best_of_two(scores.get(model, task)),
        )
        for higher, lower in zip(ranked, ranked[1:], strict=False):
            record = _compare(scores, task, higher, lower, resamples, seed)
            records.append(record)
            rows.append(_comparison_row(record, names))
    caption = (
        f"For each task, models ranked by best-of-two score and each adjacent pair compared on the "
        f"instances both scored: difference of the deciding method's accuracy (macro over subjects for "
        f"MMLU) with a paired percentile bootstrap 95% interval ({resamples} resamples, seed {seed}; "
        f"MMLU resampled within subjects). Statistically tied = the interval contains 0. "
        f"{PARTIAL_MARK} marks a partial run."
    )
    align = "lllrlrl"
    return Table("paired_bootstrap", "Paired bootstrap between adjacent models", caption, header,
                 [(None, rows)], records, align)  # fmt: skip


def _compare(scores: Scores, task: str, higher: str, lower: str, resamples: int, seed: int) -> dict:
    a = _decisive_correctness(scores, higher, task)
    b = _decisive_correctness(scores, lower, task)
    shared = a.index.intersection(b.index)
    record = {
        "task": task,
        "higher": higher,
        "lower": lower,
        "n_shared": len(shared),
        "higher_partial": scores.get(higher, task)["partial"],
        "lower_partial": scores.get(lower, task)["partial"],
        "difference": None,
        "ci_low": None,
        "ci_high": None,
        "tied": None,
        "resamples": resamples,
        "seed": seed,
    }
    if len(shared):
        strata = a.loc[shared, "subject"].astype(str).to_numpy() if is_macro_averaged(task) else None
        estimate, low, high = paired_bootstrap(
            a.loc[shared, "correct"].to_numpy(), b.loc[shared, "correct"].to_numpy(), strata, resamples, seed
        )
        record.update(difference=estimate, ci_low=low, ci_high=high, tied=bool(low <= 0 <= high))
    return record


def _comparison_row(record: dict, names: dict[str, str]) -> list[str]:
    def name(model: str, partial: bool) -> str:
        return names[model] + (PARTIAL_MARK if partial else "")

    def points(value: float | None) -> str:
        return MISSING if value is None else f"{100 * value:.1f}"

    interval = (
        MISSING if record["ci_low"] is None else f"[{points(record['ci_low'])}, {points(record['ci_high'])}]"
    )
    tied = MISSING if record["tied"] is None else ("yes" if record["tied"] else "no")
    return [
        task_name(record["task"]), name(record["higher"], record["higher_partial"]),
        name(record["lower"], record["lower_partial"]), points(record["difference"]), interval,
        str(record["n_shared"]), tied,
    ]  # fmt: skip


# -- figure data ------------------------------------------------------------------------------------


FIGURE_COLUMNS = [
    "task", "task_name", "model", "display_name", "series", "checkpoint", "training_tokens", "cf_method",
    "cf_accuracy", "cf_stderr", "mcf_accuracy", "mcf_stderr", "best_formulation", "n", "partial",
]  # fmt: skip


def _figure_row(scores: Scores, info: ModelInfo, task: str) -> dict | None:
    summary = scores.get(info.name, task)
    if summary is None:
        return None
    cf = summary["methods"].get(recommended_method(task), {})
    mcf = summary["methods"].get(MCF, {})
    best = summary.get("best_of_two") or {}
    return {
        "task": task,
        "task_name": task_name(task),
        "model": info.name,
        "display_name": info.display_name,
        "series": info.series,
        "checkpoint": info.checkpoint,
        "training_tokens": info.training_tokens,
        "cf_method": recommended_method(task),
        "cf_accuracy": cf.get("accuracy"),
        "cf_stderr": cf.get("stderr"),
        "mcf_accuracy": mcf.get("accuracy"),
        "mcf_stderr": mcf.get("stderr"),
        "best_formulation": best.get("formulation"),
        "n": summary["n_instances"],
        "partial": summary["partial"],
    }


def figure2_data(scores: Scores) -> list[dict]:
    """CF (recommended normalization) vs MCF accuracy per task per model."""
    rows = (_figure_row(scores, info, task) for task in scores.tasks for info in scores.models)
    return [row for row in rows if row is not None]


def figure1_data(scores: Scores) -> list[dict]:
    """CF vs MCF over training: models declared with a series and training_tokens, by series and tokens."""
    members = [info for info in scores.models if info.series is not None and info.training_tokens is not None]
    members.sort(key=lambda info: (info.series, info.training_tokens))
    rows = (_figure_row(scores, info, task) for info in members for task in scores.tasks)
    return [row for row in rows if row is not None]


def write_figure(rows: list[dict], key: str, description: str, out: Path) -> list[Path]:
    paths = [out / f"{key}.csv", out / f"{key}.json"]
    frame = pd.DataFrame(rows, columns=FIGURE_COLUMNS)
    write_text_atomic(paths[0], frame.to_csv(index=False, lineterminator="\n"))
    write_json_atomic(
        paths[1], {"key": key, "description": description, "columns": FIGURE_COLUMNS, "rows": rows}
    )
    return paths


# -- everything -------------------------------------------------------------------------------------


def all_tables(
    scores: Scores, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> list[Table]:
    return [
        table3(scores), table4(scores), table6(scores), table7(scores), table8(scores),
        *tables_9_to_12(scores), near_ties_table(scores), bootstrap_table(scores, resamples, seed),
    ]  # fmt: skip


def build_tables(
    scores: Scores, out: str | Path, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> list[Path]:
    """Write every table, the figure data and ``index.json`` under ``out``; return the paths written."""
    out = Path(out)
    written = []
    for table in all_tables(scores, resamples, seed):
        written += write_table(table, out)
    written += write_figure(
        figure1_data(scores), "figure1_checkpoints",
        "Figure 1: CF vs MCF accuracy (fractions) over training checkpoints of each declared series.", out,
    )  # fmt: skip
    written += write_figure(
        figure2_data(scores), "figure2_cf_vs_mcf",
        "Figure 2: CF (recommended normalization) vs MCF accuracy (fractions) per task and model.", out,
    )  # fmt: skip
    index = out / "index.json"
    write_json_atomic(index, _index(scores, written, resamples, seed))
    return [*written, index]


def _index(scores: Scores, written: list[Path], resamples: int, seed: int) -> dict:
    return {
        "olmes_version": __version__,
        "files": [path.name for path in written],
        "models": [vars(info) for info in scores.models],
        "tasks": scores.tasks,
        "bootstrap": {"resamples": resamples, "seed": seed},
        "inputs": [
            {
                "model": model,
                "task": task,
                "path": str(path),
                "sha256": file_sha256(path),
                "partial": scores.summaries[(model, task)]["partial"],
            }
            for (model, task), path in sorted(scores.paths.items())
        ],  # fmt: skip
    }
