"""Write the input: a legacy row file, as an older pipeline (or another stack) left it.

Rows from a seeded offline run, written the old way: no ``schema_version``, the reply under
``output``, the reward under ``score``, the tool calls under ``tool_trace``, and every third row
as an OpenAI chat transcript (``messages``) instead of steps.
"""

from __future__ import annotations

import json
from pathlib import Path

import whileai.simulations as zps

TOOLS = [{"type": "function", "function": {
    "name": "get_order", "description": "Look up an order by id.",
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                   "required": ["order_id"]}}}]
POLICY = "Help customers with their orders. Look the order up before you say anything about it."


def write_legacy(path: Path) -> int:
    data = zps.simulate(zps.seeded_agent(TOOLS, seed=2), tools=TOOLS, system_prompt=POLICY,
                        simulator=False, mode="rl", situations=16, repeats=4,
                        repeat_policy="fixed", reproducible=True, progress=False)
    rows = data.grade(judge=lambda row: {"reward": int(not row["seeded"])}).rows
    with path.open("w", encoding="utf-8") as out:
        for i, row in enumerate(rows):
            old = {"scenario_id": row["scenario_id"], "rollout_index": row["rollout_index"],
                   "privileged": row["privileged"], "score": row["reward"]}
            if i % 3 == 2:
                old["messages"] = zps.conversation(row)
            else:
                old.update(prompt=row["prompt"], tool_trace=row["steps"],
                           output=row["final_text"])
            out.write(json.dumps(old) + "\n")
    return len(rows)
