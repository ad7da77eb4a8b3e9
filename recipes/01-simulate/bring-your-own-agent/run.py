"""Bring your own agent: the callable contract, what a broken agent gets, and eval_sourced.

Run from this folder: ``python run.py``. Offline, about a second.
"""

from __future__ import annotations

import json
import re
import threading
import warnings
from pathlib import Path
from typing import Any

import whileai.simulations as zps
from whileai.errors import AgentFailedWarning

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
TOOLS = json.loads((EXAMPLES / "tools.json").read_text(encoding="utf-8"))
POLICY = (EXAMPLES / "policy.txt").read_text(encoding="utf-8")
WORLD = zps.world(TOOLS)  # inside a run, calls go to that rollout's records and fault plan
ORDER_ID = re.compile(r"\b[A-Z]+-\d+\b")


def my_agent(message: str) -> dict[str, Any]:
    """The contract: one ask in, ``{"steps": [...], "final_text": str}`` out."""
    ids = ORDER_ID.findall(message)
    if not ids:
        return {"steps": [], "final_text": "Which order is this about? I need its id."}
    tool = "refund_order" if "refund" in message.lower() else "get_order"
    args = {"order_id": ids[0]}
    if tool == "refund_order":
        args["reason"] = "not_delivered" if "never" in message.lower() else "damaged"
    result = WORLD.call(tool, args)
    step = {"tool": tool, "arguments": args, "result": result}
    if result.get("status") not in ("ok", "updated") or result.get("stale"):
        return {"steps": [step], "final_text": f"I could not confirm order {ids[0]} "
                f"({result.get('error') or result.get('status')}); I will not guess."}
    status = (result.get("data") or {}).get("status", "unknown")
    return {"steps": [step], "final_text": f"Order {ids[0]} is {status}."}


def raises(message: str) -> dict[str, Any]:
    raise ConnectionError("agent endpoint refused the connection")


def wrong_shape(message: str) -> Any:
    return f"Sure! {message[:20]}"  # a bare string, not {"steps", "final_text"}


SEEN: set[str] = set()
SEEN_LOCK = threading.Lock()


def flaky(message: str) -> dict[str, Any]:
    """Times out the first time it meets an order id ending in an odd digit (then retried)."""
    with SEEN_LOCK:
        first = message not in SEEN
        SEEN.add(message)
    if first and re.search(r"\d[13579]\b", message):
        raise TimeoutError("order service took too long")
    return my_agent(message)


def quiet_simulate(agent: Any, **knobs: Any) -> zps.SimulationData:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = zps.simulate(agent, tools=TOOLS, system_prompt=POLICY, simulator=False,
                            progress=False, **knobs)
    failed = any(issubclass(w.category, AgentFailedWarning) for w in caught)
    print(f"  AgentFailedWarning: {failed}")
    return data


def looked_it_up(row: dict[str, Any]) -> dict[str, Any]:
    """Training judge: pass a reply that rests on a tool call (the repo's examples/judge.py)."""
    called = any(step.get("tool") for step in row.get("steps") or [])
    return {"reward": 1.0 if called else 0.0, "reason": "looked it up" if called else "guessed"}


def main() -> None:
    print("== 1. a callable agent")
    data = zps.simulate(my_agent, tools=TOOLS, system_prompt=POLICY, simulator=False,
                        mode="rl", situations=8, repeats=4, repeat_policy="fixed",
                        progress=False)
    tasks = len({r["scenario_id"] for r in data})
    print(f"rows {len(data)}, tasks {tasks}, stopped_because {data.stopped_because}")
    tools_called = sorted({s["tool"] for r in data for s in r["steps"]})
    print(f"tools called: {', '.join(tools_called)}")
    row = data.trajectories[0]
    print(f"ask:   {row['prompt'][:80]}")
    print(f"reply: {row['final_text']}")

    print("== 2. an agent that raises")
    dead = quiet_simulate(raises, budget=5)
    print(f"  rows {len(dead)}, stopped_because {dead.stopped_because}")
    print(f"  agent_errors {dead.search['agent_errors']}")
    print(f"  first_agent_error {dead.search['first_agent_error']}")

    print("== 3. an agent that returns the wrong shape")
    bad = quiet_simulate(wrong_shape, budget=5)
    print(f"  rows {len(bad)}, stopped_because {bad.stopped_because}")
    print(f"  first_agent_error {bad.search['first_agent_error'][:70]}")

    print("== 4. an agent that fails now and then (the ask is retried)")
    some = quiet_simulate(flaky, budget=20)
    print(f"  rows {len(some)}, agent_errors {some.search['agent_errors']}, "
          f"stopped_because {some.stopped_because}")

    print("== 5. eval_sourced: a held-out score must not become the reward")
    rows = data.trajectories
    graded = zps.run_judge(rows, looked_it_up, progress=False)
    _, report = zps.optimize(graded.rows, mode="sft", min_reward=1.0)
    print(f"graded with run_judge: rows_out {report['rows_out']}, "
          f"eval_sourced {report['eval_sourced']}")
    held_out = zps.evaluate(rows, looked_it_up, progress=False)
    _, report = zps.optimize(held_out.rows, mode="sft", min_reward=1.0)
    print(f"scored with evaluate: rows_out {report['rows_out']}, "
          f"eval_sourced {report['eval_sourced']}")
    warning = next(w for w in report["hygiene_warnings"] if "evaluate()" in w)
    print(f"warning: {warning[:88]}")


if __name__ == "__main__":
    main()
