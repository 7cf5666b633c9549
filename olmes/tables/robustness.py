"""How much a score moves when nothing that should matter changes: the robustness tables.

- Table 5 (the paper's): the OLMES score formula (best of CF under the task's normalization and
  MCF) under the standard prompts ("orig") and each prompt variant (``olmes requests --variant``),
  on the same instances, their average, |orig - average| and the standard error of orig.
- Every answer order: one row per model x task of ``olmes rotations`` reports (MCF accuracy under
  each cyclic order of the choices, spread, consistent and permutation-averaged accuracy).
- Letter bias (figure data): per model x task x letter, the share of MCF predictions and of gold
  answers at that letter over every order.

A variant is usually run on a task's first N instances while the standard result may be a full run:
"orig" is then recomputed from the standard result's per-instance predictions on exactly the
variant's instances, so the columns compare like with like.
"""

from __future__ import annotations

import pandas as pd

from olmes.core.errors import OlmesError
from olmes.core.methods import MCF_METHOD
from olmes.core.methods import letter as letter_at
from olmes.core.records import LetterShare, RotationsReport
from olmes.core.tasks import STANDARD_VARIANT, TASKS, VARIANT_NAMES
from olmes.scoring.statistics import method_stats, olmes_result
from olmes.tables.render import DAGGER, MISSING, PARTIAL_MARK, Cell, Table, percent_cell, text_cell
from olmes.tables.results import ScoreSet, task_name

VARIANT_ORDER = [name for name in VARIANT_NAMES if name != STANDARD_VARIANT]


def best_of_two_on(predictions: pd.DataFrame, task: str, native_ids: list[str]) -> dict:
    """The best-of-two record (olmes_result) of ``predictions`` restricted to ``native_ids``, with the
    standard error of the method that decided it."""
    subset = predictions[predictions["native_id"].astype(str).isin(set(native_ids))]
    methods = method_stats(subset, task)
    best = olmes_result(methods, TASKS[task])
    if best is None:
        raise OlmesError(f"{task}: a robustness comparison needs both CF and MCF predictions")
    for method in (best["cf_method"], MCF_METHOD.key):
        scored = int((subset["method"] == method).sum())
        if scored != len(native_ids):
            raise OlmesError(
                f"{task}: the standard result has {scored} of the {len(native_ids)} instances a variant "
                f"scored under {method}; run the standard on at least those instances"
            )
    return {**best, "stderr": methods[best["method"]].get("stderr")}


def _instance_ids(predictions: pd.DataFrame) -> list[str]:
    return sorted(set(predictions["native_id"].astype(str)))


def _variant_cells(scores: ScoreSet, model: str, task: str) -> tuple[list[str], dict[str, dict]] | None:
    """(instances, best-of-two per variant and "orig") of one model x task, None without variants."""
    found = sorted((v for (m, t, v) in scores.variants if m == model and t == task), key=VARIANT_ORDER.index)
    if not found:
        return None
    standard = scores.get(model, task)
    if standard is None:
        raise OlmesError(f"{model} on {task} has prompt variants but no standard score summary; give it too")
    predictions_of = {variant: scores.variant_predictions(model, task, variant) for variant in found}
    ids = _instance_ids(predictions_of[found[0]])
    results = {}
    for variant, predictions in predictions_of.items():
        if _instance_ids(predictions) != ids:
            raise OlmesError(
                f"{model} on {task}: variants {found[0]} and {variant} scored different instances; "
                "run them with the same limit"
            )
        results[variant] = best_of_two_on(predictions, task, ids)
    results["orig"] = best_of_two_on(scores.predictions(model, task), task, ids)
    return ids, results


