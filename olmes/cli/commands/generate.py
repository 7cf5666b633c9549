"""``olmes generate``: a generative task's request file -> greedy generations (and the gold answers'
log-probs, for bits per byte) as Parquet plus a JSON run record.

The work is done by :mod:`olmes.logprobs.generation_runner` (the engine: :mod:`olmes.logprobs.generation`);
this module parses the command line and plans the model as ``olmes logprobs`` does, whose model
options it shares.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

from olmes.cli.argtypes import positive_int
from olmes.cli.commands.logprobs import model_spec, terminated
from olmes.core.outputs import CommandFiles, named
from olmes.core.records import run_record_path
from olmes.logprobs.embedded import SHORT_NAMES
from olmes.logprobs.options import DTYPE_NAMES

NAME = "generate"
HELP = "generate greedily from a generative task's request file with a causal LM, as Parquet"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        required=True,
        help=f"{' or '.join(SHORT_NAMES)}, a .gguf file, a local Hugging Face folder, or a hub id[@revision]",
    )
    parser.add_argument("--requests", required=True, type=Path, help="generation request file (JSONL)")
    parser.add_argument("--output", required=True, type=Path, help="generations Parquet to write")
    parser.add_argument(
        "--batch-size",
        type=positive_int,
        help="prompts decoded together (default: the device's; halved on out-of-memory)",
    )
    parser.add_argument(
        "--dtype",
        default="auto",
        choices=["auto", *DTYPE_NAMES],
        help="weights/activations precision (default: the model's own; float32 for GGUF)",
    )
    parser.add_argument("--device", help="torch device (default: cuda when present, else cpu)")
    parser.add_argument("--threads", type=positive_int, help="CPU threads of torch (default: every core)")
    parser.add_argument(
        "--cache-dir",
        type=Path,
        help="cache folder of models, generations, log-probs (default: $OLMES_CACHE_DIR or ~/.cache/olmes)",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="ignore cached generations (a cold run; still writes new ones)",
    )
    parser.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="run a model that ships its own code (read it first); it generates each prompt alone",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def files(args: argparse.Namespace) -> CommandFiles:
    model = model_spec(args).path
    return CommandFiles(
        reads=[*named("--requests", args.requests), *named("--model", model)],
        writes=[*named("--output", args.output), *named("its run record", run_record_path(args.output))],
        read_only=named("--model", model if model is not None and model.is_dir() else None),
        probe=True,
    )


def run(args: argparse.Namespace) -> int:
    import torch  # the models extra: imported here so that a light install still shows the help

    from olmes.core.resources import cache_dir
    from olmes.logprobs.generation_runner import generate_file
    from olmes.logprobs.models import prepare
    from olmes.scoring.generative_score import read_generation_requests

    signal.signal(signal.SIGTERM, terminated)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    if args.cache_dir is not None:
        os.environ["OLMES_CACHE_DIR"] = str(args.cache_dir)
    requests = read_generation_requests(args.requests)
    plan = prepare(
        model_spec(args), args.dtype, args.device, "auto", None, trust_remote_code=args.trust_remote_code
    )
    record = generate_file(
        plan,
        requests,
        args.requests,
        args.output,
        args.cache_dir or cache_dir(),
        batch_size=args.batch_size,
        use_cache=not args.no_cache,
        progress=not args.quiet,
    )
    counts = record["generation"]
    print(
        f"olmes: {counts['requests']} prompts ({counts['from_cache']} from cache), "
        f"{counts['generated_tokens']} tokens generated, {counts['prefill_tokens_forwarded']} prompt tokens "
        f"forwarded of {counts['prompt_tokens']} ({counts['shared_prefix_tokens_saved']} saved by shared "
        f"prefixes), {record['wall_time_s']:.1f} s -> {args.output}",
        file=sys.stderr,
    )
    return 0
