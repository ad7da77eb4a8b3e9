"""``whileai decontaminate``, ``whileai scan`` and ``whileai optimize``: clean and select rows."""

from __future__ import annotations

import argparse
import json
import warnings
from collections.abc import Mapping
from typing import Any

from whileai.commands.manners import add_quiet


def register(sub: Any) -> None:
    """Add the clean/select subcommands to the CLI."""
    dec = sub.add_parser("decontaminate", help="drop train rows that copy an eval set (8-grams)",
                         epilog="example:\n  whileai decontaminate train.jsonl --against "
                                "eval.jsonl more_eval.jsonl -o clean.jsonl")
    dec.add_argument("train", help="train rows (.jsonl), streamed")
    dec.add_argument("--against", action="extend", nargs="+", required=True,
                     metavar="EVAL.jsonl", help="one or more eval sets (JSONL files)")
    dec.add_argument("-o", "--output", help="write the clean rows here (.jsonl)")
    dec.add_argument("--n", type=int, default=8, help="n-gram length in words")
    dec.add_argument("--overlap", type=float, default=0.8,
                     help="share of a row's words one eval text must cover (0 = any)")
    dec.add_argument("--fields", default="prompt",
                     help="comma-separated row keys to check")
    dec.add_argument("--json", action="store_true", help="print the report as JSON")
    add_quiet(dec)
    dec.set_defaults(func=run_decontaminate)

    scan = sub.add_parser("scan", help="what would a grouped update learn? (hack_scan)",
                          epilog="example:\n  whileai scan rows.graded.jsonl --endorsed "
                                 "tool:lookup_order\n\nExit 1 when the scan says reward_hack.")
    scan.add_argument("rows", help="graded rows (.jsonl)")
    scan.add_argument("--endorsed", action="append", default=None, metavar="FEATURE",
                      help="what the reward should track, e.g. tool:lookup_order; repeatable")
    scan.add_argument("--n-perm", type=int, default=100, help="permutations for the floor")
    scan.add_argument("--seed", type=int, default=0, help="permutation seed")
    scan.add_argument("--json", action="store_true", help="print the report as JSON")
    add_quiet(scan)
    scan.set_defaults(func=run_scan)

    opt = sub.add_parser("optimize", help="prune graded rows for RL (groups) or SFT",
                         epilog="examples:\n  whileai optimize rows.graded.jsonl --mode rl "
                                "-o rl.jsonl\n  whileai optimize rows.graded.jsonl --mode sft "
                                "--min-reward 1 -o sft.jsonl")
    opt.add_argument("rows", help="graded rows (.jsonl)")
    opt.add_argument("--mode", choices=("rl", "sft"), default="rl",
                     help="rl keeps whole groups in a pass-rate band; sft keeps the best rows")
    opt.add_argument("-o", "--output", help="write the selected rows here (.jsonl)")
    opt.add_argument("--band", type=float, nargs=2, metavar=("LOW", "HIGH"),
                     help="pass-rate band for rl (default: 0.2 0.8)")
    opt.add_argument("--keep-out-of-band", action="store_true", help="rank, do not drop (rl)")
    opt.add_argument("--endorsed", action="append", default=None, metavar="FEATURE",
                     help="what the reward should track (rl), e.g. tool:lookup_order; repeatable")
    opt.add_argument("--select", default="top_per_prompt", help="sft rule")
    opt.add_argument("--min-reward", type=float, default=1.0, help="sft threshold")
    opt.add_argument("--json", action="store_true", help="print the report as JSON")
    opt.set_defaults(func=run_optimize)


def _unique_rows(path: str) -> list[dict[str, Any]]:
    """The file's rows with each rollout once; a warning says how many copies were dropped."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.commands.manners import load_checked_rows
    from whileai.rows.duplicates import drop_duplicates, duplicate_message

    rows, dropped = drop_duplicates(load_checked_rows(path))
    if dropped:
        warnings.warn(duplicate_message(dropped, path), stacklevel=2)
    return rows


def _dump(report: Mapping[str, Any]) -> None:
    print(json.dumps(report, indent=2, default=str, ensure_ascii=False))


def run_decontaminate(args: argparse.Namespace) -> int:
    """Decontaminate a train file against one or more eval files; exit 0."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.simulations.clean.decontam import decontaminate, format_decontamination

    fields = tuple(f.strip() for f in args.fields.split(",") if f.strip())
    _clean, report = decontaminate(
        args.train, against=list(args.against), n=args.n, overlap=args.overlap, fields=fields,
        output=args.output, progress=not args.quiet,
    )
    if args.json:
        _dump(report)
    else:
        print(format_decontamination(report))
        if args.output is None:
            print("  (no --output: clean rows were counted, not written)")
    return 0


def run_scan(args: argparse.Namespace) -> int:
    """Print the hack scan; exit 1 when it says reward_hack."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.simulations.clean.hack_report import format_hack_scan
    from whileai.simulations.clean.hack_scan import hack_scan

    rows = _unique_rows(args.rows)
    scan = hack_scan(rows, endorsed=args.endorsed, n_perm=args.n_perm, seed=args.seed,
                     progress=not args.quiet)
    if args.json:
        _dump(scan)
    else:
        print(format_hack_scan(scan))
    return 1 if scan["regime"] == "reward_hack" else 0


def run_optimize(args: argparse.Namespace) -> int:
    """Prune rows and print the report; write them with --output."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.rows.jsonl_write import write_jsonl
    from whileai.simulations.selection.optimize import optimize
    kwargs: dict[str, Any]
    if args.mode == "rl":
        kwargs = {"enforce_band": not args.keep_out_of_band, "endorsed": args.endorsed}
        if args.band:
            kwargs["band"] = tuple(args.band)
    else:
        kwargs = {"select": args.select, "min_reward": args.min_reward}
    rows, report = optimize(_unique_rows(args.rows), mode=args.mode, **kwargs)
    if args.output:
        write_jsonl(args.output, rows)
    if args.json:
        _dump(report)
        return 0
    print(f"optimize ({args.mode}): {report['rows_in']} rows in, {report['rows_out']} out"
          + (f" -> {args.output}" if args.output else ""))
    if "band_dropped" in report:
        print(f"  asks: {report['asks_in']} in, {report['asks_out']} out; band dropped "
              f"{report['band_dropped']}")
    print(f"  dropped: {json.dumps(report['dropped'])}")
    for warning in report["hygiene_warnings"]:
        print(f"  warning: {warning}")
    return 0
