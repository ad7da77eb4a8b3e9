"""Rows for the viewer's tests, screenshots and bench: faults, planted mistakes, judge failures.

``viewer_rows`` simulates the seeded agent (it plants mistakes and says so in ``seeded``),
grades it with a judge that fails on some rows (``judge_status`` "error"), and schedules a
fault on every fifth rollout's first call (the result rewritten as the world would answer).
``payload_row`` holds a script payload in every text field. ``synthetic_rows`` makes many
plain rows fast, for the bench.
"""

from __future__ import annotations

import json
from typing import Any

import whileai.simulations as zps
from _tools import TOOLS
from whileai.simulations.world.mock import fault_result

KINDS = ("timeout", "permission_denied", "malformed", "stale")
PAYLOAD = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2">'


def _judge(row: dict[str, Any]) -> dict[str, Any]:
    if row.get("rollout_index") == 2 and len(row["prompt"]) % 3 == 0:
        raise RuntimeError("the judge model timed out")
    return {"reward": int(not row["seeded"] and not row["faults"]),
            "reason": "planted mistake" if row["seeded"] else "reply matches the record"}


def _fault(row: dict[str, Any], kind: str) -> None:
    row["faults"] = [{"tool": "get_order", "kind": kind, "call": 0}]
    data = row["steps"][0]["result"].get("data")
    result = fault_result(kind, "get_order", data if isinstance(data, dict) else None)
    row["steps"][0]["result"] = result
    for message in row["messages"]:
        if message.get("role") == "tool":
            message["content"] = json.dumps(result)
            break


def viewer_rows(situations: int = 8, repeats: int = 3) -> list[dict[str, Any]]:
    """Graded rows of the seeded agent with faults and judge failures (deterministic)."""
    data = zps.simulate(zps.seeded_agent(TOOLS, seed=1), tools=TOOLS,
                        system_prompt="Help customers with orders.", simulator=False, mode="rl",
                        situations=situations, repeats=repeats, progress=False)
    rows = [dict(r) for r in data.rows]
    for n, row in enumerate(rows):
        if n % 5 == 0 and row.get("steps"):
            _fault(row, KINDS[(n // 5) % len(KINDS)])
    return list(zps.grade(rows, judge=_judge, progress=False).rows)


def payload_row() -> dict[str, Any]:
    """One row with a script payload in every field a page prints."""
    return {
        "scenario_id": PAYLOAD, "rollout_index": 0, "prompt": PAYLOAD, "final_text": PAYLOAD,
        "reason": PAYLOAD, "judge_name": PAYLOAD, "judge_status": PAYLOAD, "reward": 0.0,
        "seeded": [PAYLOAD], "faults": [{"tool": PAYLOAD, "kind": PAYLOAD, "call": 0}],
        "markers": {PAYLOAD: 1.0}, "split": PAYLOAD, "labels": {PAYLOAD: 1.0},
        "scenario_dimensions": {"stance": PAYLOAD, "persona": PAYLOAD, "intent": PAYLOAD,
                                PAYLOAD: PAYLOAD},
        "steps": [{"tool": PAYLOAD, "arguments": {PAYLOAD: PAYLOAD}, "result": PAYLOAD}],
        "messages": [{"role": "system", "content": PAYLOAD},
                     {"role": "user", "content": PAYLOAD},
                     {"role": "assistant", "content": PAYLOAD, "tool_calls": [
                         {"id": "c0", "type": "function",
                          "function": {"name": PAYLOAD, "arguments": PAYLOAD}}]},
                     {"role": "tool", "tool_call_id": "c0", "content": PAYLOAD},
                     {"role": PAYLOAD, "content": PAYLOAD}],
        "model_version": PAYLOAD, "finish_reason": PAYLOAD,
    }


def synthetic_rows(n: int) -> list[dict[str, Any]]:
    """``n`` plain graded rows (k = 4 per task) with facets spread over their values."""
    out = []
    for i in range(n):
        task = i // 4
        out.append({
            "scenario_id": f"sc-{task:010x}", "rollout_index": i % 4,
            "prompt": f"where is order ORD-{task:05d}? it was due last week",
            "final_text": f"Order ORD-{task:05d} is {('active', 'shipped', 'late')[i % 3]}.",
            "reward": float(i % 3 != 0), "judge_status": "ok" if i % 17 else "error",
            "seeded": ["hedging"] if i % 11 == 0 else [],
            "faults": [{"tool": "get_order", "kind": KINDS[i % 4], "call": 0}] if i % 7 == 0
            else [],
            "steps": [{"tool": "get_order", "arguments": {"order_id": f"ORD-{task:05d}"},
                       "result": {"status": "ok"}}],
            "scenario_dimensions": {"stance": ("ordinary", "angry", "confused")[task % 3],
                                    "persona": ("first_time", "regular")[task % 2],
                                    "intent": "do_task"},
            "markers": {"no_hedging": float(i % 11 != 0)},
            "messages": [
                {"role": "system", "content": "Help customers with orders."},
                {"role": "user", "content": f"where is order ORD-{task:05d}? it was due"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_0", "type": "function", "function": {
                        "name": "get_order", "arguments": f'{{"order_id": "ORD-{task:05d}"}}'}}]},
                {"role": "tool", "tool_call_id": "call_0", "content": '{"status": "ok"}'},
                {"role": "assistant", "content": f"Order ORD-{task:05d} is on its way."}],
        })
    return out
