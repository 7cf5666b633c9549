"""``olmes predict``: one scoring method's per-instance predictions of one model x task (no torch)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from olmes.core.methods import METHODS, REQUEST_SETS
from olmes.core.outputs import CommandFiles, named
from olmes.scoring.predictions import predict, write_predictions

NAME = "predict"
HELP = f"one method's predictions ({', '.join(METHODS)}) from the engine's log-probs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model-name", required=True, help="the model's label in scores and tables")
    parser.add_argument("--method", required=True, choices=list(METHODS))
    for request_set in REQUEST_SETS:
        readers = ", ".join(key for key, method in METHODS.items() if request_set in method.request_sets)
        parser.add_argument(f"--{request_set}", type=Path, help=f"{request_set} log-prob Parquet ({readers})")
    parser.add_argument("--output", required=True, type=Path, help="predictions Parquet to write")


def files(args: argparse.Namespace) -> CommandFiles:
    reads = [pair for name in REQUEST_SETS for pair in named(f"--{name}", getattr(args, name))]
    return CommandFiles(reads=reads, writes=named("--output", args.output))


def run(args: argparse.Namespace) -> int:
    predictions = predict(args.model_name, args.method, args.cf, args.pmi, args.mcf)
    write_predictions(predictions, args.output)
    accuracy = predictions["correct"].mean()
    print(
        f"{args.model_name} / {predictions['task'].iloc[0]} / {args.method}: {100 * accuracy:.1f}",
        file=sys.stderr,
    )
    return 0
