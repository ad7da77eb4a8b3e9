"""The ``whileai`` command line (also ``python -m whileai``); argparse only, no extra deps.

Each area of the package registers its own subcommands from a module in ``whileai/commands/``
(a ``register(subparsers)`` function that sets ``func`` on each parser), so this file stays a
dispatcher. The manners every command shares live in ``whileai/commands/manners.py``: one
error line and exit 2 for a user error, exit 130 on Ctrl-C, warnings printed once, help with
defaults and an example.

>>> main(["--version"])  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from whileai._version import __version__
from whileai.commands.manners import Parser, run_command

__all__ = ["build_parser", "main"]

# Modules under whileai.commands, in the order their commands appear in --help.
COMMAND_MODULES = (
    "core", "simulate", "grading", "clean", "export", "traces", "models", "runs", "rows", "serve",
    "view",
    "platform",
)


def build_parser() -> Parser:
    """Return the full argument parser with every registered subcommand."""
    parser = Parser(
        prog="whileai",
        description="Turn an agent's tools and system prompt into post-training data.",
        epilog="example:\n  whileai simulate --tools examples/tools.json --output rows.jsonl",
    )
    parser.add_argument("-V", "--version", action="version", version=f"whileai {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name in COMMAND_MODULES:
        importlib.import_module(f"whileai.commands.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (2 for bad usage or a user error)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return 2
    return run_command(args)
