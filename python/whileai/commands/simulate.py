"""``whileai simulate``: run the engine from the command line and write rows to JSONL."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from whileai.errors import SpecError


def register(sub: Any) -> None:
    """Add ``simulate`` to the CLI."""
    p = sub.add_parser("simulate", help="simulate situations for an agent and write rows")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--spec", help="spec folder (spec.json [+ rubric.md]) or JSON file")
    source.add_argument("--tools", help="JSON file with the tools (OpenAI function shape)")
    p.add_argument("--system-prompt", help="text file with the system prompt (with --tools)")
    p.add_argument("--agent", default="seeded",
                   help="'seeded' (offline seeded agent, the default) or a model spec "
                        "such as openai:gpt-4.1-mini")
    p.add_argument("--simulator", default=None,
                   help="writer model spec; default: the template writer (offline)")
    p.add_argument("--mode", choices=("explore", "sft", "rl", "adaptive"), default="explore")
    p.add_argument("--budget", type=int, default=1000, help="row cap (default 1000)")
    p.add_argument("--repeats", type=int, default=None, help="rollouts per ask (k)")
    p.add_argument("--fault-rate", type=float, default=None, help="0 turns faults off")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--concurrency", type=int, default=None)
    p.add_argument("--output", required=True, help="JSONL file the rows are appended to")
    p.set_defaults(func=run_simulate)


def _read_json(path: str, what: str) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise SpecError(f"{what} file {path!r} does not exist") from exc
    except json.JSONDecodeError as exc:
        raise SpecError(f"{path}:{exc.lineno}: {what} is not valid JSON ({exc.msg})") from exc


def run_simulate(args: argparse.Namespace) -> int:
    """Run ``simulate`` with the parsed arguments and print a one-line summary."""
    import whileai.simulations as zps

    knobs: dict[str, Any] = {"mode": args.mode, "budget": args.budget, "output": args.output,
                             "advanced": {"seed": args.seed}}
    if args.spec:
        knobs["spec"] = args.spec
        tools = None
    else:
        tools = _read_json(args.tools, "tools")
        if isinstance(tools, dict) and "tools" in tools:
            tools = tools["tools"]
        knobs["tools"] = tools
        if args.system_prompt:
            try:
                knobs["system_prompt"] = Path(args.system_prompt).read_text(encoding="utf-8")
            except FileNotFoundError as exc:
                raise SpecError(f"system prompt file {args.system_prompt!r} does not exist") \
                    from exc
    knobs["simulator"] = args.simulator if args.simulator else False
    if args.repeats is not None:
        knobs["repeats"] = args.repeats
    if args.fault_rate is not None:
        knobs["fault_rate"] = args.fault_rate
    if args.concurrency is not None:
        knobs["advanced"]["concurrency"] = args.concurrency
    if args.agent == "seeded":
        spec_tools = tools
        if args.spec:
            from whileai.simulations.spec import load_spec

            spec_tools = load_spec(args.spec).get("tools")
        agent: Any = zps.seeded_agent(spec_tools, seed=args.seed)
    else:
        agent = args.agent
    data = zps.simulate(agent, **knobs)
    print(f"{data!r}\nwrote {len(data)} rows to {args.output}")
    if data.search.get("agent_errors"):
        print(f"agent errors: {data.search['agent_errors']} "
              f"(first: {data.search.get('first_agent_error')})")
    return 0 if len(data) else 1
