"""The ``olmes`` command line: one subcommand per pipeline stage, each a module in ``olmes.commands``.

A command module defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``.
Errors meant for users are :class:`olmes.errors.OlmesError`: printed on one line, exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

import olmes.commands
from olmes import __version__
from olmes.errors import OlmesError


def _command_modules() -> list:
    names = sorted(info.name for info in pkgutil.iter_modules(olmes.commands.__path__))
    return [importlib.import_module(f"olmes.commands.{name}") for name in names]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="olmes", description="OLMES evaluation pipeline")
    parser.add_argument("--version", action="version", version=f"olmes {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in _command_modules():
        sub = subparsers.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.add_arguments(sub)
        sub.set_defaults(handler=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except OlmesError as error:
        print(f"olmes: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("olmes: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
