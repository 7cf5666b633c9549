"""``olmes predict``: one scoring method's per-instance predictions of one model x task (no torch)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from olmes.atomic import atomic_path
from olmes.scoring import METHODS, predict

NAME = "predict"
HELP = "one method's predictions (cf_none, cf_token, cf_char, cf_pmi or mcf) from the engine's log-probs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model-name", required=True, help="the model's label in scores and tables")
    parser.add_argument("--method", required=True, choices=METHODS)
    parser.add_argument("--cf", type=Path, help="CF log-prob Parquet (the cf_* methods)")
    parser.add_argument("--pmi", type=Path, help="pmi log-prob Parquet (cf_pmi)")
    parser.add_argument("--mcf", type=Path, help="MCF log-prob Parquet (mcf)")
    parser.add_argument("--output", required=True, type=Path, help="predictions Parquet to write")


def run(args: argparse.Namespace) -> int:
    predictions = predict(args.model_name, args.method, args.cf, args.pmi, args.mcf)
    with atomic_path(args.output) as temp:
        predictions.to_parquet(temp, index=False)
    accuracy = predictions["correct"].mean()
    print(
        f"{args.model_name} / {predictions['task'].iloc[0]} / {args.method}: {100 * accuracy:.1f}",
        file=sys.stderr,
    )
    return 0
