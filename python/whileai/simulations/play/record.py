"""Turning one played rollout into a row (row schema v1, docs/rows.md).

>>> from whileai.simulations.generate.grid import Cell
>>> from whileai.simulations.generate.situation import Situation
>>> s = Situation(scenario_id="sc-0123456789", prompt="hi", cell=Cell(values=(("tool", "t"),)))
>>> row = build_row(s, {"steps": [], "final_text": "hello"}, fired=(), rollout_index=0,
...                 arm="explore", reason="farthest", system_prompt="Be kind.")
>>> row["scenario_id"], row["messages"][0]["role"], row["privileged"]["reference"]
('sc-0123456789', 'system', '')
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from whileai import _backend
from whileai.rows.outbound import conversation
from whileai.rows.schema import SCHEMA_VERSION
from whileai.simulations.generate.situation import Situation

__all__ = ["behavior_signature", "build_row"]

_SIGNATURE_JSON = json.JSONEncoder(sort_keys=True, default=str)  # built once, not per row

# Fields a model agent may report about its calls; copied onto the row when present.
_MODEL_FIELDS = ("logprob", "n_tokens", "model_version", "sampling", "truncated",
                 "finish_reason", "usage", "logprob_tokens", "invalid_tool_calls",
                 "model_calls", "stop_reason")


def behavior_signature(steps: Sequence[Mapping[str, Any]], final_text: str) -> str:
    """A short hash of what the agent did: tools called, their outcomes, and what it said."""
    trail = []
    for step in steps:
        if "tool" in step:
            result = step.get("result")
            status = result.get("status") if isinstance(result, Mapping) else None
            trail.append([str(step.get("tool")), str(status)])
    text = _SIGNATURE_JSON.encode([trail, final_text.strip()])
    return "bs-" + format(_backend.hash64(text), "016x")[:10]


def _mark_faults(steps: list[dict[str, Any]], fired: Sequence[Mapping[str, Any]]) -> None:
    """Stamp ``fault`` on the tool step each fired fault hit (n-th call of that tool)."""
    seen: dict[str, int] = {}
    pending = {(f["tool"], f["call"]): f["kind"] for f in fired}
    for i, step in enumerate(steps):
        tool = step.get("tool")
        if not isinstance(tool, str):
            continue
        n = seen.get(tool, 0)
        seen[tool] = n + 1
        kind = pending.get((tool, n))
        if kind is not None and "fault" not in step:
            step["fault"] = kind
        step.setdefault("call_id", f"call_{i}")


def _usage(steps: Sequence[Mapping[str, Any]]) -> dict[str, int] | None:
    totals = {"input_tokens": 0, "output_tokens": 0}
    seen = False
    for step in steps:
        for key in totals:
            value = step.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                totals[key] += value
                seen = True
    return totals if seen else None


def build_row(
    situation: Situation,
    output: Mapping[str, Any],
    *,
    fired: Sequence[Mapping[str, Any]],
    rollout_index: int,
    arm: str,
    reason: str,
    system_prompt: str | None,
    seed: int = 0,
) -> dict[str, Any]:
    """The row for one rollout: ask, steps, reply, world, faults, teacher-only block, cell."""
    steps = [dict(s) for s in output.get("steps") or ()]
    _mark_faults(steps, fired)
    final_text = str(output.get("final_text", ""))
    dims: dict[str, Any] = dict(situation.dimensions)
    dims.update({
        "arm": arm,
        "selection_reason": reason,
        "behavior_signature": behavior_signature(steps, final_text),
        "seed": seed,
        "visit": situation.visit,
        "phrasing": situation.phrasing,
    })
    row: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "scenario_id": situation.scenario_id,
        "rollout_index": rollout_index,
        "prompt": situation.prompt,
        "steps": steps,
        "final_text": final_text,
        "world_state": dict(situation.world_state),
        "faults": [dict(f) for f in situation.faults],
        "privileged": situation.privileged,
        "scenario_dimensions": dims,
        "lineage": {"source": "simulate", "stages": ["simulate"]},
    }
    if "seeded" in output:
        row["seeded"] = list(output["seeded"] or [])
    for key in _MODEL_FIELDS:
        if key in output:
            row[key] = output[key]
    if "usage" not in row:
        usage = _usage(steps)
        if usage is not None:
            row["usage"] = usage
    if "task_id" in output:
        row["task_id"] = output["task_id"]
    row["messages"] = conversation(row, system_prompt=system_prompt or None)
    return row
