"""One row as a person reads it: the turns, each tool call with its arguments and result, faults.

``transcript`` is pure: it turns a row dict into plain values a template prints (escaped).
It reads ``messages`` when the row has them (the system prompt folded, user and agent turns,
tool results joined to their call by id) and otherwise ``prompt``, ``steps`` and
``final_text``. A call is marked with its fault when the world scheduled one for it
(``faults``: tool, kind, call number) or its result says so (timeout, permission denied,
malformed, stale, not found). The trajectory flags are ``trace_flags``'s (claims the steps do
not back, an ignored failure, ...). ``privileged`` is left out unless asked for.

>>> row = {"prompt": "where is A-1?", "final_text": "It shipped.",
...        "steps": [{"tool": "get_order", "arguments": {"order_id": "A-1"},
...                   "result": {"status": "error", "error": "timeout"}}]}
>>> view = transcript(row)
>>> [t["role"] for t in view["turns"]], view["turns"][1]["calls"][0]["fault"]
(['user', 'assistant', 'assistant'], 'timeout')
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from whileai.server.pages.rowindex import outcome, typed

__all__ = ["fault_of", "transcript", "verdict"]

_DIMENSION_ORDER = ("tool", "condition", "state", "intent", "stance", "persona", "history",
                    "tone", "typing", "clause", "block")


def _pretty(value: Any) -> str:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return str(value)
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def fault_of(result: Any) -> str | None:
    """The fault a tool result shows, or None.

    >>> fault_of({"status": "ok", "stale": True}), fault_of({"status": "ok"})
    ('stale', None)
    """
    if isinstance(result, str):
        try:
            result = json.loads(result)
        except ValueError:
            return None
    if not isinstance(result, Mapping):
        return None
    if result.get("malformed"):
        return "malformed"
    if result.get("stale"):
        return "stale"
    if result.get("status") == "not_found":
        return "not_found"
    if result.get("status") == "error":
        return str(result.get("error") or "error")
    return None


def _scheduled(row: Mapping[str, Any]) -> dict[tuple[str, int], str]:
    out = {}
    for fault in typed(row, "faults", list):
        if isinstance(fault, Mapping) and isinstance(fault.get("call"), int):
            out[(str(fault.get("tool")), fault["call"])] = str(fault.get("kind"))
    return out


def _call(name: str, arguments: Any, result: Any, fault: str | None) -> dict[str, Any]:
    return {"name": name, "arguments": _pretty(arguments),
            "result": "(no result)" if result is None else _pretty(result), "fault": fault}


def _from_messages(messages: list[Any], scheduled: dict[tuple[str, int], str],
                   ) -> tuple[str | None, list[dict[str, Any]]]:
    system = None
    turns: list[dict[str, Any]] = []
    results = {m.get("tool_call_id"): m.get("content") for m in messages
               if isinstance(m, Mapping) and m.get("role") == "tool"}
    counts: dict[str, int] = {}
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        role, content = str(message.get("role")), message.get("content")
        if role == "system" and system is None:
            system = str(content or "")
            continue
        if role == "tool":
            continue
        calls = []
        for call in message.get("tool_calls") or ():
            function = (call.get("function") or {}) if isinstance(call, Mapping) else {}
            name = str(function.get("name") or "?")
            n = counts.get(name, 0)
            counts[name] = n + 1
            result = results.get(call.get("id")) if isinstance(call, Mapping) else None
            calls.append(_call(name, function.get("arguments"), result,
                               scheduled.get((name, n)) or fault_of(result)))
        text = content if isinstance(content, str) else (
            "" if content is None else _pretty(content))
        turns.append({"role": role, "text": text, "calls": calls})
    return system, turns


def _from_steps(row: Mapping[str, Any], scheduled: dict[tuple[str, int], str],
                ) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = [{"role": "user", "text": str(row.get("prompt") or ""),
                                    "calls": []}]
    counts: dict[str, int] = {}
    calls = []
    for step in row.get("steps") or ():
        if not isinstance(step, Mapping):
            continue
        name = str(step.get("tool") or "?")
        n = counts.get(name, 0)
        counts[name] = n + 1
        calls.append(_call(name, step.get("arguments"), step.get("result"),
                           scheduled.get((name, n)) or fault_of(step.get("result"))))
    if calls:
        turns.append({"role": "assistant", "text": "", "calls": calls})
    turns.append({"role": "assistant", "text": str(row.get("final_text") or ""), "calls": []})
    return turns


def verdict(row: Mapping[str, Any]) -> dict[str, Any]:
    """The judge's word on the row: outcome, reward, reason, judge, status, hand labels.

    >>> verdict({"reward": 0.0, "reason": "no id", "judge_status": "ok"})["outcome"]
    'fail'
    """
    labels = typed(row, "labels", dict)
    return {"outcome": outcome(row.get("reward")), "reward": row.get("reward"),
            "reason": row.get("reason"), "judge": row.get("judge_name"),
            "status": row.get("judge_status") or "ungraded",
            "gold": row.get("gold_reward"), "labels": dict(labels)}


def transcript(row: Mapping[str, Any], *, show_privileged: bool = False) -> dict[str, Any]:
    """The conversation page's values for ``row`` (see the module docstring)."""
    scheduled = _scheduled(row)
    messages = row.get("messages")
    if isinstance(messages, list) and messages:
        system, turns = _from_messages(messages, scheduled)
    else:
        system, turns = None, _from_steps(row, scheduled)
    dims = typed(row, "scenario_dimensions", dict)
    cell = [[k, dims[k]] for k in _DIMENSION_ORDER if k in dims]
    cell += [[k, v] for k, v in sorted(dims.items()) if k not in _DIMENSION_ORDER]
    markers = typed(row, "markers", dict)
    flags = [[k, v] for k in ("truncated", "finish_reason", "n_tokens", "model_version")
             if (v := row.get(k)) is not None]
    privileged = row.get("privileged") if show_privileged else None
    from whileai.simulations.clean.trace_flags import trace_flags

    return {
        "system": system,
        "turns": turns,
        "faults": [dict(f) for f in typed(row, "faults", list) if isinstance(f, Mapping)],
        "seeded": [str(s) for s in typed(row, "seeded", list)],
        "verdict": verdict(row),
        "markers": sorted(markers.items()),
        "flags": flags,
        "trajectory": trace_flags(row),
        "cell": cell,
        "privileged": _pretty(privileged) if privileged else None,
    }
