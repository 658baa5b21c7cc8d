"""The ``dfil`` command line: the only module that parses arguments and touches paths.

Each subcommand is a thin call into the library; Snakemake rules call these.
"""

from __future__ import annotations

import argparse
import sys

from dfil import __version__

COMMANDS: dict[str, tuple[str, callable, callable]] = {}


def command(name: str, help: str):
    """Register ``fn(args)`` as subcommand ``name``; the decorated ``configure(parser)``
    adds its arguments."""

    def register(configure):
        def wrap(run):
            COMMANDS[name] = (help, configure, run)
            return run

        return wrap

    return register


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dfil", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"dfil {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (help_text, configure, run) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        configure(p)
        p.set_defaults(run=run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except (ValueError, OSError) as err:
        print(f"dfil {args.command}: error: {err}", file=sys.stderr)
        return 2
