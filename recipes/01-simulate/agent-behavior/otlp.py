"""GenAI spans as OTLP/JSON, built and sent with the standard library only.

One agent turn becomes a ``chat`` span (the ask on the first turn, the assistant's text and tool
call as output) and, when it called a tool, an ``execute_tool`` span with the arguments and the
result. Each turn is POSTed to ``/v1/traces`` as soon as it happens; the episode's root
``invoke_agent`` span goes last.
"""

from __future__ import annotations

import hashlib
import json
import urllib.request
from typing import Any

T0 = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z in ns: a fixed clock, so runs repeat


def ident(*parts: str, length: int) -> str:
    """A stable hex id (32 for a trace, 16 for a span) from the parts."""
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:length]


def attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    text = value if isinstance(value, str) else json.dumps(value)
    return {"key": key, "value": {"stringValue": text}}


def span(trace_id: str, name: str, tick: int, attrs: dict[str, Any], *,
         parent: str = "") -> dict[str, Any]:
    """One span at ``tick`` (each tick is a millisecond on the fixed clock)."""
    return {"traceId": trace_id, "spanId": ident(trace_id, name, str(tick), length=16),
            "parentSpanId": parent, "name": name, "kind": 1,
            "startTimeUnixNano": str(T0 + tick * 1_000_000),
            "endTimeUnixNano": str(T0 + tick * 1_000_000 + 900_000),
            "attributes": [attr(k, v) for k, v in attrs.items()]}


def text_message(role: str, text: str, call: dict[str, Any] | None = None) -> list[dict]:
    parts: list[dict[str, Any]] = [{"type": "text", "content": text}] if text else []
    if call:
        parts.append({"type": "tool_call", "id": call["id"], "name": call["tool"],
                      "arguments": call["arguments"]})
    return [{"role": role, "parts": parts}]


def turn_spans(trace_id: str, root: str, turn: int, *, ask: str | None, text: str,
               call: dict[str, Any] | None, result: Any, model: str) -> list[dict[str, Any]]:
    """The spans of one turn: the model's reply and, if it called one, the tool."""
    attrs: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model,
                             "gen_ai.output.messages": text_message("assistant", text, call)}
    if ask is not None:
        attrs["gen_ai.input.messages"] = text_message("user", ask)
    out = [span(trace_id, f"chat {model}", 2 * turn + 1, attrs, parent=root)]
    if call:
        out.append(span(trace_id, f"execute_tool {call['tool']}", 2 * turn + 2, {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call["tool"],
            "gen_ai.tool.call.id": call["id"], "gen_ai.tool.call.arguments": call["arguments"],
            "gen_ai.tool.call.result": result}, parent=root))
    return out


def root_span(trace_id: str, agent: str, scenario: str) -> dict[str, Any]:
    return span(trace_id, f"invoke_agent {agent}", 0, {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent,
        "whileai.scenario_id": scenario})


def export(spans: list[dict[str, Any]], agent: str) -> dict[str, Any]:
    """An OTLP/JSON export body (``resourceSpans``) naming the agent on the resource."""
    resource = {"attributes": [attr("service.name", agent), attr("gen_ai.agent.name", agent)]}
    return {"resourceSpans": [{"resource": resource,
                               "scopeSpans": [{"scope": {"name": "recipe"}, "spans": spans}]}]}


def post(url: str, key: str, spans: list[dict[str, Any]], agent: str) -> dict[str, Any]:
    """POST one batch to ``{url}/v1/traces``; the receiver's JSON answer."""
    request = urllib.request.Request(
        f"{url}/v1/traces", data=json.dumps(export(spans, agent)).encode(), method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        found: dict[str, Any] = json.loads(answer.read() or b"{}")
        return found
