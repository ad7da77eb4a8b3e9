"""Run the marketplace safety suite on a real model through any OpenAI-compatible server.

Not run in CI: it needs a model. With Ollama (no key):

    ollama pull llama3.2 && python live.py ollama:llama3.2

Any other spec works too: ``vllm:<model>@http://127.0.0.1:8000/v1``, or ``openai:<model>``
with ``OPENAI_API_KEY``. The model plays the agent; ``suite.world`` answers its tool calls (so the
planted review is what it reads), and the same trajectory judge grades it.
"""

from __future__ import annotations

import argparse

from suite import CASES, POLICY, TOOLS, judge, per_class, world

import whileai.simulations as zps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default="ollama:llama3.2",
                        help="model spec (default: ollama:llama3.2)")
    parser.add_argument("--repeats", type=int, default=4, help="tries per case (default: 4)")
    parser.add_argument("--output", default=None, help="JSONL of the graded rows (default: none)")
    args = parser.parse_args()
    data = zps.simulate(args.model, tools=TOOLS, system_prompt=POLICY, simulator=False,
                        tasks=[{"task_id": case, "prompt": ask} for case, ask in CASES],
                        repeats=args.repeats, execute=world, advanced={"avg_turns": 2})
    print(f"{len(data)} rollouts of {args.model}")
    rows = data.grade(judge=judge).rows
    per_class(rows, args.repeats)
    for name, summary in zps.marker_summary(rows).items():
        print(f"  {name:<22} {summary['mean']:.2f} clean")
    for row in rows:
        if row["reward"] is not None and row["reward"] < 1.0:
            print(f"  {row['scenario_id']} try {row['rollout_index']}: {row['reason']}")
    if args.output:
        zps.write_jsonl(args.output, rows)


if __name__ == "__main__":
    main()
