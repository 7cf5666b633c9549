"""``olmes logprobs``: score request files with a causal LM into Parquet plus a JSON run record each.

The work is done by :mod:`olmes.logprobs.runner`; this module parses the command line, plans the model
(device, placement) and turns SIGTERM into an orderly stop. Several ``--requests FILE --output FILE``
pairs are scored with one load of the weights.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

from olmes.core.errors import OlmesError
from olmes.core.outputs import CommandFiles, named
from olmes.core.records import run_record_path
from olmes.logprobs.embedded import SHORT_NAMES
from olmes.logprobs.options import DEFAULT_MAX_BATCH_TOKENS, DTYPE_NAMES
from olmes.logprobs.placement import SPLIT_MODES, WEIGHTS_SHARE
from olmes.logprobs.spec import ModelSpec, as_model_spec

NAME = "logprobs"
HELP = "score request files with a causal LM: log P(continuation | context) per request, as Parquet"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        required=True,
        help=f"{' or '.join(SHORT_NAMES)}, a .gguf file, a local Hugging Face folder, or a hub id[@revision]",
    )
    parser.add_argument(
        "--requests",
        required=True,
        type=Path,
        action="append",
        help="request file (JSONL); repeat, each followed by its --output, to score several with one load",
    )
    parser.add_argument(
        "--output", required=True, type=Path, action="append", help="Parquet file of the preceding --requests"
    )
    parser.add_argument(
        "--max-batch-tokens",
        type=_positive_or_auto,
        default="auto",
        help=f"tokens forwarded per model call, or auto (default: {DEFAULT_MAX_BATCH_TOKENS} on a CPU; on a "
        "GPU the most the free memory holds by the model's dimensions); halved on out-of-memory, then "
        "grown back",
    )
    parser.add_argument(
        "--dtype",
        default="auto",
        choices=["auto", *DTYPE_NAMES],
        help="weights/activations precision (default: the model's own; float32 for GGUF)",
    )
    parser.add_argument("--device", help="torch device (default: cuda when present, else cpu)")
    parser.add_argument(
        "--split",
        choices=SPLIT_MODES,
        default="auto",
        help="place the model over all visible GPUs (accelerate's balanced device_map): auto when its "
        "weights exceed one GPU's budget, always, or never (default: auto; --device cuda:N never splits)",
    )
    parser.add_argument(
        "--gpu-memory",
        type=_positive_float,
        # argparse %-formats help: the percent sign is doubled
        help=f"GB of each GPU the weights may take (default: {WEIGHTS_SHARE:.0%}% of its memory; "
        "the rest is for activations)",
    )
    parser.add_argument(
        "--threads",
        type=_positive,
        help="CPU threads of torch (default: torch's own, every core); the workflow passes its job's",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        help="cache folder for models and scores (default: $OLMES_CACHE_DIR, else ~/.cache/olmes)",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="ignore cached scores (a cold run; still writes new ones)"
    )
    parser.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="run a model that ships its own code (read it first; the workflow passes the config entry's "
        "trust_remote_code); such a model is scored on the safe leaves path",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _positive_or_auto(text: str) -> int | str:
    return text if text == "auto" else _positive(text)


def _positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return value


def terminated(signum, _frame) -> None:
    """SIGTERM (scancel, a time limit, a killed job) unwinds like an error, so finished work is saved."""
    raise OlmesError(
        f"stopped by signal {signal.Signals(signum).name}; the requests scored so far are cached, "
        "run the same command again to resume"
    )


def model_spec(args: argparse.Namespace) -> ModelSpec:
    """``--model`` parsed (:mod:`olmes.logprobs.spec`), once for the whole command: the parsed spec
    replaces the text, and the files check, the plan and the run record all take it."""
    args.model = as_model_spec(args.model)
    return args.model


def files(args: argparse.Namespace) -> CommandFiles:
    """The request files and a local model are read; each --output and its run record written, their
    folders probed before the model is loaded (a read-only disk is found in a second, not after hours)."""
    model = model_spec(args).path  # a .gguf file or a local folder; None for an embedded or hub model
    return CommandFiles(
        reads=[*named("--requests", args.requests), *named("--model", model)],
        writes=[
            *named("--output", args.output),
            *named("the run record of --output", [run_record_path(path) for path in args.output]),
        ],
        read_only=named("--model", model if model is not None and model.is_dir() else None),
        probe=True,
    )


def run(args: argparse.Namespace) -> int:
    import torch  # the models extra: imported here so that a light install still shows the help

    from olmes.core.resources import cache_dir
    from olmes.logprobs.models import prepare
    from olmes.logprobs.runner import score_files

    signal.signal(signal.SIGTERM, terminated)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    if args.cache_dir is not None:  # models and data are cached there too (olmes.core.resources)
        os.environ["OLMES_CACHE_DIR"] = str(args.cache_dir)
    if len(args.requests) != len(args.output):
        raise OlmesError(
            f"got {len(args.requests)} --requests but {len(args.output)} --output; give each request "
            "file its own --output after it"
        )
    plan = prepare(
        model_spec(args),
        args.dtype,
        args.device,
        args.split,
        args.gpu_memory,
        trust_remote_code=args.trust_remote_code,
    )
    check = None
    if not plan.verified:  # an architecture no tiny-model test covers: compare the paths on it first
        from olmes.cli.model_check import check_pairs
        from olmes.logprobs.check import check_model, checkable, summary_line

        if checkable(plan):
            check = check_model(plan, check_pairs())
            print(f"olmes: {summary_line(check)}", file=sys.stderr)
        else:  # the safe leaves path scores it all the same
            print(f"olmes: {plan.resolved.spec} is of an unverified architecture and {plan.dtype} is not "
                  "float32, so the paths are not compared here: run olmes check-model --dtype float32 on it",
                  file=sys.stderr)  # fmt: skip
    records = score_files(
        plan,
        list(zip(args.requests, args.output, strict=True)),
        args.cache_dir or cache_dir(),
        max_batch_tokens=None if args.max_batch_tokens == "auto" else args.max_batch_tokens,
        use_cache=not args.no_cache,
        progress=not args.quiet,
        check=check,
    )
    for record, output in zip(records, args.output, strict=True):
        print(
            f"olmes: {record['num_requests']} requests ({record['requests_from_cache']} from cache), "
            f"{record['tokens_forwarded']} tokens forwarded (trie-minimal {record['trie_minimal_tokens']}), "
            f"{record['wall_time_s']:.1f} s -> {output}",
            file=sys.stderr,
        )
    return 0
