"""``whileai traces report FILE``, ``traces from-otel FILE``, and ``traces list`` / ``cuts`` on the
platform.

>>> import argparse
>>> sub = argparse.ArgumentParser().add_subparsers()
>>> register(sub)
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from whileai.commands.manners import read_text_file
from whileai.rows.jsonl_write import write_jsonl
from whileai.simulations.agent.spec import load_spec
from whileai.simulations.ingest.otel import REWARD_KEYS, read_otel
from whileai.simulations.ingest.report import format_trace_report, trace_report


def register(sub: Any) -> None:
    """Add ``traces report`` and ``traces from-otel`` to the CLI."""
    traces = sub.add_parser("traces", help="production traces: what they hold, OTel to rows",
                            epilog="examples:\n  whileai traces report traces.jsonl --tools "
                                   "examples/spec\n  whileai traces from-otel spans.json -o "
                                   "rows.jsonl")
    verbs = traces.add_subparsers(dest="traces_command", metavar="VERB")
    traces.set_defaults(func=lambda args: _usage(traces))

    report = verbs.add_parser(
        "report", help="what the traces contain and which grid values they move forward",
        epilog="example:\n  whileai traces report traces.jsonl --tools examples/spec --json",
    )
    report.add_argument("file", help="traces: a JSONL file of row dicts")
    report.add_argument("--tools", help="the agent's tools: a JSON list, spec.json or spec folder")
    report.add_argument("--policy", help="the system prompt: a text file (overrides the spec's)")
    report.add_argument("--json", action="store_true", help="print the report as JSON")
    report.set_defaults(func=run_report)

    otel = verbs.add_parser("from-otel", help="OpenTelemetry GenAI spans (OTLP/JSON) to rows",
                            epilog="example:\n  whileai traces from-otel spans.json -o rows.jsonl"
                                   " --reward-key app.reward")
    otel.add_argument("file", help="an OTLP/JSON export (one document, or one per line)")
    otel.add_argument("-o", "--output", required=True, help="where to write the rows (JSONL)")
    otel.add_argument(
        "--reward-key", action="append", dest="reward_keys", metavar="ATTR",
        help=f"span attribute holding a 0..1 reward (repeatable; default {REWARD_KEYS[0]})",
    )
    otel.set_defaults(func=run_from_otel)

    listing = verbs.add_parser("list", help="traces on the platform, newest first",
                               epilog="example: whileai traces list --agent support-bot")
    listing.add_argument("--agent", default=None, help="only this agent's traces")
    listing.add_argument("--limit", type=int, default=20, help="how many (default: 20)")
    listing.add_argument("--json", action="store_true", help="print the page as JSON")
    listing.set_defaults(func=run_list)

    cuts = verbs.add_parser("cuts", help="what a cut of the platform's traces would hold",
                            epilog="example: whileai traces cuts --agent support-bot --since 7d")
    cuts.add_argument("--agent", default=None, help="only this agent's traces")
    cuts.add_argument("--since", default="all", help="'all' (default), or like 24h, 7d")
    cuts.add_argument("--json", action="store_true", help="print the report as JSON")
    cuts.set_defaults(func=run_cuts)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def run_report(args: argparse.Namespace) -> int:
    """Print the trace report (text, or JSON with ``--json``)."""
    tools: list[Any] | None = None
    policy = ""
    if args.tools:
        spec = load_spec(args.tools)
        tools = list(spec.get("tools") or [])
        policy = str(spec.get("policy") or spec.get("system_prompt") or "")
    if args.policy:
        policy = read_text_file(args.policy, "policy")
    report = trace_report(args.file, tools=tools, policy=policy)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(format_trace_report(report))
    return 0


def run_from_otel(args: argparse.Namespace) -> int:
    """Convert spans to rows, write them, and say what was counted on the way."""
    load = read_otel(args.file, tuple(args.reward_keys or REWARD_KEYS))
    written = write_jsonl(args.output, list(load.rows))
    odd = {k: v for k, v in load.counts.items() if v and k not in {"spans_in", "conversations",
                                                                     "rows"}}
    print(
        f"{written} row(s) from {load.counts['conversations']} conversation(s), "
        f"{load.counts['spans_in']} span(s) -> {args.output}"
    )
    if odd:
        print("counted: " + ", ".join(f"{k}={v}" for k, v in odd.items()), file=sys.stderr)
    return 0 if written else 1


def run_list(args: argparse.Namespace) -> int:
    """Print a page of the platform's traces."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.platform.traces import list_traces

    page = list_traces(args.agent, limit=args.limit)
    if args.json:
        print(json.dumps(page, indent=1))
        return 0
    reasons = ", ".join(f"{k} x{v}" for k, v in (page.get("raw_reasons") or {}).items())
    print(f"{page['total']} traces ({page['genai']} GenAI, {page['raw']} raw"
          + (f": {reasons}" if reasons else "") + ")")
    for reason, advice in (page.get("raw_advice") or {}).items():
        print(f"  {reason}: {advice}")
    for item in page["traces"]:
        scores = ", ".join(f"{k}={v:g}" for k, v in sorted(item["scores"].items())) or "unscored"
        print(f"{item['traceId']}  {item['agent'] or '-':16}  {scores:16}  "
              f"{(item['prompt'] or '')[:60]}")
    return 0


def run_cuts(args: argparse.Namespace) -> int:
    """Print the cuts sentence (or the report as JSON)."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.platform.traces import cuts, format_cuts

    report = cuts(args.agent, args.since)
    print(json.dumps(report, indent=1) if args.json else format_cuts(report, args.agent))
    return 0
