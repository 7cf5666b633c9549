"""``olmes rotations``: MCF under every answer order (rotation) of one model x task."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from olmes.core.outputs import CommandFiles, named

NAME = "rotations"
HELP = (
    "MCF accuracy under every cyclic answer order, letter bias, consistent and permutation-averaged accuracy"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model-name", required=True, help="the model's name in tables and on the site")
    parser.add_argument(
        "--mcf", type=Path, required=True, help="the task's standard MCF log-prob Parquet (rotation 0)"
    )
    parser.add_argument(
        "--rotations", type=Path, required=True, help="its mcf_rot log-prob Parquet (rotations 1..k-1)"
    )
    parser.add_argument("--output", type=Path, required=True, help="the report (JSON) to write")


def files(args: argparse.Namespace) -> CommandFiles:
    return CommandFiles(
        reads=[*named("--mcf", args.mcf), *named("--rotations", args.rotations)],
        writes=named("--output", args.output),
    )


def run(args: argparse.Namespace) -> int:
    from olmes.core.records import ROTATIONS_FORMAT
    from olmes.scoring.rotations import analyze

    report = analyze(args.model_name, args.mcf, args.rotations)
    ROTATIONS_FORMAT.write(args.output, report)
    by_rotation = " ".join(f"{100 * a:.1f}" for a in report["accuracy_by_rotation"])
    print(
        f"{report['task']}: MCF by rotation {by_rotation} (spread {100 * report['spread']:.1f}), consistent "
        f"{100 * report['consistent_accuracy']:.1f}, permutation-averaged "
        f"{100 * report['permutation_averaged_accuracy']:.1f} -> {args.output}",
        file=sys.stderr,
    )
    return 0
