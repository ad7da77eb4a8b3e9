"""``whileai simulate``: run the engine from the command line and write rows to JSONL."""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any

from whileai.commands.manners import add_quiet, note, read_json_file, read_text_file
from whileai.errors import AgentFailedWarning

EXAMPLE = """examples:
  whileai simulate --tools examples/tools.json --system-prompt examples/policy.txt -o rows.jsonl
  whileai simulate --spec examples/spec --mode rl --repeats 4 --budget 200 -o rl.jsonl
  whileai simulate --spec examples/spec --agent openai:gpt-4.1-mini --budget 50 -o rows.jsonl

Re-running the same run with the same --output resumes: rows already in the file are not
played again. A file written by another run (other tools, system prompt, mode, seed, knobs) is
refused with what differs; --overwrite starts the file anew."""

DEFAULT_BUDGET = 1000


def register(sub: Any) -> None:
    """Add ``simulate`` to the CLI."""
    p = sub.add_parser("simulate", help="simulate situations for an agent and write rows",
                       epilog=EXAMPLE)
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--spec", help="spec folder (spec.json [+ rubric.md]) or JSON file")
    source.add_argument("--tools", help="JSON file with the tools (OpenAI function shape)")
    p.add_argument("--system-prompt", help="text file with the system prompt (with --tools)")
    p.add_argument("--agent", default=None,
                   help="a model spec such as openai:gpt-4.1-mini, or 'seeded' (default: the "
                        "offline seeded agent, which plants mistakes on purpose)")
    p.add_argument("--simulator", default=None,
                   help="writer model spec (default: the offline template writer)")
    p.add_argument("--mode", choices=("explore", "sft", "rl", "adaptive"), default="explore",
                   help="what the rows are for: explore the grid, SFT data, RL groups, or "
                        "adaptive repeats")
    p.add_argument("--budget", type=int, default=None,
                   help=f"row cap (default: {DEFAULT_BUDGET})")
    p.add_argument("--repeats", type=int, default=None,
                   help="rollouts per ask, k (default: the mode's)")
    p.add_argument("--fault-rate", type=float, default=None,
                   help="share of tool calls that fail; 0 turns faults off (default: the mode's)")
    p.add_argument("--seed", type=int, default=0,
                   help="run seed: situations, faults and the seeded agent follow it")
    p.add_argument("--concurrency", type=int, default=None,
                   help="rollouts at once (default: 1 for in-process agents, else 32)")
    p.add_argument("-o", "--output", required=True,
                   help="JSONL file the rows are appended to (resumed when re-run)")
    p.add_argument("--overwrite", action="store_true",
                   help="start --output anew (its old rows are deleted) instead of resuming it "
                        "or refusing a file of another run")
    add_quiet(p)
    p.set_defaults(func=run_simulate)


def run_simulate(args: argparse.Namespace) -> int:
    """Run ``simulate`` with the parsed arguments and print a one-line summary."""
    # imported when the command runs: `whileai --help` loads no area
    import whileai.simulations as zps

    budget = DEFAULT_BUDGET if args.budget is None else args.budget
    knobs: dict[str, Any] = {"mode": args.mode, "budget": budget, "output": args.output,
                             "overwrite": args.overwrite,
                             "advanced": {"seed": args.seed}, "progress": not args.quiet}
    if args.spec:
        knobs["spec"] = args.spec
        tools = None
    else:
        tools = read_json_file(args.tools, "tools")
        if isinstance(tools, dict) and "tools" in tools:
            tools = tools["tools"]
        knobs["tools"] = tools
        if args.system_prompt:
            knobs["system_prompt"] = read_text_file(args.system_prompt, "system prompt")
    knobs["simulator"] = args.simulator if args.simulator else False
    if args.repeats is not None:
        knobs["repeats"] = args.repeats
    if args.fault_rate is not None:
        knobs["fault_rate"] = args.fault_rate
    if args.concurrency is not None:
        knobs["advanced"]["concurrency"] = args.concurrency
    if args.budget is None:  # said once the inputs were read, so a bad file is the only line
        note(f"budget {DEFAULT_BUDGET} rows (the default; --budget to change)")
    if args.agent is None:
        note("agent: the offline seeded agent, which plants mistakes on purpose (--agent "
             "MODEL for a real one)")
    if args.agent in (None, "seeded"):
        spec_tools = tools
        if args.spec:
            # imported when the command runs: `whileai --help` loads no area
            from whileai.simulations.agent.spec import load_spec
            spec_tools = load_spec(args.spec).get("tools")
        agent: Any = zps.seeded_agent(spec_tools, seed=args.seed)
    else:
        agent = args.agent
    with warnings.catch_warnings():  # the CLI says it below, once
        warnings.simplefilter("ignore", AgentFailedWarning)
        data = zps.simulate(agent, **knobs)
    resumed = int(data.search.get("resumed_rows", 0))
    print(f"{data!r}\nwrote {len(data) - resumed} rows to {args.output}"
          + (f" ({resumed} already there from an earlier run were not played again)"
             if resumed else ""))
    if data.search.get("agent_errors"):
        print(f"agent errors: {data.search['agent_errors']} "
              f"(first: {data.search.get('first_agent_error')})")
    if not len(data):
        print(f"whileai simulate: no rows: the agent failed every rollout "
              f"({data.stopped_because}; first error: {data.search.get('first_agent_error')})",
              file=sys.stderr)
        return 1
    return 0
