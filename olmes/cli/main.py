"""The ``olmes`` command line: one subcommand per pipeline stage, each a module in ``olmes.cli.commands``.

A command module defines ``NAME`` (its module name, with ``-`` for ``_``), ``HELP``, ``add_arguments(parser)``
and ``run(args) -> int``; one that writes files also defines ``files(args)``: what it reads and writes
(:class:`olmes.core.outputs.CommandFiles`), checked before ``run`` (no output may destroy an input).
Only the module of the command being run is imported, so that ``olmes requests`` does not pay for
importing torch; a module imports the packages of an extra (``olmes[models]``: torch, transformers,
...) inside ``run``, so that the light install shows every command's help, and a command run without
its extra says in one line what to install (exit status 2).
Errors meant for users are :class:`olmes.core.errors.OlmesError`: printed on one line, exit status 2; so are
a full disk, a read-only file system and a denied permission (:func:`olmes.core.outputs.os_error_line`).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

import olmes.cli.commands
from olmes import __version__
from olmes.cli.extras import install_hint
from olmes.core.errors import OlmesError
from olmes.core.outputs import CommandFiles, os_error_line


def _command_names() -> list[str]:
    return sorted(info.name for info in pkgutil.iter_modules(olmes.cli.commands.__path__))


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of one command when it is known, else of all (for help and error messages)."""
    names = _command_names()
    module_name = command.replace("-", "_") if command else None
    if module_name in names:
        names = [module_name]
    parser = argparse.ArgumentParser(prog="olmes", description="OLMES evaluation pipeline")
    parser.add_argument("--version", action="version", version=f"olmes {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in names:
        module = importlib.import_module(f"olmes.cli.commands.{name}")
        sub = subparsers.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.add_arguments(sub)
        sub.set_defaults(handler=module.run, files=getattr(module, "files", None))
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command = next((arg for arg in argv if not arg.startswith("-")), None)
    args = build_parser(command).parse_args(argv)
    files = CommandFiles()
    try:
        if args.files is not None:
            files = args.files(args)
            files.check()
        return args.handler(args)
    except ModuleNotFoundError as error:
        hint = install_hint(args.command, error)
        if hint is None:
            raise
        print(f"olmes: error: {hint}", file=sys.stderr)
        return 2
    except OlmesError as error:
        print(f"olmes: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # a full disk, a read-only or forbidden folder: one line; a bug: the traceback
        line = os_error_line(error, files.output_paths())
        if line is None:
            raise
        print(f"olmes: error: {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("olmes: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
