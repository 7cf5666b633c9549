"""``olmes reproduce``: recompute a published model's first N instances here and compare with the store."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from olmes.cli.argtypes import positive_int
from olmes.core.outputs import CommandFiles, named

NAME = "reproduce"
HELP = "recompute the first N instances of a published model here and compare them with the store"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", help="a model of the store (its name)")
    parser.add_argument(
        "--store", type=Path, default=Path("leaderboard"), help="the results store (default: leaderboard)"
    )
    parser.add_argument(
        "--limit", type=positive_int, default=10, help="instances per task to recompute (default 10)"
    )
    parser.add_argument(
        "--generative-limit",
        type=int,
        default=0,
        metavar="N",
        help="also generate the first N instances of each OLMES v0.2 generative task again and compare "
        "the generations with the store's (default 0: none); reported, not recorded",
    )
    parser.add_argument(
        "--workdir", type=Path, required=True, help="folder for the recomputed requests and log-probs"
    )
    parser.add_argument("--output", type=Path, required=True, help="the comparison report (JSON) to write")
    parser.add_argument("--threads", type=positive_int, help="CPU threads of torch (default: every core)")
    parser.add_argument(
        "--record",
        action="store_true",
        help="also write the comparison and its recomputed log-probs into the store as the model's "
        "reproduction record (reproductions/<model>/), which earns it the reproduced badge; maintainers "
        "run this on the base branch (a pull request may not change reproductions/)",
    )
    parser.add_argument(
        "--max-weights-gb",
        type=float,
        metavar="GB",
        help="reproduce only a model whose weights this machine can hold (a hub model sized from the "
        "hub's listing first); otherwise say why not and exit 0 (the submission check's runner)",
    )
    parser.add_argument(
        "--weights",
        help="where this machine has the model (a local folder or file; default: the store's spec); "
        "checked to be the store's weights by their content hash",
    )


def files(args: argparse.Namespace) -> CommandFiles:
    """The store and the weights are only read (but for the reproduction record with ``--record``): the
    report and the work folder go elsewhere; the report's folder is probed before the model is loaded."""
    weights = Path(args.weights).expanduser() if args.weights else None
    folder = weights if weights is not None and weights.is_dir() else None
    return CommandFiles(
        reads=[*named("--store", args.store), *named("--weights", weights)],
        writes=named("--output", args.output),
        folders=named("--workdir", args.workdir),
        read_only=[*([] if args.record else named("--store", args.store)), *named("--weights", folder)],
        probe=True,
    )


def run(args: argparse.Namespace) -> int:
    import torch

    from olmes.core.records import REPRODUCTION_FORMAT
    from olmes.core.resources import cache_dir
    from olmes.store.naming import shown_name
    from olmes.store.reading import read_model_record
    from olmes.store.reproduce import fit_problem, record_reproduction, reproduce
    from olmes.store.reproduction_lines import summary_lines

    if args.threads is not None:
        torch.set_num_threads(args.threads)
    if args.max_weights_gb is not None and args.weights is None:
        record = read_model_record(args.store, args.model)
        problem = fit_problem(record["spec"], record["revision"], int(args.max_weights_gb * 1e9))
        if problem:
            named = shown_name(args.model, record["display_name"])
            print(f"olmes: reproduce: {named} not reproduced here: {problem}", file=sys.stderr)
            return 0
    report = reproduce(
        args.store,
        args.model,
        args.limit,
        args.workdir,
        cache_dir(),
        args.weights,
        generative_limit=args.generative_limit,
    )
    REPRODUCTION_FORMAT.write(args.output, report)
    display_name = read_model_record(args.store, args.model)["display_name"]
    print("\n".join(summary_lines(report, display_name)), file=sys.stderr)
    if args.record:
        where = record_reproduction(args.store, report, args.workdir)
        print(f"olmes: reproduce: recorded in {where} ({report['verdict']})", file=sys.stderr)
    return 0
