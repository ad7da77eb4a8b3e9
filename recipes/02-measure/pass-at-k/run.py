"""pass@1, pass^k and pass@k for one agent, the per-ask histogram the mean hides, and what to do.

A scripted agent stands in for a model: on each ask it looks the order up and reports the
status, but how reliably it does so depends on the ask (some it always gets, some it never
gets, most it gets some of the time). Offline, seeded, a second or two.
"""

from __future__ import annotations

import random

import whileai.simulations as zps

TOOLS = [{"type": "function", "function": {
    "name": "get_order", "description": "Look up an order by id.",
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                   "required": ["order_id"]}}}]
POLICY = "Help customers with their orders. Look the order up before you say anything about it."
K = 8


def skill(prompt: str) -> float:
    """How often the agent gets this ask right: a fixed, seeded draw per ask."""
    return random.Random(f"skill|{prompt}").choice([0.0, 0.25, 0.5, 0.75, 0.9, 1.0, 1.0])


def agent(message: str) -> dict:
    """Look the order up, then either report it or answer from memory (the failure)."""
    rollout = zps.current_rollout()
    index = rollout.rollout_index if rollout else 0
    coin = random.Random(f"{message}|{index}").random()
    if coin < skill(message):
        result = {"status": "shipped"}
        return {"steps": [{"tool": "get_order", "arguments": {"order_id": "4412"},
                           "result": result}],
                "final_text": "I looked it up: order 4412 has shipped."}
    return {"steps": [], "final_text": "It should arrive tomorrow."}


def judge(row: dict) -> dict:
    """Pass a reply grounded in a lookup; fail a promise made from nothing."""
    looked = any(step.get("tool") == "get_order" for step in row["steps"])
    return {"reward": int(looked and "shipped" in row["final_text"])}


def fmt(ci: tuple[float, float] | None) -> str:
    return "n/a" if ci is None else f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def main() -> None:
    data = zps.simulate(agent, tools=TOOLS, system_prompt=POLICY, simulator=False, mode="rl",
                        situations=24, repeats=K, repeat_policy="fixed", fault_rate=0,
                        reproducible=True, progress=False)
    scored = data.grade(judge=judge)
    p = scored.pass_at
    print(p)
    print(f"pass@1   {p.pass_at_1:.2f} {fmt(p.ci95)}  how often one try works: the headline")
    print(f"pass^{p.k}   {p.pass_pow_k:.2f} {fmt(p.pass_pow_k_ci95)}  all {p.k} tries work: "
          "reliability")
    print(f"pass@{p.k}   {p.pass_at_k:.2f} {fmt(p.pass_at_k_ci95)}  at least one of {p.k} works: "
          "what the agent can do")

    # The mean hides the shape: the same pass@1 comes from "every ask half the time" or from
    # "half the asks always, half never", and those call for different fixes.
    rates = list(p.per_task.values())
    print(f"per-ask pass rate over {len(rates)} asks:")
    bins = [("never (0)", lambda r: r == 0.0), ("rarely (<0.5)", lambda r: 0 < r < 0.5),
            ("often (0.5-1)", lambda r: 0.5 <= r < 1.0), ("always (1)", lambda r: r == 1.0)]
    counts = {}
    for label, test in bins:
        counts[label] = sum(1 for r in rates if test(r))
        print(f"  {label:<14} {counts[label]:>3}  {'#' * counts[label]}")

    signal = zps.group_signal(scored.rows)
    kept = zps.retire_solved(scored.rows)
    print("what to do next:")
    print(f"  pass@1 {p.pass_at_1:.2f}: the number to report; its interval is "
          f"{p.ci95[1] - p.ci95[0]:.2f} wide over {p.n_groups} asks, so a change smaller than "
          "that needs more asks (zps.holdout_size)")
    if p.pass_pow_k < p.pass_at_1 - 0.1:
        print(f"  pass^{p.k} {p.pass_pow_k:.2f} is well below pass@1: the agent is unreliable, "
              "not incapable; ship nothing that needs it to work every time")
    print(f"  headroom {p.headroom:.2f} on {signal['mixed_asks']} mixed asks: what a grouped RL "
          "update can learn from (optimize(mode='rl') keeps those)")
    print(f"  {counts['never (0)']} asks never pass: no success to reinforce; read those rows, "
          "then fix the prompt or add SFT demonstrations")
    print(f"  {counts['always (1)']} asks always pass: retire them (retire_solved keeps "
          f"{len(kept)} of {len(scored.rows)} rows)")


if __name__ == "__main__":
    main()
