"""``whileai export``: rows to training, preference, environment or Hugging Face files."""

from __future__ import annotations

import argparse
import json
from typing import Any


def register(sub: Any) -> None:
    """Add the export subcommand to the CLI."""
    exp = sub.add_parser("export", help="rows to SFT/DPO files, an RL environment or an HF folder")
    exp.add_argument("rows", help="rows (.jsonl): rollouts, or preference pairs with --kind pairs")
    exp.add_argument("--output", required=True,
                     help="the file (.jsonl) or folder (environment, hf) to write")
    exp.add_argument("--kind", choices=("training", "preference", "pairs", "environment", "hf"),
                     default="training",
                     help="training (SFT rows, default); preference (pairs built from graded "
                          "rows); pairs (the file already holds pairs); environment; hf")
    exp.add_argument("--format", choices=("openai", "trl"), default="openai",
                     help="wire shape for training/preference (openai)")
    exp.add_argument("--mask", choices=("all", "final"), default="all",
                     help="train every agent turn (all) or only the last (final)")
    exp.add_argument("--unroll", action="store_true", help="one sample per agent turn")
    exp.add_argument("--max-tool-output-chars", type=int, default=None,
                     help="cap each tool message, with a truncation marker")
    exp.add_argument("--system-prompt", default=None, help="system message to open every chat")
    exp.add_argument("--tools", default=None, help="a JSON file with the tool schemas")
    exp.add_argument("--holdout", type=float, default=0.2, help="environment holdout (0.2)")
    exp.add_argument("--reward", default=None, help="environment reward as module:attr")
    exp.add_argument("--split", default="train", help="hf split name (train)")
    exp.add_argument("--json", action="store_true", help="print the report as JSON")
    exp.set_defaults(func=run_export)


def run_export(args: argparse.Namespace) -> int:
    """Export the rows file as asked; print the report; exit 0."""
    import whileai.simulations as zps
    from whileai.simulations.select.pairs import build_preference_pairs

    tools = None
    if args.tools:
        with open(args.tools, encoding="utf-8") as handle:
            tools = json.load(handle)
    report: dict[str, Any]
    if args.kind == "training":
        report = zps.export_dataset(
            args.rows, args.output, format=args.format, mask_mode=args.mask, unroll=args.unroll,
            max_tool_output_chars=args.max_tool_output_chars, system_prompt=args.system_prompt,
            tools=tools)
        text = zps.format_export_report(report)
    elif args.kind in ("preference", "pairs"):
        pairs = zps.load_rows(args.rows) if args.kind == "pairs" \
            else build_preference_pairs(zps.load_rows(args.rows))[0]
        report = zps.export_preference(pairs, args.output, format=args.format,
                                       system_prompt=args.system_prompt, tools=tools)
        text = zps.format_preference_report(report)
    elif args.kind == "environment":
        report = zps.export_environment(zps.load_rows(args.rows), args.output, tools=tools,
                                        system_prompt=args.system_prompt, holdout=args.holdout,
                                        reward=args.reward)
        text = zps.format_environment_report(report)
    else:
        report = zps.to_hf_folder(args.rows, args.output, split=args.split)
        text = zps.format_hf_report(report)
    print(json.dumps(report, indent=2, default=str) if args.json else text)
    return 0