def table5(scores: ScoreSet) -> Table:
    """Table 5: the score under the standard prompts and each prompt variant, per model x task."""
    variants = [v for v in VARIANT_ORDER if any(key[2] == v for key in scores.variants)]
    header = ["Model", "Task", "n", "orig", *variants, "average", "|orig - avg|", "std. err."]
    rows, records = [], []
    for info in scores.models:
        for task in TASKS:
            found = _variant_cells(scores, info.name, task)
            if found is None:
                continue
            ids, results = found
            values = [results["orig"]["score"]] + [results[v]["score"] for v in variants if v in results]
            average = sum(values) / len(values)
            orig = results["orig"]
            partial = len(ids) < TASKS[task].standard_count
            mark = PARTIAL_MARK if partial else ""
            row = [text_cell(info.display_name), text_cell(task_name(task)), Cell(len(ids), str(len(ids)))]
            for name in ["orig", *variants]:
                best = results.get(name)
                row.append(
                    percent_cell(best and best["score"], (DAGGER if best and best["dagger"] else "") + mark)
                )
            row += [
                percent_cell(average),
                percent_cell(abs(orig["score"] - average)),
                percent_cell(orig["stderr"]),
            ]
            rows.append(row)
            records.append(
                {
                    "model": info.name, "display_name": info.display_name, "task": task, "n": len(ids),
                    "partial": partial, "average": average,
                    "abs_orig_minus_average": abs(orig["score"] - average),
                    "stderr": orig["stderr"], "scores": results,
                }
            )  # fmt: skip
    caption = (
        "The OLMES score formula (best of CF under the task's normalization and MCF; † where MCF won) "
        "under the standard prompts (orig) and each prompt variant, on the same instances: var1 words "
        "the answer line 'Correct answer:' after a blank line and labels choices ' A)'; average over the "
        "columns, |orig - avg|, and the standard error of orig. "
        f"{PARTIAL_MARK} marks a comparison on fewer instances than the standard. "
        f"{'' if rows else 'No prompt variants were run (config: robustness.variants).'}"
    )
    title = "Prompt variants (paper Table 5)"
    return Table("table5_variants", title, caption.strip(), header, [(None, rows)], records, text_columns=2)


def rotations_table(scores: ScoreSet) -> Table:
    """MCF under every cyclic order of the answer choices, per model x task (olmes rotations)."""
    reports = [
        (info, task, scores.rotations[(info.name, task)])
        for info in scores.models
        for task in TASKS
        if (info.name, task) in scores.rotations
    ]
    orders = max((report["rotations"] for _, _, report in reports), default=0)
    header = ["Model", "Task", "n", *(f"order {r}" for r in range(orders))]
    header += ["mean", "spread", "consistent", "perm.-avg."]
    rows, records = [], []
    for info, task, report in reports:
        by_order = report["accuracy_by_rotation"]
        mark = PARTIAL_MARK if report["instances"] < TASKS[task].standard_count else ""
        row = [text_cell(info.display_name), text_cell(task_name(task))]
        row.append(Cell(report["instances"], str(report["instances"])))
        row += [
            percent_cell(by_order[r], mark) if r < len(by_order) else text_cell(MISSING)
            for r in range(orders)
        ]
        row += [
            percent_cell(report[key])
            for key in ("mean_accuracy", "spread", "consistent_accuracy", "permutation_averaged_accuracy")
        ]
        rows.append(row)
        records.append({"model": info.name, "display_name": info.display_name, **report})
    caption = (
        "MCF accuracy under every cyclic order of the answer choices (order 0 is the standard request; "
        "order r shows choice r first, the gold letter moving with its choice, the shots unchanged), "
        "their mean and spread (max - min), consistent accuracy (right under every order) and the "
        "permutation-averaged accuracy (each choice's letter log-prob averaged over the orders, then the "
        f"argmax). {PARTIAL_MARK} marks fewer instances than the standard. "
        f"{'' if rows else 'No rotations were run (config: robustness.rotation_tasks).'}"
    )
    return Table(
        "rotations",
        "Every answer order (MCF)",
        caption.strip(),
        header,
        [(None, rows)],
        records,
        text_columns=2,
    )


def letter_bias_data(scores: ScoreSet) -> list[dict]:
    """Per model x task x letter: the share of MCF predictions and of gold answers at that letter,
    over every answer order (from the rotations reports), at the task's own letters only."""
    names = {info.name: info.display_name for info in scores.models}
    return [
        {
            "model": model,
            "display_name": names.get(model, model),
            "task": task,
            "task_name": task_name(task),
            "letter": letter,
            "predicted": shares["predicted"],
            "gold": shares["gold"],
        }  # fmt: skip
        for (model, task), report in sorted(scores.rotations.items())
        for letter, shares in _own_letters(report)
    ]


def _own_letters(report: RotationsReport) -> list[tuple[str, LetterShare]]:
    """The report's letters that its task shows: the first ``rotations`` (as many as its instances have
    choices at most; PIQA: A and B), whatever else a report lists."""
    own = {letter_at(position) for position in range(report["rotations"])}
    return [(letter, shares) for letter, shares in report["letters"].items() if letter in own]
