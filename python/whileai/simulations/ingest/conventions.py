"""Spans of other conventions read as GenAI semantic-conventions spans: one adapter each.

The conversion (``ingest.otel``) reads one convention, the GenAI semantic conventions. Spans that
carry another one are given the GenAI attributes their own attributes mean, next to them (a key
the span has already is never replaced), when they are decoded:

- OpenInference (Arize Phoenix; the default of ``openinference-instrumentation-*``): messages as
  flattened ``llm.input_messages.{i}.message.{role,content,tool_call_id,tool_calls.{j}.tool_call.
  {id,function.name,function.arguments}}`` (and ``llm.output_messages``), ``llm.model_name``,
  ``llm.token_count.{prompt,completion}``, ``openinference.span.kind`` (``LLM``, ``TOOL``,
  ``AGENT``, ...), ``tool.name`` with ``input.value`` / ``output.value``, ``agent.name``,
  ``session.id``;
- OpenLLMetry before it moved to the current conventions: ``gen_ai.prompt.{i}.{role,content,
  tool_call_id,tool_calls.{j}.{id,name,arguments}}`` and ``gen_ai.completion.{i}...``.

Spans of the GenAI conventions (current, or the older span events) pass through unchanged: the
check costs a few dictionary lookups per span.

>>> attrs = adapt_attributes({"openinference.span.kind": "LLM", "llm.model_name": "m",
...     "llm.input_messages.0.message.role": "user",
...     "llm.input_messages.0.message.content": "hi", "session.id": "s1"})
>>> attrs["gen_ai.input.messages"], attrs["gen_ai.response.model"], attrs["gen_ai.conversation.id"]
([{'role': 'user', 'content': 'hi'}], 'm', 's1')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["OI_KIND", "adapt_attributes", "indexed_messages"]

OI_KIND = "openinference.span.kind"
_OI_INPUT, _OI_OUTPUT = "llm.input_messages.", "llm.output_messages."
_OL_INPUT, _OL_OUTPUT = "gen_ai.prompt.", "gen_ai.completion."
_OI_OPERATION = {"LLM": "chat", "TOOL": "execute_tool", "AGENT": "invoke_agent"}
# OpenInference key -> the GenAI key of the same meaning.
_OI_SAME = (
    ("llm.model_name", "gen_ai.response.model"),
    ("llm.token_count.prompt", "gen_ai.usage.input_tokens"),
    ("llm.token_count.completion", "gen_ai.usage.output_tokens"),
    ("session.id", "gen_ai.conversation.id"),
    ("agent.name", "gen_ai.agent.name"),
)
_OI_TOOL = (
    ("tool.name", "gen_ai.tool.name"),
    ("tool_call.id", "gen_ai.tool.call.id"),
    ("input.value", "gen_ai.tool.call.arguments"),
    ("output.value", "gen_ai.tool.call.result"),
)


def _put(nested: dict[str, Any], path: list[str], value: Any) -> None:
    """Set ``value`` at ``path`` in ``nested``; a numeric step is a list index (as a key)."""
    for step in path[:-1]:
        nested = nested.setdefault(step, {})
        if not isinstance(nested, dict):
            return  # a key that is both a value and a prefix: the value wins
    nested.setdefault(path[-1], value)


def _listed(holder: Any) -> list[Any]:
    """A ``{"0": ..., "1": ...}`` level as a list in index order (non-numeric keys left out)."""
    if not isinstance(holder, dict):
        return []
    return [holder[k] for k in sorted((k for k in holder if k.isdigit()), key=int)]


def _openai_call(raw: Any) -> dict[str, Any] | None:
    call = raw.get("tool_call", raw) if isinstance(raw, dict) else None
    if not isinstance(call, dict):
        return None
    fn = call["function"] if isinstance(call.get("function"), dict) else call
    return {"id": call.get("id", ""), "type": "function",
            "function": {"name": fn.get("name", ""), "arguments": fn.get("arguments")}}


def indexed_messages(attrs: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """The messages flattened under ``prefix`` (``{prefix}{i}.[message.]{field}``) as OpenAI-style
    message dicts, in index order.

    >>> indexed_messages({"gen_ai.prompt.1.role": "user", "gen_ai.prompt.1.content": "b",
    ...     "gen_ai.prompt.0.role": "system", "gen_ai.prompt.0.content": "a"}, "gen_ai.prompt.")
    [{'role': 'system', 'content': 'a'}, {'role': 'user', 'content': 'b'}]
    """
    nested: dict[str, Any] = {}
    for key, value in attrs.items():
        if key.startswith(prefix):
            path = key[len(prefix):].split(".")
            if len(path) > 1 and path[1] == "message":  # OpenInference: {i}.message.{field}
                del path[1]
            if len(path) > 1:
                _put(nested, path, value)
    out: list[dict[str, Any]] = []
    for raw in _listed(nested):
        if not isinstance(raw, dict) or not raw.get("role"):
            continue
        message: dict[str, Any] = {"role": raw["role"]}
        content = raw.get("content")
        if content is None and isinstance(raw.get("contents"), dict):  # OpenInference parts
            texts = [c.get("message_content", c).get("text") for c in _listed(raw["contents"])
                     if isinstance(c, dict)]
            content = "\n".join(t for t in texts if isinstance(t, str)) or None
        if content is not None:
            message["content"] = content
        if raw.get("tool_call_id"):
            message["tool_call_id"] = raw["tool_call_id"]
        calls = [c for c in map(_openai_call, _listed(raw.get("tool_calls"))) if c]
        if calls:
            message["tool_calls"] = calls
        out.append(message)
    return out


def _openinference(attrs: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(attrs)
    kind = str(attrs.get(OI_KIND) or "").upper()
    if kind in _OI_OPERATION:
        out.setdefault("gen_ai.operation.name", _OI_OPERATION[kind])
    for theirs, ours in (*_OI_SAME, *(_OI_TOOL if kind == "TOOL" else ())):
        if theirs in attrs:
            out.setdefault(ours, attrs[theirs])
    if "gen_ai.input.messages" not in attrs and "gen_ai.output.messages" not in attrs:
        for prefix, key in ((_OI_INPUT, "gen_ai.input.messages"),
                            (_OI_OUTPUT, "gen_ai.output.messages")):
            messages = indexed_messages(attrs, prefix)
            if messages:
                out[key] = messages
    return out


def _openllmetry(attrs: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(attrs)
    for prefix, key in ((_OL_INPUT, "gen_ai.input.messages"),
                        (_OL_OUTPUT, "gen_ai.output.messages")):
        messages = indexed_messages(attrs, prefix)
        if messages and key not in attrs:
            out[key] = messages
    return out


def adapt_attributes(attrs: Mapping[str, Any]) -> Mapping[str, Any]:
    """``attrs`` with the GenAI attributes another convention's keys mean added (the same
    mapping, untouched, when the span carries none of them).

    >>> adapt_attributes({"gen_ai.completion.0.role": "assistant",
    ...     "gen_ai.completion.0.content": "ok"})["gen_ai.output.messages"]
    [{'role': 'assistant', 'content': 'ok'}]
    """
    if OI_KIND in attrs or "llm.input_messages.0.message.role" in attrs:
        return _openinference(attrs)
    if ("gen_ai.prompt.0.role" in attrs or "gen_ai.completion.0.role" in attrs
            or "gen_ai.prompt.0.content" in attrs):
        return _openllmetry(attrs)
    return attrs
