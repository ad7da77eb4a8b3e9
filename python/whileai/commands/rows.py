"""``whileai rows check`` and ``whileai rows export``: the row contract on files."""

from __future__ import annotations

import argparse
from typing import Any

from whileai.simulations.io import read_jsonl, write_jsonl
from whileai.simulations.rows import check_rows, export_row, format_row_check


def register(sub: Any) -> None:
    """Add the ``rows`` subcommands to the CLI."""
    rows = sub.add_parser("rows", help="check rows against schema v1, or export them scrubbed")
    actions = rows.add_subparsers(dest="rows_command", metavar="ACTION", required=True)
    check = actions.add_parser("check", help="check a JSONL file against row schema v1")
    check.add_argument("path", help="a .jsonl (or .jsonl.gz) file of rows")
    check.add_argument("--examples", type=int, default=5, help="invalid rows to show (5)")
    check.set_defaults(func=run_check)
    export = actions.add_parser(
        "export", help="write rows without privileged data or vectors, stamped schema v1"
    )
    export.add_argument("source", help="the JSONL file to read")
    export.add_argument("target", help="the JSONL file to write (replaced atomically)")
    export.set_defaults(func=run_export)


def run_check(args: argparse.Namespace) -> int:
    """Print the check report; exit 1 when any line or row is bad."""
    reader = read_jsonl(args.path, strict=False)
    report = check_rows(reader, examples=args.examples)
    print(format_row_check(report))
    if reader.skipped:
        print(f"lines that are not a JSON object: {reader.skipped}")
        for problem in reader.problems[: args.examples]:
            print(f"  {problem}")
    return 1 if report["invalid"] or reader.skipped else 0


def run_export(args: argparse.Namespace) -> int:
    """Scrub and stamp every row of ``source`` into ``target``."""
    count = write_jsonl(args.target, (export_row(row) for row in read_jsonl(args.source)))
    print(f"exported {count} rows to {args.target}")
    return 0
