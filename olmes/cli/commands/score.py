"""``olmes score``: one model x task's log-prob files -> per-instance predictions and a score summary.

Either every method is computed here from the log-prob files, or (``--from-predictions``, as the
workflow does) the per-method predictions of ``olmes predict`` are gathered; the log-prob files are
then only recorded (SHA-256, run record) in the summary.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from olmes.cli.argtypes import positive_int
from olmes.core.errors import OlmesError
from olmes.core.methods import REQUEST_SETS
from olmes.core.outputs import CommandFiles, named
from olmes.core.records import ScoreSummary
from olmes.scoring.flags import task_flags
from olmes.scoring.predictions import gather_predictions, read_predictions_file
from olmes.scoring.score import score_task, summarize, write_scores

NAME = "score"
HELP = "score one model on one task from its CF, pmi and MCF log-prob files"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model-name", required=True, help="the model's label in scores and tables")
    parser.add_argument("--cf", type=Path, help="CF log-prob Parquet of the engine")
    parser.add_argument("--pmi", type=Path, help="pmi log-prob Parquet of the engine (CF's pmi baseline)")
    parser.add_argument("--mcf", type=Path, help="MCF log-prob Parquet of the engine")
    parser.add_argument(
        "--from-predictions",
        type=Path,
        nargs="+",
        help="gather these per-method predictions (olmes predict) instead of computing them",
    )
    parser.add_argument("--task", help="expected task key; an error if the files hold another task")
    parser.add_argument(
        "--limit", type=positive_int, help="the instance limit the run used (marks the result partial)"
    )
    parser.add_argument(
        "--pmi-everywhere",
        action="store_true",
        help="require pmi even on tasks whose standard has none (runs asking for all 4 norms)",
    )
    parser.add_argument("--predictions", required=True, type=Path, help="per-instance Parquet to write")
    parser.add_argument("--summary", required=True, type=Path, help="summary JSON to write (*.scores.json)")


def files(args: argparse.Namespace) -> CommandFiles:
    return CommandFiles(
        reads=[
            *named("--cf", args.cf), *named("--pmi", args.pmi), *named("--mcf", args.mcf),
            *named("--from-predictions", args.from_predictions),
        ],
        writes=[*named("--predictions", args.predictions), *named("--summary", args.summary)],
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    if args.cf is None and args.mcf is None:
        raise OlmesError("olmes score needs --cf and/or --mcf (the engine's log-prob Parquet files)")
    if args.from_predictions:
        predictions = _gathered(args.from_predictions, args.model_name)
        given = (args.cf, args.pmi, args.mcf)
        inputs = {name: path for name, path in zip(REQUEST_SETS, given, strict=True) if path}
        summary = summarize(predictions, inputs, args.limit, args.pmi_everywhere)
    else:
        predictions, summary = score_task(
            args.model_name, cf_path=args.cf, pmi_path=args.pmi, mcf_path=args.mcf,
            limit=args.limit, require_pmi=args.pmi_everywhere,
        )  # fmt: skip
    if args.task is not None and summary["task"] != args.task:
        raise OlmesError(f"{args.cf or args.mcf} holds task {summary['task']!r}, not {args.task!r}")
    write_scores(predictions, summary, args.predictions, args.summary)
    print(_headline(summary), file=sys.stderr)
    for flag in task_flags(summary, predictions):
        print(f"olmes: warning: {summary['model']} {summary['task']}: {flag['message']}", file=sys.stderr)
    return 0


def _gathered(paths: list[Path], model: str) -> pd.DataFrame:
    """The per-method prediction files of one model x task as one frame, checked to belong together."""
    parts = []
    for path in paths:
        part = read_predictions_file(path)
        if part.empty or set(part["model"]) != {model}:
            raise OlmesError(f"{path}: not predictions of model {model!r}; re-run olmes predict")
        parts.append(part)
    return gather_predictions(parts)


def _headline(summary: ScoreSummary) -> str:
    """One line for the log: the OLMES score, or why there is none."""
    name = f"{summary['model']} / {summary['task']}"
    best = summary["best_of_two"]
    if summary["partial"]:
        detail = "" if best is None else f" best of CF/MCF {100 * best['score']:.1f}"
        return f"{name}: partial ({'; '.join(summary['partial_reasons'])}){detail}"
    return f"{name}: OLMES {100 * best['score']:.1f}{' (MCF)' if best['dagger'] else ''}"
