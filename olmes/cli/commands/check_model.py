"""``olmes check-model``: whether the engine's fast path is exact for a model, in one line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from olmes.core.outputs import CommandFiles, named
from olmes.logprobs.embedded import SHORT_NAMES
from olmes.logprobs.options import DTYPE_NAMES

NAME = "check-model"
HELP = "check on ~50 real requests whether the engine's fast (tree) path is exact for a model"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "model",
        help=f"{' or '.join(SHORT_NAMES)}, a .gguf file, a local Hugging Face folder, or a hub id[@revision]",
    )
    parser.add_argument("--dtype", default="auto", choices=["auto", *DTYPE_NAMES], help="as olmes logprobs")
    parser.add_argument("--device", help="torch device (default: cuda when present, else cpu)")
    parser.add_argument(
        "--trust-remote-code", action="store_true", help="run a model that ships its own code (read it first)"
    )
    parser.add_argument("--output", type=Path, help="also write the report as JSON")


def files(args: argparse.Namespace) -> CommandFiles:
    model = Path(args.model).expanduser()
    local = model.exists()
    return CommandFiles(
        reads=named("model", model if local else None),
        writes=named("--output", args.output),
        read_only=named("model", model if local and model.is_dir() else None),
    )


def run(args: argparse.Namespace) -> int:
    from olmes.cli.model_check import check_pairs
    from olmes.core.records import CHECK_FORMAT
    from olmes.logprobs.check import check_model, summary_line
    from olmes.logprobs.models import prepare

    plan = prepare(
        args.model, args.dtype, args.device, split="never", trust_remote_code=args.trust_remote_code
    )
    report = check_model(plan, check_pairs())
    if args.output is not None:
        CHECK_FORMAT.write(args.output, report)
    print(f"olmes: {summary_line(report)}", file=sys.stderr)
    return 0 if report["ok"] else 1
