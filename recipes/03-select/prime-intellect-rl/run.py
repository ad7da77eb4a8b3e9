"""A GRPO-ready set from ``simulate(mode="rl")``, checked for gradient before any GPU time, then
exported as a ``verifiers`` environment (the shape Prime Intellect's hub and trainers read).

A scripted agent stands in for the policy: on each ask it is careful with its own fixed
probability (looks the order up through ``zps.world``, says when a lookup fails, asks back when no
order is named) and otherwise claims it is all done without calling anything. The reward is the
environment's own: ``zps.task_checklist``, computed from the trajectory and the task's cell, no
model in the loop. Offline, seeded, a few seconds; the package lands in ``out/``.
"""

from __future__ import annotations

import importlib.util
import random
import re
import shutil
import sys
import warnings
from pathlib import Path

import whileai.simulations as zps

OUT = Path(__file__).parent / "out"
TOOLS = [
    {"type": "function", "function": {
        "name": "get_order", "description": "Look up an order by id.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                       "required": ["order_id"]}}},
    {"type": "function", "function": {
        "name": "refund_order", "description": "Refund a damaged or undelivered order.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                       "required": ["order_id"]}}},
]
POLICY = ("Help customers with their orders. Look the order up first; refund only damaged or "
          "undelivered orders.")
WORLD = zps.world(TOOLS, system_prompt=POLICY)


def agent(message: str) -> dict:
    rollout = zps.current_rollout()
    rng = random.Random(f"{message}|{rollout.rollout_index if rollout else 0}")
    careful = random.Random(message).choice([0.2, 0.4, 0.6, 0.8, 1.0])
    if rng.random() >= careful:  # the shortcut: claim it is done, call nothing
        return {"steps": [], "final_text": "Done! Your order is on its way and all sorted."}
    order = re.search(r"ORD-\d+", message)
    if not order:
        return {"steps": [], "final_text": "Which order do you mean? Please send its number."}
    args = {"order_id": order.group(0)}
    result = WORLD.call("get_order", args)  # faults scheduled for this task fire here
    reply = (f"I looked up {args['order_id']}: it is {result.get('order', {}).get('status')}."
             if result.get("status") == "ok" else "The lookup failed, so I cannot confirm it yet.")
    return {"steps": [{"tool": "get_order", "arguments": args, "result": result}],
            "final_text": reply}


def main() -> None:
    shutil.rmtree(OUT, ignore_errors=True)
    # 1. Generate: k=8 rollouts per ask, allocated where the agent disagrees with itself; the
    #    grader runs as rows land, so the allocation reads rewards.
    data = zps.simulate(agent, tools=TOOLS, system_prompt=POLICY, simulator=False, mode="rl",
                        situations=20, repeats=8, grader=zps.task_checklist, reproducible=True,
                        progress=False)
    print(data)
    scored = data.grade(judge=zps.task_checklist)

    # 2. Gradient check: a group-relative update learns only from asks whose rollouts disagree.
    print(scored.pass_at)
    signal = zps.group_signal(scored.rows)
    print(f"mixed asks {signal['mixed_asks']} of {signal['asks']} ({signal['mixed_share']:.0%}); "
          f"all pass {signal['all_pass']}, all fail {signal['all_fail']}")
    gate = zps.publish_gate(scored.rows, mode="rl")
    print(f"publish gate: ok={gate['ok']}")
    _, report = zps.optimize(scored, mode="rl")
    print(f"optimize(mode='rl'): {report['asks_in']} asks -> {report['asks_out']}, "
          f"{report['rows_in']} rows -> {report['rows_out']}")

    # 3. Export: the tasks, the world and the reward as an installable verifiers package.
    env = zps.export_environment(scored, OUT / "order-agent", tools=TOOLS, holdout=0.25)
    print(zps.format_environment_report(env).replace(str(OUT), "out"))

    # What happens without the task's cell on the rows: the checklist has nothing to check and
    # the reward reduces to the conduct grade, which a policy satisfies by calling nothing.
    bare = [{k: v for k, v in r.items() if k != "scenario_dimensions"} for r in scored.rows]
    with warnings.catch_warnings(record=True):
        cut = zps.export_environment(bare, OUT / "bare", tools=TOOLS, system_prompt=POLICY,
                                     band=None)
    print("without cell metadata:", cut["warnings"][-1].split(", so ")[1].split(";")[0])

    # 4. Load it the way a trainer does (needs the `rl` extra: pip install 'whileai[rl]').
    if importlib.util.find_spec("verifiers") is None:
        print("verifiers not installed: pip install 'whileai[rl]' to load the environment")
        return
    sys.path.insert(0, str(OUT / "order-agent"))
    loaded = zps.load_environment(OUT / "order-agent", split="train")
    print(f"verifiers: {type(loaded).__name__} with {len(list(loaded.taskset))} train tasks")


if __name__ == "__main__":
    main()
