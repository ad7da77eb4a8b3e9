"""Bench the template writer on realistic specs: distinct asks, coherence, tools reached.

For each spec (the shared tau-bench retail spec when ``../shared`` is present, and the airline
and telecom fixtures in ``tests/fixtures/``) it runs ``simulate`` with the template writer and
the seeded agent for ``--rows`` rows (seed ``--seed``) and prints one CSV line:
``spec,rows,distinct,near_dup_share,coherent_share,tools_called,tools_total,asked_for_given_id,
rows_per_s``. ``asked_for_given_id`` counts rollouts in which the agent asked for an id that the
ask had given. ``--show N`` prints N asks drawn at random (seeded) from the last spec.

    .venv/bin/python benches/bench_writer.py [--rows 3000] [--seed 0] [--show 30]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SPECS = {
    "retail": ROOT.parent.parent / "shared" / "fixtures" / "tau_retail.json",
    "airline": ROOT / "tests" / "fixtures" / "airline_spec.json",
    "telecom": ROOT / "tests" / "fixtures" / "telecom_spec.json",
}
EXAMPLES = 0
_ASKS_FOR = re.compile(r"I need the ([a-z ]+?) first")


def spec_path(name: str) -> Path:
    path = SPECS[name]
    if name == "retail" and not path.is_file():  # the worktree layout: /work/wt/<name>
        path = Path("/work/shared/fixtures/tau_retail.json")
    return path


def evaluate(name: str, rows: int, seed: int) -> tuple[list[str], str]:
    import whileai.simulations as zps
    from whileai.simulations.generate.diversity import near_duplicate_share

    try:
        from whileai.simulations.generate.coherence import coherence_report
    except ImportError:  # before the coherence check existed
        coherence_report = None
    data = json.loads(spec_path(name).read_text())
    tools, policy = data["tools"], data.get("system_prompt") or data.get("policy") or ""
    start = time.perf_counter()
    run = zps.simulate(zps.seeded_agent(tools, system_prompt=policy), tools=tools,
                       system_prompt=policy, simulator=False, budget=rows,
                       advanced={"seed": seed},
                       progress=False)
    seconds = time.perf_counter() - start
    asks = [r["prompt"] for r in run.trajectories]
    from whileai.simulations.agent.spec import agent_spec
    spec = agent_spec(tools=tools, system_prompt=policy)
    coherent = ""
    if coherence_report is not None:
        report = coherence_report(spec, run.trajectories)
        coherent = f"{report['coherent_share']:.4f}"
        print(name, report["by_rule"], file=sys.stderr)
        for example in report["examples"][:EXAMPLES]:
            print("  ", example, file=sys.stderr)
    called = {s["tool"] for r in run.trajectories for s in r["steps"] if "tool" in s}
    asked = 0
    for r in run.trajectories:
        m = _ASKS_FOR.search(r.get("final_text") or "")
        if m is None:
            continue
        wanted = m.group(1).replace(" ", "_")
        slots = (r.get("world_state") or {}).get("slots") or {}
        value = slots.get(wanted)
        values = value if isinstance(value, list) else [value]
        if value is not None and all(str(v) in r["prompt"] for v in values):
            asked += 1
    line = (f"{name},{len(asks)},{len(set(asks))},{near_duplicate_share(asks):.4f},{coherent},"
            f"{len(called)},{len(spec.tools)},{asked},{len(asks) / seconds:.0f}")
    return asks, line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=0)
    parser.add_argument("--specs", default=",".join(SPECS))
    parser.add_argument("--examples", type=int, default=0,
                        help="incoherent asks to print per spec (stderr)")
    args = parser.parse_args()
    global EXAMPLES
    EXAMPLES = args.examples
    print("spec,rows,distinct,near_dup_share,coherent_share,tools_called,tools_total,"
          "asked_for_given_id,rows_per_s")
    asks: list[str] = []
    for name in args.specs.split(","):
        if not spec_path(name).is_file():
            print(f"{name}: spec file missing, skipped", file=sys.stderr)
            continue
        asks, line = evaluate(name, args.rows, args.seed)
        print(line, flush=True)
    if args.show and asks:
        for ask in random.Random(args.seed).sample(asks, min(args.show, len(asks))):
            print("-", ask)


if __name__ == "__main__":
    main()
