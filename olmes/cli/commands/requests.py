"""``olmes requests``: write a task's OLMES requests (CF or MCF) and/or its instances as JSON lines; for
an OLMES v0.2 generative task, its generation request file. Without a task: list the tasks."""

from __future__ import annotations

import argparse
import sys

from olmes.cli.argtypes import positive_int
from olmes.cli.commands.tasks import print_task_tables
from olmes.core.errors import OlmesError
from olmes.core.generative import GENERATIVE_TASKS
from olmes.core.methods import REQUEST_SETS, ROTATIONS
from olmes.core.outputs import CommandFiles, named
from olmes.core.records import write_records
from olmes.core.tasks import STANDARD_VARIANT, TASKS, VARIANT_NAMES, get_task
from olmes.requests.build import instance_rows, requests_of, task_instances
from olmes.requests.data import SOURCES

NAME = "requests"
HELP = "write the standard's requests of one task and request set as JSONL"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "task",
        nargs="?",
        help="task key (see `olmes tasks`): one of the ten, or an OLMES v0.2 generative task; "
        "without one, list the tasks",
    )
    parser.add_argument(
        "--request-set",
        choices=(*REQUEST_SETS, ROTATIONS),
        help="the request set of --output: cf, mcf, or pmi (CF's choices after the bare context 'Answer:')",
    )
    parser.add_argument("--limit", type=positive_int, help="keep the first N standardized instances")
    parser.add_argument("--source", choices=SOURCES, default="bundle", help="where data comes from")
    parser.add_argument(
        "--pmi-everywhere",
        action="store_true",
        help="allow the pmi request set for tasks whose standard scores no pmi (BoolQ, MMLU, WinoGrande)",
    )
    parser.add_argument(
        "--variant",
        choices=list(VARIANT_NAMES),
        default=STANDARD_VARIANT,
        help="the standard's prompts, or a variant of the paper's Table 5: var1 ('Correct answer:' after "
        "a blank line, ' A)' labels), var2 (3 of the 5 shots replaced by other train examples), var3 (both)",
    )
    parser.add_argument(
        "--output",
        help="request file (JSONL) to write; needs --request-set, except for a generative task "
        "(its generation request file)",
    )
    parser.add_argument("--instances", help="instance file (JSONL: question, choices, gold) to write")


def files(args: argparse.Namespace) -> CommandFiles:
    return CommandFiles(writes=[*named("--output", args.output), *named("--instances", args.instances)])


def run(args: argparse.Namespace) -> int:
    if args.task is None:
        if args.output is not None or args.instances is not None or args.request_set is not None:
            raise OlmesError("olmes requests needs a task (`olmes requests` alone lists them)")
        print_task_tables()
        return 0
    if args.task in GENERATIVE_TASKS:
        return _run_generative(args)
    if args.task not in TASKS:
        raise OlmesError(
            f"unknown task {args.task!r}; known tasks: {', '.join(TASKS)}; "
            f"generative tasks: {', '.join(GENERATIVE_TASKS)}"
        )
    if args.output is None and args.instances is None:
        raise OlmesError("olmes requests needs --output (with --request-set) and/or --instances")
    if (args.output is None) != (args.request_set is None):
        raise OlmesError("--output and --request-set go together")
    task = get_task(args.task)
    instances = task_instances(task, args.limit, args.source)
    if args.output is not None:
        rows = requests_of(task, args.request_set, instances, args.source, args.pmi_everywhere, args.variant)
        write_records(rows, args.output)
        counts = f"{len(rows)} requests for {len(instances)} instances"
        print(f"{args.task} {args.request_set}: {counts} -> {args.output}", file=sys.stderr)
    if args.instances is not None:
        write_records(instance_rows(task, instances), args.instances)
        print(f"{args.task}: {len(instances)} instances -> {args.instances}", file=sys.stderr)
    return 0


def _run_generative(args: argparse.Namespace) -> int:
    """A generative task's generation request file (one row per instance: prompt, gold answers, the
    bits-per-byte request), made from AI2's documents by :mod:`olmes.requests.generative`."""
    from olmes.requests.generative import generation_requests

    refused = [
        (args.request_set is not None, "--request-set"),
        (args.instances is not None, "--instances"),
        (args.variant != STANDARD_VARIANT, "--variant"),
        (args.pmi_everywhere, "--pmi-everywhere"),
        (args.source != "bundle", "--source hf"),
    ]
    for given, option in refused:
        if given:
            raise OlmesError(
                f"{option} is for the ten multiple-choice tasks; {args.task} is a generative task: "
                f"olmes requests {args.task} --output FILE [--limit N]"
            )
    if args.output is None:
        raise OlmesError(f"olmes requests {args.task} needs --output (the generation request file)")
    rows = generation_requests(args.task, args.limit)
    write_records(rows, args.output)  # read back with GENERATION_REQUESTS_FORMAT
    print(f"{args.task}: {len(rows)} generation requests -> {args.output}", file=sys.stderr)
    return 0
