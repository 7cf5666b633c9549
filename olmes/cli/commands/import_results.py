"""``olmes import oe-eval``: results of AI2's OLMES implementation, checked and scored as ours."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from olmes.cli.argtypes import model_name
from olmes.core.outputs import CommandFiles, named
from olmes.requests.data import SOURCES
from olmes.store.oe_eval import FORMATS, format_help

NAME = "import"
HELP = (
    "import a run of AI2's OLMES implementation (oe-eval), its OLMES v0.2 generative tasks included: "
    "checked request by request, scored by olmes"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("format", choices=FORMATS, help=format_help("whose results"))
    parser.add_argument("run", type=Path, help="the run's output folder (task-NNN-<task>-*.json[l] files)")
    parser.add_argument(
        "--model", required=True, type=model_name, help="the model's name in the results and the store"
    )
    parser.add_argument(
        "--model-spec",
        help="the model as olmes names it (hub id, folder, short name), for its tokenizer and the store's "
        "spec (default: the run's model_config model_path or model)",
    )
    parser.add_argument(
        "--display-name",
        help="how tables show the model (default: its name and the qualifiers it lacks); publish also "
        "requires that it name the model (SmolLM2 for HuggingFaceTB/SmolLM2-135M-Instruct)",
    )
    parser.add_argument(
        "--commit", help="the source commit of the oe-eval that made the run (its files do not say)"
    )
    parser.add_argument(
        "--output", type=Path, default=Path("results"),
        help="the results folder to write (default: results; then olmes publish --from it)",
    )  # fmt: skip
    parser.add_argument(
        "--source", choices=SOURCES, default="bundle",
        help="the data the canonical requests are made from, to check the run's requests against (the "
        "generative tasks' generation requests are always the bundle's)",
    )  # fmt: skip


def files(args: argparse.Namespace) -> CommandFiles:
    """The run is only read; the results go into the output folder, never into the run."""
    return CommandFiles(
        reads=named("run", args.run), folders=named("--output", args.output), read_only=named("run", args.run)
    )


def run(args: argparse.Namespace) -> int:
    from olmes.store.oe_eval.importer import import_run
    from olmes.store.oe_eval.model import ImportTarget

    target = ImportTarget(
        args.output, args.model, args.model_spec, args.commit, args.source, args.display_name
    )
    for line in import_run(args.run, target):
        print(line, file=sys.stderr)
    return 0
