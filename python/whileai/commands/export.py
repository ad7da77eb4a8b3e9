"""``whileai export``: rows to training, preference, environment or Hugging Face files."""

from __future__ import annotations

import argparse
import json
import warnings
from typing import Any

from whileai.commands.manners import add_quiet, load_checked_rows, read_json_file
from whileai.rows.duplicates import drop_duplicates, duplicate_message

EXAMPLE = """examples:
  whileai export rows.graded.jsonl -o sft.jsonl
  whileai export rows.graded.jsonl --kind preference --format trl -o dpo.jsonl
  whileai export rows.graded.jsonl --kind hf --split train -o my_dataset/

Duplicate rollouts (the same seed, scenario_id and rollout_index twice) are exported once and
the number dropped is printed."""


def register(sub: Any) -> None:
    """Add the export subcommand to the CLI."""
    exp = sub.add_parser("export", help="rows to SFT/DPO files, an RL environment or an HF folder",
                         epilog=EXAMPLE)
    exp.add_argument("rows", help="rows (.jsonl): rollouts, or preference pairs with --kind pairs")
    exp.add_argument("-o", "--output", required=True,
                     help="the file (.jsonl) or folder (environment, hf) to write")
    exp.add_argument("--kind", choices=("training", "preference", "pairs", "environment", "hf"),
                     default="training",
                     help="training (SFT rows); preference (pairs built from graded rows, within "
                          "a task); pairs (the file already holds pairs); environment; hf")
    exp.add_argument("--format", choices=("openai", "trl"), default="openai",
                     help="wire shape for training/preference")
    exp.add_argument("--mask", choices=("all", "final"), default="all",
                     help="train every agent turn (all) or only the last (final)")
    exp.add_argument("--unroll", action="store_true", help="one sample per agent turn")
    exp.add_argument("--max-tool-output-chars", type=int, default=None,
                     help="cap each tool message, with a truncation marker")
    exp.add_argument("--system-prompt", default=None, help="system message to open every chat")
    exp.add_argument("--tools", default=None, help="a JSON file with the tool schemas")
    exp.add_argument("--holdout", type=float, default=0.2, help="environment holdout share")
    exp.add_argument("--reward", default=None, help="environment reward as module:attr")
    exp.add_argument("--split", default="train",
                     help="hf split name (letters, digits, '_', '-', '.'; no path separators)")
    exp.add_argument("--json", action="store_true", help="print the report as JSON")
    add_quiet(exp)
    exp.set_defaults(func=run_export)


def run_export(args: argparse.Namespace) -> int:
    """Export the rows file as asked; print the report; exit 0."""
    # imported when the command runs: `whileai --help` loads no area
    import whileai.simulations as zps
    from whileai.simulations.selection.pairs import build_preference_pairs
    tools = None
    if args.tools:
        tools = read_json_file(args.tools, "tools")
        if isinstance(tools, dict) and "tools" in tools:
            tools = tools["tools"]
    rows, dropped = drop_duplicates(load_checked_rows(args.rows))
    if dropped:
        warnings.warn(duplicate_message(dropped, args.rows), stacklevel=1)
    report: dict[str, Any]
    if args.kind == "training":
        report = zps.export_dataset(
            rows, args.output, format=args.format, mask_mode=args.mask, unroll=args.unroll,
            max_tool_output_chars=args.max_tool_output_chars, system_prompt=args.system_prompt,
            tools=tools, progress=not args.quiet)
        text = zps.format_export_report(report)
    elif args.kind in ("preference", "pairs"):
        pairs = rows if args.kind == "pairs" else build_preference_pairs(rows)[0]
        report = zps.export_preference(pairs, args.output, format=args.format,
                                       system_prompt=args.system_prompt, tools=tools)
        text = zps.format_preference_report(report)
    elif args.kind == "environment":
        report = zps.export_environment(rows, args.output, tools=tools,
                                        system_prompt=args.system_prompt, holdout=args.holdout,
                                        reward=args.reward)
        text = zps.format_environment_report(report)
    else:
        report = zps.to_hf_folder(rows, args.output, split=args.split, progress=not args.quiet)
        text = zps.format_hf_report(report)
    if dropped:
        report["duplicates_dropped"] = dropped
        text += f"\nduplicate rows dropped: {dropped}"
    print(json.dumps(report, indent=2, default=str) if args.json else text)
    return 0
