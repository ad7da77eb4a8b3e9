"""The agent's tool surface drafted from observed calls: no model, just what the traces show.

Every argument key seen on a tool becomes a property, typed from the values sent (integers and
floats together read as ``number``); a key sent on every call is required. The system prompt
cannot be read off traces, so the drafted harness leaves the policy empty for the caller.

>>> rows = [{"prompt": "a", "final_text": "", "steps": [
...     {"tool": "get_order", "arguments": {"order_id": "4412", "verbose": True}},
...     {"tool": "get_order", "arguments": {"order_id": "9"}}]}]
>>> params = tools_from_traces(rows)[0]["function"]["parameters"]
>>> params["properties"]["verbose"], params["required"]
({'type': 'boolean'}, ['order_id'])
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from whileai.simulations.ingest.mining import as_trace_rows, tool_steps

__all__ = ["infer_harness", "json_type", "tools_from_traces"]

_INTERNAL_KEYS = ("_raw", "_value")  # placeholders for arguments that were not an object


def json_type(value: Any) -> str:
    """The JSON-schema type name of a decoded JSON value.

    >>> json_type(3), json_type(3.5), json_type("x"), json_type(None), json_type([1])
    ('integer', 'number', 'string', 'null', 'array')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    return "object"


def _merge_type(types: Counter[str]) -> tuple[str, bool]:
    """One type for a property, and whether the observed values disagreed."""
    seen = {t for t in types if t != "null"} or {"null"}
    if seen <= {"integer", "number"}:
        return ("integer" if seen == {"integer"} else "number"), False
    if len(seen) == 1:
        return next(iter(seen)), False
    most = max(sorted(seen), key=lambda t: types[t])
    return most, True


def _survey(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """tool -> {"calls": n, "keys": Counter(present), "types": {key: Counter(type)}}."""
    tools: dict[str, dict[str, Any]] = {}
    for row in rows:
        for step in tool_steps(row):
            info = tools.setdefault(
                str(step["tool"]), {"calls": 0, "keys": Counter(), "types": {}, "odd": 0}
            )
            info["calls"] += 1
            args = step.get("arguments")
            if not isinstance(args, dict) or any(k in args for k in _INTERNAL_KEYS):
                info["odd"] += 1
                continue
            for key, value in args.items():
                info["keys"][key] += 1
                info["types"].setdefault(key, Counter())[json_type(value)] += 1
    return tools


def _schema(name: str, info: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for key in sorted(info["keys"], key=lambda k: (-info["keys"][k], k)):
        kind, mixed = _merge_type(info["types"][key])
        properties[key] = {"type": kind}
        if mixed:
            seen = ", ".join(sorted(info["types"][key]))
            notes.append(f"{name}.{key}: values of several types ({seen}); drafted as {kind}")
    usable = info["calls"] - info["odd"]
    if info["odd"]:
        notes.append(f"{name}: {info['odd']} call(s) had arguments that were not a JSON object")
    required = [k for k in properties if usable and info["keys"][k] == usable]
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": "",
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


def tools_from_traces(traces: Any) -> list[dict[str, Any]]:
    """The tool surface read off the calls in ``traces``, as OpenAI function tools.

    Argument names are unioned over every call of a tool; tools come out most-called first.
    """
    survey = _survey(as_trace_rows(traces))
    order = sorted(survey, key=lambda t: (-survey[t]["calls"], t))
    return [_schema(name, survey[name], []) for name in order]


def infer_harness(rows: Any) -> dict[str, Any]:
    """Draft a harness (tools and an empty policy) from observed trace rows.

    Returns ``{"tools", "policy": "", "calls": {tool: n}, "notes": [...]}``: the tool
    schemas describe only the arguments the traces exercised, so treat them as a draft to edit.

    >>> infer_harness([{"prompt": "a", "final_text": "",
    ...     "steps": [{"tool": "ping", "arguments": {}}]}])["calls"]
    {'ping': 1}
    """
    data = as_trace_rows(rows)
    survey = _survey(data)
    order = sorted(survey, key=lambda t: (-survey[t]["calls"], t))
    notes: list[str] = []
    tools = [_schema(name, survey[name], notes) for name in order]
    notes.append("policy is empty: traces do not carry the system prompt; write it yourself")
    return {
        "tools": tools,
        "policy": "",
        "calls": {name: survey[name]["calls"] for name in order},
        "n_rows": len(data),
        "notes": notes,
    }
