"""``whileai rows check`` and ``whileai rows export``: the row contract on files."""

from __future__ import annotations

import argparse
from typing import Any

from whileai.commands.manners import add_quiet
from whileai.errors import ConfigError
from whileai.rows.check import check_rows, format_row_check
from whileai.rows.duplicates import drop_duplicates
from whileai.rows.jsonl import read_jsonl
from whileai.rows.jsonl_write import write_jsonl
from whileai.rows.outbound import export_row
from whileai.rows.progress import track


def register(sub: Any) -> None:
    """Add the ``rows`` subcommands to the CLI."""
    rows = sub.add_parser("rows", help="check rows against schema v1, or export them scrubbed",
                          epilog="examples:\n  whileai rows check rows.jsonl\n"
                                 "  whileai rows export rows.jsonl -o public.jsonl")
    actions = rows.add_subparsers(dest="rows_command", metavar="ACTION", required=True)
    check = actions.add_parser("check", help="check a JSONL file against row schema v1",
                               epilog="example:\n  whileai rows check rows.jsonl\n\nExit 1 "
                                      "when a line is not a row, a row breaks the schema, or a "
                                      "rollout appears twice.")
    check.add_argument("path", help="a .jsonl (or .jsonl.gz) file of rows")
    check.add_argument("--examples", type=int, default=5, help="invalid rows to show")
    add_quiet(check)
    check.set_defaults(func=run_check)
    export = actions.add_parser(
        "export", help="write rows without privileged data or vectors, stamped schema v1",
        epilog="example:\n  whileai rows export rows.jsonl -o public.jsonl",
    )
    export.add_argument("source", help="the JSONL file to read")
    export.add_argument("target", nargs="?", default=None,
                        help="the JSONL file to write (replaced atomically); or use -o")
    export.add_argument("-o", "--output", default=None, help="the JSONL file to write")
    add_quiet(export)
    export.set_defaults(func=run_export)


def run_check(args: argparse.Namespace) -> int:
    """Print the check report; exit 1 when any line or row is bad."""
    reader = read_jsonl(args.path, strict=False)
    lines = track(reader, "rows check", enabled=not args.quiet)
    report = check_rows(lines, examples=args.examples)
    print(format_row_check(report))
    if reader.skipped:
        print(f"lines that are not a JSON object: {reader.skipped}")
        for problem in reader.problems[: args.examples]:
            print(f"  {problem}")
    return 1 if report["invalid"] or reader.skipped or report["duplicates"] else 0


def run_export(args: argparse.Namespace) -> int:
    """Scrub and stamp every row of ``source`` into ``target`` (each rollout once)."""
    if (args.target is None) == (args.output is None):
        raise ConfigError("rows export: name the file to write once, as TARGET or -o/--output")
    target = args.target or args.output
    rows, dropped = drop_duplicates(track(read_jsonl(args.source), "rows export",
                                          enabled=not args.quiet))
    count = write_jsonl(target, (export_row(row) for row in rows))
    print(f"exported {count} rows to {target}"
          + (f" ({dropped} duplicate rows dropped)" if dropped else ""))
    return 0
