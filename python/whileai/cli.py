"""The ``whileai`` command line (also ``python -m whileai``); argparse only, no extra deps.

Each area of the package registers its own subcommands from a module in ``whileai/commands/``
(a ``register(subparsers)`` function that sets ``func`` on each parser), so this file stays a
dispatcher.

>>> main(["--version"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from whileai._version import __version__
from whileai.errors import WhileaiError

__all__ = ["build_parser", "main"]

# Modules under whileai.commands, in the order their commands appear in --help.
COMMAND_MODULES = ("core", "simulate", "grading", "clean", "export", "traces", "models", "rows")


def build_parser() -> argparse.ArgumentParser:
    """Return the full argument parser with every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog="whileai",
        description="Turn an agent's tools and system prompt into post-training data.",
    )
    parser.add_argument("--version", action="version", version=f"whileai {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"whileai.commands.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (2 for bad usage or a whileai error)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 2
    try:
        code: int = args.func(args)
    except WhileaiError as exc:
        print(f"whileai {args.command}: {exc}", file=sys.stderr)
        return 2
    return code
